package main

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
)

// aheadBook is a METS file of n pages, each with an ALTO text file
// (FULLTEXT, text/xml) at /b/ocr/<page>.xml, and the files a book server
// serves for it, by path: page k's file is a line of Czech ending in k,
// its page ID p<k>, so that each translation and each text sent to the
// stand-in shows the file it came from.
func aheadBook(n int) map[string][]byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
 <mets:fileSec><mets:fileGrp USE="FULLTEXT">
`)
	files := map[string][]byte{}
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "  <mets:file ID=\"t%[1]d\" MIMETYPE=\"text/xml\"><mets:FLocat LOCTYPE=\"URL\" xlink:href=\"ocr/%[1]d.xml\"/></mets:file>\n", k)
		files[textPath(k)] = []byte(fmt.Sprintf(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p%d"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/><SP/><String CONTENT="%d"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`, k, k))
	}
	b.WriteString(" </mets:fileGrp></mets:fileSec>\n <mets:structMap TYPE=\"PHYSICAL\"><mets:div TYPE=\"physSequence\">\n")
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, "  <mets:div ID=\"P%[1]d\" TYPE=\"page\" ORDER=\"%[1]d\"><mets:fptr FILEID=\"t%[1]d\"/></mets:div>\n", k)
	}
	b.WriteString(" </mets:div></mets:structMap>\n</mets:mets>\n")
	files["/b/mets.xml"] = []byte(b.String())
	return files
}

// textPath is the path of aheadBook's page k's text file.
func textPath(k int) string { return fmt.Sprintf("/b/ocr/%d.xml", k) }

// arrivals counts the requests a book server receives, by path, as they
// arrive (before they are answered), and signals each.
type arrivals struct {
	mu      sync.Mutex
	n       map[string]int
	changed chan struct{}
}

func newArrivals() *arrivals {
	return &arrivals{n: map[string]int{}, changed: make(chan struct{}, 1)}
}

