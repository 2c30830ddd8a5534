package jobs_test

import (
	"archive/zip"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/testenv"
)

// echo stands in for a synchronous endpoint: it answers the file's name,
// size and the lang field as JSON; a file named bad.xml gets 422. Every
// call is appended to calls (when not nil) as "start NAME" and "end NAME".
type echo struct {
	mu    sync.Mutex
	calls []string
	// block, when not nil, holds the call for a file of this name until
	// the request ends.
	block string
	log   string // a file each call is appended to ("" none)
	// gate, when not nil, holds the call for a file named gated.xml until
	// it is closed; started is closed when that call starts.
	gate, started chan struct{}
	// delay is each call's time (a model's stand-in).
	delay time.Duration
	// header is set on each answer (translate-api's licence and counts).
	header http.Header
}

func (e *echo) note(s string) {
	e.mu.Lock()
	e.calls = append(e.calls, s)
	e.mu.Unlock()
	if e.log != "" {
		f, err := os.OpenFile(e.log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			fmt.Fprintln(f, s)
			f.Close()
		}
	}
}

func (e *echo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(1 << 20); err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadRequest, err.Error())
		return
	}
	f, fh, err := r.FormFile("file")
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no file")
		return
	}
	b, _ := io.ReadAll(f)
	for k, v := range e.header {
		w.Header()[k] = v
	}
	e.note("start " + fh.Filename)
	if fh.Filename == e.block {
		<-r.Context().Done()
		return
	}
	if e.delay > 0 {
		time.Sleep(e.delay) // the time a model takes: not a synchronisation
	}
	if fh.Filename == "gated.xml" && e.gate != nil {
		close(e.started)
		<-e.gate
	}
	defer e.note("end " + fh.Filename)
	if fh.Filename == "bad.xml" {
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonUnsupportedFormat, "bad.xml is not a document")
		return
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{"name": fh.Filename, "size": len(b), "lang": r.FormValue("lang"), "type": fh.Header.Get("Content-Type"), "query": r.URL.RawQuery})
}

// store is where a test's jobs live: a state folder (SQLite) or a
// PostgreSQL database (its URL).
type store func(*testing.T) string

// stores runs f on SQLite and on PostgreSQL (a database of the test
// process's throwaway cluster; skipped when PostgreSQL's programs are
// absent).
func stores(t *testing.T, f func(t *testing.T, newStore store)) {
	t.Run("sqlite", func(t *testing.T) { f(t, func(t *testing.T) string { return t.TempDir() }) })
	t.Run("postgres", func(t *testing.T) { f(t, func(t *testing.T) string { return testenv.Postgres(t) }) })
}

// storeEnv is the environment setting of a store: JOBS_DIR, or
// JOBS_DATABASE_URL for a PostgreSQL URL.
func storeEnv(dir string) map[string]string {
	if strings.HasPrefix(dir, "postgres://") {
		return map[string]string{"JOBS_DATABASE_URL": dir}
	}
	return map[string]string{"JOBS_DIR": dir}
}

// callbackPrivate: newService allows callbacks to private addresses.
var callbackPrivate = true

// newService is a service with the job API over h on dir (a state folder
// or a PostgreSQL URL).
func newService(t *testing.T, dir string, h http.Handler) (*service.Service, *jobs.Queue) {
	t.Helper()
	return newServiceWith(t, dir, h, jobs.Options{})
}

// newServiceWith is newService with o's Book, Pick, RunMeta,
// UnavailableTries, UnavailableBackoff, ScratchLimit and ItemWorkers.
func newServiceWith(t *testing.T, dir string, h http.Handler, o jobs.Options) (*service.Service, *jobs.Queue) {
	t.Helper()
	return newServiceLogged(t, dir, h, o, nil)
}

