package main

import (
	"archivekit/internal/pageclass/results"
	"archivekit/internal/service/servicetest"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/docrecord"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/modelmeta"
)

type errBody struct {
	Detail any `json:"detail"`
}

// anyResponse holds both response shapes.
type anyResponse struct {
	Type        string          `json:"type"`
	Version     string          `json:"version"`
	Predictions []prediction    `json:"predictions"`
	Thumbnail   *string         `json:"thumbnail"`
	PageCount   int             `json:"page_count"`
	Pages       []pageResult    `json:"pages"`
	Record      json.RawMessage `json:"document_json"`
	SchemaError json.RawMessage `json:"document_json_schema_error"`
}

func checkTopN(t *testing.T, preds []prediction, n int) {
	t.Helper()
	if len(preds) != n {
		t.Fatalf("%d predictions, want %d", len(preds), n)
	}
	for i, p := range preds {
		if !slices.Contains(modelmeta.Categories, p.Label) || p.Score < 0 || p.Score > 1 {
			t.Fatalf("bad prediction %+v", p)
		}
		if i > 0 && p.Score > preds[i-1].Score {
			t.Fatalf("predictions not best first: %+v", preds)
		}
	}
}

func TestPredictEndpoints(t *testing.T) {
	_, ts := startServer(t, testOptions(t), nil, nil)
	name, png := samplePage(t)
	img := upload{Field: "file", Name: name, CType: "image/png", Data: png}
	pdf3 := upload{Field: "file", Name: "three.pdf", CType: "application/pdf", Data: makePDF(3)}
	base, _ := docrecord.New("three")
	baseBytes, _ := base.Bytes()

	tests := []struct {
		name   string
		path   string
		parts  []upload
		status int
		detail string // "string" or "list" for errors
		want   string // substring of the detail
		check  func(t *testing.T, r anyResponse)
	}{
		{name: "image, defaults", path: "/predict_image", parts: []upload{img}, status: 200, check: func(t *testing.T, r anyResponse) {
			if r.Type != "image" || r.Version != "all" || string(r.Record) != "null" || string(r.SchemaError) != "null" {
				t.Fatalf("response %+v", r)
			}
			checkTopN(t, r.Predictions, 3)
			if r.Thumbnail != nil {
				t.Errorf("a thumbnail no one asked for: %.40s...", *r.Thumbnail)
			}
		}},
		// An image's thumbnail when asked for (a book job's page: the
		// service keeps no copy of it), a JPEG 160 pixels wide.
		{name: "image with thumbnail", path: "/predict_image", parts: []upload{img, {Field: "thumbnails", Data: []byte("true")}}, status: 200, check: func(t *testing.T, r anyResponse) {
			checkTopN(t, r.Predictions, 3)
			b64, ok := strings.CutPrefix(deref(r.Thumbnail), "data:image/jpeg;base64,")
			data, err := base64.StdEncoding.DecodeString(b64)
			if !ok || err != nil {
				t.Fatalf("thumbnail %.40q (%v)", deref(r.Thumbnail), err)
			}
			if c, err := jpeg.DecodeConfig(bytes.NewReader(data)); err != nil || c.Width != thumbWidth {
				t.Errorf("thumbnail %d×%d (%v), want %d wide", c.Width, c.Height, err, thumbWidth)
			}
		}},
		{name: "image, one model, all 11", path: "/predict_image", parts: []upload{img, {Field: "version", Data: []byte("v2.4")}, {Field: "topn", Data: []byte("11")}}, status: 200,
			check: func(t *testing.T, r anyResponse) {
				checkTopN(t, r.Predictions, 11)
				sum := 0.0
				for _, p := range r.Predictions {
					sum += p.Score
				}
				if math.Abs(sum-1) > 1e-3 || r.Version != "v2.4" {
					t.Fatalf("scores sum to %v, version %s", sum, r.Version)
				}
			}},
		{name: "image with record", path: "/predict_image", parts: []upload{img, {Field: "document_json_out", Data: []byte("true")}}, status: 200,
			check: func(t *testing.T, r anyResponse) {
				rec, err := docrecord.Parse(r.Record)
				if err != nil {
					t.Fatal(err)
				}
				if v, ok := rec.Get("page_categories"); !ok || v == nil {
					t.Fatalf("record lacks page_categories: %s", r.Record)
				}
				// Named as a page of a document ("caa_conference-3.png"),
				// the image is that page of that document, as the command
				// line's records name it.
				doc, page := results.SplitPageSuffix(strings.TrimSuffix(name, ".png"))
				if page == 0 {
					t.Fatalf("the sample page %s has no page number in its name", name)
				}
				if rec.DocID() != doc || !regexp.MustCompile(fmt.Sprintf(`"page":\s*"%d"`, page)).Match(r.Record) {
					t.Fatalf("doc_id %q, record %s; want %q, page %d", rec.DocID(), r.Record, doc, page)
				}
				// The request's provenance entry, with the models' licence
				// (the fixture models are not demo models: MIT).
				prog, _ := rec.Get("provenance", "contributors")
				if list, _ := prog.([]any); len(list) != 1 {
					t.Fatalf("provenance contributors %v", prog)
				}
				for path, want := range map[string]string{"provenance/license": "MIT", "provenance/contributors/0/program": "pageclass-api"} {
					parts := strings.Split(path, "/")
					var got any
					if len(parts) == 4 {
						list, _ := rec.Get(parts[0], parts[1])
						o, _ := list.([]any)[0].(*docrecord.Object)
						got, _ = o.Get(parts[3])
					} else {
						got, _ = rec.Get(parts...)
					}
					if got != want {
						t.Errorf("%s = %v, want %s", path, got, want)
					}
				}
			}},
		{name: "PDF of 3 pages", path: "/predict_document", parts: []upload{pdf3, {Field: "topn", Data: []byte("2")}}, status: 200,
			check: func(t *testing.T, r anyResponse) {
				if r.Type != "document" || r.PageCount != 3 || len(r.Pages) != 3 || r.Record != nil {
					t.Fatalf("response %+v", r)
				}
				for i, p := range r.Pages {
					if p.Page != i+1 || p.Thumbnail != "" {
						t.Fatalf("page %d: %+v", i, p)
					}
					checkTopN(t, p.Predictions, 2)
				}
			}},
		{name: "PDF with thumbnails and a baseline record", path: "/predict_document",
			parts: []upload{pdf3, {Field: "thumbnails", Data: []byte("yes")}, {Field: "document_json", Name: "three.document.json", CType: "application/json", Data: baseBytes}}, status: 200,
			check: func(t *testing.T, r anyResponse) {
				for _, p := range r.Pages {
					if !strings.HasPrefix(p.Thumbnail, "data:image/jpeg;base64,") {
						t.Fatalf("page %d has no thumbnail", p.Page)
					}
				}
				rec, err := docrecord.Parse(r.Record)
				if err != nil || rec.DocID() != "three" {
					t.Fatalf("record %v %s", err, r.Record)
				}
			}},
		{name: "missing file", path: "/predict_image", parts: []upload{{Field: "topn", Data: []byte("3")}}, status: 422, detail: "list", want: "file"},
		{name: "two file parts", path: "/predict_image", parts: []upload{img, img}, status: 422, detail: "list", want: "duplicate_field"},
		// A field sent twice is refused (the first was taken), and a
		// baseline sent as a text field is read (it was ignored).
		{name: "topn twice", path: "/predict_image", parts: []upload{img, {Field: "topn", Data: []byte("2")}, {Field: "topn", Data: []byte("3")}}, status: 422, detail: "list", want: "duplicate_field"},
		{name: "baseline as a text field", path: "/predict_image", parts: []upload{img, {Field: "document_json", Data: []byte(`{"schema_version":"1.0","doc_id":"from-text"}`)}}, status: 200,
			check: func(t *testing.T, r anyResponse) {
				if !strings.Contains(string(r.Record), `"doc_id": "from-text"`) && !strings.Contains(string(r.Record), `"doc_id":"from-text"`) {
					t.Fatalf("record %s, want the baseline's doc_id", r.Record)
				}
			}},
		{name: "not multipart", path: "/predict_image", status: 422, detail: "list", want: "file"},
		{name: "topn 0", path: "/predict_image", parts: []upload{img, {Field: "topn", Data: []byte("0")}}, status: 422, detail: "list", want: "greater than or equal to 1"},
		{name: "topn 12", path: "/predict_image", parts: []upload{img, {Field: "topn", Data: []byte("12")}}, status: 422, detail: "list", want: "less than or equal to 11"},
		{name: "topn not a number", path: "/predict_image", parts: []upload{img, {Field: "topn", Data: []byte("three")}}, status: 422, detail: "list", want: "valid integer"},
		{name: "version malformed", path: "/predict_image", parts: []upload{img, {Field: "version", Data: []byte("latest!")}}, status: 422, detail: "list", want: "version"},
		{name: "version not available", path: "/predict_image", parts: []upload{img, {Field: "version", Data: []byte("v1.3")}}, status: 422, detail: "string", want: "v1.3 cannot be served"},
		{name: "document_json_out not boolean", path: "/predict_image", parts: []upload{img, {Field: "document_json_out", Data: []byte("sure")}}, status: 422, detail: "list", want: "document_json_out"},
		{name: "PDF to /predict_image", path: "/predict_image", parts: []upload{pdf3}, status: 400, detail: "string", want: "accepts image/* only"},
		{name: "image to /predict_document", path: "/predict_document", parts: []upload{img}, status: 400, detail: "string", want: "accepts application/pdf only"},
		{name: "PDF typed application/x-pdf", path: "/predict_document", parts: []upload{{Field: "file", Name: "a.pdf", CType: "application/x-pdf", Data: makePDF(1)}}, status: 400, detail: "string", want: "application/pdf"},
		{name: "corrupt image", path: "/predict_image", parts: []upload{{Field: "file", Name: "broken.png", CType: "image/png", Data: png[:200]}}, status: 422, detail: "string", want: `"broken.png" cannot be`},
		// The service goes on after it: the cases below run on it.
		{name: "image that crashes its decoder", path: "/predict_image", parts: []upload{{Field: "file", Name: "crash-page.png", CType: "image/png", Data: png}}, status: 422, detail: "string", want: `"crash-page.png" cannot be read as an image: crash-page.png: the decoder crashed (`},
		{name: "text labelled as image", path: "/predict_image", parts: []upload{{Field: "file", Name: "notes.jpg", CType: "image/jpeg", Data: []byte("hello")}}, status: 422, detail: "string", want: "notes.jpg"},
		{name: "PNG labelled as PDF", path: "/predict_document", parts: []upload{{Field: "file", Name: "fake.pdf", CType: "application/pdf", Data: png}}, status: 422, detail: "string", want: "not a PDF"},
		{name: "multi-page TIFF to /predict_image", path: "/predict_image", parts: []upload{{Field: "file", Name: "scan.tif", CType: "image/tiff",
			Data: hostile.TIFF(hostile.TIFFPage{W: 60, H: 80, Grey: 30}, hostile.TIFFPage{W: 60, H: 80, Grey: 200})}}, status: 422, detail: "string", want: `"scan.tif" has 2 pages`},
		{name: "one-page TIFF", path: "/predict_image", parts: []upload{{Field: "file", Name: "page.tif", CType: "image/tiff",
			Data: hostile.TIFF(hostile.TIFFPage{W: 60, H: 80, Grey: 30})}}, status: 200, check: func(t *testing.T, r anyResponse) { checkTopN(t, r.Predictions, 3) }},
		// curl and most clients label a .tif or .webp they have no type
		// for application/octet-stream: such a file is taken by its
		// content, and a PDF or text so labelled is still refused.
		{name: "TIFF sent as octet-stream", path: "/predict_image", parts: []upload{{Field: "file", Name: "page.tif", CType: "application/octet-stream",
			Data: hostile.TIFF(hostile.TIFFPage{W: 60, H: 80, Grey: 30})}}, status: 200, check: func(t *testing.T, r anyResponse) { checkTopN(t, r.Predictions, 3) }},
		{name: "PNG sent as octet-stream", path: "/predict_image", parts: []upload{{Field: "file", Name: "page", CType: "application/octet-stream", Data: png}}, status: 200,
			check: func(t *testing.T, r anyResponse) { checkTopN(t, r.Predictions, 3) }},
		// Told by content where the label says nothing or the wrong thing
		// (2026-11-29): an unlabelled PDF to /predict_document (Python's
		// requests sends no type; it was 400), a multi-page TIFF labelled
		// application/pdf (it was 422), a PDF labelled image/png to
		// /predict_image (it was classified as an image, first page only).
		{name: "PDF unlabelled to /predict_document", path: "/predict_document", parts: []upload{{Field: "file", Name: "a.pdf", CType: "application/octet-stream", Data: makePDF(2)}}, status: 200,
			check: func(t *testing.T, r anyResponse) {
				if len(r.Pages) != 2 {
					t.Fatalf("%d pages, want 2", len(r.Pages))
				}
			}},
		{name: "TIFF labelled application/pdf", path: "/predict_document", parts: []upload{{Field: "file", Name: "scan.pdf", CType: "application/pdf",
			Data: hostile.TIFF(hostile.TIFFPage{W: 60, H: 80, Grey: 30}, hostile.TIFFPage{W: 60, H: 80, Grey: 200})}}, status: 200,
			check: func(t *testing.T, r anyResponse) {
				if len(r.Pages) != 2 {
					t.Fatalf("%d pages, want 2", len(r.Pages))
				}
			}},
		{name: "PDF labelled image/png", path: "/predict_image", parts: []upload{{Field: "file", Name: "a.png", CType: "image/png", Data: makePDF(1)}}, status: 400, detail: "string", want: "is a PDF"},
		{name: "PDF labelled image/jpeg to /predict_document", path: "/predict_document", parts: []upload{{Field: "file", Name: "scan.jpg", CType: "image/jpeg", Data: makePDF(1)}}, status: 400, detail: "string", want: "this file is a PDF by its content: send it labelled application/pdf, or without a content type"},
		{name: "PDF sent as octet-stream", path: "/predict_image", parts: []upload{{Field: "file", Name: "a.pdf", CType: "application/octet-stream", Data: makePDF(1)}}, status: 400, detail: "string", want: "send PDFs to /predict_document"},
		{name: "text sent as octet-stream", path: "/predict_image", parts: []upload{{Field: "file", Name: "a.tif", CType: "application/octet-stream", Data: []byte("hello")}}, status: 400, detail: "string", want: "accepts image/* only"},
		{name: "text labelled text/plain", path: "/predict_image", parts: []upload{{Field: "file", Name: "a.png", CType: "text/plain", Data: png}}, status: 400, detail: "string", want: "accepts image/* only"},
		{name: "PDF of 51 pages", path: "/predict_document", parts: []upload{{Field: "file", Name: "long.pdf", CType: "application/pdf", Data: makePDF(51)}}, status: 413, detail: "string", want: "51 pages"},
		// A baseline whose structure cannot take the categories is the
		// request's fault: 422 (it was 500 internal).
		{name: "baseline pages not a list", path: "/predict_image", parts: []upload{img, {Field: "document_json", Name: "x.json", CType: "application/json",
			Data: []byte(`{"schema_version":"1.0","doc_id":"x","pages":"all"}`)}}, status: 422, detail: "string", want: "pages is a string, not an array"},
		{name: "baseline provenance not an object", path: "/predict_image", parts: []upload{img, {Field: "document_json", Name: "x.json", CType: "application/json",
			Data: []byte(`{"schema_version":"1.0","doc_id":"x","provenance":"scanned"}`)}}, status: 422, detail: "string", want: "provenance is a string, not an object"},
		{name: "baseline not JSON", path: "/predict_image", parts: []upload{img, {Field: "document_json", Name: "x.json", CType: "application/json", Data: []byte("{")}}, status: 422, detail: "string", want: "cannot be parsed"},
		{name: "baseline of a newer schema", path: "/predict_image", parts: []upload{img, {Field: "document_json", Name: "x.json", CType: "application/json", Data: []byte(`{"schema_version":"7.0","doc_id":"x"}`)}}, status: 422, detail: "string", want: "newer schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var status int
			var b []byte
			if tc.parts == nil {
				resp, err := http.Post(ts.URL+tc.path, "application/json", strings.NewReader(`{}`))
				if err != nil {
					t.Fatal(err)
				}
				b, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			} else {
				status, b = postForm(t, ts.URL+tc.path, tc.parts...)
			}
			if status != tc.status {
				t.Fatalf("status %d, want %d: %.400s", status, tc.status, b)
			}
			if tc.detail != "" {
				var e errBody
				if err := json.Unmarshal(b, &e); err != nil {
					t.Fatal(err)
				}
				kind := "list"
				if _, ok := e.Detail.(string); ok {
					kind = "string"
				}
				if kind != tc.detail || !strings.Contains(fmt.Sprint(e.Detail), tc.want) {
					t.Fatalf("detail (%s) %v; want a %s mentioning %q", kind, e.Detail, tc.detail, tc.want)
				}
				// No answer names the service's own files (an unknown
				// version's named its model folders).
				if strings.Contains(fmt.Sprint(e.Detail), os.TempDir()) || strings.Contains(fmt.Sprint(e.Detail), "model_v") {
					t.Fatalf("detail names the service's files: %v", e.Detail)
				}
				return
			}
			// Every answer is what the service's OpenAPI document says.
			servicetest.MatchesSchema(t, openapiJSON, map[string]string{"/predict_image": "ImageResponse", "/predict_document": "DocumentResponse"}[tc.path], b)
			var r anyResponse
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			tc.check(t, r)
		})
	}
}

