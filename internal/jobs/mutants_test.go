package jobs_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/testenv"
)

// The tests of this file pin down what a user gets in the cases a
// mutation audit of the package found unchecked: when a canceled job ends
// and expires, which jobs a filtered list's pages hold, what the results
// archive names and dates, what a cancel leaves of the item in flight and
// of the files, and how an answer's status counts.

// retained is a service with the job API over h on dir, keeping ended
// jobs for retention, and its queue started.
func retained(t *testing.T, dir string, h http.Handler, retention string) (*httptest.Server, *jobs.Queue) {
	t.Helper()
	env := storeEnv(dir)
	env["JOBS_RETENTION"], env["JOBS_CALLBACK_SECRET"], env["JOBS_CALLBACK_ALLOW_PRIVATE"] = retention, secret, "1"
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	svc, err := service.New(service.Options{Name: "echo-api", DefaultMaxUploadMB: 1, LookupEnv: lookup, LogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/echo", Handler: h, CallbackBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ts, q
}

// waitCall waits until e has been called as call ("start a.xml").
func waitCall(t *testing.T, e *echo, q *jobs.Queue, call string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !slices(e, call) {
		if time.Now().After(deadline) {
			t.Fatalf("%s never came", call)
		}
		select {
		case <-q.Changed():
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitIdle waits until no job runs in q's process: what its runs record
// is recorded.
func waitIdle(t *testing.T, q *jobs.Queue) {
	t.Helper()
	if !testenv.WaitFor(20*time.Second, func() bool { return q.Running() == 0 }) {
		t.Fatalf("%d jobs still running", q.Running())
	}
}

// cancelJob cancels job id (DELETE /jobs/{id}), which must answer 200.
func cancelJob(t *testing.T, base, id string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, base+"/jobs/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if b := servicetest.ReadBody(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE /jobs/%s: %d %s", id, resp.StatusCode, b)
	}
}

// TestCanceledJobEnds: a canceled job has ended: it says when, its
// callback says it was canceled, and it expires with the retention as
// the jobs that ran to their end do.
func TestCanceledJobEnds(t *testing.T) { stores(t, testCanceledJobEnds) }

func testCanceledJobEnds(t *testing.T, newStore store) {
	got := make(chan jobs.Status, 4)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var st jobs.Status
		b, _ := io.ReadAll(r.Body)
		if json.Unmarshal(b, &st) == nil {
			got <- st
		}
	}))
	defer cb.Close()
	e := &echo{block: "slow.xml"}
	ts, q := retained(t, newStore(t), e, "1h")
	_, _, st := submit(t, ts.URL, "", file("a.xml", "a"), file("slow.xml", "s"), servicetest.Part{Field: "callback_url", Data: []byte(cb.URL)})
	waitCall(t, e, q, "start slow.xml")
	cancelJob(t, ts.URL, st.ID)
	st = waitState(t, q, ts.URL, st.ID, jobs.Canceled)
	if st.FinishedAt == nil || st.FinishedAt.Before(st.CreatedAt) {
		t.Errorf("canceled job: finished at %v, created at %v", st.FinishedAt, st.CreatedAt)
	}
	select {
	case c := <-got:
		if c.ID != st.ID || c.State != jobs.Canceled || c.Items.Succeeded != 1 || c.Items.Canceled != 1 {
			t.Errorf("callback %+v, want job %s canceled with 1 item succeeded and 1 canceled", c, st.ID)
		}
	case <-time.After(20 * time.Second):
		t.Error("no callback for the canceled job")
	}
	waitIdle(t, q)
	for _, c := range []struct {
		after time.Duration
		n     int
		code  int
	}{
		{59 * time.Minute, 0, http.StatusOK},
		{61 * time.Minute, 1, http.StatusNotFound},
	} {
		if n, err := q.Expire(context.Background(), time.Now().Add(c.after)); n != c.n || err != nil {
			t.Errorf("%v after the cancel: %d expired (%v), want %d", c.after, n, err, c.n)
		}
		if code := getJSON(t, ts.URL+"/jobs/"+st.ID, nil); code != c.code {
			t.Errorf("%v after the cancel: GET /jobs/%s %d, want %d", c.after, st.ID, code, c.code)
		}
	}
}

// TestExpireFromTheEnd: a job's retention runs from its end, not from its
// submission: a job that ran for 90 minutes is kept an hour after it
// ended.
func TestExpireFromTheEnd(t *testing.T) { stores(t, testExpireFromTheEnd) }

