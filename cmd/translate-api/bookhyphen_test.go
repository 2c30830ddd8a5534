package main

import (
	"mime"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/translate/translator/translatortest"
)

// kleinBook serves aheadBook's two-page METS with two real pages of a
// book (the alto package's F. Klein 1898, ABBYY ALTO 2) as its text
// files: page 12 ends in "em" "-", page 13 begins with its running head,
// its number, and then "pfand". It returns the book's URL.
func kleinBook(t *testing.T) string {
	t.Helper()
	files := aheadBook(2)
	files[textPath(1)] = readFile(t, "../../internal/translate/alto/testdata/real/gdz-kleiuniv/00000014.xml")
	files[textPath(2)] = readFile(t, "../../internal/translate/alto/testdata/real/gdz-kleiuniv/00000015.xml")
	books, _ := serveFiles(t, files)
	return books.URL + "/b/mets.xml"
}

// submitGerman posts a book job of the book at url with source_lang de.
func submitGerman(t *testing.T, base, url string) string {
	t.Helper()
	return submitParts(t, base, part{Field: "book_url", Data: []byte(url)}, part{Field: "source_lang", Data: []byte("de")})
}

// checkKleinJoined checks that ended job id of kleinBook sent "empfand"
// whole to mt (when whole; else not at all: an earlier run sent it),
// never "em -" nor "pfand" alone, and emptied page 13's "pfand".
func checkKleinJoined(t *testing.T, base, id string, mt *translatortest.Server, whole bool) {
	t.Helper()
	st := pollJob(t, base, id, 60*time.Second, ended)
	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 2, Succeeded: 2}) {
		t.Fatalf("job %+v", st)
	}
	sent := "\n" + strings.Join(mt.Inputs(), "\n")
	if strings.Contains(sent, "empfand") != whole || strings.Contains(sent, "\npfand") || strings.Contains(sent, " em -") {
		t.Errorf("the MT did not get \"empfand\" whole (sent: %v), or got \"em -\" or \"pfand\":%s", whole, sent)
	}
	res := jobResults(t, base, id)
	if p13 := res.Items[1].Text; p13 == nil || !strings.Contains(*p13, `<String VPOS="246" HPOS="261" WIDTH="203" HEIGHT="80" CONTENT="" />`) {
		t.Errorf("page 13's \"pfand\" was not emptied")
	}
}

// TestJobsBookHyphen: a book job joins a word hyphenated across its two
// ALTO files as translate does (TestBookHyphenAcrossRunningHeads): the
// MT gets "empfand" whole, never "em -" nor "pfand" alone, and page 13's
// "pfand" is emptied; a job paused by the service's stop while page 12 is
// translated, and finished by a service started again on the same
// JOBS_DIR, empties it too, from what page 12 recorded, sending neither
// part. Before, each file was translated alone: "em -" and "pfand" went to
// the MT apart.
func TestJobsBookHyphen(t *testing.T) {
	url := kleinBook(t)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1", "JOBS_DIR": t.TempDir()}))
	checkKleinJoined(t, ts.URL, submitGerman(t, ts.URL, url), mt, true)

	id, dir, held := pausedBookJob(t, func(base string) string { return submitGerman(t, base, url) })
	defer held.Close()
	if sent := strings.Join(held.Inputs(), "\n"); !strings.Contains(sent, "empfand") {
		t.Fatalf("page 12 did not send \"empfand\" whole before the stop:\n%s", sent)
	}
	after := translatortest.New(translatortest.Config{})
	defer after.Close()
	_, again := startServer(t, testEnv(after.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1", "JOBS_DIR": dir}))
	checkKleinJoined(t, again.URL, id, after, false)
}

// translateKlein posts kleinBook's METS (changed by edit, its files
// moved by move: old path to new) to /translate as a book_url with
// source_lang de, and returns the answer's parts by name and what the MT
// was sent.
func translateKlein(t *testing.T, edit func(mets string) string, move map[string]string) (map[string]string, string) {
	t.Helper()
	files := aheadBook(3)
	files[textPath(1)] = readFile(t, "../../internal/translate/alto/testdata/real/gdz-kleiuniv/00000014.xml")
	files[textPath(2)] = readFile(t, "../../internal/translate/alto/testdata/real/gdz-kleiuniv/00000015.xml")
	files["/b/mets.xml"] = []byte(edit(string(files["/b/mets.xml"])))
	for from, to := range move {
		files[to] = files[from]
		delete(files, from)
	}
	books, _ := serveFiles(t, files)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1"}))
	body, ct := multipartBody(t, part{Field: "book_url", Data: []byte(books.URL + "/b/mets.xml")}, part{Field: "source_lang", Data: []byte("de")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	parts := map[string]string{}
	for _, p := range mixedParts(t, params["boundary"], b) {
		parts[p.name] = string(p.data)
	}
	return parts, "\n" + strings.Join(mt.Inputs(), "\n")
}

// TestTranslateBookHyphen: a synchronous book_url request joins a word
// hyphenated across two ALTO files as a book job does
// (TestJobsBookHyphen): the MT gets "empfand" whole, never "em -" nor
// "pfand" alone, and page 13's "pfand" is emptied. Pages that are not
// partners (the second file in another folder; two text files on the
// first page) keep both parts, as before. Before, a book_url request
// translated each file alone: "em -" and "pfand" went to the MT apart.
func TestTranslateBookHyphen(t *testing.T) {
	const emptied = `<String VPOS="246" HPOS="261" WIDTH="203" HEIGHT="80" CONTENT="" />`
	keep := func(m string) string { return m }
	// the METS's third page gone: its file is page 1's second text file
	twoOnFirst := func(m string) string {
		m = strings.Replace(m, `<mets:fptr FILEID="t1"/>`, `<mets:fptr FILEID="t1"/><mets:fptr FILEID="t3"/>`, 1)
		return strings.Replace(m, "  <mets:div ID=\"P3\" TYPE=\"page\" ORDER=\"3\"><mets:fptr FILEID=\"t3\"/></mets:div>\n", "", 1)
	}
	otherFolder := func(m string) string { return strings.Replace(m, `href="ocr/2.xml"`, `href="ocr2/2.xml"`, 1) }
	for _, c := range []struct {
		name   string
		edit   func(string) string
		move   map[string]string
		second string // page 13's answer part
		joined bool
	}{
		{"partners", keep, nil, "ocr/2_en.xml", true},
		{"another folder", otherFolder, map[string]string{textPath(2): "/b/ocr2/2.xml"}, "ocr2/2_en.xml", false},
		{"two text files on a page", twoOnFirst, nil, "ocr/2_en.xml", false},
	} {
		parts, sent := translateKlein(t, c.edit, c.move)
		second, ok := parts[c.second]
		if !ok {
			t.Fatalf("%s: no part %s among %d", c.name, c.second, len(parts))
		}
		if c.joined {
			if !strings.Contains(sent, "empfand") || strings.Contains(sent, "\npfand") || strings.Contains(sent, " em -") {
				t.Errorf("%s: the MT did not get \"empfand\" whole, or got \"em -\" or \"pfand\":%s", c.name, sent)
			}
			if !strings.Contains(second, emptied) {
				t.Errorf("%s: page 13's \"pfand\" was not emptied", c.name)
			}
			continue
		}
		if strings.Contains(sent, "empfand") || !strings.Contains(sent, "pfand") {
			t.Errorf("%s: not partners, yet the MT got \"empfand\" or no \"pfand\":%s", c.name, sent)
		}
		if strings.Contains(second, emptied) {
			t.Errorf("%s: not partners, yet page 13's \"pfand\" was emptied", c.name)
		}
	}
}
