package jobs_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"archivekit/internal/jobs"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// TestPick: Options.Pick is shown each item's name, content type and first
// PickHead bytes, and can read the whole stored file; the item runs at the
// handler it chooses, its file sent whole with the content type it gives,
// and a Route without a handler runs the item at Path.
func TestPick(t *testing.T) {
	stores(t, func(t *testing.T, newStore store) {
		big := bytes.Repeat([]byte("DOC."), 3000) // past PickHead
		type seen struct {
			ctype      string
			head, size int
		}
		var mu sync.Mutex
		saw := map[string]seen{}
		doc := &echo{}
		pick := func(f jobs.ItemFile) jobs.Route {
			size := -1
			if in, err := f.Open(); err == nil {
				b, _ := io.ReadAll(in)
				in.Close()
				size = len(b)
			}
			mu.Lock()
			saw[f.Name] = seen{f.ContentType, len(f.Head), size}
			mu.Unlock()
			if bytes.HasPrefix(f.Head, []byte("DOC.")) {
				return jobs.Route{Path: "/doc", Handler: doc, ContentType: "application/x-doc"}
			}
			return jobs.Route{}
		}
		svc, q := newServiceWith(t, newStore(t), &echo{}, jobs.Options{Pick: pick})
		ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "file", Name: "big.bin", CType: "application/octet-stream", Data: big}, file("a.xml", "aaa"))
		st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
		if st.Items != (jobs.Counts{Total: 2, Succeeded: 2}) {
			t.Fatalf("status %+v", st)
		}
		mu.Lock()
		if want := (seen{"application/octet-stream", jobs.PickHead, len(big)}); saw["big.bin"] != want {
			t.Errorf("Pick saw big.bin as %+v, want %+v", saw["big.bin"], want)
		}
		if want := (seen{"application/xml", 3, 3}); saw["a.xml"] != want {
			t.Errorf("Pick saw a.xml as %+v, want %+v", saw["a.xml"], want)
		}
		mu.Unlock()
		var res jobs.Results
		getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
		for i, want := range []string{
			`{"lang":"","name":"big.bin","query":"x=1","size":12000,"type":"application/x-doc"}`,
			`{"lang":"","name":"a.xml","query":"x=1","size":3,"type":"application/xml"}`,
		} {
			if got := string(res.Items[i].Output); got != want {
				t.Errorf("item %d: %s, want %s", i, got, want)
			}
		}
		doc.mu.Lock()
		defer doc.mu.Unlock()
		if strings.Join(doc.calls, ", ") != "start big.bin, end big.bin" {
			t.Errorf("Pick's handler ran %q, want big.bin alone", doc.calls)
		}
	})
}

// TestPickOmit: an item whose Route omits a form field is sent without it
// (at Pick's handler or, without one, at Path); the job's other items
// keep it.
func TestPickOmit(t *testing.T) {
	stores(t, func(t *testing.T, newStore store) {
		pick := func(f jobs.ItemFile) jobs.Route {
			switch f.Name {
			case "alone.xml":
				return jobs.Route{Omit: []string{"lang"}}
			case "other.xml":
				return jobs.Route{Path: "/other", Handler: &echo{}, Omit: []string{"lang", "unsent"}}
			}
			return jobs.Route{}
		}
		svc, q := newServiceWith(t, newStore(t), &echo{}, jobs.Options{Pick: pick})
		ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "lang", Data: []byte("cs")},
			file("a.xml", "aaa"), file("alone.xml", "bb"), file("other.xml", "c"))
		st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
		if st.Items != (jobs.Counts{Total: 3, Succeeded: 3}) {
			t.Fatalf("status %+v", st)
		}
		var res jobs.Results
		getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
		for i, want := range []string{
			`{"lang":"cs","name":"a.xml","query":"x=1","size":3,"type":"application/xml"}`,
			`{"lang":"","name":"alone.xml","query":"x=1","size":2,"type":"application/xml"}`,
			`{"lang":"","name":"other.xml","query":"x=1","size":1,"type":"application/xml"}`,
		} {
			if got := string(res.Items[i].Output); got != want {
				t.Errorf("item %d: %s, want %s", i, got, want)
			}
		}
	})
}

