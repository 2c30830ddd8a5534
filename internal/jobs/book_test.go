package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/fetch"
	"archivekit/internal/jobs"
	"archivekit/internal/paradata"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/testenv"
)

// TestBookJob (issue 30 item 1), on SQLite and PostgreSQL: a job that
// names a book by URL is answered at once with no items; its worker reads
// the book (Items, with the job's fields), runs each item with the file
// fetched from the loopback server, leaves the reader's own fields (pages)
// and the book field out of the endpoint's form, records a page with
// nothing to run (Skip: a page without an image) skipped and a file that
// cannot be fetched (502) failed, and gives every item its book
// identifiers. A book the
// reader refuses fails the job with the reader's reason; files and a book
// together, a book URL that is not http(s), are refused.
func TestBookJob(t *testing.T) { stores(t, testBookJob) }

func testBookJob(t *testing.T, newStore store) {
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone.xml" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "<page>%s</page>", r.URL.Path)
	}))
	defer pages.Close()
	var mu sync.Mutex
	var read []string
	book := &jobs.BookInput{Field: "book", Fields: []string{"pages"},
		Items: func(ctx context.Context, location string, fields map[string]string) ([]jobs.BookItem, error) {
			mu.Lock()
			read = append(read, location+" pages="+fields["pages"]+" lang="+fields["lang"])
			mu.Unlock()
			if strings.HasSuffix(location, "/nobook") {
				return nil, fmt.Errorf("neither a METS file nor a IIIF manifest")
			}
			items := []jobs.BookItem{
				{Name: "p1.xml", Type: "application/xml", Source: pages.URL + "/p1.xml", Ref: jobs.BookRef{Page: 1, ID: "PHYS_0001", Order: "1", Label: "i"}},
				{Name: "p2", Skip: "no image file for this page", Ref: jobs.BookRef{Page: 2, ID: "PHYS_0002"}},
				{Name: "gone.xml", Type: "application/xml", Source: pages.URL + "/gone.xml", Ref: jobs.BookRef{Page: 3, ID: "PHYS_0003"}},
				{Name: "p4.xml", Source: pages.URL + "/p4.xml", Ref: jobs.BookRef{Page: 4, ID: "PHYS_0004", Label: "iv"}},
			}
			return items, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return nil, "", err
			}
			defer resp.Body.Close()
			if resp.StatusCode != 200 {
				return nil, "", fmt.Errorf("%s: %s", source, resp.Status)
			}
			b, err := io.ReadAll(resp.Body)
			return b, "text/xml", err
		}}
	svc, q := newServiceWith(t, newStore(t), &echo{}, jobs.Options{Book: book})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	field := func(k, v string) servicetest.Part { return servicetest.Part{Field: k, Data: []byte(v)} }

	code, _, st := submit(t, ts.URL, "", field("lang", "cs"), field("book", pages.URL+"/mets.xml"), field("pages", "1-4"))
	// The answer is the job as stored when it is read back: the worker may
	// have read the book and its pages already (4 items), or not (none).
	if code != http.StatusAccepted || st.Book != pages.URL+"/mets.xml" || (st.Items.Total != 0 && st.Items.Total != 4) {
		t.Fatalf("submit: %d %+v", code, st)
	}
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 4, Succeeded: 2, Failed: 1, Skipped: 1}) || len(st.Errors) != 1 || len(st.Skipped) != 1 ||
		st.Skipped[0].Book == nil || st.Skipped[0].Book.ID != "PHYS_0002" || st.Skipped[0].Reason != "no image file for this page" ||
		st.Errors[0].Status != 502 || !strings.Contains(st.Errors[0].Error, "404") || st.Errors[0].Book.Page != 3 {
		t.Fatalf("status %+v", st)
	}
	if st.Errors[0].Reason != service.ReasonFetchFailed {
		t.Errorf("the error's reason %q, want %q", st.Errors[0].Reason, service.ReasonFetchFailed)
	}
	if want := pages.URL + "/mets.xml pages=1-4 lang=cs"; len(read) != 1 || read[0] != want {
		t.Fatalf("the book was read %q, want once as %q", read, want)
	}
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	if res.Book != st.Book || len(res.Items) != 4 {
		t.Fatalf("results %+v", res)
	}
	for i, want := range []string{
		`{"lang":"cs","name":"p1.xml","query":"x=1","size":20,"type":"text/xml"}`, ``,
		`{"status":502,"reason":"fetch_failed","detail":"not fetched: ` + pages.URL + `/gone.xml: 404 Not Found"}`, `{"lang":"cs","name":"p4.xml","query":"x=1","size":20,"type":"text/xml"}`,
	} {
		it := res.Items[i]
		if string(it.Output) != want || it.Book == nil || it.Book.Page != i+1 || it.Runs > 1 {
			t.Errorf("item %d: %s %+v, want %s", i, it.Output, it.Book, want)
		}
	}
	if b := res.Items[3].Book; b.Label != "iv" || b.Source != pages.URL+"/p4.xml" {
		t.Errorf("item 3's book %+v", b)
	}
	resp, err := http.Get(ts.URL + "/jobs/" + st.ID + "/results/1")
	if err != nil {
		t.Fatal(err)
	}
	if b := servicetest.ReadBody(t, resp); resp.StatusCode != 404 || !strings.Contains(string(b), "skipped, so it has no answer: no image file for this page") {
		t.Errorf("item 1: %d %s", resp.StatusCode, b)
	}

	_, _, st = submit(t, ts.URL, "", field("book", pages.URL+"/nobook"))
	st = waitState(t, q, ts.URL, st.ID, jobs.Failed)
	if st.Items.Total != 0 || !strings.Contains(st.Error, "neither a METS file") {
		t.Fatalf("not a book: %+v", st)
	}
	for _, c := range []struct {
		name  string
		parts []servicetest.Part
		says  string
	}{
		{"file and book", []servicetest.Part{field("book", pages.URL+"/mets.xml"), file("a.xml", "a")}, "not both"},
		{"not http", []servicetest.Part{field("book", "file:///etc/passwd")}, "http(s) URL"},
		{"neither", []servicetest.Part{field("lang", "cs")}, "or a book URL in the field book"},
	} {
		body, ctype := servicetest.Multipart(t, c.parts...)
		resp, err := http.Post(ts.URL+"/jobs", ctype, body)
		if err != nil {
			t.Fatal(err)
		}
		if b := servicetest.ReadBody(t, resp); resp.StatusCode != 422 || !strings.Contains(string(b), c.says) {
			t.Errorf("%s: %d %s", c.name, resp.StatusCode, b)
		}
	}
}

