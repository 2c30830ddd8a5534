package main

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator/translatortest"
)

// germanBook serves bookMETS with a MODS record declaring German
// (languageTerm "ger") and its two real German text files (PAGE-XML,
// hOCR), and a third text file that no page lists (not served); it
// returns the log of the requests it answered and the book's URL.
func germanBook(t *testing.T) (*served, string) {
	t.Helper()
	files, _, _ := servedBook(t)
	mods := ` <dmdSec ID="DMD1"><mdWrap MDTYPE="MODS"><xmlData><mods:mods xmlns:mods="http://www.loc.gov/mods/v3">` +
		`<mods:language><mods:languageTerm authority="iso639-2b" type="code">ger</mods:languageTerm></mods:language></mods:mods></xmlData></mdWrap></dmdSec>` + "\n <fileSec>"
	mets := strings.Replace(bookMETS, " <fileSec>", mods, 1)
	// A text file no page lists: left out, named in the record's problems.
	mets = strings.Replace(mets, `<file ID="t3"`, `<file ID="t9" MIMETYPE="application/vnd.prima.page+xml"><FLocat LOCTYPE="URL" xlink:href="OCR-D-OCR/9.xml"/></file><file ID="t3"`, 1)
	files["/b/mets.xml"] = []byte(mets)
	books, log := serveFiles(t, files)
	return log, books.URL + "/b/mets.xml"
}

// submitBookAuto posts a book job of the book at url with no source_lang
// (auto) and returns its id.
func submitBookAuto(t *testing.T, base, url string) string {
	t.Helper()
	return submitParts(t, base, part{Field: "book_url", Data: []byte(url)})
}

// submitParts posts a job of the form parts and returns its id.
func submitParts(t *testing.T, base string, parts ...part) string {
	t.Helper()
	body, ctype := multipartBody(t, parts...)
	resp := post(t, base+"/jobs", ctype, body)
	var st jobs.Status
	if b := readBody(t, resp); resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	return st.ID
}

// jobBookRecord is the statistics.books of ended job id's run metadata,
// after checking that the job succeeded with its two text files.
func jobBookRecord(t *testing.T, base, id string) (runmeta.Doc, []*runmeta.Book) {
	t.Helper()
	st := pollJob(t, base, id, 60*time.Second, ended)
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Skipped: 1}) {
		t.Fatalf("job %+v", st)
	}
	doc, _ := jobArchive(t, base, id)
	return doc, doc.Statistics.Books
}

// bookJSON is a book record as JSON, for comparison.
func bookJSON(b *runmeta.Book) string {
	js, _ := json.Marshal(b)
	return string(js)
}

// TestJobsBookStatistics: a translate-api book job's run metadata has
// the statistics.books record translate writes for the same book (run
// here over the book's URL with the same stand-in): the book's source,
// its language detected over both its text files before any was
// translated (German, text_files_read 2), the language its MODS
// declares, and the files, pages, units, languages, language sources
// and segment statuses of its two translated items; the job's totals
// agree with it. Before, a book job's run metadata had no
// statistics.books. Each text file is requested once: the items take the
// copies kept when the book's language was detected (before, each was
// fetched again by its item), with either job store: SQLite keeps the
// copies in the job's folder, PostgreSQL in its rows (before, items on
// PostgreSQL fetched each file again).
func TestJobsBookStatistics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs translate")
	}
	for _, store := range []struct {
		name string
		env  func(t *testing.T) map[string]string
	}{
		{"sqlite", func(t *testing.T) map[string]string { return map[string]string{"JOBS_DIR": t.TempDir()} }},
		{"postgres", func(t *testing.T) map[string]string {
			return map[string]string{jobs.EnvDatabaseURL: testenv.Postgres(t)}
		}},
	} {
		t.Run(store.name, func(t *testing.T) { testJobsBookStatistics(t, store.env(t)) })
	}
}