// note counts r (serveFilesWith's before).
func (a *arrivals) note(r *http.Request) {
	a.mu.Lock()
	a.n[r.URL.Path]++
	a.mu.Unlock()
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

// pages lists the pages of aheadBook's n whose text file was requested,
// and how many times each was.
func (a *arrivals) pages(n int) (pages []int, times map[int]int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	times = map[int]int{}
	for k := 1; k <= n; k++ {
		if c := a.n[textPath(k)]; c > 0 {
			pages, times[k] = append(pages, k), c
		}
	}
	return pages, times
}

// await waits until the text files of at least k pages were requested,
// or until timeout has passed; it gives the pages requested then.
func (a *arrivals) await(n, k int, timeout time.Duration) []int {
	end := time.After(timeout)
	for {
		if got, _ := a.pages(n); len(got) >= k {
			return got
		}
		select {
		case <-a.changed:
		case <-end:
			got, _ := a.pages(n)
			return got
		}
	}
}

// submitBook posts a book job of the book at url (source_lang cs) and
// returns its id.
func submitBook(t testing.TB, base, url string) string {
	t.Helper()
	body, ctype := multipartBody(t, part{Field: "book_url", Data: []byte(url)}, part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, base+"/jobs", ctype, body)
	var st jobs.Status
	if b := readBody(t, resp); resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	return st.ID
}

// TestJobsBookFetchAhead: while the first item of a book job is
// translated (the stand-in holds its translation), the book's next text
// files are fetched, BOOK_FETCH_WORKERS at once counting the running
// item's (unset, 4: files 2 to 4; 2: file 2), and no further one; then
// every item is its own file's translation and each file was requested
// once; the OpenAPI of POST /jobs says how many files are fetched at
// once. Before, a book job fetched each file when its item ran: the held
// translation waited for files never asked for. BOOK_FETCH_WORKERS
// outside 1 to 32 stops the service at its start, naming it.
func TestJobsBookFetchAhead(t *testing.T) {
	const pages = 6
	for _, tc := range []struct {
		workers string // "": unset
		ahead   int    // the files requested while item 0 is translated
	}{{"", 4}, {"2", 2}} {
		t.Run("BOOK_FETCH_WORKERS="+tc.workers, func(t *testing.T) {
			files := aheadBook(pages)
			arrived := newArrivals()
			books, _ := serveFilesWith(t, files, arrived.note)
			// The first translation waits until files 1 to ahead have been
			// requested (20 s at most: a failure's bound), and notes the
			// files requested by then.
			var first sync.Once
			held := make(chan []int, 1)
			mt := translatortest.New(translatortest.Config{Hold: func(string) {
				first.Do(func() { held <- arrived.await(pages, tc.ahead, 20*time.Second) })
			}})
			defer mt.Close()
			env := map[string]string{"BOOK_HOSTS": "127.0.0.1", "JOBS_DIR": t.TempDir()}
			if tc.workers != "" {
				env["BOOK_FETCH_WORKERS"] = tc.workers
			}
			_, ts := startServer(t, testEnv(mt.URL, env))
			id := submitBook(t, ts.URL, books.URL+"/b/mets.xml")
			st := pollJob(t, ts.URL, id, 60*time.Second, ended)
			checkHeld(t, held, tc.ahead)
			if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: pages, Succeeded: pages}) {
				t.Fatalf("%+v", st)
			}
			if _, times := arrived.pages(pages); len(times) != pages || slices.ContainsFunc(mapValues(times), func(n int) bool { return n != 1 }) {
				t.Errorf("text files requested %v times by page; want each once", times)
			}
			if d, want := servicetest.FormField(t, ts.URL, "/jobs", "book_url"), fmt.Sprintf("while an earlier item runs (%d at once)", tc.ahead); !strings.Contains(d, want) {
				t.Errorf("the OpenAPI of POST /jobs says of book_url %q; want it to say %q", d, want)
			}
			for i, it := range jobResults(t, ts.URL, id).Items {
				if it.Text == nil || !strings.Contains(*it.Text, fmt.Sprintf(`ID="p%d"`, i+1)) || !strings.Contains(*it.Text, "grave") {
					t.Errorf("item %d (%s) is not page %d's translation: %v", i, it.Name, i+1, it.Text)
				}
			}
		})
	}
	for _, v := range []string{"0", "33", "four"} {
		env := testEnv("http://127.0.0.1:1", map[string]string{"BOOK_FETCH_WORKERS": v})
		if _, err := newServer(func(k string) (string, bool) { s, ok := env[k]; return s, ok }, nil); err == nil || !strings.Contains(err.Error(), "BOOK_FETCH_WORKERS") {
			t.Errorf("BOOK_FETCH_WORKERS=%s: %v, want an error naming it", v, err)
		}
	}
}

// checkHeld checks that the pages whose text files were requested while
// page 1 was translated (sent on held by the stand-in's hold) are pages 1
// to ahead.
func checkHeld(t *testing.T, held chan []int, ahead int) {
	t.Helper()
	var want []int
	for k := 1; k <= ahead; k++ {
		want = append(want, k)
	}
	select {
	case got := <-held:
		if !slices.Equal(got, want) {
			t.Errorf("text files of pages %v requested while page 1 was translated; want %v", got, want)
		}
	default:
		t.Error("no translation was held")
	}
}

