package main

import (
	"strings"
	"testing"

	"archivekit/internal/translate/translator/translatortest"
)

// A book whose text files are on a host BOOK_HOSTS does not list is
// answered naming that host and the variable (it said "none of the book's
// 0 text files was translated" and nothing else).
func TestTranslateBookTextOnRefusedHost(t *testing.T) {
	files := map[string][]byte{}
	books, _ := serveFiles(t, files)
	other := strings.Replace(books.URL, "127.0.0.1", "localhost", 1)
	files["/b/mets.xml"] = []byte(strings.ReplaceAll(bookMETS, `xlink:href="OCR-D-OCR/`, `xlink:href="`+other+`/b/OCR-D-OCR/`))
	files["/b/OCR-D-OCR/1.xml"] = readFile(t, "../../internal/translate/pagexml/testdata/real/ocrd-gt_german_kant1784-0017.page.xml")
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1"}))
	body, ct := multipartBody(t, part{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}, part{Field: "source_lang", Data: []byte("de")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	host := strings.TrimPrefix(other, "http://")
	if resp.StatusCode != 422 || !strings.Contains(string(b), host) || !strings.Contains(string(b), "BOOK_HOSTS") ||
		!strings.Contains(string(b), "none of the book's 2 text files was translated (3 pages, 1 without text)") {
		t.Errorf("status %d, want 422 naming %s and BOOK_HOSTS: %s", resp.StatusCode, host, b)
	}
}
