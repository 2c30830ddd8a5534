package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// atOnce answers with its file's name and content, holding each call until
// want calls are in flight together (or 10 s have passed, the bound of a
// test that fails), and records the most that were.
type atOnce struct {
	want int

	mu             sync.Mutex
	inFlight, most int
	full           chan struct{} // closed once want calls are in flight
	opened         bool          // full is closed
}

func (a *atOnce) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, fh, err := r.FormFile("file")
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no file")
		return
	}
	content, _ := io.ReadAll(f)
	a.mu.Lock()
	a.inFlight++
	a.most = max(a.most, a.inFlight)
	if a.inFlight == a.want && !a.opened {
		close(a.full) // once: later calls may reach want again
		a.opened = true
	}
	a.mu.Unlock()
	select {
	case <-a.full:
	case <-time.After(10 * time.Second): // never as many at once: the test fails on most
	case <-r.Context().Done():
	}
	a.mu.Lock()
	a.inFlight--
	a.mu.Unlock()
	service.WriteJSON(w, http.StatusOK, map[string]any{"name": fh.Filename, "content": string(content)})
}

// TestItemWorkers: with ItemWorkers 3 a job's items run three at once,
// never more, each answered with its own file. Before, one after the
// other (a GPU service's batches got one page of a job at a time).
func TestItemWorkers(t *testing.T) { stores(t, testItemWorkers) }

func testItemWorkers(t *testing.T, newStore store) {
	h := &atOnce{want: 3, full: make(chan struct{})}
	svc, q := newServiceWith(t, newStore(t), h, jobs.Options{ItemWorkers: 3})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var parts []servicetest.Part
	for i := range 7 {
		parts = append(parts, file(fmt.Sprintf("%d.xml", i), strings.Repeat("x", i)))
	}
	_, _, st := submit(t, ts.URL, "", parts...)
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 7, Succeeded: 7}) {
		t.Errorf("items %+v, want 7 succeeded", st.Items)
	}
	h.mu.Lock()
	most := h.most
	h.mu.Unlock()
	if most != 3 {
		t.Errorf("at most %d items ran at once, want 3", most)
	}
	for i := range 7 {
		var answer struct{ Name string }
		if code := getJSON(t, fmt.Sprintf("%s/jobs/%s/results/%d", ts.URL, st.ID, i), &answer); code != 200 || answer.Name != fmt.Sprintf("%d.xml", i) {
			t.Errorf("item %d: %d, answer of %q", i, code, answer.Name)
		}
	}
}

// TestItemWorkersPause: with items running at once, one answered 503 (a
// passing failure) pauses the job: no further item starts, those running
// are recorded, and the next run runs the rest, the paused one again.
// Every other item runs once.
func TestItemWorkersPause(t *testing.T) { stores(t, testItemWorkersPause) }

func testItemWorkersPause(t *testing.T, newStore store) {
	h := &unavailable{fails: map[string]int{"2.xml": 2}, calls: map[string]int{}}
	svc, q := newServiceWith(t, newStore(t), h, jobs.Options{ItemWorkers: 3, UnavailableTries: 5, UnavailableBackoff: 10 * time.Millisecond})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var parts []servicetest.Part
	for i := range 9 {
		parts = append(parts, file(fmt.Sprintf("%d.xml", i), "x"))
	}
	_, _, st := submit(t, ts.URL, "", parts...)
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 9, Succeeded: 9}) {
		t.Errorf("items %+v, want 9 succeeded", st.Items)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range 9 {
		name, want := fmt.Sprintf("%d.xml", i), 1
		if i == 2 {
			want = 3
		}
		if h.calls[name] != want {
			t.Errorf("%s ran %d times, want %d", name, h.calls[name], want)
		}
	}
}

// TestItemWorkersSetting: JOBS_ITEM_WORKERS sets how many items run at
// once, over the caller's default and DefaultItemWorkers (a GPU
// service's default once warm); a value out of 1–64 is refused, naming
// the variable.
func TestItemWorkersSetting(t *testing.T) {
	for _, tc := range []struct {
		value, err  string
		want, after int // ItemWorkers after Setup, then after DefaultItemWorkers(8)
	}{
		{"", "", 2, 8},
		{"4", "", 4, 4},
		{" 64 ", "", 64, 64},
		{"0", `JOBS_ITEM_WORKERS="0": want a whole number from 1 to 64`, 0, 0},
		{"65", `JOBS_ITEM_WORKERS="65": want a whole number from 1 to 64`, 0, 0},
		{"two", `JOBS_ITEM_WORKERS="two": want a whole number from 1 to 64`, 0, 0},
	} {
		env := map[string]string{"JOBS_DIR": t.TempDir(), "LOG_LEVEL": "ERROR"}
		if tc.value != "" {
			env["JOBS_ITEM_WORKERS"] = tc.value
		}
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		svc, err := service.New(service.Options{Name: "x", DefaultMaxUploadMB: 1, LookupEnv: lookup})
		if err != nil {
			t.Fatal(err)
		}
		q, err := jobs.Setup(svc, lookup, jobs.Options{Path: "/x", Handler: &echo{}, ItemWorkers: 2})
		if got := fmt.Sprint(err); (tc.err == "" && err != nil) || (tc.err != "" && got != tc.err) {
			t.Errorf("%q: %v, want %q", tc.value, err, tc.err)
		}
		if q == nil {
			continue
		}
		want := q.ItemWorkers()
		q.DefaultItemWorkers(8)
		if after := q.ItemWorkers(); want != tc.want || after != tc.after {
			t.Errorf("%q: %d items at once, %d after DefaultItemWorkers(8); want %d, %d", tc.value, want, after, tc.want, tc.after)
		}
		q.Close(context.Background())
	}
}

// TestItemWorkersBook: a book job's pages run four at once with their
// files fetched ahead (Fetchers 3): each page's file is fetched once and
// its item answered with it, in its place.
func TestItemWorkersBook(t *testing.T) { stores(t, testItemWorkersBook) }

func testItemWorkersBook(t *testing.T, newStore store) {
	fetched := &counts{n: map[string]int{}}
	src := "https://iiif.example.org/book/"
	book := &jobs.BookInput{Field: "book", Fetchers: 3,
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			var items []jobs.BookItem
			for i := range 12 {
				name := fmt.Sprintf("p%02d.xml", i+1)
				items = append(items, jobs.BookItem{Name: name, Source: src + name, Ref: jobs.BookRef{Page: i + 1}})
			}
			return items, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			fetched.add(source)
			return []byte(strings.TrimPrefix(source, src)), "text/xml", nil
		}}
	h := &atOnce{want: 4, full: make(chan struct{})}
	svc, q := newServiceWith(t, newStore(t), h, jobs.Options{Book: book, ItemWorkers: 4})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "mets.xml")})
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 12, Succeeded: 12}) {
		t.Errorf("items %+v, want 12 succeeded", st.Items)
	}
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	for i, it := range res.Items {
		var out struct{ Name, Content string }
		name := fmt.Sprintf("p%02d.xml", i+1)
		if err := json.Unmarshal(it.Output, &out); err != nil || it.Name != name || out.Name != name || out.Content != name {
			t.Errorf("item %d: %s %s, want %s's answer with its own file", i, it.Name, it.Output, name)
		}
		if n := fetched.get(src + name); n != 1 {
			t.Errorf("%s fetched %d times, want once", name, n)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.most != 4 {
		t.Errorf("at most %d pages ran at once, want 4", h.most)
	}
}