// TestBookFetchRetried, on SQLite and PostgreSQL: a book item whose file's
// server answers 503 (after the fetcher's own retries) is run again later,
// not failed; one whose server keeps failing fails after its tries with
// 502, and one answered 404 fails at once.
func TestBookFetchRetried(t *testing.T) { stores(t, testBookFetchRetried) }

func testBookFetchRetried(t *testing.T, newStore store) {
	fetched := &counts{n: map[string]int{}}
	book := &jobs.BookInput{Field: "book",
		Items: func(ctx context.Context, location string, fields map[string]string) ([]jobs.BookItem, error) {
			var items []jobs.BookItem
			for i, name := range []string{"flaky.xml", "down.xml", "gone.xml"} {
				items = append(items, jobs.BookItem{Name: name, Type: "application/xml", Source: "https://iiif.example.org/" + name, Ref: jobs.BookRef{Page: i + 1}})
			}
			return items, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			n := fetched.add(source)
			switch {
			case strings.HasSuffix(source, "/gone.xml"):
				return nil, "", &fetch.StatusError{URL: source, Code: http.StatusNotFound}
			case strings.HasSuffix(source, "/down.xml"), strings.HasSuffix(source, "/flaky.xml") && n <= 2:
				return nil, "", &fetch.StatusError{URL: source, Code: http.StatusServiceUnavailable}
			}
			return []byte("<page/>"), "text/xml", nil
		}}
	ts, q := serveRetrying(t, newStore, book)
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte("https://iiif.example.org/manifest.json")})
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 3, Succeeded: 1, Failed: 2}) || len(st.Errors) != 2 ||
		st.Errors[0].Name != "down.xml" || st.Errors[0].Status != http.StatusBadGateway || !strings.Contains(st.Errors[0].Error, "503") ||
		st.Errors[1].Name != "gone.xml" || st.Errors[1].Status != http.StatusBadGateway {
		t.Fatalf("status %+v", st)
	}
	for name, want := range map[string]int{"flaky.xml": 3, "down.xml": 3, "gone.xml": 1} {
		if got := fetched.get("https://iiif.example.org/" + name); got != want {
			t.Errorf("%s fetched %d times, want %d", name, got, want)
		}
	}
}

// TestBookReadRetried, on SQLite and PostgreSQL: a book whose server
// answers 503 (after the fetcher's retries) is read again later, and its
// job runs; one whose server keeps failing fails its job after the tries,
// naming the failure; one that is not a book fails at once.
func TestBookReadRetried(t *testing.T) { stores(t, testBookReadRetried) }