func testExpireFromTheEnd(t *testing.T, newStore store) {
	ts, q := retained(t, newStore(t), &echo{}, "1h")
	_, _, st := submit(t, ts.URL, "", file("a.xml", "a"))
	waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	waitIdle(t, q)
	submitted := time.Now()
	if err := jobs.SetFinished(q, st.ID, submitted.Add(90*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Duration // after the submission
		n    int
		code int
	}{
		{2 * time.Hour, 0, http.StatusOK}, // ended 30 minutes before
		{151 * time.Minute, 1, http.StatusNotFound},
	} {
		if n, err := q.Expire(context.Background(), submitted.Add(c.at)); n != c.n || err != nil {
			t.Errorf("%v after the submission: %d expired (%v), want %d", c.at, n, err, c.n)
		}
		if code := getJSON(t, ts.URL+"/jobs/"+st.ID, nil); code != c.code {
			t.Errorf("%v after the submission: GET /jobs/%s %d, want %d", c.at, st.ID, code, c.code)
		}
	}
}

// TestListPagesKeepTheFilter: each page of a filtered list, followed by
// its next link, holds only the jobs the filter selects; limit is 1 to
// 500.
func TestListPagesKeepTheFilter(t *testing.T) { stores(t, testListPagesKeepTheFilter) }

func testListPagesKeepTheFilter(t *testing.T, newStore store) {
	ts, q := serve(t, newStore(t), &echo{})
	var ids []string
	for _, name := range []string{"a.xml", "bad.xml", "b.xml", "bad.xml", "bad.xml", "c.xml"} {
		_, _, st := submit(t, ts.URL, "", file(name, "x"))
		end := jobs.Succeeded
		if name == "bad.xml" {
			end = jobs.Failed
		}
		waitState(t, q, ts.URL, st.ID, end)
		ids = append(ids, st.ID)
	}
	for _, c := range []struct {
		query string
		want  []int // the jobs, newest first (-1: the answer is not 200)
		pages int
	}{
		{"state=failed&limit=1", []int{4, 3, 1}, 3},
		{"state=failed&limit=2", []int{4, 3, 1}, 2},
		{"state=succeeded&limit=2", []int{5, 2, 0}, 2},
		{"state=succeeded&limit=1&name=b", []int{2}, 1},
		{"limit=500", []int{5, 4, 3, 2, 1, 0}, 1},
		{"limit=501", []int{-1}, 0},
		{"limit=0", []int{-1}, 0},
		{"before=0", []int{-1}, 0},
	} {
		var got []int
		pages := 0
		for next := "/jobs?" + c.query; next != ""; pages++ {
			var p jobs.Page
			if code := getJSON(t, ts.URL+next, &p); code != http.StatusOK {
				got = append(got, -1)
				break
			}
			for _, j := range p.Jobs {
				got = append(got, indexOf(ids, j.ID))
			}
			next = p.Next
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) || pages != c.pages {
			t.Errorf("%s: jobs %v in %d pages, want %v in %d", c.query, got, pages, c.want, c.pages)
		}
	}
}

// TestListNameOfEarlierJobs: a job submitted before search keys were kept
// is found by its items' names all the same, the case of ASCII letters
// aside.
func TestListNameOfEarlierJobs(t *testing.T) { stores(t, testListNameOfEarlierJobs) }

func testListNameOfEarlierJobs(t *testing.T, newStore store) {
	ts, q := serve(t, newStore(t), &echo{})
	var ids []string
	for _, names := range [][]string{{"Letters-1891.xml", "b.xml"}, {"report.xml"}} {
		var parts []servicetest.Part
		for _, n := range names {
			parts = append(parts, file(n, "x"))
		}
		_, _, st := submit(t, ts.URL, "", parts...)
		waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
		if err := jobs.NoSearchKeys(q, st.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, st.ID)
	}
	for _, c := range []struct {
		name string
		want []int
	}{
		{"Letters", []int{0}},
		{"letters", []int{0}},
		{"LETTERS-1891", []int{0}},
		{"REPORT", []int{1}},
		{".xml", []int{1, 0}},
		{"nowhere", nil},
	} {
		var p jobs.Page
		if code := getJSON(t, ts.URL+"/jobs?name="+c.name, &p); code != http.StatusOK {
			t.Fatalf("name=%s: %d", c.name, code)
		}
		var got []int
		for _, j := range p.Jobs {
			got = append(got, indexOf(ids, j.ID))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("name=%s: jobs %v, want %v", c.name, got, c.want)
		}
	}
}

// named answers as a translation service does: page.xml with an XML
// document named for its download (Content-Disposition), bad.xml with a
// JSON error, any other file with JSON.
type named struct{}

func (named) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, fh, err := r.FormFile("file")
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no file")
		return
	}
	switch fh.Filename {
	case "page.xml":
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("Content-Disposition", `attachment; filename="page_en.alto.xml"`)
		io.WriteString(w, "<alto/>")
	case "bad.xml":
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonUnsupportedFormat, "not a document")
	default:
		service.WriteJSON(w, http.StatusOK, map[string]string{"name": fh.Filename})
	}
}

