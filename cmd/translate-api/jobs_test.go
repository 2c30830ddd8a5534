package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
)

// smallALTO is a one-line ALTO document whose line reads text.
func smallALTO(text string) []byte {
	return []byte(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="` + text + `"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
}

// submitJob posts a job of ALTO files (source_lang cs) and returns its id.
func submitJob(t *testing.T, base string, names ...string) string {
	t.Helper()
	parts := []part{{Field: "source_lang", Data: []byte("cs")}}
	for _, n := range names {
		parts = append(parts, part{Field: "file", Name: n, File: true, Data: smallALTO("hrob")})
	}
	body, ctype := multipartBody(t, parts...)
	resp := post(t, base+"/jobs", ctype, body)
	b := readBody(t, resp)
	var st jobs.Status
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil || resp.Header.Get("Location") != "/jobs/"+st.ID {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	return st.ID
}

// pollJob polls GET /jobs/{id} until done says so, failing after timeout.
func pollJob(t *testing.T, base, id string, timeout time.Duration, done func(jobs.Status) bool) jobs.Status {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(base + "/jobs/" + id)
		if err == nil {
			var st jobs.Status
			b := readBody(t, resp)
			if resp.StatusCode == 200 && json.Unmarshal(b, &st) == nil && done(st) {
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s: not there after %v (%v)", id, timeout, err)
		}
		time.Sleep(25 * time.Millisecond) // a poll interval, bounded by the deadline
	}
}

func ended(st jobs.Status) bool { return st.State == jobs.Succeeded || st.State == jobs.Failed }

// TestJobs: a job of two ALTO files gives, per item, the answer
// POST /translate gives for the same form.
func TestJobs(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	id := submitJob(t, ts.URL, "a.alto.xml", "b.alto.xml")
	st := pollJob(t, ts.URL, id, 30*time.Second, ended)
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 2, Succeeded: 2}) {
		t.Fatalf("%+v", st)
	}
	code, sync := servicetest.PostForm(t, ts.URL+"/translate", part{Field: "source_lang", Data: []byte("cs")}, part{Field: "file", Name: "b.alto.xml", File: true, Data: smallALTO("hrob")})
	resp, err := http.Get(ts.URL + "/jobs/" + id + "/results/1")
	if err != nil {
		t.Fatal(err)
	}
	async := readBody(t, resp)
	if code != 200 || resp.StatusCode != 200 || !bytes.Equal(sync, async) || !strings.Contains(string(async), `CONTENT="grave"`) {
		t.Fatalf("synchronous %d %.300s\njob item %d %.300s", code, sync, resp.StatusCode, async)
	}
	var res jobs.Results
	resp, _ = http.Get(ts.URL + "/jobs/" + id + "/results")
	if err := json.Unmarshal(readBody(t, resp), &res); err != nil || len(res.Items) != 2 || res.Items[0].Text == nil || !strings.Contains(*res.Items[0].Text, "grave") {
		t.Fatalf("results %+v %v", res, err)
	}
	// The run metadata lists the answers as the archive names them (it
	// listed a.alto.xml for the archive's a_en.alto.xml).
	var meta struct {
		Outputs []string `json:"outputs"`
	}
	if err := json.Unmarshal(res.RunMetadata, &meta); err != nil {
		t.Fatal(err)
	}
	names := archiveNames(t, ts.URL, id)
	for _, o := range meta.Outputs {
		if !slices.Contains(names, o) {
			t.Errorf("the run metadata lists %s, which the archive (%q) does not hold", o, names)
		}
	}
}