func testBookReadRetried(t *testing.T, newStore store) {
	reads := &counts{n: map[string]int{}}
	book := &jobs.BookInput{Field: "book",
		Items: func(ctx context.Context, location string, fields map[string]string) ([]jobs.BookItem, error) {
			n := reads.add(location)
			switch {
			case strings.HasSuffix(location, "/nobook"):
				return nil, fmt.Errorf("neither a METS file nor a IIIF manifest")
			case strings.HasSuffix(location, "/down"), strings.HasSuffix(location, "/flaky") && n <= 2:
				return nil, fmt.Errorf("book %s: %w", location, &fetch.StatusError{URL: location, Code: http.StatusServiceUnavailable})
			}
			return []jobs.BookItem{{Name: "p1.xml", Type: "application/xml", Source: location + "/p1.xml", Ref: jobs.BookRef{Page: 1}}}, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			return []byte("<page/>"), "text/xml", nil
		}}
	ts, q := serveRetrying(t, newStore, book)
	for _, c := range []struct {
		book, state string
		reads       int
		says        string
	}{
		{"flaky", jobs.Succeeded, 3, ""},
		{"down", jobs.Failed, 3, "503"},
		{"nobook", jobs.Failed, 1, "neither a METS file"},
	} {
		url := "https://iiif.example.org/" + c.book
		_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(url)})
		st = waitState(t, q, ts.URL, st.ID, c.state)
		if c.state == jobs.Succeeded && st.Items.Succeeded != 1 || !strings.Contains(st.Error, c.says) {
			t.Errorf("%s: %+v", c.book, st)
		}
		if n := reads.get(url); n != c.reads {
			t.Errorf("%s read %d times, want %d", c.book, n, c.reads)
		}
	}
}

// serveRetrying serves the echo endpoint with book on a new store, an
// item's passing failures tried three times 10 ms apart, and starts its
// workers.
func serveRetrying(t *testing.T, newStore store, book *jobs.BookInput) (*httptest.Server, *jobs.Queue) {
	t.Helper()
	svc, q := newServiceWith(t, newStore(t), &echo{}, jobs.Options{Book: book, UnavailableTries: 3, UnavailableBackoff: 10 * time.Millisecond})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ts, q
}

// counts counts calls by key, safely from several goroutines.
type counts struct {
	mu sync.Mutex
	n  map[string]int
}

// add counts one more call of k and returns its count.
func (c *counts) add(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[k]++
	return c.n[k]
}

func (c *counts) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// TestBookCheck (issue 28), on SQLite and PostgreSQL: BookInput.Check sees
// each book item's fetched file with its ref: the ref it returns is the
// item's in the results (a format told by the content, where the book
// only declared one), a ref it returns unchanged stays, and its error
// fails the item (422 bad_book, the error its detail) without a call to
// the endpoint.
func TestBookCheck(t *testing.T) { stores(t, testBookCheck) }

