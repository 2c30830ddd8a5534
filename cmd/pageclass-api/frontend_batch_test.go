package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"archivekit/internal/book/booktest"
	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/glossary"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/service/servicetest"
)

// TestFrontendBatch uploads several files at once through /frontend in
// headless Chromium (two page images, a two-page PDF and a file that is no
// image): every page gets a row of the table, the failed file a row with
// its error, the legend gives the glossary, the CSV and JSON downloads hold
// exactly the rows, and the review is said in words. Screenshots before and
// after go to test/artifacts/.
func TestFrontendBatch(t *testing.T) {
	ctx := chromium(t)
	o := testOptions(t)
	// A calibration no page passes (every model must agree, the margin be
	// at least 0.999): every page is flagged, for both doubt reasons.
	members := ensembleMembers(t, o.Models)
	strict := review.Thresholds{MinAgreement: 6, MinMargin: 0.999}
	if _, err := review.Save(o.Models, review.Calibration{Models: members, Target: 0.9, Thresholds: strict, Reachable: true}); err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, o, nil, nil)
	dir := t.TempDir()
	pages := classifytest.Pages(t, 1)
	pdf := filepath.Join(dir, "two pages.pdf")
	broken := filepath.Join(dir, "notes.png")
	if err := os.WriteFile(pdf, makePDF(2), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("not an image\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{pages[0], pages[7], pdf, broken}

	var before, after []byte
	var table [][]string
	var legend [][]string
	var status, errText, csvText, jsonText string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.WaitReady(`#legend-table tbody tr:nth-child(11)`),
		chromedp.FullScreenshot(&before, 100),
		chromedp.SetUploadFiles("#file", files),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#batch"),
		chromedp.Text("#status", &status),
		chromedp.Text("#error", &errText),
		chromedp.Evaluate(`[...document.querySelectorAll('#table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))`, &table),
		chromedp.Evaluate(`[...document.querySelectorAll('#legend-table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))`, &legend),
		chromedp.Evaluate(`fetch(document.querySelector('#download-csv').href).then(r => r.text())`, &csvText, awaitPromise),
		chromedp.Evaluate(`fetch(document.querySelector('#download-json').href).then(r => r.text())`, &jsonText, awaitPromise),
		chromedp.FullScreenshot(&after, 100),
	)
	if err != nil {
		t.Fatal(err)
	}
	saveShot(t, "frontend-batch-before.png", before)
	saveShot(t, "frontend-batch-after.png", after)

	if !strings.Contains(status, "4 files: 4 page(s) classified, 4 to check, 1 file(s) failed") {
		t.Errorf("status %q", status)
	}
	if !strings.Contains(errText, "notes.png: Error 4") {
		t.Errorf("error shown %q", errText)
	}
	// the table: one row a page, in upload order, the failed file last
	want := [][2]string{{filepath.Base(pages[0]), "1"}, {filepath.Base(pages[7]), "1"}, {"two pages.pdf", "1"}, {"two pages.pdf", "2"}, {"notes.png", ""}}
	if len(table) != len(want) {
		t.Fatalf("%d table rows, want %d: %q", len(table), len(want), table)
	}
	for i, w := range want {
		r := table[i]
		if r[0] != w[0] || r[1] != w[1] {
			t.Errorf("row %d: %q, want file %q page %q", i, r, w[0], w[1])
		}
		if i == len(want)-1 {
			if !strings.HasPrefix(r[5], "Failed: Error 4") || r[2] != "" {
				t.Errorf("failed file's row %q", r)
			}
			continue
		}
		if modelmeta.CategoryIndex(r[2]) < 0 || !strings.HasSuffix(r[3], "%") || modelmeta.CategoryIndex(r[4]) < 0 {
			t.Errorf("row %d: %q: want a category, a score and a second choice", i, r)
		}
		if !strings.HasPrefix(r[5], "Check this page: models disagree (") || !strings.Contains(r[5], "close second choice ("+r[4]+")") {
			t.Errorf("row %d: review %q, want it in words", i, r[5])
		}
		for _, w := range []string{"margin", "entropy", "sha256"} {
			if strings.Contains(r[5], w) {
				t.Errorf("row %d: review shows %q: %q", i, w, r[5])
			}
		}
	}
	// the legend is the glossary
	if len(legend) != len(glossary.Entries) {
		t.Fatalf("legend %q", legend)
	}
	for i, e := range glossary.Entries {
		if legend[i][0] != e.Category || legend[i][1] != e.Description {
			t.Errorf("legend row %d %q, want %s: %s", i, legend[i], e.Category, e.Description)
		}
	}
	// the downloads hold exactly the table's rows
	recs, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil {
		t.Fatalf("CSV download: %v\n%s", err, csvText)
	}
	if len(recs) != len(want)+1 || strings.Join(recs[0], ",") != "file,page,category,score,second_choice,needs_review,review,error,page_label" {
		t.Fatalf("CSV download:\n%s", csvText)
	}
	for i, w := range want {
		r := recs[i+1]
		if r[0] != w[0] || r[1] != w[1] || r[2] != table[i][2] || r[4] != table[i][4] {
			t.Errorf("CSV row %d %q, table row %q", i+1, r, table[i])
		}
		if failed := i == len(want)-1; failed != (r[7] != "") || (!failed && r[5] != "yes") {
			t.Errorf("CSV row %d %q: needs_review or error", i+1, r)
		}
		if r[8] != "" { // no page here has a PDF page label
			t.Errorf("CSV row %d %q: page_label", i+1, r)
		}
	}
	var js []struct {
		File        string       `json:"file"`
		Page        any          `json:"page"`
		Category    string       `json:"category"`
		Predictions []prediction `json:"predictions"`
		Error       string       `json:"error"`
	}
	if err := json.Unmarshal([]byte(jsonText), &js); err != nil || len(js) != len(want) {
		t.Fatalf("JSON download (%v):\n%s", err, jsonText)
	}
	for i, r := range js[:len(want)-1] {
		if r.File != want[i][0] || len(r.Predictions) != 3 || r.Predictions[0].Label != r.Category || r.Error != "" {
			t.Errorf("JSON row %d %+v", i, r)
		}
	}
}