// newServiceLogged is newServiceWith logging at INFO into logs (nil: no
// log).
func newServiceLogged(t *testing.T, dir string, h http.Handler, o jobs.Options, logs io.Writer) (*service.Service, *jobs.Queue) {
	t.Helper()
	env := storeEnv(dir)
	env["LOG_LEVEL"], env["JOBS_CALLBACK_SECRET"] = "ERROR", secret
	if logs != nil {
		env["LOG_LEVEL"] = "INFO"
	} else {
		logs = io.Discard
	}
	if callbackPrivate {
		env["JOBS_CALLBACK_ALLOW_PRIVATE"] = "1" // the test's callback server is on 127.0.0.1
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, err := service.New(service.Options{Name: "echo-api", DefaultMaxUploadMB: 10, LookupEnv: lookup, LogOutput: logs,
		Index: &service.Index{Welcome: "echo"}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: h, CallbackBackoff: 10 * time.Millisecond, Book: o.Book, Pick: o.Pick, CheckFields: o.CheckFields, RunMeta: o.RunMeta,
		UnavailableTries: o.UnavailableTries, UnavailableBackoff: o.UnavailableBackoff, ScratchLimit: o.ScratchLimit, ItemWorkers: o.ItemWorkers, MaxActive: o.MaxActive})
	if err != nil {
		t.Fatal(err)
	}
	svc.Route("POST /echo", "echo", q.Async(h.ServeHTTP))
	return svc, q
}

// serve starts the service and its workers.
func serve(t *testing.T, dir string, h http.Handler) (*httptest.Server, *jobs.Queue) {
	t.Helper()
	svc, q := newService(t, dir, h)
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ts, q
}

func submit(t *testing.T, base string, key string, parts ...servicetest.Part) (int, http.Header, jobs.Status) {
	t.Helper()
	body, ctype := servicetest.Multipart(t, parts...)
	req, _ := http.NewRequest("POST", base+"/jobs?x=1", body)
	req.Header.Set("Content-Type", ctype)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st jobs.Status
	b := servicetest.ReadBody(t, resp)
	if resp.StatusCode < 300 {
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
	return resp.StatusCode, resp.Header, st
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b := servicetest.ReadBody(t, resp)
	if v != nil && resp.StatusCode == 200 {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
	return resp.StatusCode
}

// waitState polls GET /jobs/{id} (waking on each change of the queue) until
// the job is in state, failing after 20 s.
func waitState(t *testing.T, q *jobs.Queue, base, id, state string) jobs.Status {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		ch := q.Changed()
		var st jobs.Status
		if code := getJSON(t, base+"/jobs/"+id, &st); code != 200 {
			t.Fatalf("GET /jobs/%s: %d", id, code)
		}
		if st.State == state {
			return st
		}
		select {
		case <-ch:
		case <-time.After(200 * time.Millisecond): // another process changed it
		case <-deadline:
			t.Fatalf("job %s still %s (%+v), want %s", id, st.State, st.Items, state)
		}
	}
}

func file(name, data string) servicetest.Part {
	return servicetest.Part{Field: "file", Name: name, CType: "application/xml", Data: []byte(data)}
}

func TestSubmitPollResults(t *testing.T) { stores(t, testSubmitPollResults) }

func testSubmitPollResults(t *testing.T, newStore store) {
	// The endpoint's answers say what produced them, as translate-api's
	// do; the request's own headers are not the answer's.
	described := http.Header{"X-Translation-License": {"CC-BY-4.0"}, "Link": {"<https://example.org/licence>; rel=license"},
		"X-Translation-Units": {"3"}, "X-Request-Id": {"req-1"}, "Retry-After": {"5"}}
	ts, q := serve(t, newStore(t), &echo{header: described})
	t0 := time.Now()
	// bad.xml as a Windows client names it: the job names it as the
	// routes do (it kept C:\scans\bad.xml whole).
	code, h, st := submit(t, ts.URL, "", servicetest.Part{Field: "lang", Data: []byte("cs")}, file("a.xml", "aaa"), file(`C:\scans\bad.xml`, "b"), file("c.xml", "cc"))
	if code != http.StatusAccepted || h.Get("Location") != "/jobs/"+st.ID || st.Items.Total != 3 {
		t.Fatalf("submit: %d Location %q %+v", code, h.Get("Location"), st)
	}
	if el := time.Since(t0); el > 10*time.Second {
		t.Fatalf("submit took %v", el)
	}
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Failed: 1}) || len(st.Errors) != 1 || st.Errors[0].Name != "bad.xml" ||
		st.Errors[0].Status != 422 || st.Errors[0].Error != "bad.xml is not a document" || st.FinishedAt == nil {
		t.Fatalf("status %+v", st)
	}
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	if len(res.Items) != 3 {
		t.Fatalf("results %+v", res)
	}
	// A job that is not there is a 404 (it was a 500 of the store's "no
	// rows" while the results were written as a stream).
	if code := getJSON(t, ts.URL+"/jobs/0123456789abcdef0123456789abcdef/results", &map[string]any{}); code != http.StatusNotFound {
		t.Errorf("results of a job that is not there: %d, want 404", code)
	}
	// The answer, written item by item, is the one JSON document
	// json.Marshal makes of the results.
	raw, err := http.Get(ts.URL + "/jobs/" + st.ID + "/results")
	if err != nil {
		t.Fatal(err)
	}
	rb := servicetest.ReadBody(t, raw)
	if want, _ := json.Marshal(res); !bytes.Equal(rb, append(want, '\n')) || raw.Header.Get("Content-Type") != "application/json" {
		t.Errorf("results answer\n%s\nwant\n%s", rb, want)
	}
	var out map[string]any
	if err := json.Unmarshal(res.Items[2].Output, &out); err != nil {
		t.Fatal(err)
	}
	if out["name"] != "c.xml" || out["size"] != 2.0 || out["lang"] != "cs" || out["type"] != "application/xml" || out["query"] != "x=1" {
		t.Fatalf("item 2 answered %v", out)
	}
	resp, err := http.Get(ts.URL + res.Items[1].URL)
	if err != nil {
		t.Fatal(err)
	}
	b := servicetest.ReadBody(t, resp)
	if resp.StatusCode != 422 || !strings.Contains(string(b), "not a document") {
		t.Fatalf("item 1: %d %s", resp.StatusCode, b)
	}
	// An item's answer keeps the headers that describe it, as the
	// synchronous endpoint gave them (they were dropped: a job's
	// translation named no licence), in its download and in the results.
	resp, err = http.Get(ts.URL + res.Items[2].URL)
	if err != nil {
		t.Fatal(err)
	}
	servicetest.ReadBody(t, resp)
	for _, k := range []string{"X-Translation-License", "Link", "X-Translation-Units"} {
		if got := resp.Header.Values(k); fmt.Sprint(got) != fmt.Sprint(described.Values(k)) {
			t.Errorf("item 2's answer: %s %q, want %q", k, got, described.Values(k))
		}
	}
	if got := resp.Header.Get("X-Request-Id"); got == "req-1" {
		t.Errorf("item 2's answer repeats the request id of the job's call, %q", got)
	}
	if got := res.Items[0].Headers; fmt.Sprint(got["X-Translation-License"]) != "[CC-BY-4.0]" || fmt.Sprint(got["Link"]) != fmt.Sprint(described.Values("Link")) || fmt.Sprint(got["X-Translation-Units"]) != "[3]" ||
		got["Retry-After"] != nil || got["X-Request-Id"] != nil {
		t.Errorf("results: item 0's headers %q, want the licence, its link and the units only", got)
	}
	// The job's end is recorded before its worker observes its duration
	// and lets it go: the metrics are read once they have caught up.
	wantMetrics := []string{"jobs_submitted_total 1", `jobs_ended_total{state="succeeded"} 1`, `job_items_total{state="succeeded"} 2`, `job_items_total{state="failed"} 1`,
		`jobs_current{state="queued"} 0`, `jobs_current{state="running"} 0`, "jobs_running_here 0", "job_duration_seconds_count 1"}
	var m string
	testenv.WaitFor(10*time.Second, func() bool {
		resp, err := http.Get(ts.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m = string(servicetest.ReadBody(t, resp))
		for _, want := range wantMetrics {
			if !strings.Contains(m, want) {
				return false
			}
		}
		return true
	})
	// A format that is empty, repeated or unknown is refused (an empty or
	// repeated one was taken as json, or as its first).
	for _, bad := range []string{"format=", "format=zip&format=json", "format=tar"} {
		if code := getJSON(t, ts.URL+"/jobs/"+st.ID+"/results?"+bad, nil); code != 422 {
			t.Errorf("results?%s: %d, want 422", bad, code)
		}
	}
	// The job ended long ago (its archive was dated at the download).
	if err := jobs.SetFinished(q, st.ID, time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	resp, err = http.Get(ts.URL + "/jobs/" + st.ID + "/results?format=zip")
	if err != nil {
		t.Fatal(err)
	}
	zb := servicetest.ReadBody(t, resp)
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("zip: %v %q", err, resp.Header.Get("Content-Type"))
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		// Dated (unzip showed 1980-00-00 for the zero date before).
		if f.Modified.Year() < 2000 {
			t.Errorf("%s dated %s", f.Name, f.Modified)
		}
	}
	if strings.Join(names, " ") != "0000-a.json 0001-bad.json 0002-c.json results.json" {
		t.Fatalf("zip holds %v", names)
	}
	// An ended job's archive is dated when it ended, and is the same bytes
	// at each download (it was dated at the download, in the service's
	// zone: every download differed).
	var ended jobs.Status
	if getJSON(t, ts.URL+"/jobs/"+st.ID, &ended) != 200 || ended.FinishedAt == nil {
		t.Fatalf("status %+v", ended)
	}
	for _, f := range zr.File {
		if !f.Modified.Equal(ended.FinishedAt.Truncate(time.Second)) {
			t.Errorf("%s dated %s, want the job's end %s", f.Name, f.Modified, ended.FinishedAt)
		}
	}
	// results.zip is the archive (?format=zip is kept for the clients that
	// ask so).
	resp, err = http.Get(ts.URL + "/jobs/" + st.ID + "/results.zip")
	if err != nil {
		t.Fatal(err)
	}
	if again := servicetest.ReadBody(t, resp); !bytes.Equal(again, zb) || resp.Header.Get("Content-Type") != "application/zip" {
		t.Errorf("a second download of the ended job's archive, from results.zip, differs from the first (%q)", resp.Header.Get("Content-Type"))
	}
	for _, want := range wantMetrics {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestAllFailed(t *testing.T) {
	ts, q := serve(t, t.TempDir(), &echo{})
	_, _, st := submit(t, ts.URL, "", file("bad.xml", "b"))
	waitState(t, q, ts.URL, st.ID, jobs.Failed)
}

func TestIdempotencyKey(t *testing.T) { stores(t, testIdempotencyKey) }

func testIdempotencyKey(t *testing.T, newStore store) {
	ts, _ := serve(t, newStore(t), &echo{})
	code1, _, a := submit(t, ts.URL, "k1", file("a.xml", "aaa"))
	code2, h, b := submit(t, ts.URL, "k1", file("a.xml", "aaa"))
	if code1 != 202 || code2 != 200 || a.ID != b.ID || h.Get("Location") != "/jobs/"+a.ID {
		t.Fatalf("same key, same request: %d %d %s %s", code1, code2, a.ID, b.ID)
	}
	if code, _, _ := submit(t, ts.URL, "k1", file("a.xml", "other")); code != 422 {
		t.Fatalf("same key, another request: %d, want 422", code)
	}
	_, _, c := submit(t, ts.URL, "", file("a.xml", "aaa"))
	if c.ID == a.ID {
		t.Fatal("no key: the same job")
	}
}

func TestCancel(t *testing.T) { stores(t, testCancel) }

func testCancel(t *testing.T, newStore store) {
	e := &echo{block: "slow.xml"}
	ts, q := serve(t, newStore(t), e)
	_, _, st := submit(t, ts.URL, "", file("a.xml", "a"), file("slow.xml", "s"), file("c.xml", "c"))
	// Wait until the slow item has started.
	deadline := time.Now().Add(20 * time.Second)
	for !slices(e, "start slow.xml") {
		if time.Now().After(deadline) {
			t.Fatal("the slow item never started")
		}
		select {
		case <-q.Changed():
		case <-time.After(20 * time.Millisecond):
		}
	}
	req, _ := http.NewRequest("DELETE", ts.URL+"/jobs/"+st.ID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	servicetest.ReadBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	st = waitState(t, q, ts.URL, st.ID, jobs.Canceled)
	// The items left unrun (the one in flight, the one after it) are
	// counted and listed canceled, none queued (they said queued).
	if st.Items.Queued != 0 || st.Items.Canceled != 2 || st.Items.Succeeded != 1 {
		t.Errorf("canceled job's items %+v, want 1 succeeded and 2 canceled", st.Items)
	}
	var res jobs.Results
	if code := getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res); code != 200 || len(res.Items) != 3 || res.Items[1].State != jobs.Canceled || res.Items[2].State != jobs.Canceled {
		t.Errorf("results %d %+v, want items 1 and 2 canceled", code, res.Items)
	}
	// An unrun item's answer is final: 404 item_canceled (it was 409
	// item_not_ready, which a client polls for ever).
	if resp, err := http.Get(ts.URL + "/jobs/" + st.ID + "/results/2"); err != nil {
		t.Fatal(err)
	} else if b := servicetest.ReadBody(t, resp); resp.StatusCode != 404 || !strings.Contains(string(b), `"reason":"item_canceled"`) {
		t.Errorf("canceled item: %d %s, want 404 item_canceled", resp.StatusCode, b)
	}
	resp, _ = http.DefaultClient.Do(req)
	servicetest.ReadBody(t, resp)
	if resp.StatusCode != http.StatusConflict {
		t.Fatalf("second DELETE: %d, want 409", resp.StatusCode)
	}
	if getJSON(t, ts.URL+"/jobs/nope", nil) != 404 {
		t.Fatal("unknown job: not 404")
	}
	if slices(e, "start c.xml") {
		t.Fatal("an item started after the cancel")
	}
	// The metrics count the two items left unrun, so that the items
	// submitted are those counted ended (they were counted nowhere).
	resp, err = http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if m := string(servicetest.ReadBody(t, resp)); !strings.Contains(m, `job_items_total{state="canceled"} 2`+"\n") {
		t.Errorf("metrics do not count the 2 canceled items:\n%s", m)
	}
}

func slices(e *echo, s string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.calls {
		if c == s {
			return true
		}
	}
	return false
}

func TestListPaging(t *testing.T) { stores(t, testListPaging) }

func testListPaging(t *testing.T, newStore store) {
	ts, _ := serve(t, newStore(t), &echo{})
	var ids []string
	for i := range 5 {
		_, _, st := submit(t, ts.URL, "", file(fmt.Sprintf("%d.xml", i), "x"))
		ids = append(ids, st.ID)
	}
	var got []string
	next := "/jobs?limit=2"
	pages := 0
	for next != "" {
		var p jobs.Page
		if code := getJSON(t, ts.URL+next, &p); code != 200 {
			t.Fatalf("%s: %d", next, code)
		}
		for _, j := range p.Jobs {
			got = append(got, j.ID)
		}
		next, pages = p.Next, pages+1
	}
	if pages != 3 || len(got) != 5 || got[0] != ids[4] || got[4] != ids[0] {
		t.Fatalf("%d pages, %v; submitted %v", pages, got, ids)
	}
	if getJSON(t, ts.URL+"/jobs?limit=0", nil) != 422 {
		t.Fatal("limit=0 accepted")
	}
}

func TestPreferRespondAsync(t *testing.T) {
	ts, q := serve(t, t.TempDir(), &echo{})
	body, ctype := servicetest.Multipart(t, file("a.xml", "aaa"))
	req, _ := http.NewRequest("POST", ts.URL+"/echo", body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Prefer", "respond-async, wait=5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	servicetest.ReadBody(t, resp)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != 202 || !strings.HasPrefix(loc, "/jobs/") || resp.Header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("%d %q", resp.StatusCode, loc)
	}
	waitState(t, q, ts.URL, strings.TrimPrefix(loc, "/jobs/"), jobs.Succeeded)
	// Without the preference, the endpoint answers at once.
	code, b := servicetest.PostForm(t, ts.URL+"/echo", file("a.xml", "aaa"))
	if code != 200 || !strings.Contains(string(b), `"name":"a.xml"`) {
		t.Fatalf("%d %s", code, b)
	}
}

func TestInfoAndOpenAPI(t *testing.T) {
	ts, _ := serve(t, t.TempDir(), &echo{})
	var info struct {
		Endpoints []service.Endpoint `json:"endpoints"`
	}
	getJSON(t, ts.URL+"/info", &info)
	want := map[string]bool{"POST /jobs": false, "GET /jobs": false, "GET /jobs/{id}": false, "DELETE /jobs/{id}": false, "GET /jobs/{id}/results": false}
	for _, e := range info.Endpoints {
		if _, ok := want[e.Method+" "+e.Path]; ok {
			want[e.Method+" "+e.Path] = true
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("/info lacks %s", k)
		}
	}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	getJSON(t, ts.URL+"/openapi.json", &doc)
	if doc.Paths["/jobs"]["post"] == nil || doc.Paths["/jobs/{id}"]["delete"] == nil || doc.Paths["/health"] == nil {
		t.Fatalf("openapi paths %v", doc.Paths)
	}
	// Every job route lists the 503 of a service starting or draining (a
	// generated client met it at a restart, undescribed).
	for p, ops := range doc.Paths {
		if !strings.HasPrefix(p, "/jobs") {
			continue
		}
		for m, op := range ops {
			if o, ok := op.(map[string]any); ok && o["responses"] != nil {
				if _, ok := o["responses"].(map[string]any)["503"]; !ok {
					t.Errorf("%s %s lists no 503", m, p)
				}
			}
		}
	}
}

func TestNoDirNoAPI(t *testing.T) {
	lookup := func(string) (string, bool) { return "", false }
	svc, err := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/x", Handler: http.NotFoundHandler()})
	if err != nil || q != nil {
		t.Fatalf("%v %v", q, err)
	}
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestFolderLocked(t *testing.T) {
	dir := t.TempDir()
	_, q := newService(t, dir, &echo{})
	defer q.Close(context.Background())
	lookup := func(k string) (string, bool) { return map[string]string{"JOBS_DIR": dir}[k], k == "JOBS_DIR" }
	svc, _ := service.New(service.Options{Name: "y", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	_, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: &echo{}})
	// It names the process that holds the folder (before: "another
	// process"; before that, "…: context canceled").
	if want := regexp.MustCompile("^JOBS_DIR=" + regexp.QuoteMeta(dir) + ": jobs: state folder " + regexp.QuoteMeta(dir) +
		" is in use by echo-api process " + strconv.Itoa(os.Getpid()) + " of [^ ]+( on [^ ]+)?, started 20[0-9-]+T[0-9:]+Z " +
		regexp.QuoteMeta("(another replica, or this service still stopping): give each replica its own JOBS_DIR, or share jobs between replicas with JOBS_DATABASE_URL") + "$"); err == nil || !want.MatchString(err.Error()) {
		t.Fatalf("a second queue on the folder: %v, want %s", err, want)
	}
	// Once the first is closed, the folder is free and says no holder.
	q.Close(context.Background())
	if b, _ := os.ReadFile(filepath.Join(dir, "holder")); len(b) != 0 {
		t.Errorf("holder file after the close: %q", b)
	}
}

// TestMain runs the child of TestKilledMidJob when asked.
func TestMain(m *testing.M) {
	if dir := os.Getenv("JOBS_TEST_CHILD"); dir != "" {
		child(dir)
		return
	}
	code := m.Run()
	testenv.StopPostgres()
	os.Exit(code)
}

// child serves a queue on dir (a state folder or a PostgreSQL URL) whose
// item named $JOBS_TEST_BLOCK ("b.xml" when unset) never ends, each item
// taking $JOBS_TEST_DELAY (the model's time), logging its calls to
// $JOBS_TEST_CALLS (dir/../calls when unset), and prints its address.
func child(dir string) {
	block, calls := "b.xml", filepath.Join(filepath.Dir(dir), "calls")
	if v, ok := os.LookupEnv("JOBS_TEST_BLOCK"); ok {
		block = v
	}
	if v := os.Getenv("JOBS_TEST_CALLS"); v != "" {
		calls = v
	}
	delay, _ := time.ParseDuration(os.Getenv("JOBS_TEST_DELAY"))
	e := &echo{block: block, log: calls, delay: delay}
	env := storeEnv(dir)
	env["LOG_LEVEL"] = "ERROR"
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, err := service.New(service.Options{Name: "echo-api", DefaultMaxUploadMB: 10, LookupEnv: lookup, LogOutput: io.Discard})
	if err != nil {
		panic(err)
	}
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: e, Lease: 5 * time.Second}) // renewed every 1.7 s: a stall of a loaded machine under 5 s does not lose the job
	if err != nil {
		panic(err)
	}
	if err := svc.WarmUp(context.Background()); err != nil {
		panic(err)
	}
	ts := httptest.NewServer(svc.Handler())
	if err := q.Start(context.Background()); err != nil {
		panic(err)
	}
	fmt.Println(ts.URL)
	select {}
}

// startChild starts a child process serving store with the extra
// environment env; it returns the process and its address.
func startChild(t *testing.T, store string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "JOBS_TEST_CHILD="+store), env...)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	var base string
	if _, err := fmt.Fscanln(stdout, &base); err != nil {
		t.Fatal(err)
	}
	return cmd, base
}