// TestCheckFields: a job whose form fields Options.CheckFields refuses is
// answered 422 with its list-form errors and not queued; the check is
// shown each field's first value, the form's or the query's, not the
// files; a job it passes runs.
func TestCheckFields(t *testing.T) {
	var mu sync.Mutex
	var seen []map[string]string
	check := func(fields map[string]string) []service.ValidationError {
		mu.Lock()
		seen = append(seen, fields)
		mu.Unlock()
		if fields["lang"] != "cs" {
			return []service.ValidationError{{Loc: []any{"body", "lang"}, Msg: "lang must be cs", Type: "value_error"}}
		}
		return nil
	}
	svc, q := newServiceWith(t, t.TempDir(), &echo{}, jobs.Options{CheckFields: check})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	code, _, _ := submit(t, ts.URL, "", servicetest.Part{Field: "lang", Data: []byte("de")}, servicetest.Part{Field: "lang", Data: []byte("cs")}, file("a.xml", "aaa"))
	var list jobs.Page
	getJSON(t, ts.URL+"/jobs", &list)
	if code != 422 || len(list.Jobs) != 0 {
		t.Fatalf("lang=de: %d, %d jobs; want 422 and none", code, len(list.Jobs))
	}
	code, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "lang", Data: []byte("cs")}, file("a.xml", "aaa"))
	if code != 202 {
		t.Fatalf("lang=cs: %d", code)
	}
	if st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded); st.Items.Succeeded != 1 {
		t.Fatalf("status %+v", st)
	}
	mu.Lock()
	defer mu.Unlock()
	// The query's fields too (submit posts to /jobs?x=1), as the items
	// are sent them.
	if len(seen) != 2 || len(seen[0]) != 2 || seen[0]["lang"] != "de" || seen[0]["x"] != "1" || seen[1]["lang"] != "cs" {
		t.Errorf("CheckFields saw %v, want lang=de (the first value) and x=1 then lang=cs, no file", seen)
	}
}

// TestPickOpenReadsAt: what ItemFile.Open gives also reads at an offset,
// for an uploaded file (stored in the state folder or in PostgreSQL) and
// a book's page (fetched into memory), so that Pick can read a TIFF's
// directories alone instead of the whole file.
func TestPickOpenReadsAt(t *testing.T) {
	stores(t, func(t *testing.T, newStore store) {
		data := bytes.Repeat([]byte("0123456789"), 2000)
		var mu sync.Mutex
		got := map[string]string{}
		pick := func(f jobs.ItemFile) jobs.Route {
			saw := "not an io.ReaderAt"
			if in, err := f.Open(); err != nil {
				saw = err.Error()
			} else {
				if ra, ok := in.(io.ReaderAt); ok {
					b := make([]byte, 10)
					n, err := ra.ReadAt(b, 12345)
					saw = fmt.Sprintf("%q %v", b[:n], err)
				}
				in.Close()
			}
			mu.Lock()
			got[f.Name] = saw
			mu.Unlock()
			return jobs.Route{}
		}
		book := &jobs.BookInput{Field: "book",
			Items: func(ctx context.Context, location string, fields map[string]string) ([]jobs.BookItem, error) {
				return []jobs.BookItem{{Name: "page.bin", Source: "mem:page", Ref: jobs.BookRef{Page: 1}}}, nil
			},
			Fetch: func(ctx context.Context, source string) ([]byte, string, error) {
				return data, "application/octet-stream", nil
			},
		}
		svc, q := newServiceWith(t, newStore(t), &echo{}, jobs.Options{Pick: pick, Book: book})
		ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
		if err := q.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, _, st := submit(t, ts.URL, "", servicetest.Part{Field: "file", Name: "upload.bin", CType: "application/octet-stream", Data: data})
		waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
		_, _, st = submit(t, ts.URL, "", servicetest.Part{Field: "book", Data: []byte("https://example.org/mets.xml")})
		waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
		mu.Lock()
		defer mu.Unlock()
		for _, name := range []string{"upload.bin", "page.bin"} {
			if want := `"5678901234" <nil>`; got[name] != want {
				t.Errorf("%s: Open's ReadAt(10 bytes at 12345) = %s, want %s", name, got[name], want)
			}
		}
	})
}

// TestMaxActive: beyond Options.MaxActive jobs not yet ended, POST /jobs is
// answered 503 with Retry-After naming JOBS_MAX_ACTIVE (every job was
// taken, until the disk was full); once one ends, a job is taken again.
func TestMaxActive(t *testing.T) {
	dir := t.TempDir()
	svc, q := newServiceWith(t, dir, &echo{}, jobs.Options{MaxActive: 2})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	// Not started: the jobs stay queued.
	var ids []string
	for i := range 2 {
		code, _, st := submit(t, ts.URL, "", file(fmt.Sprintf("%d.xml", i), "aaa"))
		if code != 202 {
			t.Fatalf("job %d: %d", i, code)
		}
		ids = append(ids, st.ID)
	}
	body, ctype := servicetest.Multipart(t, file("2.xml", "aaa"))
	resp, err := http.Post(ts.URL+"/jobs", ctype, body)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "JOBS_MAX_ACTIVE") {
		t.Fatalf("a third job beyond 2: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/jobs/"+ids[0], nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("cancel: %v %v", resp, err)
	}
	if code, _, _ := submit(t, ts.URL, "", file("3.xml", "aaa")); code != 202 {
		t.Errorf("a job after one ended: %d", code)
	}
	// The canceled job's upload, never to run, is gone (it stayed until
	// JOBS_RETENTION); the queued job's is there.
	if in, _ := os.ReadDir(filepath.Join(dir, "jobs", ids[0], "in")); len(in) != 0 {
		t.Errorf("the canceled job keeps %d uploads", len(in))
	}
	if in, _ := os.ReadDir(filepath.Join(dir, "jobs", ids[1], "in")); len(in) != 1 {
		t.Errorf("the queued job holds %d uploads, want 1", len(in))
	}
}
