package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator/translatortest"
)

// Real text files written by others (internal/translate/*/testdata/SOURCES.md),
// and the shared ALTO sample.
const (
	realHOCR      = "../../internal/translate/hocr/testdata/real/tesseract4_german_hocrjs-309515696-2.hocr"
	realHOCRSmall = "../../internal/translate/hocr/testdata/real/ocropy_german_hocrtools-litver.hocr"
)

// bookServer is a loopback server of a book's files; it counts the
// requests per path.
type bookServer struct {
	*httptest.Server
	mu    sync.Mutex
	files map[string][]byte
	hits  map[string]int
	// hold, when set, is called with each request's path before it is
	// answered (a test holds requests with it).
	hold func(path string)
}

func newBookServer(t *testing.T) *bookServer {
	b := &bookServer{files: map[string][]byte{}, hits: map[string]int{}}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.hits[r.URL.Path]++
		data, ok := b.files[r.URL.Path]
		hold := b.hold
		b.mu.Unlock()
		if hold != nil {
			hold(r.URL.Path)
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *bookServer) put(p string, data []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.files[p] = data
}

func (b *bookServer) hitsOf(p string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits[p]
}

func readOrFatal(t *testing.T, p string) []byte {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// testMETS is a METS file of four pages: images in DEFAULT, text files in
// FULLTEXT (PAGE-XML on page 1, hOCR on page 3, a missing file on page 4,
// none on page 2), as DFG-Viewer-style producers write it.
const testMETS = `<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink" OBJID="book-1">
  <mets:fileSec>
    <mets:fileGrp USE="DEFAULT">
      <mets:file ID="IMG_1" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="img/0001.jpg"/></mets:file>
      <mets:file ID="IMG_2" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="img/0002.jpg"/></mets:file>
      <mets:file ID="IMG_3" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="img/0003.jpg"/></mets:file>
      <mets:file ID="IMG_4" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="img/0004.jpg"/></mets:file>
    </mets:fileGrp>
    <mets:fileGrp USE="FULLTEXT">
      <mets:file ID="TXT_1" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="ocr/0001.xml"/></mets:file>
      <mets:file ID="TXT_3" MIMETYPE="text/html"><mets:FLocat LOCTYPE="URL" xlink:href="ocr/0003.hocr"/></mets:file>
      <mets:file ID="TXT_4" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="ocr/0004.xml"/></mets:file>
    </mets:fileGrp>
  </mets:fileSec>
  <mets:structMap TYPE="PHYSICAL">
    <mets:div ID="PHYS_0000" TYPE="physSequence">
      <mets:div ID="PHYS_0001" ORDER="1" ORDERLABEL="I" TYPE="page"><mets:fptr FILEID="IMG_1"/><mets:fptr FILEID="TXT_1"/></mets:div>
      <mets:div ID="PHYS_0002" ORDER="2" TYPE="page"><mets:fptr FILEID="IMG_2"/></mets:div>
      <mets:div ID="PHYS_0003" ORDER="3" TYPE="page"><mets:fptr FILEID="IMG_3"/><mets:fptr FILEID="TXT_3"/></mets:div>
      <mets:div ID="PHYS_0004" ORDER="4" TYPE="page"><mets:fptr FILEID="IMG_4"/><mets:fptr FILEID="TXT_4"/></mets:div>
    </mets:div>
  </mets:structMap>
</mets:mets>
`

// testManifest is a IIIF Presentation 3 manifest of four canvases whose
// text files are linked with seeAlso: ALTO (the shared sample), hOCR,
// nothing, and an ALTO link that answers 404.
func testManifest(base string) []byte {
	canvas := func(n int, seeAlso string) string {
		s := fmt.Sprintf(`{"id": "%[1]s/iiif/canvas/%[2]d", "type": "Canvas", "label": {"none": ["p. %[2]d"]}, "width": 800, "height": 1000,
  "items": [{"id": "%[1]s/iiif/canvas/%[2]d/page", "type": "AnnotationPage", "items": [{"id": "%[1]s/iiif/canvas/%[2]d/image", "type": "Annotation",
    "motivation": "painting", "target": "%[1]s/iiif/canvas/%[2]d", "body": {"id": "%[1]s/img/%[2]d.jpg", "type": "Image", "format": "image/jpeg"}}]}]`, base, n)
		if seeAlso != "" {
			s += `, "seeAlso": [` + seeAlso + `]`
		}
		return s + "}"
	}
	alto := func(p string) string {
		return fmt.Sprintf(`{"id": "%s%s", "type": "Dataset", "format": "application/xml", "profile": "http://www.loc.gov/standards/alto/ns-v4#"}`, base, p)
	}
	hocr := fmt.Sprintf(`{"id": "%s/iiif/text/2.hocr", "type": "Text", "format": "text/vnd.hocr+html"}`, base)
	return []byte(fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "%[1]s/iiif/manifest.json", "type": "Manifest",
  "label": {"en": ["A test book"]}, "items": [%[2]s, %[3]s, %[4]s, %[5]s]}`, base,
		canvas(1, alto("/iiif/text/1.alto.xml")), canvas(2, hocr), canvas(3, ""), canvas(4, alto("/iiif/text/missing.xml"))))
}

func bookOf(t *testing.T, d runmeta.Doc) bookInfo {
	t.Helper()
	raw, _ := json.Marshal(d.Config["book"])
	var b bookInfo
	if err := json.Unmarshal(raw, &b); err != nil || b.Kind == "" {
		t.Fatalf("run metadata config.book: %s (%v)", raw, err)
	}
	return b
}

// TestBookMETS (issue 28, item 4): a METS file, local and over HTTP,
// translates its text files in page order, each written under the output
// folder at its path in the book; the page without a text file and the
// page whose text file is missing are reported, not failed.
func TestBookMETS(t *testing.T) {
	page, hocr := readOrFatal(t, realPAGE), readOrFatal(t, realHOCR)
	srv := newBookServer(t)
	srv.put("/books/b1/mets.xml", []byte(testMETS))
	srv.put("/books/b1/ocr/0001.xml", page)
	srv.put("/books/b1/ocr/0003.hocr", hocr)
	local := t.TempDir()
	writeFile(t, filepath.Join(local, "mets.xml"), []byte(testMETS))
	writeFile(t, filepath.Join(local, "ocr", "0001.xml"), page)
	writeFile(t, filepath.Join(local, "ocr", "0003.hocr"), hocr)
	api := startAPI(t, translatortest.Config{})
	for _, in := range []string{filepath.Join(local, "mets.xml"), srv.URL + "/books/b1/mets.xml"} {
		t.Run(strings.TrimPrefix(in, srv.URL), func(t *testing.T) {
			out := t.TempDir()
			r := runCLI(t, newEnv(api), in, "-o", out, "--vocabulary", "")
			if r.code != exitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			for _, f := range []string{"ocr/0001_en.xml", "ocr/0001_log.csv", "ocr/0003_en.hocr", "ocr/0003_log.csv"} {
				if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
					t.Errorf("output %s: %v", f, err)
				}
			}
			if got := readOrFatal(t, filepath.Join(out, "ocr", "0001_en.xml")); !bytes.Contains(got, []byte("<PcGts")) || bytes.Equal(got, page) {
				t.Error("ocr/0001_en.xml is not a translated PAGE file")
			}
			d := readParadata(t, out)
			b := bookOf(t, d)
			// The missing text file of page 4 is a failed input, not a
			// page without text (issue of the trial of 2026-11-27).
			if b.Kind != "METS" || b.Pages != 4 || b.PagesWithText != 3 || b.TextFiles != 3 ||
				!slices.Equal(b.PagesWithoutText, []string{"PHYS_0002"}) || b.TextFormats["PAGE"] != 1 || b.TextFormats["hOCR"] != 1 {
				t.Errorf("book %+v", b)
			}
			if len(b.Problems) != 0 {
				t.Errorf("problems %q, want none (the missing file is a failure)", b.Problems)
			}
			// Each text file's page, so that an output joins back to it
			// (nothing named the page of ocr/0003_en.hocr).
			if want := []textPage{{"ocr/0001.xml", "PHYS_0001", "1", "I"}, {"ocr/0003.hocr", "PHYS_0003", "3", ""}, {"ocr/0004.xml", "PHYS_0004", "4", ""}}; !slices.Equal(b.TextPages, want) {
				t.Errorf("text_pages %+v, want %+v", b.TextPages, want)
			}
			why := "no such file or directory"
			if strings.HasPrefix(in, srv.URL) {
				why = "404"
			}
			fails, _ := filepath.Glob(filepath.Join(out, "*_translator_failures.csv"))
			if len(fails) != 1 {
				t.Fatalf("%d failures tables, want 1", len(fails))
			}
			if table := string(readOrFatal(t, fails[0])); !strings.Contains(table, "ocr/0004.xml") || !strings.Contains(table, why) {
				t.Errorf("failures table does not name ocr/0004.xml and %q:\n%s", why, table)
			}
			if len(d.SkippedFilesDetail) != 1 || !strings.Contains(d.SkippedFilesDetail[0].File, "ocr/0004.xml") || !strings.Contains(d.SkippedFilesDetail[0].Reason, why) {
				t.Errorf("run metadata skipped_files_detail %+v, want ocr/0004.xml with %q", d.SkippedFilesDetail, why)
			}
			// In page order: the outputs of page 1, then of page 3.
			var order []string
			for _, o := range d.Outputs {
				rel, _ := filepath.Rel(out, o)
				order = append(order, filepath.ToSlash(rel))
			}
			if !slices.Equal(order, []string{"ocr/0001_en.xml", "ocr/0001_log.csv", "ocr/0003_en.hocr", "ocr/0003_log.csv"}) {
				t.Errorf("outputs %q", order)
			}
			if d.Statistics.SuccessfullyProcessed != 2 || d.Statistics.SkippedFiles != 1 {
				t.Errorf("statistics %+v", d.Statistics.Statistics)
			}
		})
	}
}

// TestBookMETSUnreadableTransient: a METS text file whose URL answers 503,
// or an error page with 200 (HTML, JSON, nothing), is a failure that stays
// to do (not recorded in the ledger): the run exits 75 naming it, and a
// --resume once it is served translates it. An error page was left out
// with a warning, the run said complete (exit 0).
func TestBookMETSUnreadableTransient(t *testing.T) {
	page := readOrFatal(t, realPAGE)
	srv := newBookServer(t)
	srv.put("/books/b1/mets.xml", []byte(testMETS))
	srv.put("/books/b1/ocr/0001.xml", page)
	srv.put("/books/b1/ocr/0003.hocr", readOrFatal(t, realHOCR))
	srv.put("/books/b1/ocr/0004.xml", page)
	api := startAPI(t, translatortest.Config{})
	for _, tc := range []struct {
		name string
		busy func(w http.ResponseWriter)
	}{
		{"503", func(w http.ResponseWriter) { http.Error(w, "busy", http.StatusServiceUnavailable) }},
		{"HTML with 200", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body><h1>Maintenance</h1></body></html>"))
		}},
		{"JSON with 200", func(w http.ResponseWriter) { w.Write([]byte(`{"error": "quota"}`)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var busy atomic.Bool
			busy.Store(true)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if busy.Load() && strings.HasSuffix(r.URL.Path, "/0004.xml") {
					tc.busy(w)
					return
				}
				srv.Config.Handler.ServeHTTP(w, r)
			}))
			t.Cleanup(front.Close)
			out := t.TempDir()
			r := runCLI(t, newEnv(api), front.URL+"/books/b1/mets.xml", "-o", out, "--vocabulary", "")
			if r.code != exitIncomplete || !strings.Contains(r.stderr, "0004.xml") {
				t.Fatalf("exit %d, want %d naming 0004.xml: %s", r.code, exitIncomplete, r.stderr)
			}
			busy.Store(false)
			r = runCLI(t, newEnv(api), front.URL+"/books/b1/mets.xml", "-o", out, "--vocabulary", "", "--resume")
			if r.code != exitOK {
				t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(out, "ocr", "0004_en.xml")); err != nil {
				t.Errorf("resume did not translate the text file back: %v", err)
			}
		})
	}
}

// TestBookManifest (issue 28, items 4 and 6): a IIIF manifest over HTTP;
// a linked text file that answers 404 is a failed input (failures table),
// the others are translated; --resume translates nothing again and
// fetches no text file twice per run; --shard shares the text files.
func TestBookManifest(t *testing.T) {
	srv := newBookServer(t)
	srv.put("/iiif/manifest.json", testManifest(srv.URL))
	srv.put("/iiif/text/1.alto.xml", readOrFatal(t, testenv.Path(t, sampleALTO)))
	srv.put("/iiif/text/2.hocr", readOrFatal(t, realHOCRSmall))
	manifest := srv.URL + "/iiif/manifest.json"
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), manifest, "-o", out, "--vocabulary", "", "--fast-align")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, f := range []string{"text/1_en.alto.xml", "text/2_en.hocr"} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(f))); err != nil {
			t.Errorf("output %s: %v", f, err)
		}
	}
	d := readParadata(t, out)
	b := bookOf(t, d)
	if b.Kind != "IIIF manifest" || b.Pages != 4 || b.TextFiles != 3 || len(b.PagesWithoutText) != 1 || !strings.HasSuffix(b.PagesWithoutText[0], "/iiif/canvas/3 (p. 3)") {
		t.Errorf("book %+v", b)
	}
	if d.Statistics.SuccessfullyProcessed != 2 || d.Statistics.SkippedFiles != 1 {
		t.Errorf("statistics %+v", d.Statistics.Statistics)
	}
	fails, _ := filepath.Glob(filepath.Join(out, "*_translator_failures.csv"))
	if len(fails) != 1 || !strings.Contains(string(readOrFatal(t, fails[0])), "/iiif/text/missing.xml") {
		t.Errorf("failures table %v does not name the missing text file", fails)
	}
	if n := srv.hitsOf("/iiif/text/1.alto.xml"); n != 1 {
		t.Errorf("text file fetched %d times in one run", n)
	}
	posts := api.Posts.Load()
	whole := posts
	r = runCLI(t, newEnv(api), manifest, "-o", out, "--vocabulary", "", "--fast-align", "--resume")
	if r.code != exitOK {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	if n := api.Posts.Load() - posts; n != 0 {
		t.Errorf("resume sent %d translate requests, want 0", n)
	}

	// Two shards translate every text file exactly once between them.
	shards := t.TempDir()
	posts = api.Posts.Load()
	var done int
	for i := range 2 {
		r := runCLI(t, newEnv(api), manifest, "-o", shards, "--vocabulary", "", "--fast-align", "--shard", fmt.Sprintf("%d/2", i))
		if r.code != exitOK && r.code != exitFailure {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	for _, f := range []string{"text/1_en.alto.xml", "text/2_en.hocr"} {
		if _, err := os.Stat(filepath.Join(shards, filepath.FromSlash(f))); err == nil {
			done++
		}
	}
	if done != 2 || api.Posts.Load()-posts != whole {
		t.Errorf("shards: %d of 2 outputs, %d translate requests (one whole run: %d)", done, api.Posts.Load()-posts, whole)
	}
}

// TestBookNotReadable (issue 28, item 6): a file that looks like a book
// but cannot be read fails with an error naming it and what was wrong.
func TestBookNotReadable(t *testing.T) {
	dir := t.TempDir()
	noText := filepath.Join(dir, "mets.xml")
	writeFile(t, noText, []byte(strings.ReplaceAll(testMETS, `<mets:fptr FILEID="TXT_`, `<mets:fptr FILEID="IMG_`)))
	broken := filepath.Join(dir, "broken.json")
	writeFile(t, broken, []byte(`{"@context": "http://iiif.io/api/presentation/3/context.json", "type": "Manifest", "items": [`))
	// served, its text files at absolute file:// locations (refused in a
	// remote document): each is a text file failed, saying why (before:
	// "none of its 2 pages has a text file", then the reader's problems)
	srv := newBookServer(t)
	srv.put("/b/mets.xml", []byte(strings.ReplaceAll(altoMETS(2), `xlink:href="ocr/`, `xlink:href="file:///data/ocr/`)))
	api := startAPI(t, translatortest.Config{})
	for _, c := range []struct{ in, want string }{
		{noText, "none of its 4 pages has a text file"},
		{broken, "not well-formed JSON"},
		{srv.URL + "/b/mets.xml", "book text file file:///data/ocr/0002.xml of page PHYS_0002: cannot read: file:///data/ocr/0002.xml: a file:// location in a remote document"},
	} {
		r := runCLI(t, newEnv(api), c.in, "-o", t.TempDir(), "--vocabulary", "")
		cannot := strings.HasPrefix(c.in, "http") || strings.Contains(r.stderr, "cannot read the book")
		if r.code != exitFailure || !cannot || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, filepath.Base(c.in)) {
			t.Errorf("%s: exit %d, want %d and %q: %s", c.in, r.code, exitFailure, c.want, r.stderr)
		}
	}
}

// altoMETS is a METS file of n pages, each with an image and an ALTO file
// (ocr/000k.xml) in the FULLTEXT group.
func altoMETS(n int) string {
	var imgs, texts, pages strings.Builder
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&imgs, `<mets:file ID="IMG_%[1]d" MIMETYPE="image/jpeg"><mets:FLocat LOCTYPE="URL" xlink:href="img/%04[1]d.jpg"/></mets:file>`+"\n", k)
		fmt.Fprintf(&texts, `<mets:file ID="TXT_%[1]d" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="ocr/%04[1]d.xml"/></mets:file>`+"\n", k)
		fmt.Fprintf(&pages, `<mets:div ID="PHYS_%04[1]d" ORDER="%[1]d" TYPE="page"><mets:fptr FILEID="IMG_%[1]d"/><mets:fptr FILEID="TXT_%[1]d"/></mets:div>`+"\n", k)
	}
	return `<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink" OBJID="book-alto">
<mets:fileSec><mets:fileGrp USE="DEFAULT">` + imgs.String() + `</mets:fileGrp><mets:fileGrp USE="FULLTEXT">` + texts.String() + `</mets:fileGrp></mets:fileSec>
<mets:structMap TYPE="PHYSICAL"><mets:div ID="PHYS_0000" TYPE="physSequence">` + pages.String() + `</mets:div></mets:structMap>
</mets:mets>
`
}

// altoBookServer serves /b/mets.xml (altoMETS(n)) and its n text files,
// each the sample ALTO with its page number in a comment, so no two items
// share a digest.
func altoBookServer(t *testing.T, n int) *bookServer {
	alto := readOrFatal(t, testenv.Path(t, sampleALTO))
	srv := newBookServer(t)
	srv.put("/b/mets.xml", []byte(altoMETS(n)))
	for k := 1; k <= n; k++ {
		srv.put(fmt.Sprintf("/b/ocr/%04d.xml", k), append(append([]byte{}, alto...), fmt.Sprintf("<!-- page %d -->\n", k)...))
	}
	return srv
}

// TestBookResumeFetchesOnce (issue 28, item 2): each remote text file of a
// book is kept in the download folder and its fetch recorded in the
// ledger, so a run stopped after translating two of five text files (by
// a cancel, and by SIGKILL) and resumed fetches every text file once in
// all (the resumed run requests only the METS file), as a clean run
// requests each once, and writes the outputs of one clean run; a further
// resume with the download folder removed translates nothing again.
func TestBookResumeFetchesOnce(t *testing.T) {
	killedChild(t)
	const n = 5
	srv := altoBookServer(t, n)
	api := startAPI(t, translatortest.Config{})
	args := func(out string, more ...string) []string {
		return append([]string{srv.URL + "/b/mets.xml", "-o", out, "--vocabulary", "", "--fast-align"}, more...)
	}
	clean := t.TempDir()
	if r := runCLI(t, newEnv(api), args(clean)...); r.code != exitOK {
		t.Fatalf("clean run: exit %d: %s", r.code, r.stderr)
	}
	want := outputs(t, clean)
	if h := srv.hitsOf("/b/mets.xml"); h != 1 {
		t.Errorf("the METS file requested %d times in one run, want 1", h)
	}
	hits := func() map[string]int {
		m := map[string]int{}
		for k := 1; k <= n; k++ {
			p := fmt.Sprintf("/b/ocr/%04d.xml", k)
			m[p] = srv.hitsOf(p)
		}
		return m
	}
	before := hits()
	for p, h := range before {
		if h != 1 {
			t.Errorf("%s requested %d times in one run, want 1 (reading the book fetches it, the run takes it from the fetcher)", p, h)
		}
	}

	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	itemHook = func(k int) {
		if k == 2 {
			cancel()
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(ctx, args(out), newEnv(api).get, &stdout, &stderr)
	itemHook = nil
	cancel()
	if code == exitOK {
		t.Fatalf("stopped run: exit 0: %s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, "ocr", "0003_en.xml")); err == nil {
		t.Fatal("the third text file was translated: the run was not stopped")
	}
	r := runCLI(t, newEnv(api), args(out, "--resume")...)
	if r.code != exitOK {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	for p, h := range hits() {
		if k := h - before[p]; k != 1 {
			t.Errorf("%s fetched %d times by the stopped run and its resume, want 1", p, k)
		}
	}
	got := outputs(t, out)
	for k, b := range want {
		if strings.HasPrefix(k, "ocr"+string(filepath.Separator)) && !bytes.Equal(got[k], b) {
			t.Errorf("%s differs from the clean run's", k)
		}
	}
	if translated(t, r.stderr) != n-2 {
		t.Errorf("resume translated %d text files, want %d", translated(t, r.stderr), n-2)
	}
	d := newestParadata(t, out)
	if bf, _ := d.Config["book_fetch"].(map[string]any); bf["fetched_before"] != float64(n) || bf["text_files_fetched"] != 0.0 {
		t.Errorf("book_fetch %v, want %d text files read from the download folder and none fetched", d.Config["book_fetch"], n)
	}

	// Killed with SIGKILL after two text files, and resumed: the same.
	killed := t.TempDir()
	before = hits()
	runKilled(t, "TestBookResumeFetchesOnce", args(killed), newEnv(api))
	if _, err := os.Stat(filepath.Join(killed, "ocr", "0003_en.xml")); err == nil {
		t.Fatal("the third text file was translated: the run was not killed")
	}
	if r := runCLI(t, newEnv(api), args(killed, "--resume")...); r.code != exitOK || translated(t, r.stderr) != n-2 {
		t.Fatalf("resume after SIGKILL: exit %d, %d translated: %s", r.code, translated(t, r.stderr), r.stderr)
	}
	for p, h := range hits() {
		if k := h - before[p]; k != 1 {
			t.Errorf("%s fetched %d times by the killed run and its resume, want 1", p, k)
		}
	}
	got = outputs(t, killed)
	for k, b := range want {
		if strings.HasPrefix(k, "ocr"+string(filepath.Separator)) && !bytes.Equal(got[k], b) {
			t.Errorf("after SIGKILL: %s differs from the clean run's", k)
		}
	}

	// The downloads gone: reading the book fetches the text files again
	// (to tell their format), but the ledger knows them translated.
	if err := os.RemoveAll(filepath.Join(out, "downloaded_inputs")); err != nil {
		t.Fatal(err)
	}
	posts := api.Posts.Load()
	if r := runCLI(t, newEnv(api), args(out, "--resume")...); r.code != exitOK || translated(t, r.stderr) != 0 {
		t.Fatalf("second resume: exit %d, %d translated: %s", r.code, translated(t, r.stderr), r.stderr)
	}
	if n := api.Posts.Load() - posts; n != 0 {
		t.Errorf("second resume sent %d translate requests, want 0", n)
	}
}

// TestBookFolder (issue 28): a folder run reads a METS file found in it
// by its content as a book: its text files are translated once, as the
// book's, under the book's folder (the PAGE file that a folder run would
// also take by its root element is not translated twice), beside a loose
// ALTO file; a file that looks like a book and is not one is a failed
// input, and the run metadata lists the books read (config.books).
func TestBookFolder(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "b1", "book.xml"), []byte(testMETS))
	writeFile(t, filepath.Join(dir, "b1", "ocr", "0001.xml"), readOrFatal(t, realPAGE))
	writeFile(t, filepath.Join(dir, "b1", "ocr", "0003.hocr"), readOrFatal(t, realHOCRSmall))
	writeFile(t, filepath.Join(dir, "loose.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	writeFile(t, filepath.Join(dir, "broken", "manifest.json"), []byte(`{"@context": "http://iiif.io/api/presentation/3/context.json", "type": "Manifest", "items": [`))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got := outputs(t, out)
	var names []string
	for k := range got {
		if !strings.Contains(k, "downloaded_inputs") {
			names = append(names, filepath.ToSlash(k))
		}
	}
	slices.Sort(names)
	want := []string{"b1/ocr/0001_en.xml", "b1/ocr/0001_log.csv", "b1/ocr/0003_en.hocr", "b1/ocr/0003_log.csv", "loose_en.alto.xml", "loose_log.csv"}
	if !slices.Equal(names, want) {
		t.Errorf("outputs %q, want %q", names, want)
	}
	d := readParadata(t, out)
	if d.Statistics.SuccessfullyProcessed != 3 || d.Statistics.SkippedFiles != 2 || len(d.SkippedFilesDetail) != 2 ||
		!strings.Contains(d.SkippedFilesDetail[0].Reason, "not well-formed JSON") || !strings.HasSuffix(d.SkippedFilesDetail[1].File, "0004.xml") {
		t.Errorf("statistics %+v, skipped %+v: want 3 translated, the broken manifest and b1's missing text file failed", d.Statistics.Statistics, d.SkippedFilesDetail)
	}
	raw, _ := json.Marshal(d.Config["books"])
	var books []bookInfo
	if err := json.Unmarshal(raw, &books); err != nil || len(books) != 1 || books[0].Folder != "b1" || books[0].TextFiles != 3 {
		t.Errorf("config.books %s (%v)", raw, err)
	}
}

// TestBookList (issue 28): a list of two METS URLs (named without .txt: a
// list is told by its content) whose download
// names clash (both mets.xml: the second is read as a book, not skipped),
// a IIIF manifest URL and a local METS path (relative to the list)
// translates each book's text files under the book's folder (a URL's host
// and folder); two shards translate every text file once between them,
// each book whole.
func TestBookList(t *testing.T) {
	page, hocr := readOrFatal(t, realPAGE), readOrFatal(t, realHOCRSmall)
	srv := newBookServer(t)
	for _, b := range []string{"b1", "b2"} {
		srv.put("/books/"+b+"/mets.xml", []byte(testMETS))
		srv.put("/books/"+b+"/ocr/0001.xml", page)
		srv.put("/books/"+b+"/ocr/0003.hocr", hocr)
	}
	srv.put("/iiif/manifest.json", testManifest(srv.URL))
	srv.put("/iiif/text/1.alto.xml", readOrFatal(t, testenv.Path(t, sampleALTO)))
	srv.put("/iiif/text/2.hocr", hocr)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "local", "mets.xml"), []byte(testMETS))
	writeFile(t, filepath.Join(dir, "local", "ocr", "0001.xml"), page)
	writeFile(t, filepath.Join(dir, "local", "ocr", "0003.hocr"), hocr)
	list := filepath.Join(dir, "books")
	writeFile(t, list, []byte("# books\n"+srv.URL+"/books/b1/mets.xml\n"+srv.URL+"/books/b2/mets.xml\n"+srv.URL+"/iiif/manifest.json\nlocal/mets.xml\n"))
	host := strings.ReplaceAll(strings.TrimPrefix(srv.URL, "http://"), ":", "_")
	want := []string{host + "/books/b1/ocr/0001_en.xml", host + "/books/b1/ocr/0003_en.hocr", host + "/books/b2/ocr/0001_en.xml",
		host + "/books/b2/ocr/0003_en.hocr", host + "/iiif/text/1_en.alto.xml", host + "/iiif/text/2_en.hocr", "local/ocr/0001_en.xml", "local/ocr/0003_en.hocr"}
	translatedFiles := func(out string) []string {
		var names []string
		for k := range outputs(t, out) {
			if k = filepath.ToSlash(k); !strings.HasPrefix(k, "downloaded_inputs/") && !strings.HasSuffix(k, "_log.csv") {
				names = append(names, k)
			}
		}
		slices.Sort(names)
		return names
	}
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), list, "-o", out, "--vocabulary", "", "--fast-align")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := translatedFiles(out); !slices.Equal(got, want) {
		t.Errorf("outputs\n%q\nwant\n%q", got, want)
	}
	d := readParadata(t, out)
	raw, _ := json.Marshal(d.Config["books"])
	var books []bookInfo
	if err := json.Unmarshal(raw, &books); err != nil || len(books) != 4 {
		t.Fatalf("config.books %s (%v)", raw, err)
	}
	// The missing text files (each METS's PHYS_0004 and the manifest's 404) fail.
	if d.Statistics.SuccessfullyProcessed != len(want) || d.Statistics.SkippedFiles != 4 {
		t.Errorf("statistics %+v, want %d translated and the manifest's missing text file failed", d.Statistics.Statistics, len(want))
	}

	shards := t.TempDir()
	for i := range 2 {
		r := runCLI(t, newEnv(api), list, "-o", shards, "--vocabulary", "", "--fast-align", "--shard", fmt.Sprintf("%d/2", i))
		if r.code != exitOK && r.code != exitFailure {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	if got := translatedFiles(shards); !slices.Equal(got, want) {
		t.Errorf("two shards' outputs\n%q\nwant\n%q", got, want)
	}
}

// TestBookShardsFetchTheirShare: the shares of a --shard run over one
// remote METS book fetch only their own text files: across the two shares
// each ALTO file is requested once (before, every share fetched the whole
// book to tell its files' formats), the two write what one run writes,
// and --merge takes them (both counted the same inputs). A file of a group
// the METS says nothing of, which is no ALTO, PAGE or hOCR, is left out by
// the share it falls to, as one run leaves it out, and named among the
// book's problems.
func TestBookShardsFetchTheirShare(t *testing.T) {
	const n = 6
	srv := altoBookServer(t, n)
	mets := strings.Replace(altoMETS(n), `</mets:fileSec>`,
		`<mets:fileGrp USE="NOTES"><mets:file ID="NOTE_1" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="notes/0001.xml"/></mets:file></mets:fileGrp></mets:fileSec>`, 1)
	mets = strings.Replace(mets, `<mets:fptr FILEID="TXT_1"/>`, `<mets:fptr FILEID="TXT_1"/><mets:fptr FILEID="NOTE_1"/>`, 1)
	srv.put("/b/mets.xml", []byte(mets))
	srv.put("/b/notes/0001.xml", []byte(`<?xml version="1.0"?><notes><note>Nicht übersetzen.</note></notes>`))
	api := startAPI(t, translatortest.Config{})
	args := func(out string, more ...string) []string {
		return append([]string{srv.URL + "/b/mets.xml", "-o", out, "--vocabulary", "", "--fast-align"}, more...)
	}
	hits := func() map[string]int {
		m := map[string]int{"/b/notes/0001.xml": srv.hitsOf("/b/notes/0001.xml")}
		for k := 1; k <= n; k++ {
			p := fmt.Sprintf("/b/ocr/%04d.xml", k)
			m[p] = srv.hitsOf(p)
		}
		return m
	}

	clean := t.TempDir()
	r := runCLI(t, newEnv(api), args(clean)...)
	if r.code != exitOK || !strings.Contains(r.stderr, "not ALTO, PAGE or hOCR") {
		t.Fatalf("one run: exit %d, or the notes file not named as left out: %s", r.code, r.stderr)
	}
	want := outputs(t, clean)

	before := hits()
	out := t.TempDir()
	var told int
	for i := 0; i < 2; i++ {
		r := runCLI(t, newEnv(api), args(out, "--shard", fmt.Sprintf("%d/2", i))...)
		if r.code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
		if strings.Contains(r.stderr, "not ALTO, PAGE or hOCR") {
			told++
		}
	}
	for p, h := range hits() {
		if k := h - before[p]; k != 1 {
			t.Errorf("%s requested %d times by the two shares, want 1", p, k)
		}
	}
	if told != 1 {
		t.Errorf("the notes file named as left out by %d shares, want the one it falls to", told)
	}
	got := outputs(t, out)
	for k, b := range want {
		if strings.HasPrefix(k, "ocr"+string(filepath.Separator)) && !bytes.Equal(got[k], b) {
			t.Errorf("%s differs from the one run's", k)
		}
	}
	for k := range got {
		if strings.HasPrefix(k, "notes") || strings.Contains(k, "notes"+string(filepath.Separator)) {
			t.Errorf("%s written: the notes file was taken as a text file", k)
		}
	}
	if r := runCLI(t, newEnv(api), "--merge", "-o", out); r.code != exitOK {
		t.Fatalf("--merge: exit %d: %s", r.code, r.stderr)
	}
	// A share resumed takes its text files from the download folder.
	before = hits()
	if r := runCLI(t, newEnv(api), args(out, "--shard", "0/2", "--resume")...); r.code != exitOK || translated(t, r.stderr) != 0 {
		t.Fatalf("shard 0 resumed: exit %d, %d translated: %s", r.code, translated(t, r.stderr), r.stderr)
	}
	for p, h := range hits() {
		if h != before[p] && p != "/b/notes/0001.xml" { // no text: never kept
			t.Errorf("%s requested again by a share resumed", p)
		}
	}

	// Shares on machines of their own, merged into one folder: the
	// --resume --book-out after them fetches no text file again (--merge
	// copied the shares' downloads, share 1's from the --download-dir of
	// its own beside its output folder, both moved since) and writes the
	// book.
	machines := t.TempDir()
	for i := 0; i < 2; i++ {
		dir := filepath.Join(machines, fmt.Sprint("out", i))
		extra := []string{"--shard", fmt.Sprintf("%d/2", i)}
		if i == 1 {
			extra = append(extra, "--download-dir", filepath.Join(machines, "dl1"))
		}
		if r := runCLI(t, newEnv(api), args(dir, extra...)...); r.code != exitOK {
			t.Fatalf("shard %d in its own folder: exit %d: %s", i, r.code, r.stderr)
		}
	}
	moved := filepath.Join(t.TempDir(), "copied")
	if err := os.Rename(machines, moved); err != nil {
		t.Fatal(err)
	}
	folders := []string{filepath.Join(moved, "out0"), filepath.Join(moved, "out1")}
	merged := t.TempDir()
	if r := runCLI(t, newEnv(api), append([]string{"--merge", "-o", merged}, folders...)...); r.code != exitOK {
		t.Fatalf("--merge of two folders: exit %d: %s", r.code, r.stderr)
	}
	before = hits()
	posts := api.Posts.Load()
	r = runCLI(t, newEnv(api), args(merged, "--resume", "--book-out")...)
	if r.code != exitOK || translated(t, r.stderr) != 0 {
		t.Fatalf("--resume --book-out after --merge: exit %d, %d translated: %s", r.code, translated(t, r.stderr), r.stderr)
	}
	for p, h := range hits() {
		if h != before[p] && p != "/b/notes/0001.xml" { // no text: never kept
			t.Errorf("%s requested again by the --resume after --merge", p)
		}
	}
	if n := api.Posts.Load() - posts; n != 0 {
		t.Errorf("the --resume after --merge sent %d translate requests, want 0", n)
	}
	if _, err := os.Stat(filepath.Join(merged, "mets_en.mets.xml")); err != nil {
		t.Errorf("no book written after --merge: %v", err)
	}
}

// TestBookFlagsWithoutBook: --pages and --text-group given to a run none
// of whose inputs is a book are a usage error naming the flag, and nothing
// is written (a single ALTO file given --pages was translated whole
// without a word).
func TestBookFlagsWithoutBook(t *testing.T) {
	dir := t.TempDir()
	alto := filepath.Join(dir, "page.alto.xml")
	writeFile(t, alto, readOrFatal(t, testenv.Path(t, sampleALTO)))
	api := startAPI(t, translatortest.Config{})
	for _, c := range []struct {
		name string
		in   string
		args []string
		want string
	}{
		{"pages on a file", alto, []string{"--pages", "PHYS_0001"}, "--pages selects pages of a METS file or IIIF manifest, and no input of this run is one"},
		{"text group on a folder", dir, []string{"--text-group", "FULLTEXT"}, "--text-group selects pages"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			r := runCLI(t, newEnv(api), append([]string{c.in, "-o", out, "--vocabulary", ""}, c.args...)...)
			if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, want %d and %q:\n%s", r.code, exitUsage, c.want, r.stderr)
			}
			if ents, _ := os.ReadDir(out); len(ents) > 0 {
				t.Errorf("a refused run wrote %d entries to its output folder", len(ents))
			}
		})
	}
}

// TestBookFolderMETSAndManifest: a folder holding a book's METS file and
// its IIIF manifest side by side (both naming the same two ALTO files)
// translates each page once, as the METS book's (read first), and says why
// the manifest was not read as a second book; every page was translated
// twice, into the same output files.
func TestBookFolderMETSAndManifest(t *testing.T) {
	dir := t.TempDir()
	alto := readOrFatal(t, testenv.Path(t, sampleALTO))
	mets := altoMETS(2)
	writeFile(t, filepath.Join(dir, "book.mets.xml"), []byte(mets))
	var canvases []string
	for k := 1; k <= 2; k++ {
		writeFile(t, filepath.Join(dir, "ocr", fmt.Sprintf("%04d.xml", k)), append(append([]byte{}, alto...), fmt.Sprintf("<!-- page %d -->\n", k)...))
		canvases = append(canvases, fmt.Sprintf(`{"id": "https://example.org/c%[1]d", "type": "Canvas", "width": 800, "height": 1000,
  "seeAlso": [{"id": "ocr/%04[1]d.xml", "type": "Dataset", "format": "application/xml", "profile": "http://www.loc.gov/standards/alto/ns-v4#"}]}`, k))
	}
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "https://example.org/manifest.json",
  "type": "Manifest", "label": {"en": ["The same book"]}, "items": [`+strings.Join(canvases, ", ")+`]}`))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	d := readParadata(t, out)
	if d.Statistics.SuccessfullyProcessed != 2 {
		t.Errorf("%d files translated, want the book's 2 once each", d.Statistics.SuccessfullyProcessed)
	}
	if !strings.Contains(r.stderr, "its 2 text files are those of the book "+filepath.Join(dir, "book.mets.xml")+", read before") {
		t.Errorf("the manifest's files are not said to be the METS book's:\n%s", r.stderr)
	}
	raw, _ := json.Marshal(d.Config["books"])
	var books []bookInfo
	if err := json.Unmarshal(raw, &books); err != nil || len(books) != 1 || books[0].Kind != "METS" {
		t.Errorf("config.books %s (%v), want the METS book alone", raw, err)
	}
}

// TestAnchorMETSSaysWhy: the anchor file of a multi-volume work holds no
// pages and is read as a metadata record; when its fields match nothing,
// the failure says it was read so and why, naming the volumes' METS files
// (it said only that the field list matched nothing).
func TestAnchorMETSSaysWhy(t *testing.T) {
	dir := t.TempDir()
	anchor := filepath.Join(dir, "anchor.xml")
	writeFile(t, anchor, []byte(`<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
  <mets:structMap TYPE="LOGICAL"><mets:div TYPE="periodical">
    <mets:div TYPE="volume"><mets:mptr LOCTYPE="URL" xlink:href="https://example.org/v1/mets.xml"/></mets:div>
    <mets:div TYPE="volume"><mets:mptr LOCTYPE="URL" xlink:href="https://example.org/v2/mets.xml"/></mets:div>
  </mets:div></mets:structMap>
</mets:mets>`))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), anchor, "-o", out, "--vocabulary", "")
	if r.code == exitOK {
		t.Fatalf("exit 0 for an anchor METS whose fields match nothing: %s", r.stderr)
	}
	for _, want := range []string{"read as a metadata record, being a METS file without pages", "multi-volume work", "https://example.org/v1/mets.xml"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("the run does not say %q:\n%s", want, r.stderr)
		}
	}
}