func testBookCheck(t *testing.T, newStore store) {
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<%s/>", strings.TrimPrefix(r.URL.Path, "/"))
	}))
	defer files.Close()
	book := &jobs.BookInput{Field: "book",
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			return []jobs.BookItem{
				{Name: "alto.xml", Source: files.URL + "/alto", Ref: jobs.BookRef{Page: 1, ID: "P1", Path: "alto.xml", Format: "ALTO"}},
				{Name: "page.xml", Source: files.URL + "/PcGts", Ref: jobs.BookRef{Page: 2, ID: "P2", Path: "page.xml", Format: "ALTO"}},
				{Name: "tei.xml", Source: files.URL + "/TEI", Ref: jobs.BookRef{Page: 3, ID: "P3", Path: "tei.xml", Format: "ALTO"}},
			}, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			resp, err := http.Get(source)
			if err != nil {
				return nil, "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return b, "", err
		},
		Check: func(data []byte, ref jobs.BookRef) (jobs.BookRef, error) {
			switch string(data) {
			case "<alto/>":
			case "<PcGts/>":
				ref.Format = "PAGE"
			default:
				return ref, fmt.Errorf("%s: not ALTO or PAGE: %s", ref.Source, data)
			}
			return ref, nil
		}}
	e := &echo{}
	svc, q := newServiceWith(t, newStore(t), e, jobs.Options{Book: book})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(files.URL + "/mets.xml")})
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Failed: 1}) || len(st.Errors) != 1 || st.Errors[0].Status != 422 ||
		st.Errors[0].Reason != service.ReasonBadBook || st.Errors[0].Error != files.URL+"/TEI: not ALTO or PAGE: <TEI/>" {
		t.Fatalf("status %+v", st)
	}
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	for i, want := range []string{"ALTO", "PAGE", "ALTO"} {
		if b := res.Items[i].Book; b == nil || b.Format != want || b.Page != i+1 || b.Source == "" {
			t.Errorf("item %d: book %+v, want format %s", i, b, want)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, c := range e.calls {
		if strings.Contains(c, "tei.xml") {
			t.Errorf("the endpoint was called for the refused file: %q", e.calls)
		}
	}
}

// TestBookSkipped, on SQLite and PostgreSQL: a book's item with nothing to
// run ends skipped, with its reason, apart from the items succeeded and
// failed: a page the book reader says has no text file (BookItem.Skip) is
// never fetched, and a file whose content Check finds is not for the
// endpoint (SkipError) is fetched once and not sent to it; a declared
// file Check refuses still fails. GET /jobs/{id} counts them as skipped
// and lists them with why and their book identifiers; the results list
// them without an answer (none in the archive), GET .../results/{item}
// answers 404 item_skipped; the run metadata lists them in
// skipped_files_detail. The job succeeds; a job whose items were all
// skipped fails, its error saying so.
func TestBookSkipped(t *testing.T) { stores(t, testBookSkipped) }

func testBookSkipped(t *testing.T, newStore store) {
	fetched := &counts{n: map[string]int{}}
	src := "https://books.example.org/"
	book := &jobs.BookInput{Field: "book",
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			if strings.HasSuffix(location, "/blank") {
				return []jobs.BookItem{{Name: "P1", Skip: "no text file for this page", Ref: jobs.BookRef{Page: 1, ID: "P1"}},
					{Name: "P2", Skip: "no text file for this page", Ref: jobs.BookRef{Page: 2, ID: "P2"}}}, nil
			}
			return []jobs.BookItem{
				{Name: "1.xml", Source: src + "1.xml", Ref: jobs.BookRef{Page: 1, ID: "P1", Path: "1.xml", Format: "ALTO"}},
				{Name: "P2", Skip: "no text file for this page", Ref: jobs.BookRef{Page: 2, ID: "P2", Label: "ii"}},
				{Name: "3.bin", Source: src + "3.bin", Ref: jobs.BookRef{Page: 3, ID: "P3", Path: "3.bin"}},
				{Name: "4.xml", Source: src + "4.xml", Ref: jobs.BookRef{Page: 4, ID: "P4", Path: "4.xml", Format: "ALTO"}},
			}, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			fetched.add(source)
			if strings.HasSuffix(source, ".bin") {
				return []byte("II*\x00"), "", nil
			}
			if strings.HasSuffix(source, "4.xml") {
				return []byte("<TEI/>"), "", nil
			}
			return []byte("<alto/>"), "", nil
		},
		Check: func(data []byte, ref jobs.BookRef) (jobs.BookRef, error) {
			switch {
			case string(data) == "<alto/>":
				return ref, nil
			case ref.Format == "":
				return ref, &jobs.SkipError{Reason: "not a text file: image/tiff"}
			}
			return ref, fmt.Errorf("%s: not ALTO", ref.Source)
		}}
	runMeta := func(_ context.Context, j jobs.RunJob) (jobs.RunRecord, error) {
		return paradata.Record(j.Start, paradata.Info{ToolVersion: "9.9.9", Repository: paradata.Repository, RunID: j.RunID}), nil
	}
	e := &echo{}
	svc, q := newServiceWith(t, newStore(t), e, jobs.Options{Book: book, RunMeta: runMeta})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "mets.xml")})
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items != (jobs.Counts{Total: 4, Succeeded: 1, Failed: 1, Skipped: 2}) || len(st.Errors) != 1 || st.Errors[0].Item != 3 || len(st.Skipped) != 2 ||
		st.Skipped[0].Item != 1 || st.Skipped[0].Name != "P2" || st.Skipped[0].Reason != "no text file for this page" || st.Skipped[0].Book == nil ||
		*st.Skipped[0].Book != (jobs.BookRef{Page: 2, ID: "P2", Label: "ii"}) ||
		st.Skipped[1].Item != 2 || st.Skipped[1].Reason != "not a text file: image/tiff" || st.Skipped[1].Book == nil || st.Skipped[1].Book.Source != src+"3.bin" {
		t.Fatalf("status %+v", st)
	}
	for name, want := range map[string]int{"1.xml": 1, "3.bin": 1, "4.xml": 1} {
		if got := fetched.get(src + name); got != want {
			t.Errorf("%s fetched %d times, want %d", name, got, want)
		}
	}
	e.mu.Lock()
	if calls := strings.Join(e.calls, ","); calls != "start 1.xml,end 1.xml" {
		t.Errorf("the endpoint's calls %q, want 1.xml's alone", calls)
	}
	e.mu.Unlock()

	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	for i, want := range []struct{ state, reason string }{{jobs.Succeeded, ""}, {jobs.Skipped, "no text file for this page"}, {jobs.Skipped, "not a text file: image/tiff"}, {jobs.Failed, ""}} {
		it := res.Items[i]
		answer := it.URL != "" || it.Output != nil
		if it.State != want.state || it.Reason != want.reason || answer != (want.state != jobs.Skipped) || it.Book == nil || it.Book.Page != i+1 {
			t.Errorf("item %d: %+v, want %s %q", i, it, want.state, want.reason)
		}
	}
	resp, err := http.Get(ts.URL + "/jobs/" + st.ID + "/results/1")
	if err != nil {
		t.Fatal(err)
	}
	servicetest.CheckError(t, resp.StatusCode, servicetest.ReadBody(t, resp), http.StatusNotFound, string(service.ReasonItemSkipped), "item 1 (P2) was skipped, so it has no answer: no text file for this page")

	var doc paradata.Document
	if err := json.Unmarshal(res.RunMetadata, &doc); err != nil {
		t.Fatalf("run_metadata %s: %v", res.RunMetadata, err)
	}
	skipped := map[string]string{}
	for _, s := range doc.SkippedFilesDetail {
		skipped[s.File] = s.Reason
	}
	if doc.Statistics.SuccessfullyProcessed != 1 || doc.Statistics.SkippedFiles != 3 || skipped["P2"] != "skipped: no text file for this page" ||
		skipped["3.bin"] != "skipped: not a text file: image/tiff" || !strings.HasPrefix(skipped["4.xml"], "422: ") {
		t.Errorf("run metadata: %+v, skipped_files_detail %v", doc.Statistics, doc.SkippedFilesDetail)
	}
	all, _ := getZip(t, ts.URL+"/jobs/"+st.ID+"/results?format=zip")
	var names []string
	for _, name := range all {
		if strings.HasPrefix(name, "000") {
			names = append(names, name)
		}
	}
	if !equal(names, []string{"0000-1.json", "0003-4.json"}) {
		t.Errorf("the archive's answers %q, want items 0 and 3's alone", names)
	}

	_, _, st = submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "blank")})
	st = waitState(t, q, ts.URL, st.ID, jobs.Failed)
	if st.Items != (jobs.Counts{Total: 2, Skipped: 2}) || len(st.Errors) != 0 || st.Error != "every item was skipped: none of the 2 had anything to run" {
		t.Errorf("a book whose pages were all skipped: %+v", st)
	}
}