// TestJobsRefusedAtSubmit: a job whose fields each item would refuse is
// refused when it is submitted (it was accepted, and every item failed
// 422); a backend that does not answer refuses nothing.
func TestJobsRefusedAtSubmit(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	doc := part{Field: "file", Name: "a.alto.xml", File: true, Data: smallALTO("hrob")}
	for _, c := range []struct {
		name  string
		query string
		parts []part
		says  string
	}{
		{"target not a language", "", []part{doc, {Field: "target_lang", Data: []byte("klingon")}}, "target_lang"},
		{"output mode", "", []part{doc, {Field: "output_mode", Data: []byte("bogus")}}, "'replace', 'append' or 'alternative'"},
		{"output mode in the query", "?output_mode=bogus", []part{doc}, "'replace', 'append' or 'alternative'"},
		{"a pair the backend lacks", "", []part{doc, {Field: "source_lang", Data: []byte("cs")}, {Field: "target_lang", Data: []byte("xx")}}, "cs-xx"},
		{"a record that is not JSON", "", []part{doc, {Field: "document_json", Name: "r.json", File: true, Data: []byte("{bad")}}, "document_json cannot be used"},
	} {
		code, b := servicetest.PostForm(t, ts.URL+"/jobs"+c.query, c.parts...)
		if code != http.StatusUnprocessableEntity || !strings.Contains(string(b), c.says) {
			t.Errorf("%s: %d %s, want 422 naming %q", c.name, code, b, c.says)
		}
		// A field given in the query is said to be the query's (it was
		// said to be the body's).
		if c.query != "" && !strings.Contains(string(b), `"loc":["query","output_mode"]`) {
			t.Errorf("%s: %s, want the query's field located in the query", c.name, b)
		}
	}
	// The backend down: the job is taken, its items wait for it.
	down := translatortest.New(translatortest.Config{})
	_, ts2 := startServer(t, testEnv(down.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	down.Close()
	if code, b := servicetest.PostForm(t, ts2.URL+"/jobs", doc, part{Field: "source_lang", Data: []byte("cs")}); code != http.StatusAccepted {
		t.Errorf("backend down: %d %s, want 202", code, b)
	}
}

// TestJobsSurviveKill: the service killed (SIGKILL) in the middle of a
// job of four documents and started again on the same JOBS_DIR finishes
// the job; documents done before the kill are not translated again.
func TestJobsSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the service")
	}
	mt, bin, env, p, id := midJob(t)
	if err := p.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.Wait(t, 10*time.Second)
	postsAtKill := mt.Posts.Load()

	p2 := servicetest.Start(t, bin, env)
	p2.WaitReady(t, 30*time.Second)
	st := pollJob(t, p2.Base, id, 30*time.Second, ended)
	if st.State != jobs.Succeeded || st.Items.Succeeded != 4 {
		t.Fatalf("after the restart: %+v\n%s", st, p2.Log())
	}
	res := jobResults(t, p2.Base, id)
	reruns := 0
	for _, it := range res.Items {
		if it.Text == nil || !strings.Contains(*it.Text, `CONTENT="grave"`) || it.Runs < 1 || it.Runs > 2 {
			t.Fatalf("item %+v", it)
		}
		reruns += it.Runs - 1
	}
	if reruns > 1 {
		t.Fatalf("%d items ran again; only the one cut by the kill may", reruns)
	}
	t.Logf("translation calls: %d before the kill, %d in all; items run again: %d", postsAtKill, mt.Posts.Load(), reruns)
}

// TestJobsDrain: SIGTERM in the middle of a job: the document in flight
// is finished and recorded, no other starts, the service exits 143; started
// again on the same JOBS_DIR it finishes the job with every document
// translated once.
func TestJobsDrain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the service")
	}
	_, bin, env, p, id := midJob(t)
	p.Terminate(t)
	if code := p.Wait(t, 40*time.Second); code != 143 {
		t.Fatalf("exit %d, want 143\n%s", code, p.Log())
	}
	if !strings.Contains(p.Log(), "job paused by the stop") {
		t.Fatalf("the drain did not pause the job:\n%s", p.Log())
	}
	p2 := servicetest.Start(t, bin, env)
	p2.WaitReady(t, 30*time.Second)
	st := pollJob(t, p2.Base, id, 30*time.Second, ended)
	if st.State != jobs.Succeeded || st.Items.Succeeded != 4 {
		t.Fatalf("after the restart: %+v", st)
	}
	res := jobResults(t, p2.Base, id)
	for _, it := range res.Items {
		if it.Runs != 1 {
			t.Fatalf("item %d ran %d times across the drain", it.Item, it.Runs)
		}
	}
}

