package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	_ "image/png"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"archivekit/internal/book/booktest"
	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/paradata"
	"archivekit/internal/rocrate"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/version"
)

// TestJobs: one job of a page image, a PDF of three pages and a text file:
// the image is classified as /predict_image would, the PDF as
// /predict_document would (same answers), the text file fails with
// /predict_image's 400, and the job succeeds with one error whose reason
// is the one of that answer (unsupported_format).
func TestJobs(t *testing.T) {
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir()}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	name, png := samplePage(t)
	img := upload{Field: "file", Name: name, CType: "image/png", Data: png}
	pdf := upload{Field: "file", Name: "three.pdf", CType: "application/pdf", Data: makePDF(3)}
	txt := upload{Field: "file", Name: "notes.txt", CType: "text/plain", Data: []byte("not a page")}
	topn := upload{Field: "topn", Data: []byte("2")}
	body, ctype := multipartForm(t, topn, img, pdf, txt)
	req, _ := http.NewRequest("POST", ts.URL+"/jobs", body)
	req.Header.Set("Content-Type", ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st jobs.Status
	if b := servicetest.ReadBody(t, resp); resp.StatusCode != 202 || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	st = waitJob(t, s, ts.URL, st)
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Failed: 1}) || st.Errors[0].Name != "notes.txt" || st.Errors[0].Status != 400 {
		t.Fatalf("%+v", st)
	}
	res := jobResults(t, ts.URL, st.ID)
	// GET /jobs/{id} says the failed item's reason, its answer's.
	var failed service.ErrorBody
	if err := json.Unmarshal(res.Items[2].Output, &failed); err != nil || failed.Reason != service.ReasonUnsupportedFormat || st.Errors[0].Reason != failed.Reason {
		t.Fatalf("notes.txt: GET /jobs/{id} reason %q, answer %s (%v), want both %q", st.Errors[0].Reason, res.Items[2].Output, err, service.ReasonUnsupportedFormat)
	}
	for i, want := range []struct {
		path string
		part upload
	}{{"/predict_image", img}, {"/predict_document", pdf}} {
		code, sync := postForm(t, ts.URL+want.path, topn, want.part)
		var a, b anyResponse
		if code != 200 || json.Unmarshal(sync, &a) != nil || json.Unmarshal(res.Items[i].Output, &b) != nil {
			t.Fatalf("%s: %d %s / %s", want.path, code, sync, res.Items[i].Output)
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Fatalf("item %d differs from %s:\n%s\n%s", i, want.path, jb, ja)
		}
		if i == 1 && b.PageCount != 3 {
			t.Fatalf("PDF item: %d pages", b.PageCount)
		}
	}
	checkThumbnails(t, ts.URL, st.ID, png)
}

// checkThumbnails checks GET /jobs/{id}/results/{item}/thumbnail of job id
// of TestJobs: item 0, the page image png, has a thumbnail 160 pixels wide
// of the same page (its shape and mean grey within 6 levels); item 1, a PDF,
// has its pages' thumbnails in its answer; item 2 is no image; there is no
// item 3, nor a job "nope". The OpenAPI document describes the route.
func checkThumbnails(t *testing.T, base, id string, png []byte) {
	t.Helper()
	page, _, err := image.Decode(bytes.NewReader(png))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		item   string
		status int
		reason service.Reason
		says   string
	}{
		{"0", 200, "", ""},
		{"1", 409, service.ReasonUnsupportedFormat, "thumbnails=true"},
		{"2", 422, service.ReasonUndecodable, "notes.txt"},
		{"3", 404, service.ReasonItemNotFound, "0 to 2"},
		{"nope", 404, service.ReasonJobNotFound, "nope"},
	} {
		job := id
		if c.item == "nope" {
			job, c.item = "nope", "0"
		}
		r, err := http.Get(base + "/jobs/" + job + "/results/" + c.item + "/thumbnail")
		if err != nil {
			t.Fatal(err)
		}
		b := servicetest.ReadBody(t, r)
		if r.StatusCode != c.status {
			t.Errorf("job %s item %s: %d %.300s, want %d", job, c.item, r.StatusCode, b, c.status)
			continue
		}
		if c.status != 200 {
			var e service.ErrorBody
			if json.Unmarshal(b, &e) != nil || e.Reason != c.reason || !strings.Contains(fmt.Sprint(e.Detail), c.says) {
				t.Errorf("job %s item %s: %s, want reason %s saying %q", job, c.item, b, c.reason, c.says)
			}
			continue
		}
		thumb, err := jpeg.Decode(bytes.NewReader(b))
		if err != nil || r.Header.Get("Content-Type") != "image/jpeg" {
			t.Fatalf("item 0: %q, %v", r.Header.Get("Content-Type"), err)
		}
		pb, tb := page.Bounds(), thumb.Bounds()
		if tb.Dx() != 160 || math.Abs(float64(tb.Dy())-float64(pb.Dy()*160)/float64(pb.Dx())) > 1 {
			t.Errorf("thumbnail %v of a page %v, want 160 pixels wide, the same shape", tb, pb)
		}
		if pm, tm := meanGrey(page), meanGrey(thumb); math.Abs(pm-tm) > 6 {
			t.Errorf("thumbnail's mean grey %.1f, the page's %.1f", tm, pm)
		}
	}
	if r, err := http.Get(base + "/openapi.json"); err != nil || !strings.Contains(string(servicetest.ReadBody(t, r)), `"/jobs/{id}/results/{item}/thumbnail"`) {
		t.Errorf("the OpenAPI document does not describe the thumbnails of a job's items (%v)", err)
	}
}

