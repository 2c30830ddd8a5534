package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/translate/translator/translatortest"
)

// bookMETS is a three-page METS file: a PAGE-XML text on page 1, none on
// page 2, hOCR on page 3 (in a group named as OCR-D names them).
const bookMETS = `<?xml version="1.0" encoding="UTF-8"?>
<mets xmlns="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
 <fileSec>
  <fileGrp USE="OCR-D-IMG">
   <file ID="i1" MIMETYPE="image/tiff"><FLocat LOCTYPE="URL" xlink:href="img/1.tif"/></file>
   <file ID="i2" MIMETYPE="image/tiff"><FLocat LOCTYPE="URL" xlink:href="img/2.tif"/></file>
   <file ID="i3" MIMETYPE="image/tiff"><FLocat LOCTYPE="URL" xlink:href="img/3.tif"/></file>
  </fileGrp>
  <fileGrp USE="OCR-D-OCR">
   <file ID="t1" MIMETYPE="application/vnd.prima.page+xml"><FLocat LOCTYPE="URL" xlink:href="OCR-D-OCR/1.xml"/></file>
   <file ID="t3" MIMETYPE="text/vnd.hocr+html"><FLocat LOCTYPE="URL" xlink:href="OCR-D-OCR/3.hocr"/></file>
  </fileGrp>
 </fileSec>
 <structMap TYPE="PHYSICAL"><div TYPE="physSequence">
  <div ID="P1" TYPE="page" ORDER="1"><fptr FILEID="i1"/><fptr FILEID="t1"/></div>
  <div ID="P2" TYPE="page" ORDER="2"><fptr FILEID="i2"/></div>
  <div ID="P3" TYPE="page" ORDER="3"><fptr FILEID="i3"/><fptr FILEID="t3"/></div>
 </div></structMap>
</mets>
`

// bookServer serves bookMETS at /b/mets.xml with its two text files (a
// real PAGE-XML and a real hOCR file) on a loopback server, closed with
// the test; files are what it serves, by path.
func bookServer(t *testing.T) (map[string][]byte, *httptest.Server) {
	files, books, _ := servedBook(t)
	return files, books
}

// served is what a book server answered: each request's path, Range
// header and body bytes written.
type served struct {
	mu   sync.Mutex
	reqs []servedRequest
}

type servedRequest struct {
	path, rng string
	bytes     int
}

// reset forgets the requests logged so far.
func (s *served) reset() {
	s.mu.Lock()
	s.reqs = nil
	s.mu.Unlock()
}

func (s *served) of(path string) []servedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []servedRequest
	for _, r := range s.reqs {
		if r.path == path {
			out = append(out, r)
		}
	}
	return out
}

// countingWriter counts the body bytes written.
type countingWriter struct {
	http.ResponseWriter
	n int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n += n
	return n, err
}

// servedBook is bookServer, its files served by serveFiles, with the log
// of what it answered.
func servedBook(t *testing.T) (map[string][]byte, *httptest.Server, *served) {
	files := map[string][]byte{
		"/b/mets.xml":         []byte(bookMETS),
		"/b/OCR-D-OCR/1.xml":  readFile(t, "../../internal/translate/pagexml/testdata/real/ocrd-gt_german_kant1784-0017.page.xml"),
		"/b/OCR-D-OCR/3.hocr": readFile(t, "../../internal/translate/hocr/testdata/real/ocropy_german_hocrtools-litver.hocr"),
	}
	books, log := serveFiles(t, files)
	return files, books, log
}

// serveFiles serves files by path on a loopback server, closed with the
// test, as a static file server serves them (http.ServeContent: byte
// ranges answered; a path not in files is 404), with the log of every
// request it answered.
func serveFiles(t testing.TB, files map[string][]byte) (*httptest.Server, *served) {
	return serveFilesWith(t, files, nil)
}

// serveFilesWith is serveFiles calling before (when not nil) with each
// request before it is answered: a test delays or holds requests there.
func serveFilesWith(t testing.TB, files map[string][]byte, before func(r *http.Request)) (*httptest.Server, *served) {
	log := &served{}
	books := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before != nil {
			before(r)
		}
		cw := &countingWriter{ResponseWriter: w}
		if data, ok := files[r.URL.Path]; ok {
			http.ServeContent(cw, r, path.Base(r.URL.Path), time.Time{}, bytes.NewReader(data))
		} else {
			http.NotFound(w, r)
		}
		log.mu.Lock()
		log.reqs = append(log.reqs, servedRequest{path: r.URL.Path, rng: r.Header.Get("Range"), bytes: cw.n})
		log.mu.Unlock()
	}))
	t.Cleanup(books.Close)
	return books, log
}