// TestFrontendLongBatch: a batch of 45 pages (two PDFs) keeps a short page:
// the table holds every page, the DOM at most 20 cards (the first 20, with
// the navigation between views); a click on a row shows that page's card,
// marked, in its view; Next and Previous move between views.
func TestFrontendLongBatch(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "PDF_RENDER_DPI": "72"}, nil)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pdf"), filepath.Join(dir, "b.pdf")
	if err := os.WriteFile(a, makePDF(30), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, makePDF(15), 0o644); err != nil {
		t.Fatal(err)
	}

	// view is what the page shows: the number of table rows and cards,
	// the cards' range, whether the navigation shows, the titles of the
	// marked cards and the files and pages of the marked rows.
	type view struct {
		Rows, Cards   int
		Range         string
		Nav           bool
		Marked        []string
		MarkedRows    []string
		Prev, Next    bool // disabled
		FirstCardName string
	}
	const read = `({
		Rows: document.querySelectorAll('#table tbody tr').length,
		Cards: document.querySelectorAll('#results .page').length,
		Range: document.querySelector('#cards-range').textContent,
		Nav: !document.querySelector('#cards-nav').hidden,
		Marked: [...document.querySelectorAll('.page.selected h2')].map(h => h.textContent),
		MarkedRows: [...document.querySelectorAll('#table tbody tr.selected')].map(tr => tr.cells[0].textContent + ' ' + tr.cells[1].textContent),
		Prev: document.querySelector('#cards-prev').disabled,
		Next: document.querySelector('#cards-next').disabled,
		FirstCardName: document.querySelector('#results .page h2').textContent,
	})`
	var first, clicked, next, back view
	var shot []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.SetUploadFiles("#file", []string{a, b}),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#batch"),
		chromedp.Evaluate(read, &first),
		// row 33 is b.pdf's page 3, the 33rd card: in the second view
		chromedp.Click("#table tbody tr:nth-child(33) td"),
		chromedp.WaitReady(`#results .page.selected[data-card="32"]`),
		chromedp.Evaluate(read, &clicked),
		chromedp.FullScreenshot(&shot, 100),
		chromedp.Click("#cards-next"),
		chromedp.WaitReady(`#results .page[data-card="44"]`),
		chromedp.Evaluate(read, &next),
		chromedp.Click("#cards-prev"),
		chromedp.WaitReady(`#results .page[data-card="20"]`),
		chromedp.Evaluate(read, &back),
	)
	if err != nil {
		t.Fatal(err)
	}
	saveShot(t, "frontend-long-batch.png", shot)
	for _, c := range []struct {
		name string
		got  view
		want view
	}{
		{"after the batch", first, view{Rows: 45, Cards: 20, Range: "Cards 1–20 of 45", Nav: true, Prev: true, FirstCardName: "a.pdf, page 1"}},
		{"row 33 clicked", clicked, view{Rows: 45, Cards: 20, Range: "Cards 21–40 of 45", Nav: true,
			Marked: []string{"b.pdf, page 3"}, MarkedRows: []string{"b.pdf 3"}, FirstCardName: "a.pdf, page 21"}},
		{"Next", next, view{Rows: 45, Cards: 5, Range: "Cards 41–45 of 45", Nav: true,
			MarkedRows: []string{"b.pdf 3"}, Next: true, FirstCardName: "b.pdf, page 11"}},
		{"Previous", back, view{Rows: 45, Cards: 20, Range: "Cards 21–40 of 45", Nav: true,
			Marked: []string{"b.pdf, page 3"}, MarkedRows: []string{"b.pdf 3"}, FirstCardName: "a.pdf, page 21"}},
	} {
		// (an empty list is as good as none)
		if !slices.Equal(c.got.Marked, c.want.Marked) || !slices.Equal(c.got.MarkedRows, c.want.MarkedRows) {
			t.Errorf("%s: marked cards %q rows %q, want %q %q", c.name, c.got.Marked, c.got.MarkedRows, c.want.Marked, c.want.MarkedRows)
		}
		c.got.Marked, c.got.MarkedRows, c.want.Marked, c.want.MarkedRows = nil, nil, nil, nil
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

// TestFrontendJobs: on a service with jobs (JOBS_DIR) the page sends a
// batch as one job (POST /jobs), keeps its id in the address and in the
// browser, and shows its results as it shows a batch sent file by file
// (rows, labels, the failed file's error, the downloads); the page opened
// again, by its link among the recent jobs or by the address, shows the job's
// results without sending anything again, the page images' cards with the
// thumbnails their answers carry (the files sent are no longer at hand).
func TestFrontendJobs(t *testing.T) {
	ctx := chromium(t)
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), "PDF_RENDER_DPI": "72"}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	dir := t.TempDir()
	pages := classifytest.Pages(t, 1)
	pdf := filepath.Join(dir, "book.pdf")
	broken := filepath.Join(dir, "notes.png")
	if err := os.WriteFile(pdf, labelledPDF(3, "<< /Nums [0 << /S /r >> 2 << /S /D /St 3 >>] >>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("not an image\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{pages[0], pages[7], pdf, broken}

	var hash, status, errText, csvText string
	var table, again, byAddress [][]string
	var thumbs, reopened []string
	var shot []byte
	err := chromedp.Run(ctx,
		submitted(ts.URL, files, &hash, &status, &table),
		chromedp.Text("#error", &errText),
		chromedp.Evaluate(`[...document.querySelectorAll('#results .page img')].map(i => i.src.split(':')[0])`, &thumbs),
		chromedp.Evaluate(`fetch(document.querySelector('#download-csv').href).then(r => r.text())`, &csvText, awaitPromise),
	)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := strings.CutPrefix(hash, "#job=")
	if !ok || id == "" {
		t.Fatalf("address fragment %q, want #job=<id>", hash)
	}
	// the batch was one job of the four files, ended
	var st jobs.Status
	r, err := http.Get(ts.URL + "/jobs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	if b := servicetest.ReadBody(t, r); r.StatusCode != 200 || json.Unmarshal(b, &st) != nil ||
		st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 4, Succeeded: 3, Failed: 1}) {
		t.Fatalf("GET /jobs/%s: %d %s", id, r.StatusCode, b)
	}
	if !strings.Contains(status, "Job "+id+" succeeded: 4 files: 5 page(s) classified, ") || !strings.Contains(status, "1 file(s) failed") {
		t.Errorf("status %q", status)
	}
	if !strings.Contains(errText, "notes.png: Error 4") {
		t.Errorf("error shown %q", errText)
	}
	want := [][2]string{{filepath.Base(pages[0]), "1"}, {filepath.Base(pages[7]), "1"}, {"book.pdf", "1 (label i)"}, {"book.pdf", "2 (label ii)"}, {"book.pdf", "3"}, {"notes.png", ""}}
	if len(table) != len(want) {
		t.Fatalf("%d table rows, want %d: %q", len(table), len(want), table)
	}
	for i, w := range want {
		r := table[i]
		failed := i == len(want)-1
		if r[0] != w[0] || r[1] != w[1] || failed != strings.HasPrefix(r[5], "Failed: Error 4") || failed == (modelmeta.CategoryIndex(r[2]) >= 0) {
			t.Errorf("row %d: %q, want file %q page %q", i, r, w[0], w[1])
		}
	}
	// the two page images keep their thumbnails (the files are at hand),
	// the PDF's pages the service's
	if !slices.Equal(thumbs, []string{"blob", "blob", "data", "data", "data"}) {
		t.Errorf("thumbnails %q", thumbs)
	}
	recs, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil || len(recs) != len(want)+1 || recs[3][8] != "i" || recs[4][8] != "ii" || recs[5][8] != "3" || recs[6][7] == "" {
		t.Errorf("CSV download (%v):\n%s", err, csvText)
	}

	// The page opened again: the link to the last job, then the address.
	err = chromedp.Run(ctx,
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#recent-jobs"),
		chromedp.Click("#recent-list a"),
		chromedp.WaitVisible(endedDownloads, chromedp.ByQuery),
		chromedp.Evaluate(tableRows, &again),
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(ts.URL+"/frontend#job="+id),
		chromedp.WaitVisible(endedDownloads, chromedp.ByQuery),
		chromedp.Evaluate(tableRows, &byAddress),
		// every card's picture loaded, or a card that says it has none
		chromedp.Poll(`[...document.querySelectorAll('#results .page')].every(p => p.querySelector('.no-preview') || p.querySelector('img')?.naturalWidth > 0)`, nil),
		chromedp.Evaluate(`[...document.querySelectorAll('#results .page')].map(p => {
			const i = p.querySelector('img');
			return i ? i.src.split(':')[0] + ' ' + i.naturalWidth : 'none: ' + p.textContent;
		})`, &reopened),
		chromedp.FullScreenshot(&shot, 100),
	)
	if err != nil {
		t.Fatal(err)
	}
	saveShot(t, "frontend-job-reopened.png", shot)
	if !reflect.DeepEqual(again, table) || !reflect.DeepEqual(byAddress, table) {
		t.Errorf("opened again: by the link %q, by the address %q, want %q", again, byAddress, table)
	}
	// the page images' cards: their answers' thumbnails (the page sends
	// every job with thumbnails=true), 160 pixels wide, not decoded again
	// by the service; the PDF's pages their answer's
	if len(reopened) != 5 || reopened[0] != "data 160" || reopened[1] != "data 160" ||
		!strings.HasPrefix(reopened[2], "data ") || !strings.HasPrefix(reopened[4], "data ") {
		t.Errorf("the cards' pictures of the job opened again: %q, want the answers' thumbnails", reopened)
	}
	var list jobs.Page
	r, err = http.Get(ts.URL + "/jobs")
	if err != nil {
		t.Fatal(err)
	}
	if b := servicetest.ReadBody(t, r); json.Unmarshal(b, &list) != nil || len(list.Jobs) != 1 {
		t.Errorf("jobs after the page was opened twice again: %s, want the one job", b)
	}
}