func testJobsBookStatistics(t *testing.T, storeEnv map[string]string) {
	log, url := germanBook(t)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	env := map[string]string{"BOOK_HOSTS": "127.0.0.1"}
	maps.Copy(env, storeEnv)
	_, ts := startServer(t, testEnv(mt.URL, env))
	doc, books := jobBookRecord(t, ts.URL, submitBookAuto(t, ts.URL, url))
	if len(books) != 1 {
		t.Fatalf("statistics.books %d records, want 1", len(books))
	}
	b := books[0]
	if b.Source != url || b.DocumentLanguage != "de" || b.DeclaredLanguage != "de" || b.TextFilesRead != 2 || b.Files != 2 ||
		b.Units == 0 || b.Units != b.UnitsTranslated+b.UnitsSkipped || b.Pages != doc.Statistics.Pages || b.UnitsTranslated != doc.Statistics.UnitsTranslated {
		t.Errorf("book record %s; run's pages %d, units translated %d", bookJSON(b), doc.Statistics.Pages, doc.Statistics.UnitsTranslated)
	}
	if want := "fileGrp OCR-D-OCR: 1 file listed by no page, not read with the book (OCR-D-OCR/9.xml)"; len(b.Problems) != 1 || b.Problems[0] != want {
		t.Errorf("book record's problems %q, want %q", b.Problems, want)
	}
	if got := log.of("/b/OCR-D-OCR/9.xml"); len(got) != 0 {
		t.Errorf("the file no page lists was requested %d times", len(got))
	}
	for _, p := range []string{"/b/OCR-D-OCR/1.xml", "/b/OCR-D-OCR/3.hocr"} {
		if got := log.of(p); len(got) != 1 || got[0].rng != "" {
			t.Errorf("%s requested %d times by the job (%+v), want once, whole", p, len(got), got)
		}
	}

	out := t.TempDir()
	runTranslateCLI(t, buildTranslate(t), mt.URL, url, out, "--vocabulary", "")
	cli, raw := cliRunMeta(t, out)
	if len(cli.Statistics.Books) != 1 || bookJSON(cli.Statistics.Books[0]) != bookJSON(b) {
		t.Errorf("the job's book record differs from translate's:\njob     %s\ncommand %s", bookJSON(b), raw)
	}
}

// TestJobsBookStatisticsResumed: a book job paused by the service's stop
// while its first text file is translated, and finished by a service
// started again on the same JOBS_DIR, has the same statistics.books
// record as a job run at once: each file counted once, the language
// detected once (text_files_read 2, not 4).
func TestJobsBookStatisticsResumed(t *testing.T) {
	_, url := germanBook(t)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, whole := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1", "JOBS_DIR": t.TempDir()}))
	_, want := jobBookRecord(t, whole.URL, submitBookAuto(t, whole.URL, url))

	id, dir, held := pausedBookJob(t, func(base string) string { return submitBookAuto(t, base, url) })
	defer held.Close()
	_, again := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1", "JOBS_DIR": dir}))
	_, got := jobBookRecord(t, again.URL, id)
	if len(got) != 1 || len(want) != 1 || bookJSON(got[0]) != bookJSON(want[0]) {
		t.Errorf("resumed job's statistics.books %v, want as the job run at once %v", got, want)
	} else if got[0].Files != 2 || got[0].TextFilesRead != 2 {
		t.Errorf("resumed job's book record %s: want 2 files, read 2", bookJSON(got[0]))
	}
	for _, it := range jobResults(t, again.URL, id).Items {
		if it.Runs > 1 {
			t.Errorf("item %d (%s) ran %d times", it.Item, it.Name, it.Runs)
		}
	}
}

// pausedBookJob submits a book job (submit, given the service's base URL)
// to a service on a new JOBS_DIR whose stand-in MT holds the first
// translation, stops the service's jobs while it is held (the job is
// paused, the item in flight finished), and returns the job's id, the
// JOBS_DIR and that stand-in (what it was sent).
func pausedBookJob(t *testing.T, submit func(base string) string) (id, dir string, held *translatortest.Server) {
	t.Helper()
	translating, release := make(chan struct{}), make(chan struct{})
	var first sync.Once
	held = translatortest.New(translatortest.Config{Hold: func(string) {
		first.Do(func() { close(translating); <-release })
	}})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	dir = t.TempDir()
	s, ts := startServer(t, testEnv(held.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1", "JOBS_DIR": dir}))
	id = submit(ts.URL)
	waitFor(t, translating, "the first translation")
	closed := make(chan error, 1)
	go func() { closed <- s.jobs.Close(t.Context()) }()
	free()
	if err := waitFor(t, closed, "the stop"); err != nil {
		t.Fatalf("stop: %v", err)
	}
	return id, dir, held
}

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopPostgres()
	os.Exit(code)
}