// TestTranslateBook (issues 28 item 5, 29 item 7): /translate takes a
// book_url; its text files, PAGE-XML and hOCR, are fetched from a
// loopback server the allow-list names, translated in page order (PAGE
// with its append default) and answered one part each, named by their
// path in the book, then book.json; without the allow-list a loopback
// address is refused; /info lists the formats.
func TestTranslateBook(t *testing.T) {
	files, books := bookServer(t)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	// BOOK_HOSTS, as pageclass-api names it (before, translate-api read
	// only BOOK_ALLOW_HOSTS, now its old name, and refused this book)
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1"}))
	_, closed := startServer(t, testEnv(mt.URL, nil))
	booksHost := strings.TrimPrefix(books.URL, "http://")

	send := func(url string, parts ...part) (*http.Response, []byte) {
		body, ct := multipartBody(t, parts...)
		resp := post(t, url+"/translate", ct, body)
		return resp, readBody(t, resp)
	}
	resp, b := send(ts.URL, part{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}, part{Field: "source_lang", Data: []byte("de")})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	// The fields in the query and no body at all: the same answer (it was
	// 415, as a body of no content type).
	if r, err := http.Post(ts.URL+"/translate?source_lang=de&book_url="+url.QueryEscape(books.URL+"/b/mets.xml"), "", nil); err != nil {
		t.Fatal(err)
	} else if qb := readBody(t, r); r.StatusCode != 200 || len(qb) != len(b) {
		t.Errorf("book_url in the query, no body: status %d, %d bytes (the form's answer: %d): %.300s", r.StatusCode, len(qb), len(b), qb)
	}
	mt2, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt2 != "multipart/mixed" {
		t.Fatalf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	var names []string
	data := map[string][]byte{}
	for _, p := range mixedParts(t, params["boundary"], b) {
		names = append(names, p.name)
		data[p.name] = p.data
	}
	if want := []string{"OCR-D-OCR/1_en.xml", "OCR-D-OCR/3_en.hocr", "book.json"}; !slices.Equal(names, want) {
		t.Fatalf("parts %q, want %q", names, want)
	}
	if n, n0 := bytes.Count(data["OCR-D-OCR/1_en.xml"], []byte("<TextEquiv")), bytes.Count(files["/b/OCR-D-OCR/1.xml"], []byte("<TextEquiv")); n <= n0 {
		t.Errorf("PAGE answered with %d TextEquivs, the input has %d: not appended (PAGE's default)", n, n0)
	}
	var sum bookSummary
	if err := json.Unmarshal(data["book.json"], &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Kind != "METS" || sum.Pages != 3 || !slices.Equal(sum.PagesWithoutText, []string{"P2"}) || len(sum.Files) != 2 ||
		sum.Files[0].Status != "translated" || sum.Files[0].Format != "PAGE" || sum.Files[1].Format != "hOCR" {
		t.Errorf("book.json %s", data["book.json"])
	}
	// The files' warnings are in book.json and counted in a header, as a
	// document's answer counts its own (a book's had none).
	warnings := 0
	for _, f := range sum.Files {
		warnings += len(f.Warnings)
	}
	if h := resp.Header.Get("X-Translation-Warnings"); h != fmt.Sprint(warnings) {
		t.Errorf("X-Translation-Warnings %q, book.json lists %d", h, warnings)
	}
	if h := resp.Header.Get("X-Translation-Files-Failed"); h != "0" {
		t.Errorf("X-Translation-Files-Failed %q, want 0", h)
	}
	// The book's translations carry their licence, in book.json and in
	// the answer's headers (the translated files' parts have no field).
	if sum.License != "CC BY-NC-SA 4.0" || sum.LicenseURL == "" || resp.Header.Get("X-Translation-License") != sum.License ||
		resp.Header.Get("Link") != "<"+sum.LicenseURL+`>; rel="license"` {
		t.Errorf("book.json licence %q %q; headers X-Translation-License %q, Link %q", sum.License, sum.LicenseURL, resp.Header.Get("X-Translation-License"), resp.Header.Get("Link"))
	}
	// A text file that cannot be fetched is failed in book.json and
	// counted in X-Translation-Files-Failed (a 200 said it nowhere else).
	hocr := files["/b/OCR-D-OCR/3.hocr"]
	delete(files, "/b/OCR-D-OCR/3.hocr")
	r404, b404 := send(ts.URL, part{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}, part{Field: "source_lang", Data: []byte("de")})
	files["/b/OCR-D-OCR/3.hocr"] = hocr
	if h := r404.Header.Get("X-Translation-Files-Failed"); r404.StatusCode != 200 || h != "1" {
		t.Errorf("a book with a text file gone: %d, X-Translation-Files-Failed %q, want 200 and 1: %.300s", r404.StatusCode, h, b404)
	}
	// A page without text is written as it was, said no_text in book.json
	// and counted in X-Translation-Files-Without-Text (it said translated).
	files["/b/OCR-D-OCR/3.hocr"] = []byte(`<html><body><div class='ocr_page' title='bbox 0 0 9 9'></div></body></html>`)
	rb, bb := send(ts.URL, part{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}, part{Field: "source_lang", Data: []byte("de")})
	files["/b/OCR-D-OCR/3.hocr"] = hocr
	if h := rb.Header.Get("X-Translation-Files-Without-Text"); rb.StatusCode != 200 || h != "1" || !bytes.Contains(bb, []byte(`"status": "no_text"`)) {
		t.Errorf("a book with a blank page: %d, X-Translation-Files-Without-Text %q, want 200, 1 and no_text in book.json: %.600s", rb.StatusCode, h, bb)
	}

	for _, c := range []struct {
		name   string
		url    string
		parts  []part
		status int
		says   string
	}{
		{"loopback without the allow-list", closed.URL, []part{{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}}, 403,
			// the host refused and the variable that allows it (before, "<internal service>")
			`book_url: host ` + booksHost + ` refused: it is at a loopback, private or link-local address; list it in BOOK_HOSTS (comma-separated host or host:port, e.g. BOOK_HOSTS=` + booksHost + `)`},
		{"not a book", ts.URL, []part{{Field: "book_url", Data: []byte(books.URL + "/b/OCR-D-OCR/1.xml")}}, 422, "neither a METS file nor a IIIF manifest"},
		{"missing", ts.URL, []part{{Field: "book_url", Data: []byte(books.URL + "/b/none.xml")}}, 502, "404"},
		{"not http", ts.URL, []part{{Field: "book_url", Data: []byte("file:///etc/passwd")}}, 422, "not an http(s) URL"},
		{"file and book_url", ts.URL, []part{{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}, {Field: "file", Name: "a.xml", File: true, Data: []byte("<a/>")}}, 422, "either a file or a book_url"},
	} {
		resp, b := send(c.url, c.parts...)
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.says) {
			t.Errorf("%s: status %d, want %d with %q: %s", c.name, resp.StatusCode, c.status, c.says, b)
		}
	}

	resp, err = http.Get(ts.URL + "/info")
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		SupportedFormats []docFormat `json:"supported_formats"`
	}
	if err := json.Unmarshal(readBody(t, resp), &in); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range in.SupportedFormats {
		got = append(got, f.Name)
	}
	if want := []string{"alto", "metadata", "page", "hocr", "book"}; !slices.Equal(got, want) {
		t.Errorf("/info supported_formats %q, want %q", got, want)
	}
}