// TestFrontendJobProgress: while the page's job waits behind another (a
// book job whose manifest the loopback server holds back, so the one
// worker is busy), the page shows it queued, with its id already in the
// address; once the other job ends, the page shows its results. Opened
// again, the page image's card shows the thumbnail its answer carries (the
// page sends every job with thumbnails=true), which the service does not
// decode again.
func TestFrontendJobProgress(t *testing.T) {
	ctx := chromium(t)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.NotFound(w, r) // the book cannot be read: its job fails at once
	}))
	t.Cleanup(held.Close)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server closes
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), EnvBookHosts: must(url.Parse(held.URL)).Host}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	submitForm(t, ts.URL, upload{Field: "book", Data: []byte(held.URL + "/manifest.json")})
	<-entered // the worker reads the book: the next job waits

	page := classifytest.Pages(t, 1)[7]
	var queued, hash, status string
	var table [][]string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitReady(`#legend-table tbody tr`), // /info has answered
		chromedp.SetUploadFiles("#file", []string{page}),
		chromedp.Click("#submit"),
		chromedp.Poll(`document.querySelector('#status').textContent.includes('queued: 0 of 1 file(s) done')`, nil),
		chromedp.Text("#status", &queued),
		chromedp.Evaluate(`location.hash`, &hash),
	)
	if err != nil {
		t.Fatal(err)
	}
	free()
	var reopened string
	err = chromedp.Run(ctx,
		chromedp.WaitVisible(endedDownloads, chromedp.ByQuery),
		chromedp.Text("#status", &status),
		chromedp.Evaluate(tableRows, &table),
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(ts.URL+"/frontend"+hash),
		chromedp.WaitVisible(endedDownloads, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#results .page img').src.split(',')[0]`, &reopened),
	)
	if err != nil {
		t.Fatal(err)
	}
	if reopened != "data:image/jpeg;base64" {
		t.Errorf("the page image's card of the job opened again shows %q, want its answer's thumbnail", reopened)
	}
	id, ok := strings.CutPrefix(hash, "#job=")
	if !ok || !strings.HasPrefix(queued, "Job queued: 0 of 1 file(s) done") || !strings.Contains(queued, "closed and opened again") {
		t.Errorf("while queued: address fragment %q, status %q", hash, queued)
	}
	if !strings.HasPrefix(status, "Job "+id+" succeeded: "+filepath.Base(page)+": ") || len(table) != 1 || modelmeta.CategoryIndex(table[0][2]) < 0 {
		t.Errorf("after: status %q, table %q", status, table)
	}
}