// TestBookFetchAhead, on SQLite and PostgreSQL: with BookInput.Fetchers 3
// a book job's run fetches the next two items' files while an item runs
// (the endpoint holds item 0 until they are fetched), each file once, and
// every item's answer is its own file's; a job canceled while an item runs
// cancels the fetches ahead under way (their contexts end), fetches no
// further file and runs no further item.
func TestBookFetchAhead(t *testing.T) { stores(t, testBookFetchAhead) }

func testBookFetchAhead(t *testing.T, newStore store) {
	fetched := &counts{n: map[string]int{}}
	ahead, canceled := make(chan string, 10), make(chan string, 10)
	src := "https://iiif.example.org/"
	book := &jobs.BookInput{Field: "book", Fetchers: 3,
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			kind := strings.TrimPrefix(location, src)
			var items []jobs.BookItem
			for i, name := range []string{"gated.xml", "p2.xml", "p3.xml", "p4.xml", "p5.xml"} {
				items = append(items, jobs.BookItem{Name: name, Source: src + kind + "/" + name, Ref: jobs.BookRef{Page: i + 1}})
			}
			return items, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			fetched.add(source)
			if name := path.Base(source); name != "gated.xml" {
				if name == "p2.xml" || name == "p3.xml" {
					ahead <- source
				}
				if strings.Contains(source, "/cancel/") {
					<-ctx.Done()
					canceled <- source
					return nil, "", ctx.Err()
				}
			}
			return []byte(path.Base(source)), "text/xml", nil
		}}
	// serve starts a service whose endpoint holds item 0 (gated.xml).
	serve := func() (*echo, *httptest.Server, *jobs.Queue) {
		e := &echo{gate: make(chan struct{}), started: make(chan struct{})}
		svc, q := newServiceWith(t, newStore(t), e, jobs.Options{Book: book})
		ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // a test that failed holding item 0 lets it end
			select {
			case <-e.gate:
			default:
				close(e.gate)
			}
		})
		return e, ts, q
	}
	// fetchedAhead waits for the files of items 1 and 2 to be fetched.
	fetchedAhead := func(kind string) {
		t.Helper()
		timeout := time.After(20 * time.Second) // a failure's bound, not a synchronisation
		got := map[string]bool{}
		for len(got) < 2 {
			select {
			case s := <-ahead:
				got[s] = true
			case <-timeout:
				t.Fatalf("the files of items 1 and 2 not fetched while item 0 ran (only %v)", got)
			}
		}
		if !got[src+kind+"/p2.xml"] || !got[src+kind+"/p3.xml"] {
			t.Fatalf("fetched ahead %v, want items 1 and 2's files", got)
		}
	}

	e, ts, q := serve()
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "plain")})
	<-e.started
	fetchedAhead("plain")
	close(e.gate)
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	for i, it := range res.Items {
		var out struct {
			Name string `json:"name"`
			Size int    `json:"size"`
		}
		if err := json.Unmarshal(it.Output, &out); err != nil || it.State != jobs.Succeeded || out.Name != it.Name || out.Size != len(it.Name) || it.Runs != 1 {
			t.Errorf("item %d: %+v %s, want its own file's answer", i, it, it.Output)
		}
		if n := fetched.get(src + "plain/" + it.Name); n != 1 {
			t.Errorf("%s fetched %d times, want once", it.Name, n)
		}
	}

	e, ts, q = serve()
	_, _, st = submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "cancel")})
	<-e.started
	fetchedAhead("cancel")
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/jobs/"+st.ID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if servicetest.ReadBody(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	close(e.gate)
	waitState(t, q, ts.URL, st.ID, jobs.Canceled)
	timeout := time.After(20 * time.Second)
	for range 2 {
		select {
		case <-canceled:
		case <-timeout:
			t.Fatal("a fetch ahead of a canceled job was not canceled")
		}
	}
	for _, name := range []string{"p4.xml", "p5.xml"} {
		if n := fetched.get(src + "cancel/" + name); n != 0 {
			t.Errorf("%s of the canceled job fetched %d times", name, n)
		}
	}
	if slices(e, "start p2.xml") {
		t.Error("an item of the canceled job ran after the cancel")
	}
}

