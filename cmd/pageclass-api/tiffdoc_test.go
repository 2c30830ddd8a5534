package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// greyPage reads a sample page (PNG) as a grey image, a page of a
// scanner's multi-page TIFF.
func greyPage(t *testing.T, path string) *image.Gray {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		var img image.Image
		if img, err = png.Decode(bytes.NewReader(b)); err == nil {
			g := image.NewGray(img.Bounds())
			draw.Draw(g, g.Bounds(), img, img.Bounds().Min, draw.Src)
			return g
		}
	}
	t.Fatalf("%s: %v", path, err)
	return nil
}

// TestTIFFDocument: /predict_document classifies every page of a
// multi-page TIFF (three sample pages of different categories), taken by
// its content whatever its label, each page numbered and answered as the
// same page sent alone to /predict_image; the pages field selects among
// them, MAX_PDF_PAGES bounds them as it bounds a PDF's.
func TestTIFFDocument(t *testing.T) {
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", EnvMaxPDFPages: "3"}, nil)
	samples := classifytest.Pages(t, 1)
	paths := []string{samples[0], samples[7], samples[2]}
	var pages []*image.Gray
	for _, p := range paths {
		pages = append(pages, greyPage(t, p))
	}
	scan := hostile.GrayTIFF(pages...)

	// Each page alone, the reference.
	alone := make([][]prediction, len(pages))
	for i, p := range pages {
		status, b := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: fmt.Sprintf("page%d.tif", i+1), CType: "image/tiff", Data: hostile.GrayTIFF(p)},
			upload{Field: "topn", Data: []byte("11")})
		var r anyResponse
		if err := json.Unmarshal(b, &r); status != 200 || err != nil {
			t.Fatalf("page %d alone: status %d: %s", i+1, status, b)
		}
		alone[i] = r.Predictions
	}
	// The pages are told apart by their answers (the fixture models' scores
	// are close to uniform, but not alike), so a page answered for another
	// is seen.
	for i := range alone {
		for j := range i {
			if scoreGap(alone[i], alone[j]) < 3e-4 {
				t.Fatalf("pages %d and %d answered alike (%v, %v): pick other pages", j+1, i+1, alone[j], alone[i])
			}
		}
	}

	for _, ctype := range []string{"image/tiff", "application/octet-stream"} {
		t.Run(ctype, func(t *testing.T) {
			status, b := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "scan.tif", CType: ctype, Data: scan},
				upload{Field: "topn", Data: []byte("11")}, upload{Field: "thumbnails", Data: []byte("true")})
			if status != 200 {
				t.Fatalf("status %d: %s", status, b)
			}
			var r anyResponse
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if r.Type != "document" || r.PageCount != 3 || len(r.Pages) != 3 {
				t.Fatalf("type %q, page_count %d, %d pages; want a document of 3", r.Type, r.PageCount, len(r.Pages))
			}
			for i, p := range r.Pages {
				if p.Page != i+1 || !strings.HasPrefix(p.Thumbnail, "data:image/jpeg;base64,") {
					t.Errorf("page %d: number %d, thumbnail %.30q", i+1, p.Page, p.Thumbnail)
				}
				samePredictions(t, i+1, p.Predictions, alone[i])
			}
		})
	}

	t.Run("pages=2", func(t *testing.T) {
		status, b := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "scan.tif", CType: "image/tiff", Data: scan},
			upload{Field: "topn", Data: []byte("11")}, upload{Field: "pages", Data: []byte("2")})
		var r anyResponse
		if err := json.Unmarshal(b, &r); status != 200 || err != nil {
			t.Fatalf("status %d: %s", status, b)
		}
		if r.PageCount != 3 || len(r.Pages) != 1 || r.Pages[0].Page != 2 {
			t.Fatalf("page_count %d, pages %+v; want page 2 of 3", r.PageCount, r.Pages)
		}
		samePredictions(t, 2, r.Pages[0].Predictions, alone[1])
	})

	t.Run("over MAX_PDF_PAGES", func(t *testing.T) {
		four := hostile.GrayTIFF(append(pages, pages[0])...)
		status, b := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "four.tif", CType: "image/tiff", Data: four})
		var e struct{ Detail, Reason string }
		if err := json.Unmarshal(b, &e); status != 413 || err != nil || e.Reason != "too_many_pages" ||
			!strings.Contains(e.Detail, `"four.tif" has 4 pages: at most 3 pages are classified per request (MAX_PDF_PAGES)`) {
			t.Fatalf("status %d: %s", status, b)
		}
	})
}