// TestKilledMidJob: a process killed (SIGKILL) in the middle of a job's
// second item; the next process on the same state folder finishes the job:
// the first item is not run again, the second runs again from its start,
// the third once, and each item has one answer.
func TestKilledMidJob(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a child process")
	}
	root := t.TempDir()
	dir := filepath.Join(root, "state")
	calls := filepath.Join(root, "calls")
	cmd, base := startChild(t, dir)
	_, _, st := submit(t, base, "", file("a.xml", "a"), file("b.xml", "bb"), file("c.xml", "ccc"))
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(calls)
		if strings.Contains(string(b), "start b.xml") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b.xml never started: %q", b)
		}
		time.Sleep(20 * time.Millisecond) // polling another process's file, with a deadline
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	e := &echo{log: calls}
	ts, q := serve(t, dir, e)
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 3, Succeeded: 3}) {
		t.Fatalf("%+v", st)
	}
	b, _ := os.ReadFile(calls)
	if string(b) != "start a.xml\nend a.xml\nstart b.xml\nstart b.xml\nend b.xml\nstart c.xml\nend c.xml\n" {
		t.Fatalf("calls across the kill:\n%s", b)
	}
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	for i, it := range res.Items {
		wantRuns := 1
		if i == 1 {
			wantRuns = 2
		}
		var out map[string]any
		if err := json.Unmarshal(it.Output, &out); err != nil || out["size"] != float64(i+1) || it.Runs != wantRuns {
			t.Fatalf("item %d: %+v %v", i, it, out)
		}
	}
}