// TestBookNote, on SQLite and PostgreSQL: the record of its book that
// BookInput.Items attaches (AnnotateBook) is kept with the job: every
// item's request has it (BookNote) and the job's run metadata is started
// with it (RunJob.BookNote); a job of uploaded files, and a book whose
// reader attached none, have none.
func TestBookNote(t *testing.T) { stores(t, testBookNote) }

func testBookNote(t *testing.T, newStore store) {
	book := &jobs.BookInput{Field: "book",
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			if !strings.HasSuffix(location, "/plain") {
				if err := jobs.AnnotateBook(ctx, map[string]string{"language": "de", "book": location}); err != nil {
					return nil, err
				}
			}
			return []jobs.BookItem{{Name: "1.xml", Source: "https://books.example.org/1.xml"}, {Name: "2.xml", Source: "https://books.example.org/2.xml"}}, nil
		},
		Fetch: func(context.Context, string) ([]byte, string, error) { return []byte("<alto/>"), "text/xml", nil }}
	var mu sync.Mutex
	var notes []string // the notes the item requests of the job under way had
	runNotes := map[string]string{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		notes = append(notes, string(jobs.BookNote(r.Context())))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, "{}")
	})
	runMeta := func(_ context.Context, j jobs.RunJob) (jobs.RunRecord, error) {
		mu.Lock()
		runNotes[j.ID] = string(j.BookNote)
		mu.Unlock()
		return paradata.Record(j.Start, paradata.Info{ToolVersion: "9.9.9", Repository: paradata.Repository, RunID: j.RunID}), nil
	}
	svc, q := newServiceWith(t, newStore(t), h, jobs.Options{Book: book, RunMeta: runMeta})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	src := "https://books.example.org/"
	for _, c := range []struct{ book, want string }{
		{src + "mets.xml", `{"book":"` + src + `mets.xml","language":"de"}`},
		{src + "plain", ""},
		{"", ""},
	} {
		parts := []servicetest.Part{{Field: "file", Name: "a.xml", File: true, Data: []byte("<a/>")}}
		if c.book != "" {
			parts = []servicetest.Part{{Field: "book", Data: []byte(c.book)}}
		}
		mu.Lock()
		notes = nil
		mu.Unlock()
		_, _, st := submit(t, ts.URL, "", parts...)
		waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
		mu.Lock()
		got, run := notes, runNotes[st.ID]
		mu.Unlock()
		if len(got) == 0 || strings.Count(strings.Join(got, "\n")+"\n", c.want+"\n") != len(got) || run != c.want {
			t.Errorf("book %q: item requests had notes %q, the run metadata %q; want %q", c.book, got, run, c.want)
		}
	}
}

// TestBookJoins, on SQLite and PostgreSQL, fetching ahead or not: items
// that BookInput.Joins says continue each other (pages 1 and 2; page 3
// has two items, so neither joins) run knowing each other: item 0's
// request is given item 1's file (NextFile), item 1's the summary item 0
// attached (PrevSummary), and no other item either; every file is still
// fetched once.
func TestBookJoins(t *testing.T) { stores(t, testBookJoins) }

