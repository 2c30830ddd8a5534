package main

import (
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