// TestStopResumes: a queue closed (the drain of SIGTERM) while an item
// runs lets that item finish and be recorded, starts no other, and the
// next queue on the folder finishes the job: every item ran once.
func TestStopResumes(t *testing.T) {
	dir := t.TempDir()
	e := &echo{gate: make(chan struct{}), started: make(chan struct{})}
	svc, q := newService(t, dir, e)
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(svc.Handler())
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", file("a.xml", "a"), file("gated.xml", "g"), file("c.xml", "c"))
	select {
	case <-e.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the gated item never started")
	}
	// As Run does on SIGTERM: the service drains, then its queue closes;
	// draining first makes the stop take effect before the gate opens
	// (a Close not yet begun let the worker go on to c.xml under load).
	svc.BeginDrain()
	closed := make(chan error)
	go func() { closed <- q.Close(context.Background()) }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned before the item in flight ended: %v", err)
	default:
	}
	close(e.gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	ts.Close()
	if slices(e, "start c.xml") {
		t.Fatal("an item started after the stop")
	}

	half := filepath.Join(dir, "upload-123")
	if err := os.MkdirAll(half, 0o755); err != nil {
		t.Fatal(err)
	}
	e2 := &echo{}
	ts2, q2 := serve(t, dir, e2)
	if _, err := os.Stat(half); !os.IsNotExist(err) {
		t.Fatalf("a half-stored upload is left at start: %v", err)
	}
	st = waitState(t, q2, ts2.URL, st.ID, jobs.Succeeded)
	var res jobs.Results
	getJSON(t, ts2.URL+"/jobs/"+st.ID+"/results", &res)
	for _, it := range res.Items {
		if it.Runs != 1 || it.State != jobs.Succeeded {
			t.Fatalf("item %+v", it)
		}
	}
	if e2.calls[0] != "start c.xml" || len(e2.calls) != 2 {
		t.Fatalf("after the restart: %v", e2.calls)
	}
}

const secret = "s3cret"

// TestCallback: a job with a callback URL posts its status, signed, when it
// ends; a failed delivery (500) is tried again.
func TestCallback(t *testing.T) { stores(t, testCallback) }

func testCallback(t *testing.T, newStore store) {
	type delivery struct {
		header http.Header
		body   []byte
	}
	got := make(chan delivery, 4)
	fails := 1
	var mu sync.Mutex
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), b}
		mu.Lock()
		defer mu.Unlock()
		if fails > 0 {
			fails--
			w.WriteHeader(500)
		}
	}))
	defer cb.Close()
	ts, _ := serve(t, newStore(t), &echo{})
	_, _, st := submit(t, ts.URL, "", file("a.xml", "a"), servicetest.Part{Field: "callback_url", Data: []byte(cb.URL + "/done")})
	var last delivery
	for i := range 2 {
		select {
		case last = <-got:
		case <-time.After(20 * time.Second):
			t.Fatalf("delivery %d never came", i+1)
		}
	}
	var body jobs.Status
	if err := json.Unmarshal(last.body, &body); err != nil || body.ID != st.ID || body.State != jobs.Succeeded || body.Items.Succeeded != 1 {
		t.Fatalf("callback body %s: %v", last.body, err)
	}
	sig := jobs.Sign([]byte(secret), last.header.Get(jobs.HeaderTimestamp), last.body)
	if last.header.Get(jobs.HeaderSignature) != sig || last.header.Get(jobs.HeaderJob) != st.ID {
		t.Fatalf("signature %q, want %q", last.header.Get(jobs.HeaderSignature), sig)
	}
	if jobs.Sign([]byte("other"), last.header.Get(jobs.HeaderTimestamp), last.body) == sig {
		t.Fatal("the signature does not depend on the secret")
	}
	// The field is not passed to the endpoint; a bad URL is refused.
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	if strings.Contains(string(res.Items[0].Output), "callback") {
		t.Fatalf("the endpoint saw the callback field: %s", res.Items[0].Output)
	}
	if code, _, _ := submit(t, ts.URL, "", file("a.xml", "a"), servicetest.Part{Field: "callback_url", Data: []byte("ftp://x")}); code != 422 {
		t.Fatalf("ftp callback: %d, want 422", code)
	}
}

// TestExpire: with JOBS_RETENTION, an ended job older than the retention
// is gone (404, files removed, derived files too); a newer one stays.
// Derived files (KeepDerived) are kept per item and name until then.
func TestExpire(t *testing.T) { stores(t, testExpire) }