func testBookJoins(t *testing.T, newStore store) {
	for _, c := range []struct{ fetchers, items int }{{1, 1}, {3, 1}, {3, 3}} {
		fetchers := c.fetchers
		// With items at once (ItemWorkers) too: joined items still run
		// one after the other, knowing each other.
		t.Run(fmt.Sprintf("fetchers=%d items=%d", fetchers, c.items), func(t *testing.T) {
			fetched := &counts{n: map[string]int{}}
			src := "https://books.example.org/"
			book := &jobs.BookInput{Field: "book", Fetchers: fetchers,
				Items: func(context.Context, string, map[string]string) ([]jobs.BookItem, error) {
					var items []jobs.BookItem
					for _, it := range []struct {
						name string
						page int
					}{{"1.xml", 1}, {"2.xml", 2}, {"3a.xml", 3}, {"3b.xml", 3}, {"4.xml", 4}} {
						items = append(items, jobs.BookItem{Name: it.name, Source: src + it.name, Ref: jobs.BookRef{Page: it.page}})
					}
					return items, nil
				},
				Fetch: func(_ context.Context, source string) ([]byte, string, error) {
					fetched.add(source)
					return []byte("<f>" + path.Base(source) + "</f>"), "text/xml", nil
				},
				Joins: func(a, b jobs.BookRef) bool { return b.Page == a.Page+1 }}
			var mu sync.Mutex
			links := map[string]string{}
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, fh, err := r.FormFile("file")
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				mu.Lock()
				links[fh.Filename] = fmt.Sprintf("next=%s prev=%s", jobs.NextFile(r.Context()), jobs.PrevSummary(r.Context()))
				mu.Unlock()
				_ = jobs.Annotate(r.Context(), map[string]string{"from": fh.Filename})
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintln(w, "{}")
			})
			svc, q := newServiceWith(t, newStore(t), h, jobs.Options{Book: book, ItemWorkers: c.items})
			ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
			if err := q.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src + "mets.xml")})
			waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
			want := map[string]string{
				"1.xml": "next=<f>2.xml</f> prev=", "2.xml": `next= prev={"from":"1.xml"}`,
				"3a.xml": "next= prev=", "3b.xml": "next= prev=", "4.xml": "next= prev=",
			}
			mu.Lock()
			defer mu.Unlock()
			for name, w := range want {
				if links[name] != w {
					t.Errorf("%s was given %q, want %q", name, links[name], w)
				}
				if n := fetched.get(src + name); n != 1 {
					t.Errorf("%s fetched %d times, want once", name, n)
				}
			}
		})
	}
}

// TestBookFetchAheadKept, on SQLite and PostgreSQL: a book job stopped
// (SIGTERM's drain) while an item runs keeps the files it fetched ahead
// for the items to come, among them one whose fetch is held until the run
// logs its pause (it may arrive before the run's wait for it begins or
// during it: TestReadyWaits in internal/lookahead covers the wait itself),
// and the next queue's run takes them, with the content types their
// server gave, instead of fetching them again: each file is fetched once
// in the job's life.
func TestBookFetchAheadKept(t *testing.T) { stores(t, testBookFetchAheadKept) }

func testBookFetchAheadKept(t *testing.T, newStore store) {
	fetched := &counts{n: map[string]int{}}
	ahead := make(chan string, 10)
	release := make(chan struct{}) // p3.xml's fetch waits for the stop
	src := "https://iiif.example.org/book/"
	names := []string{"gated.xml", "p2.xml", "p3.xml", "p4.xml", "p5.xml"}
	book := &jobs.BookInput{Field: "book", Fetchers: 3,
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			var items []jobs.BookItem
			for i, name := range names {
				items = append(items, jobs.BookItem{Name: name, Source: src + name, Ref: jobs.BookRef{Page: i + 1}})
			}
			return items, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			name := path.Base(source)
			fetched.add(source)
			if name == "p2.xml" || name == "p3.xml" {
				ahead <- name // started
			}
			if name == "p3.xml" {
				select {
				case <-release:
				case <-ctx.Done():
					return nil, "", ctx.Err()
				}
			}
			return []byte(name), "text/x-" + strings.TrimSuffix(name, ".xml"), nil
		}}
	dir := newStore(t)
	e := &echo{gate: make(chan struct{}), started: make(chan struct{})}
	// p3.xml arrives once the run has paused: while it waits for it.
	paused := &onLine{match: "job paused by the stop", do: func() { close(release) }}
	svc, q := newServiceLogged(t, dir, e, jobs.Options{Book: book}, paused)
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(svc.Handler())
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src)})
	timeout := time.After(20 * time.Second) // a failure's bound, not a synchronisation
	for n := 0; n < 2; {
		select {
		case <-ahead:
			n++
		case <-timeout:
			t.Fatalf("the fetches of items 1 and 2 not started while item 0 ran (%+v, fetched %v)", st, fetched.n)
		}
	}
	select {
	case <-e.started:
	case <-timeout:
		t.Fatal("item 0 never started")
	}
	svc.BeginDrain() // as Run does on SIGTERM
	closed := make(chan error)
	go func() { closed <- q.Close(context.Background()) }()
	close(e.gate)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	ts.Close()
	if slices(e, "start p2.xml") {
		t.Fatal("an item started after the stop")
	}

	e2 := &echo{}
	svc2, q2 := newServiceWith(t, dir, e2, jobs.Options{Book: book})
	ts2 := servicetest.Serve(t, svc2, func() { q2.Close(context.Background()) })
	if err := q2.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	st = waitState(t, q2, ts2.URL, st.ID, jobs.Succeeded)
	var res jobs.Results
	getJSON(t, ts2.URL+"/jobs/"+st.ID+"/results", &res)
	for i, it := range res.Items {
		var out struct {
			Name string `json:"name"`
			Size int    `json:"size"`
			Type string `json:"type"`
		}
		if err := json.Unmarshal(it.Output, &out); err != nil || it.State != jobs.Succeeded || out.Name != it.Name || out.Size != len(it.Name) ||
			out.Type != "text/x-"+strings.TrimSuffix(it.Name, ".xml") {
			t.Errorf("item %d: %+v %s, want its own file's answer", i, it, it.Output)
		}
		if n := fetched.get(src + it.Name); n != 1 {
			t.Errorf("%s fetched %d times, want once", it.Name, n)
		}
	}
}

