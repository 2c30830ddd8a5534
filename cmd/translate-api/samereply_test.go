package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
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
// text to everything for a while (a network's sign-in page), the item whose
// call tells it is refused, and the items that succeeded before with that
// text are withdrawn while the job runs: they run again, and once the
// service translates again every item ends succeeded with its translation.
// Before, both stayed succeeded with the sign-in text as their
// translation; then they were failed for good (500 backend_error) in a job
// said to succeed.
func TestJobsSameReplyWithdraws(t *testing.T) {
	var calls atomic.Int32
	mt := translatortest.New(translatortest.Config{Garbage: func(in string) string {
		if calls.Add(1) <= 6 {
			return "Please sign in to the network"
		}
		return translatortest.Translate(in)
	}})
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
	st = pollJob(t, ts.URL, st.ID, 60*time.Second, func(st jobs.Status) bool { return st.State != jobs.Queued && st.State != jobs.Running })
	if st.State != jobs.Succeeded || st.Items.Succeeded != 3 || len(st.Errors) != 0 {
		t.Fatalf("job %+v: want every item succeeded", st)
	}
	if n := calls.Load(); n <= 6 {
		t.Fatalf("%d calls: the sign-in text was never refused", n)
	}
	for i := range 3 {
		resp, err := http.Get(fmt.Sprintf("%s/jobs/%s/results/%d", ts.URL, st.ID, i))
		if err != nil {
			t.Fatal(err)
		}
		b := readBody(t, resp)
		if resp.StatusCode != 200 || strings.Contains(string(b), "sign in") || !strings.Contains(string(b), "<alto") {
			t.Errorf("result %d: %d %.300s", i, resp.StatusCode, b)
		}
	}
}

// TestSameReplyNamesSyncAnswers: when a reply is refused, the warning
// names the synchronous requests answered before with it (their files and
// when they came), which went out and cannot be taken back (it said only
// how many calls).
func TestSameReplyNamesSyncAnswers(t *testing.T) {
	mt := translatortest.New(translatortest.Config{Garbage: func(string) string { return "Please sign in to the network" }})
	defer mt.Close()
	env := testEnv(mt.URL, nil)
	var logs servicetest.LogBuffer
	s, err := newServer(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &logs)
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, s.svc, s.close)
	var codes []int
	for i, text := range []string{"Starý dům stojí nad řekou", "Děti si hrají na zahradě u domu", "Večer přišla bouřka s deštěm"} {
		body, ct := multipartBody(t, part{Field: "file", Name: fmt.Sprintf("sync%d.alto.xml", i), File: true, Data: smallALTO(text)},
			part{Field: "source_lang", Data: []byte("cs")})
		resp := post(t, ts.URL+"/translate", ct, body)
		readBody(t, resp)
		codes = append(codes, resp.StatusCode)
	}
	if fmt.Sprint(codes) != "[200 200 500]" {
		t.Fatalf("answers %v, want the third refused", codes)
	}
	log := logs.String()
	if !strings.Contains(log, "answers to synchronous requests given before hold the refused reply") ||
		!strings.Contains(log, `"requests":["sync0.alto.xml received `) || !strings.Contains(log, `","sync1.alto.xml received `) {
		t.Errorf("warning does not name the requests:\n%s", log)
	}
}