func testExpire(t *testing.T, newStore store) {
	dir := newStore(t)
	env := storeEnv(dir)
	env["JOBS_RETENTION"] = "1h"
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, err := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: &echo{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", file("a.xml", "a"))
	waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	itemReq := func(id, item string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/jobs/"+id+"/results/"+item+"/thumbnail", nil)
		r.SetPathValue("id", id)
		r.SetPathValue("item", item)
		return r
	}
	if err := q.KeepDerived(itemReq(st.ID, "0"), "t.jpg", []byte("thumb")); err != nil {
		t.Fatal(err)
	}
	if err := q.KeepDerived(itemReq(st.ID, "0"), "big.jpg", make([]byte, jobs.MaxDerived+1)); err == nil {
		t.Error("a derived file over MaxDerived was kept")
	}
	for _, c := range []struct {
		id, item, name string
		want           string
	}{
		{st.ID, "0", "t.jpg", "thumb"},
		{st.ID, "0", "big.jpg", ""},
		{st.ID, "1", "t.jpg", ""},
		{st.ID, "0", "other.jpg", ""},
		{"nojob", "0", "t.jpg", ""},
	} {
		if got, ok := q.Derived(itemReq(c.id, c.item), c.name); string(got) != c.want || ok != (c.want != "") {
			t.Errorf("Derived(%s, %s, %s) = %q, %v; want %q", c.id, c.item, c.name, got, ok, c.want)
		}
	}
	if n, err := q.Expire(context.Background(), time.Now().Add(59*time.Minute)); n != 0 || err != nil {
		t.Fatalf("within the retention: %d expired, %v", n, err)
	}
	if n, err := q.Expire(context.Background(), time.Now().Add(61*time.Minute)); n != 1 || err != nil {
		t.Fatalf("after the retention: %d expired, %v", n, err)
	}
	if code := getJSON(t, ts.URL+"/jobs/"+st.ID, nil); code != 404 {
		t.Fatalf("expired job: %d, want 404", code)
	}
	if got, ok := q.Derived(itemReq(st.ID, "0"), "t.jpg"); ok {
		t.Errorf("an expired job's derived file: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "jobs", st.ID)); !strings.HasPrefix(dir, "postgres") && !os.IsNotExist(err) {
		t.Fatalf("expired job's files: %v", err)
	}
	env["JOBS_RETENTION"] = "soon"
	svc2, _ := service.New(service.Options{Name: "y", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if _, err := jobs.Setup(svc2, lookup, jobs.Options{Path: "/echo", Handler: &echo{}}); err == nil || !strings.Contains(err.Error(), "JOBS_RETENTION") {
		t.Fatalf("JOBS_RETENTION=soon: %v", err)
	}
}

// TestExpireLeavesNoTrace: what an expired job recorded in a JOBS_DIR (its
// file names, a field's value) is in neither jobs.db nor its write-ahead
// log after expiry, and the database gives its pages back; a jobs.db made
// by an earlier release (without auto_vacuum) is made able to.
func TestExpireLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	old, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Exec(`PRAGMA journal_mode = WAL; CREATE TABLE earlier (x TEXT); INSERT INTO earlier VALUES ('row')`); err != nil {
		t.Fatal(err)
	}
	old.Close()
	env := map[string]string{"JOBS_DIR": dir, "JOBS_RETENTION": "1h"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, err := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: &echo{}})
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	const marker = "Novakova-Marie-rodny-list"
	_, empty := traces(t, dir, marker)
	var ids []string
	for i := range 40 {
		_, _, st := submit(t, ts.URL, "", file(fmt.Sprintf("%s-%02d.xml", marker, i), "a"),
			servicetest.Part{Field: "note", Data: []byte(strings.Repeat(marker+" ", 40))})
		ids = append(ids, st.ID)
	}
	for _, id := range ids {
		waitState(t, q, ts.URL, id, jobs.Succeeded)
	}
	if found, _ := traces(t, dir, marker); len(found) == 0 {
		t.Fatal("the jobs' names are in no file before expiry: the test looks in the wrong place")
	}
	if _, err := q.Expire(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	_, before := traces(t, dir, marker)
	if n, err := q.Expire(context.Background(), time.Now().Add(2*time.Hour)); n != len(ids) || err != nil {
		t.Fatalf("expired %d of %d: %v", n, len(ids), err)
	}
	found, after := traces(t, dir, marker)
	if len(found) > 0 {
		t.Errorf("an expired job's file names and fields are still in %v", found)
	}
	if after >= before || after > empty {
		t.Errorf("jobs.db and its log are %d bytes after expiry, %d before, %d with no job", after, before, empty)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "jobs.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var free int
	if err := db.QueryRow(`PRAGMA freelist_count`).Scan(&free); err != nil {
		t.Fatal(err)
	}
	if free != 0 {
		t.Errorf("jobs.db keeps %d free pages after expiry", free)
	}
	var row string
	if err := db.QueryRow(`SELECT x FROM earlier`).Scan(&row); err != nil || row != "row" {
		t.Errorf("a row of the earlier database: %q, %v", row, err)
	}
}

// traces are the files of a JOBS_DIR's database (jobs.db and its log)
// that hold marker, and their size together.
func traces(t *testing.T, dir, marker string) (found []string, size int64) {
	t.Helper()
	for _, name := range []string{"jobs.db", "jobs.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(marker)) {
			found = append(found, name)
		}
		size += int64(len(b))
	}
	return found, size
}

// TestItemTimeout: an item that gives no answer within the item deadline
// fails with 504 and the job goes on to its next item.
func TestItemTimeout(t *testing.T) {
	env := map[string]string{"JOBS_DIR": t.TempDir()}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, err := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: &echo{block: "stuck.xml"}, ItemTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", file("stuck.xml", "s"), file("b.xml", "b"))
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items.Succeeded != 1 || len(st.Errors) != 1 || st.Errors[0].Status != 504 || st.Errors[0].Reason != service.ReasonTimeout || !strings.Contains(st.Errors[0].Error, "took longer than 2s") {
		t.Fatalf("%+v", st)
	}
}

// TestManySubmits: 100 jobs submitted at once all finish, none lost.
// POST /jobs is a heavy route of the service (MAX_CONCURRENT_REQUESTS, 16
// by default): beyond the cap a submit gets 503 with Retry-After, and the
// client submits again after it. The latency of the answers (202 or 503)
// is logged.
func TestManySubmits(t *testing.T) {
	if testing.Short() {
		t.Skip("100 jobs")
	}
	ts, q := serve(t, t.TempDir(), &echo{})
	manySubmits(t, []*httptest.Server{ts}, []*jobs.Queue{q})
}

// TestManySubmitsTwoReplicas: 100 jobs submitted at once to two replicas
// sharing one PostgreSQL database (half to each) all finish, none lost,
// each item answered once.
func TestManySubmitsTwoReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("100 jobs")
	}
	url := testenv.Postgres(t)
	e := [2]*echo{{}, {}}
	ts0, q0 := serve(t, url, e[0])
	ts1, q1 := serve(t, url, e[1])
	manySubmits(t, []*httptest.Server{ts0, ts1}, []*jobs.Queue{q0, q1})
	if len(e[0].calls)+len(e[1].calls) != 2*100 {
		t.Fatalf("%d and %d calls for 100 items", len(e[0].calls)/2, len(e[1].calls)/2)
	}
	t.Logf("items run: %d and %d", len(e[0].calls)/2, len(e[1].calls)/2)
}

// manySubmits submits 100 one-item jobs at once, in turn to each of ts,
// and waits until all succeeded.
func manySubmits(t *testing.T, servers []*httptest.Server, queues []*jobs.Queue) {
	const n = 100
	ids := make([]string, n)
	var mu sync.Mutex
	var lat []time.Duration
	busy := 0
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A client retries while the service is busy, for as long as
			// it takes: the test asserts that no job is lost, not how
			// fast all get in (every refused client comes back after the
			// same Retry-After, so a loaded machine admits few a round).
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
				body, ctype := servicetest.Multipart(t, file(fmt.Sprintf("%d.xml", i), "x"))
				t0 := time.Now()
				resp, err := http.Post(servers[i%len(servers)].URL+"/jobs", ctype, body)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
				var st jobs.Status
				err = json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				if resp.StatusCode == http.StatusServiceUnavailable {
					mu.Lock()
					busy++
					mu.Unlock()
					after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
					time.Sleep(time.Duration(after) * time.Second) // what a client does with Retry-After
					continue
				}
				if err != nil || resp.StatusCode != 202 {
					t.Errorf("submit %d: %d %v", i, resp.StatusCode, err)
				}
				ids[i] = st.ID
				return
			}
			t.Errorf("submit %d: still busy after 2 minutes", i)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, id := range ids {
		waitState(t, queues[i%len(queues)], servers[i%len(servers)].URL, id, jobs.Succeeded)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	m := len(lat)
	t.Logf("%d jobs submitted at once, all succeeded; %d answers 503 (busy), submitted again after Retry-After; answer latency p50 %v, p99 %v, max %v",
		n, busy, lat[m/2], lat[m*99/100-1], lat[m-1])
}

// TestReplicaKilled: two service processes share one PostgreSQL database;
// the one running a 200-item job is killed (SIGKILL) about half way. The
// other takes the job over when its lease runs out and finishes it: every
// item answered once (counted in the stand-in model's calls: the item in
// flight at the kill started twice, no item ended twice), the results equal
// those of the same job run by one process alone.
func TestReplicaKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two child processes")
	}
	url := testenv.Postgres(t)
	root := t.TempDir()
	calls := []string{filepath.Join(root, "calls0"), filepath.Join(root, "calls1")}
	var cmds [2]*exec.Cmd
	var bases [2]string
	for i := range cmds {
		cmds[i], bases[i] = startChild(t, url, "JOBS_TEST_BLOCK=", "JOBS_TEST_CALLS="+calls[i], "JOBS_TEST_DELAY=10ms")
	}
	const n = 200
	var parts []servicetest.Part
	for i := range n {
		parts = append(parts, file(fmt.Sprintf("p%03d.xml", i), strings.Repeat("x", i)))
	}
	_, _, st := submit(t, bases[0], "", parts...)

	// The calls of each process: "start NAME" and "end NAME" lines.
	read := func() [2][]string {
		var out [2][]string
		for i, f := range calls {
			b, _ := os.ReadFile(f)
			out[i] = strings.Split(strings.TrimSpace(string(b)), "\n")
		}
		return out
	}
	ends := func(lines []string) int {
		k := 0
		for _, l := range lines {
			if strings.HasPrefix(l, "end ") {
				k++
			}
		}
		return k
	}
	victim := -1
	deadline := time.Now().Add(60 * time.Second)
	for victim < 0 {
		c := read()
		for i := range c {
			if ends(c[i]) >= n/2 {
				victim = i
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never got half way: %d and %d items", ends(c[0]), ends(c[1]))
		}
		time.Sleep(5 * time.Millisecond) // polling other processes' files, with a deadline
	}
	if err := cmds[victim].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmds[victim].Wait()
	atKill := ends(read()[victim])
	survivor := bases[1-victim]
	deadline = time.Now().Add(90 * time.Second)
	for {
		var got jobs.Status
		getJSON(t, survivor+"/jobs/"+st.ID, &got)
		if got.State == jobs.Succeeded {
			if got.Items != (jobs.Counts{Total: n, Succeeded: n}) {
				t.Fatalf("%+v", got.Items)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job is still %s after the kill: %+v", got.State, got.Items)
		}
		time.Sleep(50 * time.Millisecond) // polling another process, with a deadline
	}
	c := read()
	started, ended := map[string]int{}, map[string]int{}
	for _, lines := range c {
		for _, l := range lines {
			if name, ok := strings.CutPrefix(l, "start "); ok {
				started[name]++
			} else if name, ok := strings.CutPrefix(l, "end "); ok {
				ended[name]++
			}
		}
	}
	again := 0
	for i := range n {
		name := fmt.Sprintf("p%03d.xml", i)
		if ended[name] != 1 {
			t.Errorf("%s answered %d times", name, ended[name])
		}
		if started[name] > 1 {
			again++
		}
	}
	if again > 1 {
		t.Errorf("%d items started more than once; only the one in flight at the kill may", again)
	}
	t.Logf("killed process %d after %d items; the other ran %d; %d item started again (the one in flight)", victim, atKill, ends(c[1-victim]), again)

	// The same job by the surviving process alone.
	_, _, alone := submit(t, survivor, "", parts...)
	deadline = time.Now().Add(90 * time.Second)
	for {
		var got jobs.Status
		getJSON(t, survivor+"/jobs/"+alone.ID, &got)
		if got.State == jobs.Succeeded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second job is still %s", got.State)
		}
		time.Sleep(50 * time.Millisecond) // polling another process, with a deadline
	}
	var a, b jobs.Results
	getJSON(t, survivor+"/jobs/"+st.ID+"/results", &a)
	getJSON(t, survivor+"/jobs/"+alone.ID+"/results", &b)
	if len(a.Items) != n || len(b.Items) != n {
		t.Fatalf("%d and %d results", len(a.Items), len(b.Items))
	}
	for i := range a.Items {
		x, y := a.Items[i], b.Items[i]
		if x.Name != y.Name || x.State != y.State || x.Status != y.Status || !bytes.Equal(x.Output, y.Output) {
			t.Fatalf("item %d: %+v, alone %+v", i, x, y)
		}
	}
}