// TestBookItemFileKeptOnPause, on SQLite and PostgreSQL: a book item whose
// request meets a passing failure (503) pauses the job; the item's file,
// fetched ahead, is kept for its next run, which does not fetch it again.
func TestBookItemFileKeptOnPause(t *testing.T) { stores(t, testBookItemFileKeptOnPause) }

func testBookItemFileKeptOnPause(t *testing.T, newStore store) {
	fetched := &counts{n: map[string]int{}}
	src := "https://iiif.example.org/book/"
	book := &jobs.BookInput{Field: "book", Fetchers: 3,
		Items: func(ctx context.Context, location string, _ map[string]string) ([]jobs.BookItem, error) {
			var items []jobs.BookItem
			for i, name := range []string{"p1.xml", "p2.xml", "p3.xml"} {
				items = append(items, jobs.BookItem{Name: name, Source: src + name, Ref: jobs.BookRef{Page: i + 1}})
			}
			return items, nil
		},
		Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
			fetched.add(source)
			return []byte(path.Base(source)), "text/xml", nil
		}}
	h := &unavailable{fails: map[string]int{"p2.xml": 1}, calls: map[string]int{}}
	svc, q := newServiceWith(t, newStore(t), h, jobs.Options{Book: book, UnavailableTries: 3, UnavailableBackoff: 10 * time.Millisecond})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte(src)})
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	if st.Items.Succeeded != 3 {
		t.Fatalf("%+v", st)
	}
	h.mu.Lock()
	calls := h.calls["p2.xml"]
	h.mu.Unlock()
	if calls != 2 {
		t.Fatalf("p2.xml sent %d times, want twice (a 503, then its answer)", calls)
	}
	if n := fetched.get(src + "p2.xml"); n != 1 {
		t.Errorf("p2.xml fetched %d times, want once (kept when the job paused)", n)
	}
}

// onLine is a log writer that calls do once, at the first line holding
// match.
type onLine struct {
	match string
	do    func()
	once  sync.Once
}

func (w *onLine) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(w.match)) {
		w.once.Do(w.do)
	}
	return len(p), nil
}

// TestBookJobCanceledWhileRead: a book job canceled while its book is read
// keeps nothing of what the reading put in its scratch (a dozen fetched
// files stayed).
func TestBookJobCanceledWhileRead(t *testing.T) {
	dir := t.TempDir()
	reading := make(chan struct{})
	book := &jobs.BookInput{Field: "book",
		Items: func(ctx context.Context, location string, fields map[string]string) ([]jobs.BookItem, error) {
			if err := jobs.ScratchOf(ctx).Keep(ctx, "fetched-1", []byte("<page/>")); err != nil {
				return nil, err
			}
			close(reading)
			<-ctx.Done() // a slow book, cut by the cancel
			return nil, ctx.Err()
		}}
	svc, q := newServiceWith(t, dir, &echo{}, jobs.Options{Book: book})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte("https://example.org/mets.xml")})
	if code != http.StatusAccepted {
		t.Fatalf("submit: %d", code)
	}
	<-reading
	scratch := filepath.Join(dir, "jobs", st.ID, "scratch")
	if _, err := os.Stat(scratch); err != nil {
		t.Fatalf("the reading kept nothing in %s: %v", scratch, err)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/jobs/"+st.ID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	if !testenv.WaitFor(10*time.Second, func() bool { _, err := os.Stat(scratch); return os.IsNotExist(err) }) {
		left, _ := os.ReadDir(scratch)
		t.Errorf("the canceled job's scratch still holds %d files", len(left))
	}
}