// mapValues is the values of m.
func mapValues(m map[int]int) []int {
	var out []int
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// TestJobsBookFetchAheadStopped: a book job canceled (DELETE), or paused
// by the service's stop, while its first item is translated and the next
// text files are being fetched ahead (their server holds them; page 2's,
// which page 1 joins and so needs before it runs, is answered) ends those
// fetches (their requests end), requests no further file, translates no
// further item, and leaves no goroutine of the fetching ahead
// (internal/lookahead's, the job queue's fetch, fetchText).
func TestJobsBookFetchAheadStopped(t *testing.T) {
	const pages = 8
	for _, how := range []string{"cancel", "pause"} {
		t.Run(how, func(t *testing.T) {
			files := aheadBook(pages)
			ended := make(chan string, pages)
			testDone := make(chan struct{})
			arrived := newArrivals()
			books, _ := serveFilesWith(t, files, func(r *http.Request) {
				arrived.note(r)
				// Page 2's file is answered too: page 1 joins it (a word
				// hyphenated across the two; TestJobsBookHyphen), so page 1
				// is translated once it has it.
				if r.URL.Path == "/b/mets.xml" || r.URL.Path == textPath(1) || r.URL.Path == textPath(2) {
					return
				}
				select { // held until its client gives up
				case <-r.Context().Done():
					ended <- r.URL.Path
				case <-testDone:
				}
			})
			t.Cleanup(func() { close(testDone) }) // before the book server closes
			translating, release := make(chan struct{}), make(chan struct{})
			var first sync.Once
			mt := translatortest.New(translatortest.Config{Hold: func(string) {
				first.Do(func() { close(translating); <-release })
			}})
			t.Cleanup(mt.Close)
			s, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1", "JOBS_DIR": t.TempDir()}))
			var once sync.Once
			free := func() { once.Do(func() { close(release) }) }
			t.Cleanup(free) // a test that failed holding page 1 lets it end, before the service stops
			id := submitBook(t, ts.URL, books.URL+"/b/mets.xml")
			waitFor(t, translating, "page 1's translation")
			// Files 2 to 4 (BOOK_FETCH_WORKERS 4) were requested: 2 held for
			// page 2 (page 1 joins it), 3 and 4 being fetched.
			if got := arrived.await(pages, 4, 30*time.Second); len(got) != 4 {
				t.Fatalf("text files of pages %v requested while page 1 was translated, want 1 to 4", got)
			}
			closed := make(chan error, 1)
			if how == "cancel" {
				req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/jobs/"+id, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				if readBody(t, resp); resp.StatusCode != http.StatusOK {
					t.Fatalf("DELETE: %d", resp.StatusCode)
				}
			} else {
				// As on SIGTERM: the service drains before its queue
				// closes, so the stop holds before page 1 is let go.
				s.svc.BeginDrain()
				go func() { closed <- s.jobs.Close(context.Background()) }()
			}
			free()
			if how == "cancel" {
				if st := pollJob(t, ts.URL, id, 30*time.Second, func(st jobs.Status) bool { return st.State == jobs.Canceled }); st.Items.Succeeded > 1 {
					t.Errorf("canceled job: %+v", st)
				}
			} else if err := waitFor(t, closed, "the stop"); err != nil {
				t.Fatalf("stop: %v", err)
			}
			var gone []string
			for range 2 {
				gone = append(gone, waitFor(t, ended, "a fetch ahead to end"))
			}
			slices.Sort(gone)
			if want := []string{textPath(3), textPath(4)}; !slices.Equal(gone, want) {
				t.Errorf("fetches ended %v, want %v", gone, want)
			}
			if got, _ := arrived.pages(pages); len(got) != 4 {
				t.Errorf("text files of pages %v requested, want 1 to 4 alone", got)
			}
			for _, in := range mt.Inputs() {
				if f := strings.Fields(in); len(f) == 0 || f[len(f)-1] != "1" {
					t.Errorf("text %q sent for translation; want page 1's alone", in)
				}
			}
			pollUntil(t, "no goroutine of the fetching ahead left", func() string { return strings.Join(aheadGoroutines(), "\n\n") })
		})
	}
}

// aheadGoroutines are the stacks of the goroutines running the fetching
// ahead of a book job's files.
func aheadGoroutines() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "archivekit/internal/lookahead.") || strings.Contains(g, "archivekit/internal/jobs.(*Queue).fetch") || strings.Contains(g, "main.(*server).fetchText") {
			out = append(out, g)
		}
	}
	return out
}