// TestDrainHandsOver: two queues on one PostgreSQL database; the one
// running a job is closed (the drain of SIGTERM) while an item runs: it
// finishes that item and starts no other, and the other queue finishes the
// job. Every item ran once.
func TestDrainHandsOver(t *testing.T) {
	url := testenv.Postgres(t)
	ea := &echo{gate: make(chan struct{}), started: make(chan struct{})}
	svcA, qa := newService(t, url, ea)
	if err := svcA.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	tsA := httptest.NewServer(svcA.Handler())
	defer tsA.Close()
	if err := qa.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, tsA.URL, "", file("a.xml", "a"), file("gated.xml", "g"), file("c.xml", "c"))
	select {
	case <-ea.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the gated item never started")
	}
	eb := &echo{}
	tsB, qb := serve(t, url, eb) // started now: A holds the job
	// As Run does on SIGTERM: the service drains, then its queue closes.
	// The gated item ends after that, so A stops before c.xml (the gate
	// opened before Close had begun let A go on to c.xml under load).
	svcA.BeginDrain()
	closed := make(chan error)
	go func() { closed <- qa.Close(context.Background()) }()
	close(ea.gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	waitState(t, qb, tsB.URL, st.ID, jobs.Succeeded)
	if strings.Join(ea.calls, ",") != "start a.xml,end a.xml,start gated.xml,end gated.xml" || strings.Join(eb.calls, ",") != "start c.xml,end c.xml" {
		t.Fatalf("draining queue ran %v, the other %v", ea.calls, eb.calls)
	}
	var res jobs.Results
	getJSON(t, tsB.URL+"/jobs/"+st.ID+"/results", &res)
	for _, it := range res.Items {
		if it.Runs != 1 || it.State != jobs.Succeeded {
			t.Fatalf("item %+v", it)
		}
	}
}

// TestCallbackPrivate: by default a callback URL to a private, loopback or
// link-local address is refused (422) at submit.
func TestCallbackPrivate(t *testing.T) {
	callbackPrivate = false
	defer func() { callbackPrivate = true }()
	ts, _ := serve(t, t.TempDir(), &echo{})
	for _, u := range []string{"http://127.0.0.1:9/x", "http://10.1.2.3/x", "http://[::1]/x", "http://169.254.169.254/latest", "http://192.168.0.10/x", "http://localhost/x",
		// IPv6 addresses carrying a loopback or metadata address (NAT64, IPv4-compatible, 6to4): they were accepted
		"http://[64:ff9b::7f00:1]:9/x", "http://[::127.0.0.1]:9/x", "http://[2002:7f00:1::]:9/x", "http://[64:ff9b::a9fe:a9fe]/latest"} {
		if code, _, _ := submit(t, ts.URL, "", file("a.xml", "a"), servicetest.Part{Field: "callback_url", Data: []byte(u)}); code != 422 {
			t.Errorf("callback %s: %d, want 422", u, code)
		}
	}
	if code, _, _ := submit(t, ts.URL, "", file("a.xml", "a"), servicetest.Part{Field: "callback_url", Data: []byte("http://192.0.2.1/x")}); code != 202 {
		t.Errorf("callback to a public address: %d, want 202", code)
	}
}

// unavailable answers 503 to the first fails[name] calls of each file
// name, then as echo does; a name in internal always answers 500
// (reason internal), in backend 500 (reason backend_error, with
// Retry-After, as a backend's passing failure) the first time, in refused
// 500 backend_error without Retry-After (a backend refusing the service's
// credentials) always. Every call is counted in calls.
type unavailable struct {
	mu       sync.Mutex
	fails    map[string]int
	backend  map[string]bool
	refused  map[string]bool
	internal map[string]bool
	calls    map[string]int
}

func (u *unavailable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, fh, err := r.FormFile("file")
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no file")
		return
	}
	u.mu.Lock()
	u.calls[fh.Filename]++
	n := u.calls[fh.Filename]
	u.mu.Unlock()
	switch {
	case u.internal[fh.Filename]:
		service.WriteError(w, http.StatusInternalServerError, service.ReasonInternal, "the service failed")
	case u.backend[fh.Filename] && n == 1:
		w.Header().Set("Retry-After", "0")
		service.WriteError(w, http.StatusInternalServerError, service.ReasonBackendError, "the backend failed after its retries")
	case u.refused[fh.Filename]:
		service.WriteError(w, http.StatusInternalServerError, service.ReasonBackendError, "the backend refused the service's credentials")
	case n <= u.fails[fh.Filename]:
		w.Header().Set("Retry-After", "0")
		service.WriteError(w, http.StatusServiceUnavailable, service.ReasonBackendUnavailable, "the backend is not available")
	default:
		service.WriteJSON(w, http.StatusOK, map[string]any{"name": fh.Filename, "call": n})
	}
}

// TestUnavailableRetried: an item answered 503 (the backend not available)
// or backend_error with Retry-After is not recorded as failed: the job
// pauses and runs it again, until it answers or its UnavailableTries are
// spent (then the 503 is its failure); any other failure is recorded at
// once, a backend_error without Retry-After too (a backend refusing the
// service's credentials: it was run again ten times).
func TestUnavailableRetried(t *testing.T) { stores(t, testUnavailableRetried) }