// samePredictions checks that page's predictions are want's: every
// category's score within 1.5e-4 (one step of the 4 decimals, and batched
// forward passes' rounding).
func samePredictions(t *testing.T, page int, got, want []prediction) {
	t.Helper()
	if len(got) != len(want) || scoreGap(got, want) > 1.5e-4 {
		t.Errorf("page %d: predictions %v, the page alone %v", page, got, want)
	}
}

// scoreGap is the largest difference between a's and b's scores of one
// category (1 for a category in one only).
func scoreGap(a, b []prediction) float64 {
	scores := map[string]float64{}
	for _, p := range b {
		scores[p.Label] = p.Score
	}
	gap := 0.0
	for _, p := range a {
		s, ok := scores[p.Label]
		if !ok {
			return 1
		}
		gap = max(gap, math.Abs(p.Score-s))
	}
	return gap
}

// jobServer starts a service that takes jobs (JOBS_DIR a test folder).
func jobServer(t *testing.T) (*server, *httptest.Server) {
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir()}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	return s, ts
}

// scanPages are the three pages of a scanner's TIFF: sample pages 1, 8
// and 3 in grey.
func scanPages(t *testing.T) []*image.Gray {
	samples := classifytest.Pages(t, 1)
	var pages []*image.Gray
	for _, p := range []string{samples[0], samples[7], samples[2]} {
		pages = append(pages, greyPage(t, p))
	}
	return pages
}

// jobResults is GET /jobs/{id}/results.
func jobResults(t *testing.T, base, id string) jobs.Results {
	t.Helper()
	var res jobs.Results
	r, err := http.Get(base + "/jobs/" + id + "/results")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(servicetest.ReadBody(t, r), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestJobsByContent: a job's item runs at the endpoint its content asks
// for, as on the web page: a multi-page TIFF (labelled image/tiff or
// application/octet-stream) and a PDF labelled application/octet-stream
// as /predict_document (a document answer with one row per page, as
// /predict_document answers the file), a PNG and a single-page TIFF
// (labelled image/tiff or application/octet-stream) as /predict_image,
// with the answer they get there.
func TestJobsByContent(t *testing.T) {
	s, ts := jobServer(t)
	pages := scanPages(t)
	topn := upload{Field: "topn", Data: []byte("11")}
	name, png := samplePage(t)
	scan, pdf := hostile.GrayTIFF(pages...), makePDF(2)
	items := []struct {
		file upload
		// path is the endpoint the item runs at; sync the file as that
		// endpoint takes it alone.
		path  string
		sync  upload
		pages int // of a document answer
	}{
		{file: upload{Field: "file", Name: "scan.tif", CType: "image/tiff", Data: scan}, path: "/predict_document", pages: 3},
		{file: upload{Field: "file", Name: "scan", CType: "application/octet-stream", Data: scan}, path: "/predict_document", pages: 3},
		{file: upload{Field: "file", Name: "two.bin", CType: "application/octet-stream", Data: pdf}, path: "/predict_document",
			sync: upload{Field: "file", Name: "two.bin", CType: "application/pdf", Data: pdf}, pages: 2},
		{file: upload{Field: "file", Name: name, CType: "image/png", Data: png}, path: "/predict_image"},
		{file: upload{Field: "file", Name: "one.tif", CType: "image/tiff", Data: hostile.GrayTIFF(pages[1])}, path: "/predict_image"},
		// curl's label for a .tif (before, this item failed with 400).
		{file: upload{Field: "file", Name: "two.tif", CType: "application/octet-stream", Data: hostile.GrayTIFF(pages[2])}, path: "/predict_image"},
	}
	parts := []upload{topn}
	for _, it := range items {
		parts = append(parts, it.file)
	}
	st := waitJob(t, s, ts.URL, submitForm(t, ts.URL, parts...))
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: len(items), Succeeded: len(items)}) {
		t.Fatalf("job %+v; want every item succeeded", st)
	}
	res := jobResults(t, ts.URL, st.ID)
	for i, it := range items {
		t.Run(it.file.Name, func(t *testing.T) {
			var got anyResponse
			if err := json.Unmarshal(res.Items[i].Output, &got); err != nil || res.Items[i].Status != 200 {
				t.Fatalf("item %d: status %d: %s", i, res.Items[i].Status, res.Items[i].Output)
			}
			sync := it.sync
			if sync.Field == "" {
				sync = it.file
			}
			code, b := postForm(t, ts.URL+it.path, topn, sync)
			var want anyResponse
			if err := json.Unmarshal(b, &want); code != 200 || err != nil {
				t.Fatalf("%s: %d %s", it.path, code, b)
			}
			if it.pages == 0 {
				if got.Type != "image" || len(got.Pages) != 0 {
					t.Fatalf("type %q, %d pages; want an image answer", got.Type, len(got.Pages))
				}
				samePredictions(t, 1, got.Predictions, want.Predictions)
				return
			}
			if got.Type != "document" || got.PageCount != it.pages || len(got.Pages) != it.pages || len(want.Pages) != it.pages {
				t.Fatalf("type %q, page_count %d, %d pages; want a document of %d", got.Type, got.PageCount, len(got.Pages), it.pages)
			}
			for p := range got.Pages {
				if got.Pages[p].Page != p+1 {
					t.Errorf("row %d is page %d", p+1, got.Pages[p].Page)
				}
				samePredictions(t, p+1, got.Pages[p].Predictions, want.Pages[p].Predictions)
			}
		})
	}
}

