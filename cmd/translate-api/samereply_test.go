package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
)

// TestSameReplyBackendError: a translation service that answers one text
// for every request (a network's sign-in page served as text) makes
// /translate answer 500 backend_error saying so, and no document. Before,
// each line sent alone got that text as its translation, answered 200.
func TestSameReplyBackendError(t *testing.T) {
	mt := translatortest.New(translatortest.Config{Garbage: func(string) string { return "Please sign in to the network" }})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	alto := readFile(t, sharedData(t, "translator/alto/MTX201501307_anon.alto.xml"))
	body, ct := multipartBody(t, part{Field: "file", Name: "MTX201501307_anon.alto.xml", File: true, Data: alto},
		part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	a := servicetest.CheckError(t, resp.StatusCode, b, 500, "backend_error", "answers the same text whatever it is sent")
	if strings.Contains(string(b), "<alto") {
		t.Errorf("a document was answered: %.200s", b)
	}
	t.Logf("%s", a.Detail)
}

// TestJobsSameReplyWithdraws: in a job against a service that answers one
// text to everything, the third item is refused, and the two items that
// succeeded before with that text are withdrawn while the job runs: each
// ends failed (500 backend_error, saying so), and its result is that
// error, not the document. Before, both stayed succeeded with the sign-in
// text as their translation, and so did the third when it ran again past
// the service's first ten calls.
func TestJobsSameReplyWithdraws(t *testing.T) {
	mt := translatortest.New(translatortest.Config{Garbage: func(string) string { return "Please sign in to the network" }})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	parts := []part{{Field: "source_lang", Data: []byte("cs")}}
	for i, text := range []string{"Starý dům stojí nad řekou", "Děti si hrají na zahradě u domu", "Večer přišla bouřka s deštěm"} {
		parts = append(parts, part{Field: "file", Name: fmt.Sprintf("%d.alto.xml", i), File: true, Data: smallALTO(text)})
	}
	body, ctype := multipartBody(t, parts...)
	resp := post(t, ts.URL+"/jobs", ctype, body)
	b := readBody(t, resp)
	var st jobs.Status
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	// The third item waits to run again (a failed backend is a passing
	// failure), and is refused again then.
	st = pollJob(t, ts.URL, st.ID, 30*time.Second, func(st jobs.Status) bool { return st.Items.Failed == 2 })
	if st.Items.Succeeded != 0 || st.Items.Queued != 1 || len(st.Errors) != 2 {
		t.Fatalf("job %+v: want two items failed, the third to run again", st)
	}
	for _, e := range st.Errors {
		if e.Item > 1 || e.Status != 500 || e.Reason != "backend_error" || !strings.Contains(e.Error, "withdrawn") {
			t.Errorf("item %d: %d %s %q", e.Item, e.Status, e.Reason, e.Error)
		}
	}
	for i := range 2 {
		resp, err := http.Get(fmt.Sprintf("%s/jobs/%s/results/%d", ts.URL, st.ID, i))
		if err != nil {
			t.Fatal(err)
		}
		b := readBody(t, resp)
		servicetest.CheckError(t, resp.StatusCode, b, 500, "backend_error", "withdrawn")
	}
}