func testUnavailableRetried(t *testing.T, newStore store) {
	env := storeEnv(newStore(t))
	env["LOG_LEVEL"] = "ERROR"
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, err := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	h := &unavailable{fails: map[string]int{"flaky.xml": 2, "down.xml": 100}, backend: map[string]bool{"backend.xml": true},
		refused: map[string]bool{"refused.xml": true}, internal: map[string]bool{"broken.xml": true}, calls: map[string]int{}}
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/x", Handler: h, UnavailableTries: 3, UnavailableBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", file("flaky.xml", "f"), file("down.xml", "d"), file("backend.xml", "b"), file("broken.xml", "x"), file("ok.xml", "o"),
		file("refused.xml", "r"))
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items.Succeeded != 3 || st.Items.Failed != 3 {
		t.Errorf("items %+v, want flaky, backend and ok succeeded, down, broken and refused failed", st.Items)
	}
	failed := map[string]int{}
	for _, e := range st.Errors {
		failed[e.Name] = e.Status
	}
	if failed["down.xml"] != http.StatusServiceUnavailable || failed["broken.xml"] != http.StatusInternalServerError ||
		failed["refused.xml"] != http.StatusInternalServerError || len(failed) != 3 {
		t.Errorf("errors %+v, want down.xml 503 (after its tries), broken.xml and refused.xml 500", st.Errors)
	}
	want := map[string]int{"flaky.xml": 3, "down.xml": 3, "backend.xml": 2, "broken.xml": 1, "ok.xml": 1, "refused.xml": 1}
	h.mu.Lock()
	defer h.mu.Unlock()
	for name, n := range want {
		if h.calls[name] != n {
			t.Errorf("%s ran %d times, want %d", name, h.calls[name], n)
		}
	}
	var item struct {
		Call int `json:"call"`
	}
	if code := getJSON(t, ts.URL+"/jobs/"+st.ID+"/results/0", &item); code != 200 || item.Call != 3 {
		t.Errorf("flaky.xml's answer: %d, call %d; want its third call's", code, item.Call)
	}
}

// TestListFilter: GET /jobs?state= lists the jobs in that state, ?name=
// those with the text in an item's name, ASCII letters' case aside and
// LIKE's wildcards taken as written, and ?since= and ?until= those
// submitted in that time; the next link keeps the filter. Each job says
// its first item's name. A state that is none, a text over 200 bytes, or
// a time not in RFC 3339 is refused.
func TestListFilter(t *testing.T) { stores(t, testListFilter) }

func testListFilter(t *testing.T, newStore store) {
	ts, q := serve(t, newStore(t), &echo{})
	var ids []string
	var created []time.Time
	for _, names := range [][]string{{"Kniha_Č1.tif", "b.xml"}, {"Report 50%_final.pdf", "İSTANBUL-0001.png", "ISPARTA-0002.png"}, {"letters-1891.xml", "Letters-1892.xml"}, {"plain.xml", "U\u0301STI\u0301 STRAẞE.png"}} {
		var parts []servicetest.Part
		for _, n := range names {
			parts = append(parts, file(n, "x"))
		}
		_, _, st := submit(t, ts.URL, "", parts...)
		waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
		ids, created = append(ids, st.ID), append(created, st.CreatedAt)
	}
	at := func(i int) string { return url.QueryEscape(created[i].Format(time.RFC3339Nano)) }
	list := func(query string) (got []int, first []string) {
		next := "/jobs?" + query
		for next != "" {
			var p jobs.Page
			if code := getJSON(t, ts.URL+next, &p); code != 200 {
				t.Fatalf("%s: %d", next, code)
			}
			for _, j := range p.Jobs {
				got = append(got, indexOf(ids, j.ID))
				first = append(first, j.FirstItem)
			}
			next = p.Next
		}
		return got, first
	}
	for _, c := range []struct {
		query string
		want  []int
	}{
		{"state=succeeded", []int{3, 2, 1, 0}},
		{"state=queued", nil},
		{"name=letters", []int{2}},
		{"name=LETTERS-189", []int{2}},
		{"name=_", []int{1, 0}},               // not a wildcard
		{"name=50%25_", []int{1}},             // nor is %
		{"name=%C4%8C1", []int{0}},            // Č1, as written
		{"name=%C4%8D1", []int{0}},            // č1: the case of every letter aside
		{"name=%C3%BAst%C3%AD", []int{3}},     // "ústí" typed composed finds "ÚSTÍ" sent decomposed (as macOS names files)
		{"name=strasse", []int{3}},            // "ẞ" folds to "ss"
		{"name=istanbul", []int{1}},           // the Turkish İ is an i
		{"name=%C4%B1sparta", []int{1}},       // and so is the dotless ı ("ısparta" finds "ISPARTA")
		{"name=%C4%B0STANBUL", []int{1}},      // "İSTANBUL" as written
		{"name=.xml&limit=1", []int{3, 2, 0}}, // three pages, each with the filter
		{"name=.xml&state=succeeded&limit=2", []int{3, 2, 0}},
		{"name=nowhere", nil},
		{"since=" + at(2), []int{3, 2}},
		{"until=" + at(2), []int{1, 0}},
		{"since=" + at(1) + "&until=" + at(3) + "&limit=1", []int{2, 1}}, // the next link keeps both
		{"since=" + at(1) + "&name=.xml", []int{3, 2}},
		// An offset east of UTC typed unescaped: its + arrives as a space.
		{"since=" + created[2].In(time.FixedZone("", 5*3600+45*60)).Format(time.RFC3339Nano), []int{3, 2}},
	} {
		if got, _ := list(c.query); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: jobs %v, want %v", c.query, got, c.want)
		}
	}
	// A job submitted before the Turkish i's were one letter keeps its
	// keys: found by its name as written.
	if err := jobs.OldSearchKeys(q, ids[1]); err != nil {
		t.Fatal(err)
	}
	if got, _ := list("name=%C4%B0STANBUL"); fmt.Sprint(got) != "[1]" {
		t.Errorf("İSTANBUL, an older job's key: jobs %v, want [1]", got)
	}
	if _, first := list("name=letters"); fmt.Sprint(first) != "[letters-1891.xml]" {
		t.Errorf("first items %v", first)
	}
	// (an empty or repeated value was taken as absent, or as its first)
	for _, bad := range []string{"state=done", "name=" + strings.Repeat("x", 201), "since=yesterday", "until=2026-11-28",
		"until=", "limit=", "state=queued&state=failed", "name=a&name=b", "since=" + at(1) + "&since=" + at(2)} {
		if code := getJSON(t, ts.URL+"/jobs?"+bad, nil); code != 422 {
			t.Errorf("%.40s: %d, want 422", bad, code)
		}
	}
	if code := getJSON(t, ts.URL+"/jobs?name=", nil); code != 200 {
		t.Errorf("name= (no filter): %d, want 200", code)
	}
}