func TestInfoOpenAPIFrontend(t *testing.T) {
	_, ts := startServer(t, testOptions(t), nil, nil)
	for _, tc := range []struct {
		path, golden, ctype, want string
		status                    int
	}{
		{"/", "root.golden.json", "application/json", "/info", 200},
		{"/info", "info.golden.json", "application/json", "max_pdf_pages", 200},
		{"/openapi.json", "openapi.golden.json", "application/json", "/predict_document", 200},
		{"/frontend", "", "text/html; charset=utf-8", "<form id=\"form\">", 200},
		{"/frontend/app.js", "", "text/javascript; charset=utf-8", "/predict_document", 200},
		{"/frontend/style.css", "", "text/css; charset=utf-8", ".bar", 200},
		{"/frontend/missing.js", "", "", "Not Found", 404},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp, err := http.Get(ts.URL + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !bytes.Contains(b, []byte(tc.want)) {
				t.Fatalf("status %d, body %.300s; want %d with %q", resp.StatusCode, b, tc.status, tc.want)
			}
			if tc.ctype != "" && resp.Header.Get("Content-Type") != tc.ctype {
				t.Fatalf("Content-Type %q, want %q", resp.Header.Get("Content-Type"), tc.ctype)
			}
			if tc.path == "/info" {
				servicetest.MatchesSchema(t, openapiJSON, "ClassifierInfo", b)
				// Whether PDFium is loaded depends on the tests run before
				// in this process: checked here, fixed for the golden file.
				want := fmt.Sprintf(`"pdf_second_look":%t`, imageio.SecondLook(imageio.RendererPoppler))
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("/info: %.300s; want %s", b, want)
				}
				b = bytes.Replace(b, []byte(want), []byte(`"pdf_second_look":false`), 1)
			}
			if tc.golden != "" {
				golden(t, tc.golden, b)
			}
		})
	}
}