// midJob runs the binary on a fresh JOBS_DIR with a stand-in taking 0.4 s
// a call, submits a job of four documents and returns once the first is
// done: the stand-in, the binary, its environment, the process and the job.
func midJob(t *testing.T) (*translatortest.Server, string, []string, *servicetest.Process, string) {
	t.Helper()
	mt := translatortest.New(translatortest.Config{Delay: 400 * time.Millisecond})
	t.Cleanup(mt.Close)
	bin := servicetest.Build(t, "translate-api")
	para, _ := filepath.Abs("../../setup/translate/para_config.txt")
	env := []string{"TRANSLATION_URL=" + mt.URL, "TRANSLATE_PARA_CONFIG=" + para, "JOBS_DIR=" + t.TempDir(), "MTAPI_MAX_RETRIES=0", "GRACEFUL_SHUTDOWN_S=5"}
	p := servicetest.Start(t, bin, env)
	p.WaitReady(t, 30*time.Second)
	id := submitJob(t, p.Base, "1.alto.xml", "2.alto.xml", "3.alto.xml", "4.alto.xml")
	pollJob(t, p.Base, id, 30*time.Second, func(st jobs.Status) bool { return st.Items.Succeeded >= 1 })
	return mt, bin, env, p, id
}

// jobResults is GET /jobs/{id}/results.
func jobResults(t *testing.T, base, id string) jobs.Results {
	t.Helper()
	var res jobs.Results
	resp, err := http.Get(base + "/jobs/" + id + "/results")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(readBody(t, resp), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestJobsBook (issue 30 item 1): a job names a METS file by book_url: the
// worker reads it, and its items are the book's pages in order: its text
// files (PAGE-XML on page 1, hOCR on page 3) and page 2, which has none,
// skipped with "no text file for this page"; each text file fetched from
// the loopback server BOOK_ALLOW_HOSTS names and translated as the
// synchronous book_url request translates it; each item's result carries
// its page's ID, position, path in the book and format; each text file is
// requested once, whole, when its item runs (issue 28); the job's run
// metadata counts the units the synchronous answer counts (issue 30 item
// 5). A file that is no book fails the job with the reader's reason.
func TestJobsBook(t *testing.T) {
	files, books, log := servedBook(t)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_ALLOW_HOSTS": "127.0.0.1", "JOBS_DIR": t.TempDir()}))
	submit := func(parts ...part) jobs.Status {
		t.Helper()
		body, ctype := multipartBody(t, parts...)
		resp := post(t, ts.URL+"/jobs", ctype, body)
		var st jobs.Status
		if b := readBody(t, resp); resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
			t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
		}
		return pollJob(t, ts.URL, st.ID, 60*time.Second, ended)
	}
	lang := part{Field: "source_lang", Data: []byte("de")}
	st := submit(part{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}, lang)
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Skipped: 1}) || len(st.Skipped) != 1 ||
		st.Skipped[0].Item != 1 || st.Skipped[0].Name != "P2" || st.Skipped[0].Reason != "no text file for this page" || st.Skipped[0].Book == nil || st.Skipped[0].Book.Page != 2 {
		t.Fatalf("%+v", st)
	}
	// The METS declares both formats: reading the book fetched neither,
	// the item's run fetched each once, whole (was the first 64 KiB
	// first: the PAGE file of 89 077 bytes sent 65 536 + 89 077 bytes).
	for _, p := range []string{"/b/OCR-D-OCR/1.xml", "/b/OCR-D-OCR/3.hocr"} {
		reqs, size := log.of(p), len(files[p])
		if len(reqs) != 1 || reqs[0].rng != "" || reqs[0].bytes != size {
			t.Errorf("%s (%d bytes) was served %+v; want it once, whole, when its item ran", p, size, reqs)
		}
	}
	res := jobResults(t, ts.URL, st.ID)
	resp, b := func() (*http.Response, []byte) {
		body, ct := multipartBody(t, part{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}, lang)
		resp := post(t, ts.URL+"/translate", ct, body)
		return resp, readBody(t, resp)
	}()
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sync := map[string][]byte{}
	for _, p := range mixedParts(t, params["boundary"], b) {
		sync[p.name] = p.data
	}
	for i, want := range []struct {
		page           int
		id, path, form string
		out            string
	}{{1, "P1", "OCR-D-OCR/1.xml", "PAGE", "OCR-D-OCR/1_en.xml"}, {2, "P2", "", "", ""}, {3, "P3", "OCR-D-OCR/3.hocr", "hOCR", "OCR-D-OCR/3_en.hocr"}} {
		it := res.Items[i]
		if want.path == "" {
			if it.State != jobs.Skipped || it.Text != nil || it.Book == nil || it.Book.Page != want.page || it.Book.ID != want.id || it.Book.Source != "" {
				t.Errorf("item %d: %+v, want page %d skipped", i, it, want.page)
			}
			continue
		}
		if bk := it.Book; bk == nil || bk.Page != want.page || bk.ID != want.id || bk.Path != want.path || bk.Format != want.form || bk.Source != books.URL+"/b/"+want.path {
			t.Errorf("item %d: book %+v", i, it.Book)
		}
		if it.Text == nil || *it.Text != string(sync[want.out]) {
			t.Errorf("item %d (%s) differs from the synchronous answer's %s", i, it.Name, want.out)
		}
	}
	// The job's run metadata counts what the synchronous answer counts.
	doc, actions := jobArchive(t, ts.URL, st.ID)
	// The archive names each translation as its download is named (it
	// named them as their inputs, 0000-1.xml).
	if names := archiveNames(t, ts.URL, st.ID); !slices.Contains(names, "0000-1_en.xml") || !slices.Contains(names, "0002-3_en.hocr") {
		t.Errorf("archive entries %q, want 0000-1_en.xml and 0002-3_en.hocr", names)
	}
	if n, err := strconv.Atoi(resp.Header.Get(headerTranslated)); err != nil || n == 0 || doc.Statistics.UnitsTranslated != n ||
		doc.Statistics.SuccessfullyProcessed != 2 || doc.Statistics.BackendCalls == 0 || doc.Config["book"] != books.URL+"/b/mets.xml" || len(actions) != 1 ||
		len(doc.SkippedFilesDetail) != 1 || doc.SkippedFilesDetail[0].File != "P2" || doc.SkippedFilesDetail[0].Reason != "skipped: no text file for this page" {
		t.Errorf("book job's run metadata: %+v, config %v, skipped %+v, %d CreateActions; synchronous answer: %s units translated",
			doc.Statistics, doc.Config, doc.SkippedFilesDetail, len(actions), resp.Header.Get(headerTranslated))
	}

	st = submit(part{Field: "book_url", Data: []byte(books.URL + "/b/OCR-D-OCR/1.xml")}, lang)
	if st.State != jobs.Failed || st.Items.Total != 0 || !strings.Contains(st.Error, "neither a METS file nor a IIIF manifest") {
		t.Fatalf("not a book: %+v", st)
	}
	// A book on a host the list (here by its old name BOOK_ALLOW_HOSTS)
	// does not name fails the job naming the host and BOOK_HOSTS.
	other := strings.Replace(books.URL, "127.0.0.1", "localhost", 1)
	st = submit(part{Field: "book_url", Data: []byte(other + "/b/mets.xml")}, lang)
	if want := "host " + strings.TrimPrefix(other, "http://") + " refused: it is not in BOOK_HOSTS"; st.State != jobs.Failed || !strings.Contains(st.Error, want) {
		t.Fatalf("a host not listed: %+v; want the error to say %q", st, want)
	}
	if d := servicetest.FormField(t, ts.URL, "/jobs", "book_url"); !strings.Contains(d, "METS file") {
		t.Errorf("the OpenAPI of POST /jobs describes no book_url field: %q", d)
	}
}