// TestJobsPages (issue 33 item 2): a job's pages field selects the pages
// of its items that run as /predict_document (a PDF, a multi-page TIFF),
// which answer as /predict_document answers the file with that field; an
// item run as /predict_image is sent without it and gets its answer
// there. A selection beyond an item's pages fails that item alone, with
// /predict_document's 422 and its reason in GET /jobs/{id}.
func TestJobsPages(t *testing.T) {
	s, ts := jobServer(t)
	grey := scanPages(t)
	sel := upload{Field: "pages", Data: []byte("2-3")}
	name, png := samplePage(t)
	tif := upload{Field: "file", Name: "scan.tif", CType: "image/tiff", Data: hostile.GrayTIFF(grey...)}
	pdf := upload{Field: "file", Name: "four.pdf", CType: "application/pdf", Data: makePDF(4)}
	img := upload{Field: "file", Name: name, CType: "image/png", Data: png}
	st := waitJob(t, s, ts.URL, submitForm(t, ts.URL, sel, tif, pdf, img))
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 3}) {
		t.Fatalf("job %+v; want every item succeeded", st)
	}
	res := jobResults(t, ts.URL, st.ID)
	for i, it := range []struct {
		file  upload
		path  string
		pages int // page_count of a document answer; 0: an image answer
	}{{tif, "/predict_document", 3}, {pdf, "/predict_document", 4}, {img, "/predict_image", 0}} {
		var got, want anyResponse
		if err := json.Unmarshal(res.Items[i].Output, &got); err != nil || res.Items[i].Status != 200 {
			t.Fatalf("%s: status %d: %s", it.file.Name, res.Items[i].Status, res.Items[i].Output)
		}
		sync := []upload{it.file}
		if it.pages > 0 {
			sync = append(sync, sel)
		}
		code, b := postForm(t, ts.URL+it.path, sync...)
		if err := json.Unmarshal(b, &want); code != 200 || err != nil {
			t.Fatalf("%s %s: %d %s", it.path, it.file.Name, code, b)
		}
		if it.pages == 0 {
			if got.Type != "image" {
				t.Fatalf("%s: type %q, want an image answer", it.file.Name, got.Type)
			}
			samePredictions(t, 1, got.Predictions, want.Predictions)
			continue
		}
		if got.Type != "document" || got.PageCount != it.pages || len(got.Pages) != 2 || got.Pages[0].Page != 2 || got.Pages[1].Page != 3 {
			t.Fatalf("%s: %s; want a document of %d pages answering pages 2 and 3", it.file.Name, res.Items[i].Output, it.pages)
		}
		for p := range got.Pages {
			samePredictions(t, got.Pages[p].Page, got.Pages[p].Predictions, want.Pages[p].Predictions)
		}
	}

	// Page 4 is beyond the TIFF's 3 pages: that item fails, the PDF's runs.
	st = waitJob(t, s, ts.URL, submitForm(t, ts.URL, upload{Field: "pages", Data: []byte("4")}, tif, pdf))
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 2, Succeeded: 1, Failed: 1}) || len(st.Errors) != 1 {
		t.Fatalf("job %+v; want the TIFF failed and the PDF succeeded", st)
	}
	if e := st.Errors[0]; e.Name != "scan.tif" || e.Status != 422 || e.Reason != service.ReasonBadField || !strings.Contains(e.Error, "pages 4") {
		t.Fatalf("error %+v; want scan.tif's 422 %s naming pages 4", e, service.ReasonBadField)
	}

	// A malformed pages field is refused with the job, in the words of
	// /predict_document's answer, for files and for a book alike.
	bad := upload{Field: "pages", Data: []byte("3-1")}
	_, want := postForm(t, ts.URL+"/predict_document", bad, pdf)
	for _, item := range []upload{pdf, {Field: "book", Data: []byte("https://example.org/iiif/b1/manifest.json")}} {
		code, b := postForm(t, ts.URL+"/jobs", bad, item)
		if code != 422 || !bytes.Equal(b, want) || !strings.Contains(string(b), `runs backwards`) {
			t.Errorf("POST /jobs with pages=3-1 and %s: %d %s; want 422 as /predict_document's %s", item.Field, code, b, want)
		}
	}
}