// TestFrontendJobPages: the page shows a job's pages as its items end, not
// only once the job has ended. A book job of three pages (the third's image
// gone: a failed item) whose second page's image the loopback server holds
// back: the page opened at the job's address shows the first page's row
// and card while the job runs, and downloads of that page alone, named
// partial (…-partial-1-of-3) and, in the JSON, with the job's state and
// counts; once the image is let through, every row, and the table, status,
// downloads (complete: their usual names and form) and cards are those of
// the same book's job run without holding. A book's pages, sent without
// thumbnails, have the service's (made from their images fetched again).
func TestFrontendJobPages(t *testing.T) {
	ctx := chromium(t)
	bk := booktest.New(t, classifytest.Pages(t, 1), 3, true)
	bk.Gone(2)
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the book's server closes
	var mu sync.Mutex
	images := 0
	bk.SetHold(func() func() {
		mu.Lock()
		images++
		second := images == 2
		mu.Unlock()
		if second {
			entered <- struct{}{}
			<-release
		}
		return func() {}
	})
	// The pages fetched one at a time, when their items run (no fetches
	// ahead), so that the second image request is the second page's.
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), EnvBookHosts: must(url.Parse(bk.URL)).Host,
		EnvBookFetchWorkers: "1"}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	book := upload{Field: "book", Data: []byte(bk.ManifestURL())}
	held := submitForm(t, ts.URL, book)
	<-entered // the first item is done, the second's image held

	// view is what the page shows of a job once it has ended.
	type view struct {
		status    string
		table     [][]string
		dl        downloads
		noPreview []string
	}
	ended := func(v *view) chromedp.Tasks {
		return chromedp.Tasks{
			chromedp.WaitVisible(endedDownloads, chromedp.ByQuery),
			chromedp.Text("#status", &v.status),
			chromedp.Evaluate(tableRows, &v.table),
			readDownloads(&v.dl),
			// Each card's picture loaded, or why it has none.
			chromedp.Poll(`[...document.querySelectorAll('#results .page')].every(p => p.querySelector('.no-preview') || (p.querySelector('img')?.complete && p.querySelector('img').naturalWidth > 0))`, nil),
			chromedp.Evaluate(`[...document.querySelectorAll('#results .page')].map(p => p.querySelector('.no-preview') ? p.querySelector('.no-preview').textContent + ' | ' + (p.querySelector('.no-preview a')?.href || '') : 'preview ' + p.querySelector('img').naturalWidth)`, &v.noPreview),
		}
	}
	var running string
	var partial [][]string
	var cards int
	var dl downloads
	var shot, endShot []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend#job="+held.ID),
		chromedp.WaitReady("#status", chromedp.ByQuery), // before a Poll: see ended in frontend_skip_test.go
		chromedp.Poll(`document.querySelector('#status').textContent.includes('running: 1 of 3 file(s) done')`, nil),
		chromedp.Text("#status", &running),
		chromedp.Evaluate(tableRows, &partial),
		chromedp.Evaluate(`document.querySelectorAll('#results .page').length`, &cards),
		readDownloads(&dl),
		chromedp.FullScreenshot(&shot, 100),
	)
	if err != nil {
		t.Fatal(err)
	}
	saveShot(t, "frontend-job-running.png", shot)
	if len(partial) != 1 || modelmeta.CategoryIndex(partial[0][2]) < 0 || cards != 1 {
		t.Fatalf("while the job runs (%q): table %q, %d card(s); want the first page's row and card", running, partial, cards)
	}
	checkPartial(t, dl, held.ID, partial)
	free()
	var got, want view
	if err := chromedp.Run(ctx, ended(&got), chromedp.FullScreenshot(&endShot, 100)); err != nil {
		t.Fatal(err)
	}
	saveShot(t, "frontend-job-ended.png", endShot)
	bk.SetHold(nil)
	plain := waitJob(t, s, ts.URL, submitForm(t, ts.URL, book))
	err = chromedp.Run(ctx,
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(ts.URL+"/frontend#job="+plain.ID),
		ended(&want),
	)
	if err != nil {
		t.Fatal(err)
	}

	if len(got.table) != 3 || !reflect.DeepEqual(got.table[0], partial[0]) || !strings.HasPrefix(got.table[2][5], "Failed: Error 502") {
		t.Errorf("after: table %q", got.table)
	}
	if got.dl.Shown != "complete" || got.dl.CSVName != "pageclass-results.csv" || got.dl.JSONName != "pageclass-results.json" || !strings.HasPrefix(got.dl.JSON, "[") {
		t.Errorf("after: downloads %q, %q (%s), want the complete ones", got.dl.CSVName, got.dl.JSONName, got.dl.Shown)
	}
	if len(got.noPreview) != 2 {
		t.Errorf("after: cards %q, want the two pages'", got.noPreview)
	}
	for _, c := range got.noPreview {
		if w, err := strconv.Atoi(strings.TrimPrefix(c, "preview ")); err != nil || w < 1 || w > thumbWidth {
			t.Errorf("after: a book page's card says %q, want its preview", c)
		}
	}
	got.status = strings.Replace(got.status, held.ID, plain.ID, 1)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the job shown as its items ended:\n%+v\nthe same job shown once ended:\n%+v", got, want)
	}
	if !strings.HasPrefix(want.status, "Job "+plain.ID+" succeeded: 3 files: 2 page(s) classified, ") {
		t.Errorf("status %q", want.status)
	}
}