// TestResultsArchive: the results archive names each answer as its
// download is named (Content-Disposition), else as its item with the
// extension of its type, lists them so in its results.json, and dates
// every entry when the job ended, in UTC whatever the service's zone.
func TestResultsArchive(t *testing.T) { stores(t, testResultsArchive) }

func testResultsArchive(t *testing.T, newStore store) {
	local := time.Local
	time.Local = time.FixedZone("+0545", 5*3600+45*60) // the service runs in Kathmandu
	t.Cleanup(func() { time.Local = local })
	svc, q := newService(t, newStore(t), named{})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", file("page.xml", "<alto/>"), file("b.xml", "b"), file("bad.xml", "x"))
	waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	ended := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	if err := jobs.SetFinished(q, st.ID, ended); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(ts.URL + "/jobs/" + st.ID + "/results?format=zip")
	if err != nil {
		t.Fatal(err)
	}
	zb := servicetest.ReadBody(t, resp)
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var results jobs.Results
	for _, f := range zr.File {
		names = append(names, f.Name)
		if _, offset := f.Modified.Zone(); !f.Modified.Equal(ended) || offset != 0 {
			t.Errorf("%s dated %s, want %s", f.Name, f.Modified, ended)
		}
		if f.Name == "results.json" {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			err = json.NewDecoder(rc).Decode(&results)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"0000-page_en.alto.xml", "0001-b.json", "0002-bad.json", "results.json"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("archive holds %v, want %v", names, want)
	}
	var urls []string
	for _, it := range results.Items {
		urls = append(urls, it.URL)
	}
	if fmt.Sprint(urls) != fmt.Sprint(want[:3]) {
		t.Errorf("results.json names the answers %v, want %v", urls, want[:3])
	}
}

// TestCancelCutsItemInFlight: the item running when its job is canceled
// records nothing, even when its answer comes after the cancel: it is
// canceled, as the items after it are.
func TestCancelCutsItemInFlight(t *testing.T) { stores(t, testCancelCutsItemInFlight) }

func testCancelCutsItemInFlight(t *testing.T, newStore store) {
	e := &echo{gate: make(chan struct{}), started: make(chan struct{})}
	ts, q := serve(t, newStore(t), e)
	_, _, st := submit(t, ts.URL, "", file("gated.xml", "g"), file("c.xml", "c"))
	select {
	case <-e.started:
	case <-time.After(20 * time.Second):
		t.Fatal("gated.xml never started")
	}
	cancelJob(t, ts.URL, st.ID)
	close(e.gate) // the answer comes after the cancel
	waitCall(t, e, q, "end gated.xml")
	waitIdle(t, q)
	st = waitState(t, q, ts.URL, st.ID, jobs.Canceled)
	if st.Items != (jobs.Counts{Total: 2, Canceled: 2}) {
		t.Errorf("items %+v, want both canceled", st.Items)
	}
	var res jobs.Results
	if code := getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res); code != http.StatusOK || len(res.Items) != 2 ||
		res.Items[0].State != jobs.Canceled || res.Items[0].Output != nil || res.Items[1].State != jobs.Canceled {
		t.Errorf("results %d %+v, want both items canceled, without an answer", code, res.Items)
	}
	resp, err := http.Get(ts.URL + "/jobs/" + st.ID + "/results/0")
	if err != nil {
		t.Fatal(err)
	}
	if b := servicetest.ReadBody(t, resp); resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"reason":"item_canceled"`) {
		t.Errorf("item cut by the cancel: %d %s, want 404 item_canceled", resp.StatusCode, b)
	}
	if slices(e, "start c.xml") {
		t.Error("an item started after the cancel")
	}
}

// TestCanceledJobKeepsInputsThatRan: a cancel removes the files of the
// items that never ran, and keeps those of the items that ran, with
// their answers (pageclass-api shows them).
func TestCanceledJobKeepsInputsThatRan(t *testing.T) { stores(t, testCanceledJobKeepsInputsThatRan) }

func testCanceledJobKeepsInputsThatRan(t *testing.T, newStore store) {
	e := &echo{block: "slow.xml"}
	dir := newStore(t)
	ts, q := serve(t, dir, e)
	_, _, st := submit(t, ts.URL, "", file("a.xml", "aaa"), file("slow.xml", "s"), file("c.xml", "ccc"))
	waitCall(t, e, q, "start slow.xml")
	cancelJob(t, ts.URL, st.ID)
	waitState(t, q, ts.URL, st.ID, jobs.Canceled)
	waitIdle(t, q)
	input := func(item string) (int, string) {
		r := httptest.NewRequest(http.MethodGet, "/jobs/"+st.ID+"/results/"+item+"/thumbnail", nil)
		r.SetPathValue("id", st.ID)
		r.SetPathValue("item", item)
		w := httptest.NewRecorder()
		f, name, ok := q.Input(w, r)
		if !ok {
			return w.Code, ""
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		return http.StatusOK, name + ": " + string(b)
	}
	for _, c := range []struct {
		item string
		code int
		file string
	}{
		{"0", http.StatusOK, "a.xml: aaa"},
		{"2", http.StatusNotFound, ""},
	} {
		// (On PostgreSQL the unrun item's file was answered as an empty
		// file: the column emptied, not removed.)
		if code, f := input(c.item); code != c.code || f != c.file {
			t.Errorf("item %s's file: %d %q, want %d %q", c.item, code, f, c.code, c.file)
		}
	}
}

// statuses answers each file with the status its name gives (303.xml:
// 303).
type statuses struct{}

func (statuses) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, fh, err := r.FormFile("file")
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no file")
		return
	}
	var code int
	fmt.Sscanf(fh.Filename, "%d", &code)
	if code == http.StatusSeeOther {
		w.Header().Set("Location", "/elsewhere")
	}
	service.WriteJSON(w, code, map[string]any{"detail": fmt.Sprintf("answered %d", code)})
}

// TestItemStatusCounts: an item succeeds when its answer is 2xx, and
// fails with any other, a redirect included.
func TestItemStatusCounts(t *testing.T) {
	ts, q := serve(t, t.TempDir(), statuses{})
	_, _, st := submit(t, ts.URL, "", file("200.xml", "x"), file("201.xml", "x"), file("303.xml", "x"), file("404.xml", "x"))
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	var failed []string
	for _, e := range st.Errors {
		failed = append(failed, fmt.Sprintf("%s %d %s", e.Name, e.Status, e.Error))
	}
	if st.Items != (jobs.Counts{Total: 4, Succeeded: 2, Failed: 2}) || fmt.Sprint(failed) != "[303.xml 303 answered 303 404.xml 404 answered 404]" {
		t.Errorf("items %+v, errors %v; want 200.xml and 201.xml succeeded, 303.xml and 404.xml failed", st.Items, failed)
	}
}

// TestSkippedItemResults: in a book job's results a skipped item says why
// in reason and has no error, a failed one says why in error: a client
// counting the items with an error counts the failed ones.
func TestSkippedItemResults(t *testing.T) { stores(t, testSkippedItemResults) }

func testSkippedItemResults(t *testing.T, newStore store) {
	const src = "https://books.example.org/"
	book := &jobs.BookInput{Field: "book",
		Items: func(context.Context, string, map[string]string) ([]jobs.BookItem, error) {
			return []jobs.BookItem{
				{Name: "1.xml", Source: src + "1.xml", Ref: jobs.BookRef{Page: 1, ID: "P1"}},
				{Name: "P2", Skip: "no text file for this page", Ref: jobs.BookRef{Page: 2, ID: "P2"}},
				{Name: "3.xml", Source: src + "3.xml", Ref: jobs.BookRef{Page: 3, ID: "P3"}},
			}, nil
		},
		Fetch: func(_ context.Context, source string) ([]byte, string, error) {
			if strings.HasSuffix(source, "3.xml") {
				return []byte("<TEI/>"), "", nil
			}
			return []byte("<alto/>"), "", nil
		},
		Check: func(data []byte, ref jobs.BookRef) (jobs.BookRef, error) {
			if string(data) != "<alto/>" {
				return ref, fmt.Errorf("%s: not ALTO", ref.Source)
			}
			return ref, nil
		},
	}
	svc, q := newServiceWith(t, newStore(t), &echo{}, jobs.Options{Book: book})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "mets.xml")})
	waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	var res jobs.Results
	if code := getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res); code != http.StatusOK {
		t.Fatalf("results: %d", code)
	}
	var got []string
	for _, it := range res.Items {
		got = append(got, fmt.Sprintf("%s %s reason=%q error=%q", it.Name, it.State, it.Reason, it.Error))
	}
	want := []string{
		`1.xml succeeded reason="" error=""`,
		`P2 skipped reason="no text file for this page" error=""`,
		`3.xml failed reason="" error="https://books.example.org/3.xml: not ALTO"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("results:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