// waitFor receives from c, failing after 30 s (a failure's bound, not a
// synchronisation).
func waitFor[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not after 30 s", what)
	}
	panic("unreachable")
}

// pollUntil polls cond until it says nothing is left to wait for (""),
// failing after 30 s with what it says then.
func pollUntil(t *testing.T, what string, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for left := cond(); left != ""; left = cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 30 s: %s", what, left)
		}
		time.Sleep(10 * time.Millisecond) // a poll interval, bounded by the deadline
	}
}

// aheadManifest is a IIIF Presentation 3 manifest of n canvases at base,
// each with aheadBook's text file of its page as an ALTO seeAlso.
func aheadManifest(base string, n int) []byte {
	var canvases []string
	for k := 1; k <= n; k++ {
		canvases = append(canvases, fmt.Sprintf(`{"id": "%[1]s/c/%[2]d", "type": "Canvas", "width": 800, "height": 1000,
  "items": [{"id": "%[1]s/c/%[2]d/p", "type": "AnnotationPage", "items": [{"id": "%[1]s/c/%[2]d/a", "type": "Annotation",
    "motivation": "painting", "target": "%[1]s/c/%[2]d", "body": {"id": "%[1]s/img/%[2]d.jpg", "type": "Image", "format": "image/jpeg"}}]}],
  "seeAlso": [{"id": "%[1]s%[3]s", "type": "Dataset", "format": "application/xml", "profile": "http://www.loc.gov/standards/alto/v4/alto.xsd"}]}`, base, k, textPath(k)))
	}
	return []byte(fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "%s/b/manifest.json", "type": "Manifest",
  "label": {"en": ["ahead"]}, "items": [%s]}`, base, strings.Join(canvases, ",")))
}

// TestTranslateBookFetchAhead: a IIIF manifest sent to POST /translate as
// a book_url (its text files are not fetched when it is read) has its
// next text files fetched while one is translated, BOOK_FETCH_WORKERS at
// once (4: files 1 to 4 while file 1's translation is held); with the
// source detected over the whole book, all are fetched, four at once,
// before. Each file is requested once and the answer holds every page's
// translation in order. Before, the files were fetched one after another.
func TestTranslateBookFetchAhead(t *testing.T) {
	const pages = 6
	for _, tc := range []struct {
		source string
		ahead  int // files requested while file 1 is translated
	}{{"cs", 4}, {"auto", pages}} {
		t.Run("source_lang="+tc.source, func(t *testing.T) {
			arrived := newArrivals()
			files := aheadBook(pages)
			books, _ := serveFilesWith(t, files, arrived.note)
			files["/b/manifest.json"] = aheadManifest(books.URL, pages)
			var first sync.Once
			held := make(chan []int, 1)
			mt := translatortest.New(translatortest.Config{Hold: func(string) {
				first.Do(func() { held <- arrived.await(pages, tc.ahead, 20*time.Second) })
			}})
			defer mt.Close()
			_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1"}))
			body, ct := multipartBody(t, part{Field: "book_url", Data: []byte(books.URL + "/b/manifest.json")}, part{Field: "source_lang", Data: []byte(tc.source)})
			resp := post(t, ts.URL+"/translate", ct, body)
			b := readBody(t, resp)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			checkHeld(t, held, tc.ahead)
			if _, times := arrived.pages(pages); len(times) != pages || slices.ContainsFunc(mapValues(times), func(n int) bool { return n != 1 }) {
				t.Errorf("text files requested %v times by page; want each once", times)
			}
			_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
			parts := mixedParts(t, params["boundary"], b)
			if len(parts) != pages+1 {
				t.Fatalf("%d parts, want %d and book.json", len(parts), pages)
			}
			for i, p := range parts[:pages] {
				if !strings.Contains(string(p.data), fmt.Sprintf(`ID="p%d"`, i+1)) || !strings.Contains(string(p.data), "grave") {
					t.Errorf("part %d (%s) is not page %d's translation", i, p.name, i+1)
				}
			}
		})
	}
}