// TestFrontendRecentJobs: the page opened without a job address lists the
// last 10 jobs this browser sent or opened, newest first, each a link to
// its address with its file count and state; a job the service no longer
// has (removed by JOBS_RETENTION) is shown gone once, then dropped.
func TestFrontendRecentJobs(t *testing.T) {
	ctx := chromium(t)
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), jobs.EnvRetention: "1h"}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	dir := t.TempDir()
	var broken []string // files that are no image: their jobs fail at once
	for _, name := range []string{"a.png", "b.png"} {
		broken = append(broken, filepath.Join(dir, name))
		if err := os.WriteFile(broken[len(broken)-1], []byte("not an image\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file := upload{Field: "file", Name: "a.png", CType: "image/png", Data: []byte("not an image\n")}
	// gone ends before the others: JOBS_RETENTION removes it alone.
	gone := waitJob(t, s, ts.URL, submitForm(t, ts.URL, file))
	var older []string
	for range 9 {
		older = append(older, waitJob(t, s, ts.URL, submitForm(t, ts.URL, file)).ID)
	}
	// The page opens the nine jobs by their address, then gone, then sends
	// a batch of two files: eleven jobs, the first opened no longer listed.
	var tasks chromedp.Tasks
	for _, id := range append(slices.Clone(older), gone.ID) {
		tasks = append(tasks, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/frontend#job="+id), chromedp.WaitVisible(endedDownloads, chromedp.ByQuery))
	}
	var hash, status string
	var table [][]string
	tasks = append(tasks, submitted(ts.URL, broken, &hash, &status, &table))
	if err := chromedp.Run(ctx, tasks); err != nil {
		t.Fatal(err)
	}
	sent, _ := strings.CutPrefix(hash, "#job=")
	if n, err := s.jobs.Expire(context.Background(), gone.FinishedAt.Add(time.Hour+time.Millisecond)); n != 1 || err != nil {
		t.Fatalf("Expire: %d jobs removed (%v), want 1", n, err)
	}

	// listed reads the recent jobs once each has its state or is gone.
	type entry struct{ Text, Href, Class string }
	listed := func(list *[]entry) chromedp.Tasks {
		return chromedp.Tasks{
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(ts.URL + "/frontend"),
			chromedp.WaitVisible("#recent-jobs"),
			chromedp.Poll(`[...document.querySelectorAll('#recent-list li')].every(li => li.classList.contains('gone') || li.querySelector('.state').textContent)`, nil),
			chromedp.Evaluate(`[...document.querySelectorAll('#recent-list li')].map(li => ({Text: li.textContent, Href: li.querySelector('a')?.getAttribute('href') || '', Class: li.className}))`, list),
		}
	}
	var first, again []entry
	if err := chromedp.Run(ctx, listed(&first), listed(&again)); err != nil {
		t.Fatal(err)
	}
	want := append([]string{sent, gone.ID}, older[1:]...)
	slices.Reverse(want[2:])
	if len(first) != 10 {
		t.Fatalf("listed %+v, want 10 jobs", first)
	}
	for i, id := range want {
		e := first[i]
		switch {
		case id == gone.ID:
			if e.Class != "gone" || e.Href != "" || !strings.Contains(e.Text, id+": gone") {
				t.Errorf("job %d: %+v, want %s gone", i, e, id)
			}
		case e.Href != "#job="+id || !strings.Contains(e.Text, "(failed)"):
			t.Errorf("job %d: %+v, want a link to %s, failed", i, e, id)
		case id == sent && !strings.Contains(e.Text, "2 file(s)"):
			t.Errorf("the batch sent: %+v, want 2 file(s)", e)
		case id != sent && !strings.Contains(e.Text, "1 file(s)"):
			t.Errorf("job %d: %+v, want 1 file(s)", i, e)
		}
	}
	if len(again) != 9 || !reflect.DeepEqual(again[0], first[0]) || !reflect.DeepEqual(again[1:], first[2:]) {
		t.Errorf("opened again: %+v, want the list without the job gone", again)
	}
}

// TestFrontendJobsTooLarge: a batch over the service's upload limit as one
// request (413 from POST /jobs) goes file by file, as without jobs: every
// file fits alone, and no job is made.
func TestFrontendJobsTooLarge(t *testing.T) {
	ctx := chromium(t)
	pages := classifytest.Pages(t, 1)
	files := []string{pages[0], pages[7]}
	var largest, sum int64
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		largest, sum = max(largest, fi.Size()), sum+fi.Size()
	}
	limit := largest + 16<<10 // one file and its form fit, not both
	if sum <= limit {
		t.Fatalf("the sample pages (%d bytes together) fit in %d bytes", sum, limit)
	}
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), "MAX_UPLOAD_BYTES": strconv.FormatInt(limit, 10)}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	var hash, status string
	var table [][]string
	if err := chromedp.Run(ctx, submitted(ts.URL, files, &hash, &status, &table)); err != nil {
		t.Fatal(err)
	}
	if hash != "" || !strings.HasPrefix(status, "2 files: 2 page(s) classified") || len(table) != 2 || modelmeta.CategoryIndex(table[1][2]) < 0 {
		t.Errorf("address fragment %q, status %q, table %q", hash, status, table)
	}
	var list jobs.Page
	r, err := http.Get(ts.URL + "/jobs")
	if err != nil {
		t.Fatal(err)
	}
	if b := servicetest.ReadBody(t, r); json.Unmarshal(b, &list) != nil || len(list.Jobs) != 0 {
		t.Errorf("jobs: %s, want none", b)
	}
}

