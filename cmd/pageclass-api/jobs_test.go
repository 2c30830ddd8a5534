package main

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service/servicetest"
)

// TestJobs: one job of a page image, a PDF of three pages and a text file:
// the image is classified as /predict_image would, the PDF as
// /predict_document would (same answers), the text file fails with
// /predict_image's 400, and the job succeeds with one error.
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
	deadline := time.Now().Add(60 * time.Second)
	for st.State != jobs.Succeeded && st.State != jobs.Failed {
		if time.Now().After(deadline) {
			t.Fatalf("job still %+v", st)
		}
		select {
		case <-s.jobs.Changed():
		case <-time.After(time.Second):
		}
		r, err := http.Get(ts.URL + "/jobs/" + st.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(servicetest.ReadBody(t, r), &st); err != nil {
			t.Fatal(err)
		}
	}
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Failed: 1}) || st.Errors[0].Name != "notes.txt" || st.Errors[0].Status != 400 {
		t.Fatalf("%+v", st)
	}
	var res jobs.Results
	r, _ := http.Get(ts.URL + "/jobs/" + st.ID + "/results")
	if err := json.Unmarshal(servicetest.ReadBody(t, r), &res); err != nil {
		t.Fatal(err)
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
}