// meanGrey is an image's mean grey level (0–255).
func meanGrey(img image.Image) float64 {
	var sum float64
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			g := color.GrayModel.Convert(img.At(x, y)).(color.Gray)
			sum += float64(g.Y)
		}
	}
	return sum / float64(b.Dx()*b.Dy())
}

// waitJob polls job st until it ends (at most a minute), woken by the
// queue's changes.
func waitJob(t testing.TB, s *server, base string, st jobs.Status) jobs.Status {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for st.State != jobs.Succeeded && st.State != jobs.Failed {
		if time.Now().After(deadline) {
			t.Fatalf("job still %+v", st)
		}
		select {
		case <-s.jobs.Changed():
		case <-time.After(time.Second):
		}
		r, err := http.Get(base + "/jobs/" + st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(servicetest.ReadBody(t, r), &st); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// submitForm posts a job's form and returns its status (202).
func submitForm(t testing.TB, base string, parts ...upload) jobs.Status {
	t.Helper()
	code, b := postForm(t, base+"/jobs", parts...)
	var st jobs.Status
	if code != 202 || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", code, b)
	}
	return st
}

// TestJobsBook (issue 30 item 1): a job names a IIIF manifest by its book
// field: the worker reads the book, and its items are the pages the pages
// field selects, each fetched once from the loopback server (BOOK_HOSTS)
// as its image service's level allows and classified as /predict_document
// classifies the same page; each item's result carries the canvas id,
// label and position. A page whose image cannot be fetched fails alone
// (502); a book that cannot be read fails the job with its reason; a file
// and a book together, and a book URL that is not http(s), are refused.
func TestJobsBook(t *testing.T) {
	bk := booktest.New(t, classifytest.Pages(t, 1), 4, true)
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), EnvBookHosts: must(url.Parse(bk.URL)).Host}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) })
	field := func(k, v string) upload { return upload{Field: k, Data: []byte(v)} }

	st := waitJob(t, s, ts.URL, submitForm(t, ts.URL, field("book", bk.ManifestURL()), field("pages", "1-3"), field("topn", "2")))
	if st.State != jobs.Succeeded || st.Book != bk.ManifestURL() || st.Items != (jobs.Counts{Total: 3, Succeeded: 3}) {
		t.Fatalf("%+v", st)
	}
	servedOnce(t, bk, 3)
	// A book's page's thumbnail: the job keeps no copy of it, so its image
	// is fetched again, once a request; one that cannot be is a 502.
	r0, _ := http.Get(ts.URL + "/jobs/" + st.ID + "/results/0/thumbnail")
	b0 := servicetest.ReadBody(t, r0)
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(b0)); r0.StatusCode != 200 || err != nil || cfg.Width < 1 || cfg.Width > thumbWidth {
		t.Errorf("a book page's thumbnail: %d %v, want a JPEG at most %d pixels wide", r0.StatusCode, err, thumbWidth)
	}
	// Asked again, it is the thumbnail kept with the job: nothing fetched.
	r0, _ = http.Get(ts.URL + "/jobs/" + st.ID + "/results/0/thumbnail")
	if again := servicetest.ReadBody(t, r0); r0.StatusCode != 200 || !bytes.Equal(again, b0) || r0.Header.Get("Content-Type") != "image/jpeg" {
		t.Errorf("the thumbnail asked again: %d, %d bytes (first %d)", r0.StatusCode, len(again), len(b0))
	}
	if log, denied, _, _ := bk.Served(); len(log) != 5 || len(denied) > 0 {
		t.Errorf("after the thumbnail, asked twice, requests %v (denied %v), want page 1's image once more", log, denied)
	}
	bookJob := st.ID
	res := jobResults(t, ts.URL, st.ID)
	code, body := postForm(t, ts.URL+"/predict_document", field("book", bk.ManifestURL()), field("pages", "1-3"), field("topn", "2"))
	var doc struct {
		Pages []struct {
			Predictions []prediction `json:"predictions"`
		} `json:"pages"`
	}
	if code != 200 || json.Unmarshal(body, &doc) != nil || len(doc.Pages) != 3 {
		t.Fatalf("/predict_document: %d %s", code, body)
	}
	for i, it := range res.Items {
		b := it.Book
		if b == nil || b.Page != i+1 || b.ID != fmt.Sprintf("%s/iiif/book/canvas/p%d", bk.URL, i+1) || b.Label != fmt.Sprintf("f. %d", i+1) || !strings.HasPrefix(b.Source, bk.URL) {
			t.Errorf("item %d: book %+v", i, b)
		}
		var one struct {
			Predictions []prediction `json:"predictions"`
		}
		if err := json.Unmarshal(it.Output, &one); err != nil || len(one.Predictions) != 2 {
			t.Fatalf("item %d: %s", i, it.Output)
		}
		for k, p := range one.Predictions {
			if q := doc.Pages[i].Predictions[k]; p.Label != q.Label || math.Abs(p.Score-q.Score) > 1e-3 {
				t.Errorf("item %d: %+v, /predict_document page %d: %+v", i, one.Predictions, i+1, doc.Pages[i].Predictions)
			}
		}
	}

	// The job's run metadata is the classifier's run record (issue 30
	// item 5): the models that answered with their digests, the book, the
	// counts; the archive's crate describes the job.
	var rm paradata.Document
	if err := json.Unmarshal(res.RunMetadata, &rm); err != nil {
		t.Fatalf("run_metadata %s: %v", res.RunMetadata, err)
	}
	if rm.Program != paradata.Program || rm.Status != paradata.StatusCompleted || rm.ToolVersion != version.String() || len(rm.Models) == 0 ||
		rm.Config["book"] != bk.ManifestURL() || rm.Config["service"] != "pageclass-api" || rm.License == "" ||
		rm.Statistics.InputFilesTotal != 3 || rm.Statistics.SuccessfullyProcessed != 3 || rm.Statistics.OutputCountsByType["json"] != 3 {
		t.Errorf("run metadata %s", res.RunMetadata)
	}
	// The precision as it ran (it said the "auto" asked), and the
	// orientation model or its absence, as pageclass records them.
	if _, ok := rm.Review["rotation_model"]; rm.Config["precision"] != "fp32" || !ok {
		t.Errorf("run metadata: precision %v, review %v; want fp32 and the rotation model", rm.Config["precision"], rm.Review)
	}
	for _, m := range rm.Models {
		if !strings.HasPrefix(m.Digest, "sha256:") || m.Path == "" {
			t.Errorf("model %+v: no digest or folder", m)
		}
	}
	z, _ := http.Get(ts.URL + res.ROCrate)
	zb := servicetest.ReadBody(t, z)
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if f.Name == rocrate.MetadataFile {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			if bad := rocrate.Check(b, ""); len(bad) > 0 || !strings.Contains(string(b), `"CreateAction"`) || !strings.Contains(string(b), bk.ManifestURL()) {
				t.Errorf("crate %q:\n%s", bad, b)
			}
		}
	}

	// A page whose image is gone fails alone; the others are classified.
	bk.Reset()
	bk.Gone(1)
	r1, _ := http.Get(ts.URL + "/jobs/" + bookJob + "/results/1/thumbnail")
	if b := servicetest.ReadBody(t, r1); r1.StatusCode != 502 || !strings.Contains(string(b), `"fetch_failed"`) || !strings.Contains(string(b), "fetched again from") || !strings.Contains(string(b), "404") {
		t.Errorf("the thumbnail of a book page whose image is gone: %d %s, want 502 fetch_failed saying why", r1.StatusCode, b)
	}
	st = waitJob(t, s, ts.URL, submitForm(t, ts.URL, field("book", bk.ManifestURL()), field("pages", "1-3")))
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Failed: 1}) ||
		st.Errors[0].Status != 502 || st.Errors[0].Book == nil || st.Errors[0].Book.Page != 2 || !strings.Contains(st.Errors[0].Error, "not fetched") {
		t.Fatalf("a page gone: %+v", st)
	}

	st = waitJob(t, s, ts.URL, submitForm(t, ts.URL, field("book", bk.URL+"/iiif/none.json")))
	if st.State != jobs.Failed || st.Items.Total != 0 || !strings.Contains(st.Error, "404") {
		t.Fatalf("a book that is not there: %+v", st)
	}
	for _, c := range []struct {
		name  string
		parts []upload
		says  string
	}{
		{"file and book", []upload{field("book", bk.ManifestURL()), {Field: "file", Name: "a.png", CType: "image/png", Data: []byte("x")}}, "not both"},
		{"not http", []upload{field("book", "file:///etc/passwd")}, "http(s) URL"},
		// Refused with the job, as each item would be (every item failed
		// 422 and the job had no run metadata).
		{"unknown version", []upload{field("book", bk.ManifestURL()), field("version", "best")}, "another published revision"},
		{"topn 0", []upload{field("book", bk.ManifestURL()), field("topn", "0")}, "greater than or equal to 1"},
		{"a version not served", []upload{field("book", bk.ManifestURL()), field("version", "v9.9")}, "version v9.9 cannot be served"},
		{"a record that is not JSON", []upload{field("book", bk.ManifestURL()), field("document_json", "{bad")}, "document_json cannot be parsed"},
		{"a record upload that is not JSON", []upload{field("book", bk.ManifestURL()), {Field: "document_json", Name: "r.json", CType: "application/json", Data: []byte("{bad")}}, "document_json cannot be parsed"},
	} {
		if code, b := postForm(t, ts.URL+"/jobs", c.parts...); code != 422 || !strings.Contains(string(b), c.says) {
			t.Errorf("%s: %d %s", c.name, code, b)
		}
	}
	if d := servicetest.FormField(t, ts.URL, "/jobs", "book"); !strings.Contains(d, "METS file") {
		t.Errorf("the OpenAPI of POST /jobs describes no book field: %q", d)
	}
}