// jobBookMETS is a METS file of ten pages whose text files say what
// they are as producers say it: a FULLTEXT group of text/xml files (ALTO
// by the DFG-Viewer's convention), OCR-D's PAGE MIMETYPE, groups and
// MIMETYPEs that say nothing (TXT, application/xml; MISC,
// application/octet-stream); page 3 has no text; page 4's FULLTEXT file
// is PAGE-XML, page 6's a TEI file, page 8's missing; page 9's TXT file
// is TEI, page 10's MISC file a TIFF image.
func jobBookMETS() string {
	groups := []struct {
		use, mime string
		pages     []int
		dir       string
	}{{"FULLTEXT", "text/xml", []int{1, 4, 6, 8}, "ocr"}, {"OCR-D-OCR", "application/vnd.prima.page+xml", []int{2, 5}, "OCR-D-OCR"}, {"TXT", "application/xml", []int{7, 9}, "txt"},
		{"MISC", "application/octet-stream", []int{10}, "misc"}}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
 <mets:fileSec>
  <mets:fileGrp USE="DEFAULT">
`)
	file := func(id, mime, href string) {
		fmt.Fprintf(&b, "   <mets:file ID=%q MIMETYPE=%q><mets:FLocat LOCTYPE=\"URL\" xlink:href=%q/></mets:file>\n", id, mime, href)
	}
	const pages = 10
	for k := 1; k <= pages; k++ {
		file(fmt.Sprintf("i%d", k), "image/jpeg", fmt.Sprintf("img/%d.jpg", k))
	}
	b.WriteString("  </mets:fileGrp>\n")
	text := map[int]string{}
	for _, g := range groups {
		fmt.Fprintf(&b, "  <mets:fileGrp USE=%q>\n", g.use)
		for _, k := range g.pages {
			file(fmt.Sprintf("t%d", k), g.mime, fmt.Sprintf("%s/%d.xml", g.dir, k))
			text[k] = fmt.Sprintf(`<mets:fptr FILEID="t%d"/>`, k)
		}
		b.WriteString("  </mets:fileGrp>\n")
	}
	b.WriteString(" </mets:fileSec>\n <mets:structMap TYPE=\"PHYSICAL\"><mets:div TYPE=\"physSequence\">\n")
	for k := 1; k <= pages; k++ {
		fmt.Fprintf(&b, "  <mets:div ID=\"P%[1]d\" TYPE=\"page\" ORDER=\"%[1]d\"><mets:fptr FILEID=\"i%[1]d\"/>%[2]s</mets:div>\n", k, text[k])
	}
	b.WriteString(" </mets:div></mets:structMap>\n</mets:mets>\n")
	return b.String()
}

// TestJobsBookFetchesOnce (issue 28): a book job requests each text file
// once, when its item runs or while an earlier item runs (before, each
// was requested twice: its first 64 KiB when the book was read, then
// whole; then those its METS declares once, the undeclared ones still
// twice), and translates each as the synchronous book_url request does;
// the format an item reports is its content's (page 4's FULLTEXT file is
// PAGE-XML, page 7's undeclared one ALTO); a declared text file that is
// no ALTO, PAGE-XML or hOCR (page 6, TEI) or cannot be fetched (page 8,
// 404) fails its item naming its URL, where reading the book left it out
// of the job. Every page is an item: page 3, without a text file, is
// skipped, and so are the files the METS says nothing of whose content is
// not ALTO, PAGE-XML or hOCR (page 9, a TEI file; page 10, a TIFF image),
// each fetched once, whole (before: their first 64 KiB read with the
// book, then left out of the job). All this holds alike with each file
// fetched when its item runs (BOOK_FETCH_WORKERS=1) and with the next
// files fetched ahead (the default, 4): the two jobs' results are the
// same, item for item.
func TestJobsBookFetchesOnce(t *testing.T) {
	real := func(p string) []byte { return readFile(t, "../../internal/translate/"+p) }
	tei := []byte(`<?xml version="1.0"?><TEI xmlns="http://www.tei-c.org/ns/1.0"><text><body><p>Grab</p></body></text></TEI>`)
	files := map[string][]byte{
		"/b/mets.xml":        []byte(jobBookMETS()),
		"/b/ocr/1.xml":       readFile(t, "../../testdata/realworld/tesseract41rc1_v3.alto.xml"), // German, as source_lang says
		"/b/OCR-D-OCR/2.xml": real("pagexml/testdata/real/ocrd-gt_german_kant1784-0017.page.xml"),
		"/b/ocr/4.xml":       real("pagexml/testdata/real/prima_english_simplepage.page.xml"),
		"/b/OCR-D-OCR/5.xml": real("pagexml/testdata/real/transkribus_spanish_170025120000003-0074.page.xml"),
		"/b/ocr/6.xml":       tei,
		"/b/txt/7.xml":       smallALTO("hrob"),
		"/b/txt/9.xml":       tei,
		"/b/misc/10.xml":     readFile(t, "../../internal/pageclass/imageio/testdata/page.tif"),
	}
	books, log := serveFiles(t, files)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	results := map[string][]jobs.ItemResult{}
	for _, workers := range []string{"1", "4"} {
		t.Run("BOOK_FETCH_WORKERS="+workers, func(t *testing.T) {
			log.reset()
			_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_ALLOW_HOSTS": "127.0.0.1", "JOBS_DIR": t.TempDir(), "BOOK_FETCH_WORKERS": workers}))
			results[workers] = bookFetchesOnce(t, ts.URL, books.URL, files, log)
		})
	}
	one, four := results["1"], results["4"]
	if len(one) != 10 || len(four) != len(one) {
		t.Fatalf("%d items with BOOK_FETCH_WORKERS=1, %d with 4; want 10", len(one), len(four))
	}
	asJSON := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i := range one {
		a, b := one[i], four[i]
		a.URL, b.URL = "", "" // the address of the answer names its job
		if !reflect.DeepEqual(a, b) {
			t.Errorf("item %d with BOOK_FETCH_WORKERS=1: %s\nwith 4: %s", i, asJSON(a), asJSON(b))
		}
	}
}

// bookFetchesOnce runs TestJobsBookFetchesOnce's job on the service at
// base, checks what it asserts and returns the job's items.
func bookFetchesOnce(t *testing.T, base, booksURL string, files map[string][]byte, log *served) []jobs.ItemResult {
	t.Helper()
	lang := part{Field: "source_lang", Data: []byte("de")}
	body, ctype := multipartBody(t, part{Field: "book_url", Data: []byte(booksURL + "/b/mets.xml")}, lang)
	resp := post(t, base+"/jobs", ctype, body)
	var st jobs.Status
	if b := readBody(t, resp); resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	st = pollJob(t, base, st.ID, 60*time.Second, ended)
	for p, data := range files {
		if reqs := log.of(p); p != "/b/mets.xml" && (len(reqs) != 1 || reqs[0].rng != "" || reqs[0].bytes != len(data)) {
			t.Errorf("%s (%d bytes) was served %+v; want it once, whole", p, len(data), reqs)
		}
	}
	if reqs := log.of("/b/ocr/8.xml"); len(reqs) != 1 {
		t.Errorf("the missing file was requested %d times, want once (a 404 is not retried)", len(reqs))
	}
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 10, Succeeded: 5, Failed: 2, Skipped: 3}) {
		t.Fatalf("%+v", st)
	}

	body, ctype = multipartBody(t, part{Field: "book_url", Data: []byte(booksURL + "/b/mets.xml")}, lang)
	resp = post(t, base+"/translate", ctype, body)
	b := readBody(t, resp)
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	sync := map[string][]byte{}
	for _, p := range mixedParts(t, params["boundary"], b) {
		sync[p.name] = p.data
	}
	res := jobResults(t, base, st.ID)
	// A job's translation names its licence as the synchronous answer
	// does (a job item's answer had dropped the header).
	if lic := resp.Header.Get("X-Translation-License"); lic == "" || fmt.Sprint(res.Items[0].Headers["X-Translation-License"]) != "["+lic+"]" {
		t.Errorf("item 0's headers %q; the synchronous answer's licence %q", res.Items[0].Headers, lic)
	}
	for i, want := range []struct {
		page         int
		path, format string
		out          string // the synchronous answer's part
		status       int
		err          string
		skipped      string
	}{
		{1, "ocr/1.xml", "ALTO", "ocr/1_en.xml", 200, "", ""},
		{2, "OCR-D-OCR/2.xml", "PAGE", "OCR-D-OCR/2_en.xml", 200, "", ""},
		{3, "", "", "", 0, "", "no text file for this page"},
		{4, "ocr/4.xml", "PAGE", "ocr/4_en.xml", 200, "", ""},
		{5, "OCR-D-OCR/5.xml", "PAGE", "OCR-D-OCR/5_en.xml", 200, "", ""},
		{6, "ocr/6.xml", "ALTO", "", 422, booksURL + "/b/ocr/6.xml: not ALTO, PAGE-XML or hOCR (root element TEI in namespace http://www.tei-c.org/ns/1.0)", ""},
		{7, "txt/7.xml", "ALTO", "txt/7_en.xml", 200, "", ""},
		{8, "ocr/8.xml", "ALTO", "", 502, "not fetched: GET <internal service> 404 Not Found", ""}, // redacted, as every fetch error; book.source names it
		{9, "txt/9.xml", "", "", 0, "", "not ALTO, PAGE-XML or hOCR (root element TEI in namespace http://www.tei-c.org/ns/1.0)"},
		{10, "misc/10.xml", "", "", 0, "", "not a text file: image/tiff"},
	} {
		it := res.Items[i]
		source := ""
		if want.path != "" {
			source = booksURL + "/b/" + want.path
		}
		if bk := it.Book; bk == nil || bk.Page != want.page || bk.ID != fmt.Sprintf("P%d", want.page) || bk.Path != want.path || bk.Format != want.format || bk.Source != source {
			t.Errorf("item %d: book %+v, want page %d, %s, %s", i, it.Book, want.page, want.path, want.format)
		}
		if it.Status != want.status || it.Error != want.err || it.Reason != want.skipped || (it.State == jobs.Skipped) != (want.skipped != "") {
			t.Errorf("item %d (%s): %s %d %q %q, want %d %q, skipped %q", i, it.Name, it.State, it.Status, it.Error, it.Reason, want.status, want.err, want.skipped)
		}
		if want.out != "" && (it.Text == nil || len(sync[want.out]) == 0 || *it.Text != string(sync[want.out])) {
			t.Errorf("item %d (%s) differs from the synchronous answer's %s", i, it.Name, want.out)
		}
	}
	return res.Items
}

// TestJobsBackendDown: the MT service fails its first translate requests
// (503, no retries in the client): the job's first document is not failed
// but run again once the job has waited, and both documents end
// translated, as when the MT service is briefly down or a replica starts
// before its backend answers.
func TestJobsBackendDown(t *testing.T) {
	mt := translatortest.New(translatortest.Config{Fail: []int{503, 503}})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	id := submitJob(t, ts.URL, "a.alto.xml", "b.alto.xml")
	st := pollJob(t, ts.URL, id, time.Minute, ended)
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 2, Succeeded: 2}) {
		t.Fatalf("%+v", st)
	}
	res := jobResults(t, ts.URL, id)
	for _, it := range res.Items {
		if it.Text == nil || !strings.Contains(*it.Text, `CONTENT="grave"`) {
			t.Errorf("item %d (%s): %v, want it translated", it.Item, it.Name, it.Text)
		}
	}
	if res.Items[0].Runs < 2 || res.Items[1].Runs != 1 {
		t.Errorf("runs %d and %d, want the first document run again after the MT failures and the second once", res.Items[0].Runs, res.Items[1].Runs)
	}
}

// archiveNames are the entry names of job id's results archive.
func archiveNames(t *testing.T, base, id string) []string {
	t.Helper()
	var names []string
	for _, f := range zipAt(t, base+"/jobs/"+id+"/results.zip").File {
		names = append(names, f.Name)
	}
	return names
}

// zipAt is the ZIP archive served at url.
func zipAt(t *testing.T, url string) *zip.Reader {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	zb := readBody(t, resp)
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatalf("archive: %v", err)
	}
	return zr
}

// TestJobsBookTextPassing: a book job's text file its server answers 503
// for a while (beyond the fetcher's retries) pauses the job and runs the
// item again, which then succeeds; it failed at once ("fetch_failed") and
// the job said succeeded.
func TestJobsBookTextPassing(t *testing.T) {
	files, _, _ := servedBook(t)
	var busy atomic.Int32
	busy.Store(3) // the fetcher's three attempts of the item's first run
	books, _ := serveFilesWith(t, files, nil)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/b/OCR-D-OCR/1.xml" && busy.Add(-1) >= 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		books.Config.Handler.ServeHTTP(w, r)
	}))
	defer front.Close()
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_ALLOW_HOSTS": "127.0.0.1", "JOBS_DIR": t.TempDir()}))
	body, ctype := multipartBody(t, part{Field: "book_url", Data: []byte(front.URL + "/b/mets.xml")}, part{Field: "source_lang", Data: []byte("de")})
	resp := post(t, ts.URL+"/jobs", ctype, body)
	var st jobs.Status
	if b := readBody(t, resp); resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	st = pollJob(t, ts.URL, st.ID, time.Minute, ended)
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Skipped: 1}) {
		t.Fatalf("%+v, want both text files translated", st)
	}
	if res := jobResults(t, ts.URL, st.ID); res.Items[0].Runs < 2 {
		t.Errorf("the first item ran %d times, want it run again after its server's 503s", res.Items[0].Runs)
	}
}

// A job's run metadata lists its documents' warnings, each naming its
// document, as a command line run's lists them (it listed none).
func TestJobsRunMetadataWarnings(t *testing.T) {
	const doc = `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace>
<TextBlock ID="b1" LANG="fr"><TextLine ID="l1"><String CONTENT="Le"/><SP/><String CONTENT="chat"/></TextLine></TextBlock>
<TextBlock ID="b2" LANG="de"><TextLine ID="l2"><String CONTENT="Die"/><SP/><String CONTENT="Katze"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>
`
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	id := submitParts(t, ts.URL, part{Field: "file", Name: "0001.alto.xml", File: true, Data: []byte(doc)})
	if st := pollJob(t, ts.URL, id, time.Minute, ended); st.State != jobs.Succeeded {
		t.Fatalf("%+v", st)
	}
	d, _ := jobArchive(t, ts.URL, id)
	found := false
	for _, w := range d.Warnings {
		found = found || strings.HasPrefix(w, "0001: ") && strings.Contains(w, `"fr"`)
	}
	if !found {
		t.Errorf("run metadata warnings %q, want the French block's naming its document", d.Warnings)
	}
}

// TestJobsOpenAPIForm: the document's POST /jobs takes /translate's form
// fields, typed as /translate's (a generated client could send them only
// as untyped extra properties), and /translate says it takes Prefer:
// respond-async, answered 202.
func TestJobsOpenAPIForm(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	resp, err := http.Get(ts.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	type op struct {
		Parameters  []struct{ Name, In string }
		Responses   map[string]any
		RequestBody struct {
			Content map[string]struct {
				Schema struct{ Properties map[string]map[string]any }
			}
		}
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	if err := json.Unmarshal(readBody(t, resp), &doc); err != nil {
		t.Fatal(err)
	}
	post := func(path string) op {
		var o op
		if err := json.Unmarshal(doc.Paths[path]["post"], &o); err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		return o
	}
	jobsForm := post("/jobs").RequestBody.Content["multipart/form-data"].Schema.Properties
	syncForm := post("/translate").RequestBody.Content["multipart/form-data"].Schema.Properties
	for _, f := range []string{"source_lang", "target_lang", "output_mode", "response_format", "file", "callback_url"} {
		if jobsForm[f] == nil {
			t.Errorf("POST /jobs does not describe %s (it has %v)", f, slices.Sorted(maps.Keys(jobsForm)))
		}
	}
	if fmt.Sprint(jobsForm["output_mode"]) != fmt.Sprint(syncForm["output_mode"]) {
		t.Errorf("POST /jobs output_mode %v, /translate's %v", jobsForm["output_mode"], syncForm["output_mode"])
	}
	tr := post("/translate")
	prefer := false
	for _, p := range tr.Parameters {
		prefer = prefer || p.Name == "Prefer" && p.In == "header"
	}
	if !prefer || tr.Responses["202"] == nil {
		t.Errorf("/translate: Prefer described %v, 202 %v", prefer, tr.Responses["202"] != nil)
	}
}