// TestDemoFallback: with no models folder given and none of the published
// models in the default one, the demo ensemble is served and the log says
// so; a given -models folder never falls back.
func TestDemoFallback(t *testing.T) {
	o := testOptions(t)
	o.Demo, o.Models = o.Models, "" // the shipped FOLDER_MODELS, ./model, absent here
	var log bytes.Buffer
	_, ts := startServer(t, o, map[string]string{"LOG_LEVEL": "WARNING", "LOG_FORMAT": "json"}, &log)
	name, png := samplePage(t)
	if status, b := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: name, CType: "image/png", Data: png}); status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	if !strings.Contains(log.String(), "demo ensemble") {
		t.Fatalf("no demo warning in the log: %s", log.String())
	}
	given := o
	given.Models = t.TempDir()
	s, err := newServer(given, func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The hint names the service's flag, -models, not the CLI's -m.
	if err := s.svc.WarmUp(t.Context()); err == nil || !strings.Contains(err.Error(), "0 of 5") ||
		!strings.Contains(err.Error(), "give -models DIR") || strings.Contains(err.Error(), "-m DIR") {
		t.Fatalf("warm-up with an empty -models folder: %v", err)
	}
	// Neither published nor demo models: warm-up fails naming the folders.
	o.Demo = ""
	s, err = newServer(o, func(string) (string, bool) { return "", false }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.svc.WarmUp(t.Context()); err == nil || !strings.Contains(err.Error(), "model_v14") {
		t.Fatalf("warm-up without models: %v", err)
	}
}

// TestBatchingKeepsResults: concurrent requests give the same scores with
// and without cross-request batching, and batching does mix requests.
func TestBatchingKeepsResults(t *testing.T) {
	o := testOptions(t)
	o.BatchWait = 20 * time.Millisecond // so that concurrent requests meet
	batched, bts := startServer(t, o, nil, nil)
	o.NoBatch = true
	_, dts := startServer(t, o, nil, nil)
	name, png := samplePage(t)
	run := func(url string) [][]prediction {
		out := make([][]prediction, 12)
		var wg sync.WaitGroup
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, b := postForm(t, url+"/predict_image", upload{Field: "file", Name: name, CType: "image/png", Data: png}, upload{Field: "topn", Data: []byte("11")})
				if status != 200 {
					t.Errorf("status %d: %s", status, b)
				}
				var r anyResponse
				_ = json.Unmarshal(b, &r)
				out[i] = r.Predictions
			}()
		}
		wg.Wait()
		return out
	}
	// The same scores, within a rounding of the fourth decimal: a batch's
	// sums may differ from one image's in the eighth (classify's tests
	// allow 1e-6 between batch sizes), which can flip a rounding.
	same := func(x, y []prediction) bool {
		if len(x) != len(y) || len(x) != 11 {
			return false
		}
		want := map[string]float64{}
		for _, p := range y {
			want[p.Label] = p.Score
		}
		for _, p := range x {
			if w, ok := want[p.Label]; !ok || math.Abs(p.Score-w) > 1.5e-4 {
				return false
			}
		}
		return true
	}
	a, b := run(bts.URL), run(dts.URL)
	for i := range a {
		if !same(a[i], a[0]) || !same(b[i], a[0]) {
			t.Fatalf("scores differ:\nbatched %v\ndirect  %v", a[i], b[i])
		}
	}
	var m bytes.Buffer
	_ = batched.svc.Metrics.Write(&m)
	if !strings.Contains(m.String(), "inference_batch_size_count") || strings.Contains(m.String(), "inference_batch_size_count 0\n") {
		t.Fatalf("no batch sizes in the metrics:\n%s", m.String())
	}
}