// TestJobsItemWorkers: with JOBS_ITEM_WORKERS=3 the service runs a job's
// items three at once, and each page image is classified as
// /predict_image classifies it alone: the same categories in the same
// order, scores within 1e-4 (forward passes may batch pages of the job
// together). That the items do run at once is TestItemWorkers' (in
// internal/jobs), which waits for three calls at the same time.
func TestJobsItemWorkers(t *testing.T) {
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), "JOBS_ITEM_WORKERS": "3"}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	if n := s.jobs.ItemWorkers(); n != 3 {
		t.Fatalf("%d items at once, want 3", n)
	}
	var parts []upload
	for _, p := range classifytest.Pages(t, 1)[:7] {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, upload{Field: "file", Name: filepath.Base(p), CType: "image/png", Data: b})
	}
	st := waitJob(t, s, ts.URL, submitForm(t, ts.URL, parts...))
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: len(parts), Succeeded: len(parts)}) {
		t.Fatalf("%+v", st)
	}
	var res jobs.Results
	r, err := http.Get(ts.URL + "/jobs/" + st.ID + "/results")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(servicetest.ReadBody(t, r), &res); err != nil {
		t.Fatal(err)
	}
	for i, part := range parts {
		code, sync := postForm(t, ts.URL+"/predict_image", part)
		var alone, item anyResponse
		if code != 200 || json.Unmarshal(sync, &alone) != nil || json.Unmarshal(res.Items[i].Output, &item) != nil {
			t.Fatalf("%s: %d %s / %s", part.Name, code, sync, res.Items[i].Output)
		}
		if res.Items[i].Name != part.Name || len(item.Predictions) != len(alone.Predictions) || len(item.Predictions) == 0 {
			t.Fatalf("item %d (%s): %+v, alone %+v", i, res.Items[i].Name, item.Predictions, alone.Predictions)
		}
		for k, p := range item.Predictions {
			if a := alone.Predictions[k]; p.Label != a.Label || math.Abs(p.Score-a.Score) > 1e-4 {
				t.Errorf("%s: prediction %d %+v in the job, %+v alone", part.Name, k, p, a)
			}
		}
	}
}