// endedDownloads is the downloads shown once a job has ended (or a batch
// was sent file by file): the complete ones, not those of a running job's
// pages so far (class partial).
const endedDownloads = "#downloads:not(.partial)"

// downloads is what the page offers to download: whether the offer is
// shown ("partial", "complete" or "hidden"), its words, and each file's
// name and content.
type downloads struct {
	Shown, What                  string
	CSVName, JSONName, CSV, JSON string
}

// readDownloads reads the downloads the page offers.
func readDownloads(d *downloads) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Evaluate(`(() => {
			const p = document.querySelector('#downloads');
			return {Shown: p.hidden ? 'hidden' : p.classList.contains('partial') ? 'partial' : 'complete', What: p.textContent,
				CSVName: document.querySelector('#download-csv').download, JSONName: document.querySelector('#download-json').download};
		})()`, d),
		chromedp.Evaluate(`fetch(document.querySelector('#download-csv').href).then(r => r.text())`, &d.CSV, awaitPromise),
		chromedp.Evaluate(`fetch(document.querySelector('#download-json').href).then(r => r.text())`, &d.JSON, awaitPromise),
	}
}

// checkPartial checks the downloads of job id while one of its three
// files is done: table is its one row; the CSV holds it with the usual
// columns, the files are named partial, the JSON says the job's state
// and counts around the row.
func checkPartial(t *testing.T, d downloads, id string, table [][]string) {
	t.Helper()
	if d.Shown != "partial" || d.CSVName != "pageclass-results-partial-1-of-3.csv" || d.JSONName != "pageclass-results-partial-1-of-3.json" ||
		!strings.Contains(d.What, "partial: 1 of 3 file(s); the job is running") {
		t.Errorf("while the job runs: downloads %s %q, %q, %q; want them partial, 1 of 3", d.Shown, d.What, d.CSVName, d.JSONName)
	}
	recs, err := csv.NewReader(strings.NewReader(d.CSV)).ReadAll()
	if err != nil || len(recs) != 2 || strings.Join(recs[0], ",") != "file,page,category,score,second_choice,needs_review,review,error,page_label" ||
		recs[1][0] != table[0][0] || recs[1][2] != table[0][2] || recs[1][4] != table[0][4] {
		t.Errorf("while the job runs: CSV download (%v):\n%s\nwant the header and the row %q", err, d.CSV, table[0])
	}
	var js struct {
		Partial bool        `json:"partial"`
		Job     string      `json:"job"`
		State   string      `json:"state"`
		Done    int         `json:"files_done"`
		Total   int         `json:"files_total"`
		Items   jobs.Counts `json:"items"`
		Rows    []struct {
			File     string `json:"file"`
			Category string `json:"category"`
		} `json:"rows"`
	}
	err = json.Unmarshal([]byte(d.JSON), &js)
	if err != nil || !js.Partial || js.Job != id || js.State != jobs.Running || js.Done != 1 || js.Total != 3 || js.Items != (jobs.Counts{Total: 3, Queued: 2, Succeeded: 1}) ||
		len(js.Rows) != 1 || js.Rows[0].File != table[0][0] || js.Rows[0].Category != table[0][2] {
		t.Errorf("while the job runs: JSON download (%v):\n%s", err, d.JSON)
	}
}