// TestMetricsCountPages: /metrics counts the pages classified by their
// first category (the answer's), and the pages flagged, over requests.
func TestMetricsCountPages(t *testing.T) {
	s, ts := startServer(t, testOptions(t), nil, nil)
	name, png := samplePage(t)
	var first string
	for i := 0; i < 3; i++ {
		status, b := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: name, CType: "image/png", Data: png})
		if status != 200 {
			t.Fatalf("status %d: %s", status, b)
		}
		var r anyResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		first = r.Predictions[0].Label
	}
	var m bytes.Buffer
	_ = s.svc.Metrics.Write(&m)
	text := m.String()
	want := fmt.Sprintf("%s{category=%q} 3\n", metricPages, first)
	if !strings.Contains(text, want) || !strings.Contains(text, "# TYPE "+metricFlagged+" counter\n") {
		t.Errorf("metrics lack %q or %s:\n%s", want, metricFlagged, text)
	}
}

// TestDemoStatus: an answer the demo models produced says so, with their
// names; one of the models given with -models does not; both carry their
// licence.
func TestDemoStatus(t *testing.T) {
	name, png := samplePage(t)
	for _, demo := range []bool{true, false} {
		o := testOptions(t)
		if demo {
			o.Demo, o.Models = o.Models, "" // the shipped FOLDER_MODELS, ./model, absent here
		}
		_, ts := startServer(t, o, nil, nil)
		status, b := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: name, CType: "image/png", Data: png})
		if status != 200 {
			t.Fatalf("demo %v: status %d: %s", demo, status, b)
		}
		var r struct {
			Demo       *bool    `json:"demo"`
			DemoModels []string `json:"demo_models"`
			License    string   `json:"license"`
			LicenseURL string   `json:"license_url"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if demo && (r.Demo == nil || !*r.Demo || strings.Join(r.DemoModels, ",") != "v1.4,v2.4,v3.4,v4.4,v5.4") {
			t.Errorf("demo answer: %s", b)
		}
		// The licence the answer carries (it said none): the demo models'
		// is CC BY-NC 4.0.
		if r.License == "" || r.LicenseURL == "" || demo && r.License != "CC BY-NC 4.0" {
			t.Errorf("demo %v: licence %q %q", demo, r.License, r.LicenseURL)
		}
		if !demo && (r.Demo != nil || r.DemoModels != nil) {
			t.Errorf("answer of the given models says demo: %s", b)
		}
	}
}

// TestPrecisionOption: -precision is checked before the service starts
// (an unknown one, and fp16 with -device cpu, are configuration errors),
// and a precision that runs on the device starts the service, saying
// which in the log.
func TestPrecisionOption(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	for _, c := range []struct{ precision, err string }{{"int8", "fp32, tf32, bf16, fp16"}, {"fp16", "CUDA only"}} {
		o := testOptions(t)
		o.Device, o.Precision = "cpu", c.precision
		if _, err := newServer(o, none, io.Discard); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("-precision %s -device cpu: %v, want an error saying %q", c.precision, err, c.err)
		}
	}
	// A device the models cannot be loaded on (it failed the warm-up,
	// naming a model file).
	o := testOptions(t)
	o.Device = "gpu"
	if _, err := newServer(o, none, io.Discard); err == nil || !strings.Contains(err.Error(), "-device") || !strings.Contains(err.Error(), "want cpu, cuda:N") {
		t.Errorf("-device gpu: %v, want a configuration error naming -device", err)
	}
	o = testOptions(t)
	o.Precision = "tf32"
	var log bytes.Buffer
	startServer(t, o, map[string]string{"LOG_FORMAT": "json"}, &log)
	if !strings.Contains(log.String(), `"precision":"fp32"`) || !strings.Contains(log.String(), "on the CPU it is fp32") {
		t.Errorf("tf32 on the CPU: the log does not say it runs as fp32: %s", log.String())
	}
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