// indexOf is the index of s in list, or -1.
func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// TestSubmitNotMultipart: a POST /jobs whose body is not multipart/form-data
// (JSON, a bare XML document, no Content-Type) is 415 unsupported_media_type
// saying how to send a job; a multipart body that cannot be read is 400.
func TestSubmitNotMultipart(t *testing.T) {
	ts, _ := serve(t, t.TempDir(), &echo{})
	for _, c := range []struct {
		ctype, body string
		status      int
		reason      service.Reason
		detail      string
	}{
		{"application/json", `{"file": "a.xml"}`, 415, service.ReasonUnsupportedMediaType, "Content-Type application/json is not supported: send a job as multipart/form-data"},
		{"application/xml", `<alto/>`, 415, service.ReasonUnsupportedMediaType, "Content-Type application/xml is not supported"},
		{"", `<alto/>`, 415, service.ReasonUnsupportedMediaType, "Content-Type none is not supported"},
		{"multipart/form-data; boundary=x", "not a form", 400, service.ReasonBadRequest, "could not read the request body"},
		// A part whose file name holds a bare quote has no readable
		// field: refused, not dropped (the job was one file short).
		{"multipart/form-data; boundary=x", "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.xml\"\r\n\r\n<alto/>\r\n--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"bad\"name.xml\"\r\n\r\n<alto/>\r\n--x--\r\n",
			422, service.ReasonBadField, "a form part has no field name"},
	} {
		req, err := http.NewRequest(http.MethodPost, ts.URL+"/jobs", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e service.ErrorBody
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if err != nil || resp.StatusCode != c.status || e.Reason != c.reason || !strings.Contains(fmt.Sprint(e.Detail), c.detail) {
			t.Errorf("%q: %d %+v (%v), want %d %s %q", c.ctype, resp.StatusCode, e, err, c.status, c.reason, c.detail)
		}
	}
}

// TestStoreOfAnotherService: a state folder that holds one service's jobs
// is refused by another, naming both (pageclass-api ran a translate-api
// job's items through /predict_image, failing each). On PostgreSQL each
// service keeps its jobs in its own schema, so the two share a database
// (as the compose file and the Kubernetes component have them do): a job
// of one is neither listed nor run by the other.
func TestStoreOfAnotherService(t *testing.T) {
	stores(t, func(t *testing.T, newStore store) {
		dir := newStore(t)
		pg := strings.HasPrefix(dir, "postgres://")
		open := func(name string, h http.Handler) (*service.Service, *jobs.Queue, error) {
			env := storeEnv(dir)
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			svc, err := service.New(service.Options{Name: name, DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: h})
			if err == nil {
				svc.Route("POST /echo", "echo", q.Async(h.ServeHTTP))
			}
			return svc, q, err
		}
		svcA, qa, err := open("translate-api", &echo{})
		if err != nil {
			t.Fatal(err)
		}
		if !pg {
			qa.Close(context.Background())
			if _, _, err := open("pageclass-api", &echo{}); err == nil || !strings.Contains(err.Error(), "holds the jobs of translate-api, not pageclass-api") {
				t.Errorf("another service: %v", err)
			}
			_, q, err := open("translate-api", &echo{}) // its own service opens it again
			if err != nil {
				t.Fatal(err)
			}
			q.Close(context.Background())
			return
		}
		other := &unavailable{calls: map[string]int{}} // counts what it is sent
		svcB, qb, err := open("pageclass-api", other)
		if err != nil {
			t.Fatalf("a second service on the database: %v", err)
		}
		tsA := servicetest.Serve(t, svcA, func() { qa.Close(context.Background()) })
		tsB := servicetest.Serve(t, svcB, func() { qb.Close(context.Background()) })
		// B's workers run first, so a job of A in B's queue would be taken.
		if err := qb.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := qa.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, _, st := submit(t, tsA.URL, "", file("a.xml", "x"))
		if st := waitState(t, qa, tsA.URL, st.ID, jobs.Succeeded); st.Items.Succeeded != 1 {
			t.Errorf("job of translate-api: %+v", st.Items)
		}
		for _, c := range []struct {
			base string
			n    int
		}{{tsA.URL, 1}, {tsB.URL, 0}} {
			var list struct{ Jobs []jobs.Status }
			if code := getJSON(t, c.base+"/jobs", &list); code != 200 || len(list.Jobs) != c.n {
				t.Errorf("%s lists %d jobs (%d), want %d: %+v", c.base, len(list.Jobs), code, c.n, list.Jobs)
			}
		}
		other.mu.Lock()
		if len(other.calls) != 0 {
			t.Errorf("pageclass-api ran translate-api's items: %v", other.calls)
		}
		other.mu.Unlock()
	})
}

// TestPausedSaysWhy: a job waiting to run an item again after a passing
// failure says so in its status: why (the item's answer), which item and
// run comes next, and about when (it showed a running job and nothing
// else for minutes). Canceled, it no longer says it.
func TestPausedSaysWhy(t *testing.T) { stores(t, testPausedSaysWhy) }

func testPausedSaysWhy(t *testing.T, newStore store) {
	h := &unavailable{fails: map[string]int{"down.xml": 100}, calls: map[string]int{}}
	svc, q := newServiceWith(t, newStore(t), h, jobs.Options{UnavailableTries: 4, UnavailableBackoff: time.Hour})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	_, _, st := submit(t, ts.URL, "", file("down.xml", "d"))
	deadline := time.After(20 * time.Second)
	for st.Paused == nil {
		ch := q.Changed()
		if code := getJSON(t, ts.URL+"/jobs/"+st.ID, &st); code != 200 {
			t.Fatalf("GET /jobs/%s: %d", st.ID, code)
		}
		if st.Paused != nil {
			break
		}
		select {
		case <-ch:
		case <-time.After(200 * time.Millisecond): // the pause is recorded after the item's answer
		case <-deadline:
			t.Fatalf("job %+v never said it pauses", st)
		}
	}
	p := st.Paused
	if st.State != jobs.Running || p.Reason != "503 backend_unavailable: the backend is not available" || p.Item == nil || *p.Item != 0 ||
		p.Run != 2 || p.Of != 4 || p.Until.Before(before.Add(30*time.Second)) {
		t.Errorf("state %s, paused %+v", st.State, p)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/jobs/"+st.ID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if st := waitState(t, q, ts.URL, st.ID, jobs.Canceled); st.Paused != nil {
		t.Errorf("canceled job still paused: %+v", st.Paused)
	}
}

// TestStateFiles: the database is made with the umask's mode (SQLite made
// it 0644 whatever the umask, and its WAL files like it, so a second user
// of a group sharing the folder could not take over), and a database file
// this process cannot open for writing fails the start naming it (SQLite
// said "attempt to write a readonly database", leaving WAL files of its own
// that then kept the first user's service from starting).
func TestStateFiles(t *testing.T) {
	old := syscall.Umask(0o002)
	dir := t.TempDir()
	lookup := func(k string) (string, bool) { return map[string]string{"JOBS_DIR": dir}[k], k == "JOBS_DIR" }
	svc, _ := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: &echo{}})
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	q.Close(context.Background())
	for _, name := range []string{"jobs.db", "jobs.db-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().Perm() != 0o664 {
			t.Errorf("%s: mode %v under umask 002, want 0664", name, fi.Mode().Perm())
		}
	}

	bad := t.TempDir()
	if err := os.Mkdir(filepath.Join(bad, "jobs.db-wal"), 0o755); err != nil { // root cannot write it either
		t.Fatal(err)
	}
	lookup = func(k string) (string, bool) { return map[string]string{"JOBS_DIR": bad}[k], k == "JOBS_DIR" }
	svc, _ = service.New(service.Options{Name: "y", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	_, err = jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: &echo{}})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(bad, "jobs.db-wal")+" cannot be written by this process") {
		t.Fatalf("an unwritable database file: %v", err)
	}
}

// TestStateFolderPlanted: a state folder holding a symbolic link where the
// service keeps its files (holder, jobs), or another user's folder that
// everyone may write, is refused at start, naming it; the file a planted
// holder link named is left as it was (it was overwritten with the lock
// text, and every job's uploads went into the folder a jobs link named).
func TestStateFolderPlanted(t *testing.T) {
	for _, name := range []string{"holder", "jobs"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			victim := filepath.Join(t.TempDir(), "victim")
			if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"JOBS_DIR": dir}
			lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
			svc, err := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
			if err != nil {
				t.Fatal(err)
			}
			q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: &echo{}})
			if err == nil {
				q.Close(context.Background())
				t.Fatalf("a state folder with a planted %s link was taken", name)
			}
			if !strings.Contains(err.Error(), filepath.Join(dir, name)+" is a symbolic link") {
				t.Errorf("error %v, want it to name the link", err)
			}
			if b, _ := os.ReadFile(victim); string(b) != "keep" {
				t.Errorf("the linked file holds %q", b)
			}
		})
	}
	if os.Getuid() != 0 {
		return // a folder of another user needs root to make
	}
	dir := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o777)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"JOBS_DIR": dir}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, _ := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: &echo{}}); err == nil || !strings.Contains(err.Error(), "writable by everyone") {
		if err == nil {
			q.Close(context.Background())
		}
		t.Errorf("another user's folder writable by everyone: %v", err)
	}
}

// TestCallbackDoesNotHoldJobs: while a job's callback receiver keeps
// failing (its round of attempts takes a minute), the next job runs and
// ends: callbacks have workers of their own (with JOBS_WORKERS=1 the next
// job waited for the round to end).
func TestCallbackDoesNotHoldJobs(t *testing.T) { stores(t, testCallbackDoesNotHoldJobs) }

func testCallbackDoesNotHoldJobs(t *testing.T, newStore store) {
	tried := make(chan struct{}, 16)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		select {
		case tried <- struct{}{}:
		default:
		}
		w.WriteHeader(500)
	}))
	defer cb.Close()
	svc, q := newServiceWith(t, newStore(t), &echo{}, jobs.Options{})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	jobs.SetCallbackBackoff(q, time.Hour) // one failed attempt, then a wait longer than the test
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, first := submit(t, ts.URL, "", file("a.xml", "a"), servicetest.Part{Field: "callback_url", Data: []byte(cb.URL + "/fails")})
	select {
	case <-tried: // the first job ended and its callback round waits
	case <-time.After(20 * time.Second):
		t.Fatal("the first job's callback was never tried")
	}
	_, _, second := submit(t, ts.URL, "", file("b.xml", "b"))
	if st := waitState(t, q, ts.URL, second.ID, jobs.Succeeded); st.Items.Succeeded != 1 {
		t.Errorf("second job %+v", st)
	}
	_ = first
}