// TestTranslateBookLanguage (issue 28 item 4): with source_lang auto a
// book_url's text files are one document for language detection: the
// book's language (German, over the real PAGE-XML and hOCR files) is in
// book.json and is each file's document language; with a given source
// there is none.
func TestTranslateBookLanguage(t *testing.T) {
	_, books := bookServer(t)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_ALLOW_HOSTS": "127.0.0.1"}))
	for _, c := range []struct {
		source, want string
	}{{"", "de"}, {"de", ""}} {
		parts := []part{{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}}
		if c.source != "" {
			parts = append(parts, part{Field: "source_lang", Data: []byte(c.source)})
		}
		body, ct := multipartBody(t, parts...)
		resp := post(t, ts.URL+"/translate", ct, body)
		b := readBody(t, resp)
		if resp.StatusCode != 200 {
			t.Fatalf("source %q: status %d: %s", c.source, resp.StatusCode, b)
		}
		_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		var sum bookSummary
		for _, p := range mixedParts(t, params["boundary"], b) {
			if p.name == "book.json" {
				if err := json.Unmarshal(p.data, &sum); err != nil {
					t.Fatal(err)
				}
			}
		}
		if sum.DocumentLanguage != c.want || len(sum.Files) != 2 {
			t.Errorf("source %q: book.json document_language %q, want %q (%d files)", c.source, sum.DocumentLanguage, c.want, len(sum.Files))
		}
	}
}