// A book job whose book is at a host the service refuses (here a loopback
// address, with no BOOK_HOSTS) fails at once, its error naming the host
// and BOOK_HOSTS, as /predict_document answers the same book: the refusal
// is no passing failure. Before, the job waited and read the book again
// for a minute, then failed without saying how to allow the host.
// TestJobsBookSparseServices: a book job over a manifest that says only
// each image service's id, and /predict_document over it, read each page's
// info.json once and ask only what its level and sizes allow (a level 0
// server was asked for its full image).
func TestJobsBookSparseServices(t *testing.T) {
	bk := booktest.New(t, classifytest.Pages(t, 1), 3, true)
	bk.Sparse = true
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), EnvBookHosts: must(url.Parse(bk.URL)).Host}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) })
	field := func(k, v string) upload { return upload{Field: k, Data: []byte(v)} }
	check := func(what string) {
		t.Helper()
		_, denied, sizes, _ := bk.Served()
		if len(denied) > 0 {
			t.Errorf("%s: requests the levels do not allow: %v", what, denied)
		}
		for i := range bk.Images {
			if n := bk.Requests()[fmt.Sprintf("/iiif/img/%d/info.json", i)]; n != 1 || sizes[i] == "max" || sizes[i] == "" {
				t.Errorf("%s: page %d (level %d): info.json read %d times, image asked at %q", what, i+1, bk.Levels[i], n, sizes[i])
			}
		}
		bk.Reset()
	}
	st := waitJob(t, s, ts.URL, submitForm(t, ts.URL, field("book", bk.ManifestURL())))
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 3}) {
		t.Fatalf("%+v", st)
	}
	check("book job")
	if code, body := postForm(t, ts.URL+"/predict_document", field("book", bk.ManifestURL())); code != 200 {
		t.Fatalf("/predict_document: %d %s", code, body)
	}
	check("/predict_document")
}