// tableRows reads the page's table: each row's cells' text.
const tableRows = `[...document.querySelectorAll('#table tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))`

// submitted opens the page of the service at base, sends files once /info
// has answered, waits for the downloads (shown once every file is done: a
// job's table fills as its items end) and reads the address fragment, the
// status line and the table.
func submitted(base string, files []string, hash, status *string, table *[][]string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Navigate(base + "/frontend"),
		chromedp.WaitReady(`#legend-table tbody tr`),
		chromedp.SetUploadFiles("#file", files),
		chromedp.Click("#submit"),
		chromedp.WaitVisible(endedDownloads, chromedp.ByQuery),
		chromedp.Evaluate(`location.hash`, hash),
		chromedp.Text("#status", status),
		chromedp.Evaluate(tableRows, table),
	}
}

// awaitPromise makes chromedp.Evaluate wait for the promise the script
// returns (a download read with fetch).
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// saveShot keeps a screenshot under test/artifacts/ (not in the repository).
func saveShot(t *testing.T, name string, png []byte) {
	t.Helper()
	dir, _ := filepath.Abs("../../test/artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", out)
}

// TestFrontendServiceJobs: a browser that never sent or opened a job (its
// localStorage empty) lists the service's latest jobs, those a program
// sent, newest first, each a link to its address with its file count and
// state; with API_TOKENS_FILE only those of the token the tab was given.
// A job the browser lists already among its own is not listed twice.
// Before, such jobs were found only by their address or GET /jobs.
func TestFrontendServiceJobs(t *testing.T) {
	ctx := chromium(t)
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("alice tok-a\nbob tok-b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), "API_TOKENS_FILE": tokens}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	// submit sends n files that are no image as a job of the token's
	// client and waits until it has failed.
	submit := func(token string, n int) jobs.Status {
		t.Helper()
		var parts []upload
		for i := range n {
			parts = append(parts, upload{Field: "file", Name: fmt.Sprintf("%d.png", i), CType: "image/png", Data: []byte("not an image\n")})
		}
		get := func(method, url string, body io.Reader, ctype string, want int) jobs.Status {
			t.Helper()
			req, _ := http.NewRequest(method, url, body)
			req.Header.Set("Authorization", "Bearer "+token)
			if ctype != "" {
				req.Header.Set("Content-Type", ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b := servicetest.ReadBody(t, resp)
			var st jobs.Status
			if resp.StatusCode != want || json.Unmarshal(b, &st) != nil {
				t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, b)
			}
			return st
		}
		body, ctype := multipartForm(t, parts...)
		st := get("POST", ts.URL+"/jobs", body, ctype, http.StatusAccepted)
		for deadline := time.Now().Add(time.Minute); st.State != jobs.Failed; {
			if time.Now().After(deadline) {
				t.Fatalf("job still %+v", st)
			}
			select {
			case <-s.jobs.Changed():
			case <-time.After(time.Second):
			}
			st = get("GET", ts.URL+"/jobs/"+st.ID, nil, "", http.StatusOK)
		}
		return st
	}
	older, bobs, newer := submit("tok-a", 2), submit("tok-b", 1), submit("tok-a", 1)

	type entry struct{ Text, Href string }
	// listed opens the page in this tab (its token given) and reads the
	// service's list once shown.
	listed := func(list *[]entry) chromedp.Tasks {
		return chromedp.Tasks{
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(ts.URL + "/frontend"),
			chromedp.WaitVisible("#service-jobs"),
			chromedp.Evaluate(`[...document.querySelectorAll('#service-list li')].map(li => ({Text: li.textContent, Href: li.querySelector('a')?.getAttribute('href') || ''}))`, list),
		}
	}
	var first, again []entry
	var recentHidden bool
	var own []string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/health"), // an open route of the service's origin
		chromedp.Evaluate(`sessionStorage.setItem("archivekit-token", "tok-a")`, nil),
		listed(&first),
		chromedp.Evaluate(`document.querySelector('#recent-jobs').hidden`, &recentHidden),
		// Opened from the list, the newer job becomes one of this browser's.
		chromedp.Click("#service-list a"),
		chromedp.WaitVisible(endedDownloads, chromedp.ByQuery),
		listed(&again),
		chromedp.Evaluate(`[...document.querySelectorAll('#recent-list a')].map(a => a.getAttribute('href'))`, &own),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []entry{{"job " + newer.ID, "#job=" + newer.ID}, {"job " + older.ID, "#job=" + older.ID}}
	if len(first) != 2 || !recentHidden {
		t.Fatalf("a fresh browser lists %+v (its own list hidden: %v), want jobs %s and %s, not bob's %s", first, recentHidden, newer.ID, older.ID, bobs.ID)
	}
	for i, w := range want {
		files := []string{"1 file(s)", "2 file(s)"}[i]
		if first[i].Href != w.Href || !strings.HasPrefix(first[i].Text, w.Text+": sent ") || !strings.Contains(first[i].Text, files+" (failed)") {
			t.Errorf("entry %d: %+v, want a link to %s with %s, failed", i, first[i], w.Href, files)
		}
	}
	if len(again) != 1 || again[0].Href != want[1].Href || !slices.Equal(own, []string{want[0].Href}) {
		t.Errorf("after opening %s: its own list %q, the service's %+v; want it in the first only", newer.ID, own, again)
	}
}

// TestFrontendServiceJobsOlder: the service's list shows its latest 10
// jobs; "Older jobs" adds the next ones, in the service's order, and is
// gone once there are no more; also behind a reverse proxy's path with
// ROOT_PATH set (the service's next link carries the path, and the page
// took it for none: "Older jobs" never showed).
func TestFrontendServiceJobsOlder(t *testing.T) {
	for _, root := range []string{"", "/pageclass"} {
		t.Run("ROOT_PATH="+root, func(t *testing.T) { serviceJobsOlder(t, root) })
	}
}

func serviceJobsOlder(t *testing.T, root string) {
	ctx := chromium(t)
	_, ts := jobsServer(t, root)
	base := ts.URL
	stray := func() []string { return nil }
	if root != "" {
		base, stray = servicetest.BehindProxy(t, ts.URL, root)
	}
	file := upload{Field: "file", Name: "a.png", CType: "image/png", Data: []byte("not an image\n")}
	for range 12 {
		submitForm(t, ts.URL, file)
	}
	var all jobs.Page
	r, err := http.Get(ts.URL + "/jobs?limit=12")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(servicetest.ReadBody(t, r), &all); err != nil || len(all.Jobs) != 12 {
		t.Fatalf("GET /jobs: %v, %d jobs", err, len(all.Jobs))
	}
	var want []string
	for _, st := range all.Jobs {
		want = append(want, "#job="+st.ID)
	}
	links := `[...document.querySelectorAll('#service-list a')].map(a => a.getAttribute('href'))`
	var first, more []string
	var moreHidden bool
	err = chromedp.Run(ctx,
		chromedp.Navigate(base+"/frontend"),
		chromedp.WaitVisible("#service-more"),
		chromedp.Evaluate(links, &first),
		chromedp.Click("#service-more"),
		chromedp.Poll(`document.querySelectorAll('#service-list a').length === 12`, nil),
		chromedp.Evaluate(links, &more),
		chromedp.Evaluate(`document.querySelector('#service-more').hidden`, &moreHidden),
	)
	if err != nil {
		t.Fatalf("%v (requests outside the proxy's path: %q)", err, stray())
	}
	if !slices.Equal(first, want[:10]) || !slices.Equal(more, want) || !moreHidden {
		t.Errorf("listed %q, then %q (more hidden: %v); want the service's order %q", first, more, moreHidden, want)
	}
	if got := stray(); len(got) > 0 {
		t.Errorf("the page asked for %q, outside the proxy's path", got)
	}
}

// TestFrontendJobFind: the web page finds the service's jobs by a file
// name (the case of its letters aside), by state and by the day they were
// sent, this browser's own among them, each entry naming its first file; a search with no match
// says so. Before, the lists showed ids and times only, with no search.
func TestFrontendJobFind(t *testing.T) {
	ctx := chromium(t)
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir()}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	page := func(name string) upload {
		return upload{Field: "file", Name: name, CType: "image/png", Data: []byte("not an image\n")}
	}
	var ids []string
	for _, names := range [][]string{{"letters-1891.png", "b.png"}, {"Kniha.png"}, {"Letters-1892.png"}} {
		var parts []upload
		for _, n := range names {
			parts = append(parts, page(n))
		}
		ids = append(ids, waitJob(t, s, ts.URL, submitForm(t, ts.URL, parts...)).ID)
	}
	entries := `[...document.querySelectorAll('#service-list li')].map(li => li.textContent)`
	// find searches by name, state and the days from days after today
	// (in the browser's time zone; any day for anyDay).
	find := func(name, state string, days int, n int, got *[]string) chromedp.Tasks {
		return chromedp.Tasks{
			chromedp.Evaluate(fmt.Sprintf(`document.querySelector('#find-name').value = %q; document.querySelector('#find-state').value = %q;
				{ const d = new Date(); d.setDate(d.getDate() + %d); const pad = (n) => String(n).padStart(2, "0");
				  document.querySelector('#find-from').value = %d === 99 ? "" : d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()); }`,
				name, state, days, days), nil),
			chromedp.Click("#job-find button", chromedp.ByQuery),
			chromedp.Poll(fmt.Sprintf(`document.querySelectorAll('#service-list li').length === %d && (%d > 0 || !document.querySelector('#service-none').hidden)`, n, n), nil),
			chromedp.Evaluate(entries, got),
		}
	}
	const anyDay = 99
	var letters, failed, today, tomorrow, none []string
	var noneSays string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#job-find"),
		find("LETTERS", "", anyDay, 2, &letters),
		find("", "failed", anyDay, 3, &failed),
		find("", "", -1, 3, &today), // from yesterday: today's too, midnight or not
		find("", "", 1, 0, &tomorrow),
		find("letters", "succeeded", anyDay, 0, &none),
		chromedp.Evaluate(`document.querySelector('#service-none').textContent`, &noneSays),
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(letters) != 2 || !strings.HasPrefix(letters[0], "job "+ids[2]+":") || !strings.Contains(letters[0], "first Letters-1892.png, 1 file(s) (failed)") ||
		!strings.HasPrefix(letters[1], "job "+ids[0]+":") || !strings.Contains(letters[1], "first letters-1891.png, 2 file(s) (failed)") {
		t.Errorf("found by name: %q", letters)
	}
	if len(failed) != 3 || len(none) != 0 || noneSays != "No job on this service matches." {
		t.Errorf("found by state: %q; by name and state: %q (%q)", failed, none, noneSays)
	}
	if len(today) != 3 || len(tomorrow) != 0 {
		t.Errorf("sent from yesterday: %q; from tomorrow: %q", today, tomorrow)
	}
}
