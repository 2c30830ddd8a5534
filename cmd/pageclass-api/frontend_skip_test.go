package main

import (
	"context"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"archivekit/internal/book/booktest"
	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
)

// TestFrontendJobSkipped: a book job's page without an image (a canvas
// with no image body) ends skipped, not failed: the job succeeds, counts
// it skipped and says why, and its image server is never asked for it.
// The page, opened while the job runs (its first page's image held back),
// shows the skipped page as it ends as a row that says "Skipped:" and why,
// not as a failure (no error shown, no failed row), its status line
// counting it skipped; opened again once the job has ended, it shows the
// same.
func TestFrontendJobSkipped(t *testing.T) {
	ctx := chromium(t)
	bk := booktest.New(t, classifytest.Pages(t, 1), 3, true)
	bk.NoImage(1)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the book's server closes
	bk.SetHold(func() func() {
		<-release
		return func() {}
	})
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), EnvBookHosts: must(url.Parse(bk.URL)).Host}, nil)
	t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
	held := submitForm(t, ts.URL, upload{Field: "book", Data: []byte(bk.ManifestURL())})

	// view is what the page shows of a job once it has ended.
	type view struct {
		status, errorText string
		errorShown        bool
		table             [][]string
		classes           []string
	}
	ended := func(v *view) chromedp.Tasks {
		return chromedp.Tasks{
			// A query first: it waits for the page's document, where a
			// Poll right after a navigation could run in the execution
			// context of the page navigated from ("Cannot find context
			// with specified id", seen once under load).
			chromedp.WaitReady("#downloads", chromedp.ByQuery),
			// (WaitVisible would take the downloads, hidden and not yet
			// partial, as they are when the job's first page ends.)
			chromedp.Poll(`(d => !d.hidden && !d.classList.contains('partial'))(document.querySelector('#downloads'))`, nil),
			chromedp.Text("#status", &v.status),
			chromedp.Evaluate(`!document.querySelector('#error').hidden`, &v.errorShown),
			chromedp.Evaluate(`document.querySelector('#error').textContent`, &v.errorText),
			chromedp.Evaluate(tableRows, &v.table),
			chromedp.Evaluate(`[...document.querySelectorAll('#table tbody tr')].map(tr => tr.className)`, &v.classes),
		}
	}
	var running string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend#job="+held.ID),
		chromedp.WaitReady("#status", chromedp.ByQuery), // before a Poll: see ended in frontend_skip_test.go
		chromedp.Poll(`document.querySelector('#status').textContent.includes('running: 1 of 3 file(s) done, 1 skipped')`, nil),
		chromedp.Text("#status", &running),
	)
	if err != nil {
		t.Fatal(err)
	}
	free()
	var got, again view
	if err := chromedp.Run(ctx, ended(&got)); err != nil {
		t.Fatal(err)
	}
	st := waitJob(t, s, ts.URL, held)
	if err := chromedp.Run(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/frontend#job="+held.ID), ended(&again)); err != nil {
		t.Fatal(err)
	}

	if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: 3, Succeeded: 2, Skipped: 1}) || len(st.Errors) != 0 || len(st.Skipped) != 1 ||
		st.Skipped[0].Item != 1 || st.Skipped[0].Reason != "no image file for this page" || st.Skipped[0].Book == nil ||
		st.Skipped[0].Book.ID != bk.URL+"/iiif/book/canvas/p2" {
		t.Errorf("job %+v", st)
	}
	for p, n := range bk.Requests() {
		if strings.Contains(p, "/iiif/img/1/") {
			t.Errorf("the page without an image: %s requested %d times", p, n)
		}
	}
	want := []string{"page-0002", "", "", "", "", "Skipped: no image file for this page"}
	if len(got.table) != 3 || !reflect.DeepEqual(got.table[1], want) || got.classes[1] != "skipped" ||
		modelmeta.CategoryIndex(got.table[0][2]) < 0 || modelmeta.CategoryIndex(got.table[2][2]) < 0 {
		t.Errorf("table %q (classes %q), want the pages classified and the second row %q, classed skipped", got.table, got.classes, want)
	}
	if got.errorShown || !strings.Contains(got.status, "0 file(s) failed, 1 skipped") {
		t.Errorf("status %q, error shown %v (%q): want no failure and one page skipped", got.status, got.errorShown, got.errorText)
	}
	if !reflect.DeepEqual(got, again) {
		t.Errorf("the job shown as its items ended:\n%+v\nthe same job reopened once ended:\n%+v", got, again)
	}
}
