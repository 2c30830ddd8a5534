package main

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"archivekit/internal/book/booktest"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
)

// TestFrontendBook: a book's address typed into the page (a IIIF manifest
// of three pages, pages 1 and 3 selected) is classified by the service,
// as one job where it takes jobs and in one /predict_document request
// where it does not. Either way the table has the two pages, each with a
// category, and each card shows the page's thumbnail, sent by the service
// in its answer (a data: URL; before, a book job's cards had no preview,
// and the page took no book at all); a job opened again shows them too.
// Files and a book together are refused on the page.
func TestFrontendBook(t *testing.T) {
	ctx := chromium(t)
	bk := booktest.New(t, classifytest.Pages(t, 3), 3, true)
	host := must(url.Parse(bk.URL)).Host
	type view struct {
		status string
		table  [][]string
		thumbs []string
		hash   string
	}
	done := func(v *view) chromedp.Tasks {
		return chromedp.Tasks{
			chromedp.WaitReady("#downloads", chromedp.ByQuery), // before a Poll: see ended in frontend_skip_test.go
			chromedp.Poll(`(d => !d.hidden && !d.classList.contains('partial'))(document.querySelector('#downloads'))`, nil),
			chromedp.Text("#status", &v.status),
			chromedp.Evaluate(tableRows, &v.table),
			chromedp.Evaluate(`[...document.querySelectorAll('.page img')].map(i => i.src.slice(0, 23))`, &v.thumbs),
			chromedp.Evaluate(`location.hash`, &v.hash),
		}
	}
	check := func(t *testing.T, what string, v view) {
		t.Helper()
		if len(v.table) != 2 {
			t.Fatalf("%s: table %q, want the two pages selected", what, v.table)
		}
		for _, row := range v.table {
			if modelmeta.CategoryIndex(row[2]) < 0 {
				t.Errorf("%s: row %q has no category", what, row)
			}
		}
		if len(v.thumbs) != 2 || v.thumbs[0] != "data:image/jpeg;base64," || v.thumbs[1] != "data:image/jpeg;base64," {
			t.Errorf("%s: card images %q, want two thumbnails from the service", what, v.thumbs)
		}
	}
	// submit types the book's address and the pages into the page of the
	// service at base and sends them.
	submit := func(base string) chromedp.Tasks {
		return chromedp.Tasks{
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(base + "/frontend"),
			chromedp.WaitVisible("#form"),
			chromedp.WaitReady(`#version option[value="v5.4"]`),
			chromedp.SetValue("#book", bk.ManifestURL()),
			chromedp.SendKeys("#book", " "), // an input event: the Pages field shows
			chromedp.WaitVisible("#pages"),
			chromedp.SetValue("#pages", "1,3"),
			chromedp.Click("#submit"),
		}
	}

	t.Run("job", func(t *testing.T) {
		s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": t.TempDir(), EnvBookHosts: host}, nil)
		t.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
		var v, again view
		if err := chromedp.Run(ctx, submit(ts.URL), done(&v)); err != nil {
			t.Fatal(err)
		}
		check(t, "job", v)
		if !strings.HasPrefix(v.hash, "#job=") || !strings.Contains(v.status, "Job ") {
			t.Errorf("address %q, status %q: want the book sent as a job", v.hash, v.status)
		}
		if err := chromedp.Run(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(ts.URL+"/frontend"+v.hash), done(&again)); err != nil {
			t.Fatal(err)
		}
		check(t, "job opened again", again)
	})
	t.Run("no jobs", func(t *testing.T) {
		_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", EnvBookHosts: host}, nil)
		var v view
		if err := chromedp.Run(ctx, submit(ts.URL), done(&v)); err != nil {
			t.Fatal(err)
		}
		check(t, "one request", v)
		if v.hash != "" || !strings.Contains(v.status, "manifest.json: 2 of 3 page(s)") {
			t.Errorf("address %q, status %q: want one request over the book's 2 of 3 pages", v.hash, v.status)
		}
		var errText string
		if err := chromedp.Run(ctx,
			chromedp.SetUploadFiles("#file", []string{classifytest.Pages(t, 1)[0]}),
			chromedp.Click("#submit"),
			chromedp.WaitVisible("#error"),
			chromedp.Text("#error", &errText),
		); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(errText, "not both") {
			t.Errorf("files and a book: error %q", errText)
		}
	})
}