// TestJobsBookProblems: what the reader said of a book job's book (a
// canvas without an image here) is in the job's run metadata warnings, as
// pageclass's run metadata has it (it was said nowhere).
func TestJobsBookProblems(t *testing.T) {
	bk := booktest.New(t, classifytest.Pages(t, 1), 3, true)
	bk.NoImage(1)
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), EnvBookHosts: must(url.Parse(bk.URL)).Host}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) })
	st := waitJob(t, s, ts.URL, submitForm(t, ts.URL, upload{Field: "book", Data: []byte(bk.ManifestURL())}))
	if st.State != jobs.Succeeded {
		t.Fatalf("%+v", st)
	}
	res := jobResults(t, ts.URL, st.ID)
	var rm paradata.Document
	if err := json.Unmarshal(res.RunMetadata, &rm); err != nil {
		t.Fatal(err)
	}
	want := "book: " + bk.URL + "/iiif/book/canvas/p2: no image"
	if !slices.Contains(rm.Warnings, want) {
		t.Errorf("run metadata warnings %q, want %q", rm.Warnings, want)
	}
}

func TestJobsBookHostRefused(t *testing.T) {
	bk := booktest.New(t, classifytest.Pages(t, 1), 2, true)
	s, ts := jobServer(t)
	st := waitJob(t, s, ts.URL, submitForm(t, ts.URL, upload{Field: "book", Data: []byte(bk.ManifestURL())}))
	host := must(url.Parse(bk.URL)).Host
	if st.State != jobs.Failed || !strings.Contains(st.Error, "host "+host+" refused") || !strings.Contains(st.Error, "BOOK_HOSTS="+host) {
		t.Fatalf("job %+v; want failed, naming %s and BOOK_HOSTS", st, host)
	}
	if log, _, _, _ := bk.Served(); len(log) != 0 {
		t.Errorf("the refused host was asked %v", log)
	}
}

// TestJobsOpenAPIForm: the document's POST /jobs takes /predict_image's
// form fields, typed as there (its form is a referenced schema: none was
// found), and the book's page selection.
func TestJobsOpenAPIForm(t *testing.T) {
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir()}, nil)
	resp, err := http.Get(ts.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var post struct {
		RequestBody struct {
			Content map[string]struct {
				Schema struct{ Properties map[string]map[string]any }
			}
		}
	}
	if err := json.Unmarshal(doc.Paths["/jobs"]["post"], &post); err != nil {
		t.Fatal(err)
	}
	form := post.RequestBody.Content["multipart/form-data"].Schema.Properties
	for _, f := range []string{"file", "version", "topn", "book", "pages", "callback_url"} {
		if form[f] == nil {
			t.Errorf("POST /jobs does not describe %s (it has %d fields)", f, len(form))
		}
	}
}
