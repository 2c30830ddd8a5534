package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestFrontend: a person opens translate-api's /frontend in a browser,
// uploads an ALTO page and reads back the counts, the translated text
// beside the source and a download of the translated document under the
// service's name for it; a file that is not XML fails in words saying so.
// (Before, the service had no page: / was JSON and /docs an API form.)
func TestFrontend(t *testing.T) {
	ctx := testenv.Chromium(t, 60*time.Second)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"MAX_UPLOAD_MB": "7"}))
	dir := t.TempDir()
	page := filepath.Join(dir, "page.alto.xml")
	notes := filepath.Join(dir, "notes.xml")
	if err := os.WriteFile(page, []byte(pageALTO), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte("Kronika obce, opis z roku 1920.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var intro, title, summary, name, document, status, focused string
	var units [][]string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.Poll(`document.querySelector('#max-mb').textContent === "7"`, nil),
		chromedp.Text("header p", &intro),
		chromedp.SetUploadFiles("#file", []string{page}),
		chromedp.SetValue("#source", "cs"),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#result"),
		chromedp.Text("#result-title", &title),
		chromedp.Text("#summary", &summary),
		chromedp.Text("#status", &status),
		chromedp.Evaluate(`document.activeElement.id`, &focused),
		chromedp.Evaluate(`[...document.querySelectorAll('#units tbody tr')].map(tr => [...tr.cells].map(c => c.textContent))`, &units),
		chromedp.Evaluate(`document.querySelector('#download').download`, &name),
		chromedp.Evaluate(`fetch(document.querySelector('#download').href).then(r => r.text())`, &document, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(intro, "files of at most 7 MB") {
		t.Errorf("introduction %q does not give the limit from /info", intro)
	}
	if title != "page_en.alto.xml" || name != "page_en.alto.xml" || !strings.Contains(summary, "cs → en") || !strings.Contains(summary, "1 translated") {
		t.Errorf("title %q, download name %q, summary %q", title, name, summary)
	}
	// Said to a screen reader by the status line, the focus on the result
	// (the status was emptied and the focus left on the page's body).
	if !strings.HasPrefix(status, "Translated page_en.alto.xml: ") || focused != "result-title" {
		t.Errorf("after the translation: status %q, focus on %q", status, focused)
	}
	if len(units) != 1 || units[0][2] != "archeologický výzkum" || !strings.Contains(units[0][3], "archaeological") {
		t.Errorf("units shown %q", units)
	}
	if !strings.Contains(document, `CONTENT="archaeological"`) || !strings.Contains(document, `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#">`) {
		t.Errorf("downloaded document:\n%.400s", document)
	}

	var shown string
	var resultHidden bool
	err = chromedp.Run(ctx,
		chromedp.SetUploadFiles("#file", []string{notes}),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#error"),
		chromedp.Text("#error", &shown),
		chromedp.Evaluate(`document.querySelector('#result').hidden`, &resultHidden),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, "notes.xml: Error 500: this is not a well-formed XML document, so nothing was translated") || !resultHidden {
		t.Errorf("a file that is not XML shows %q (result hidden: %v)", shown, resultHidden)
	}

	// The service gone: said in words (the browser's "Failed to fetch"),
	// the focus back on the button.
	ts.Close()
	err = chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelector('#error').hidden = true`, nil),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#error"),
		chromedp.Text("#error", &shown),
		chromedp.Evaluate(`document.activeElement.id`, &focused),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown, "notes.xml: the service cannot be reached") || focused != "submit" {
		t.Errorf("with the service gone the page shows %q, focus on %q", shown, focused)
	}
}

// TestDocsPage: the /docs page's forms name each field for a screen reader
// (a label tied to it), show the descriptions' `code` as code, and offer
// the whole answer of a request as a download under the service's name for
// it (before, a translated document was only shown, 1.4 MB of text in a
// box).
func TestDocsPage(t *testing.T) {
	ctx := testenv.Chromium(t, 60*time.Second)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	page := filepath.Join(t.TempDir(), "page.alto.xml")
	if err := os.WriteFile(page, []byte(pageALTO), 0o644); err != nil {
		t.Fatal(err)
	}
	var unlabelled, codes int
	var saved, name string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/docs"),
		chromedp.WaitReady(`#translate form.try`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('form.try input, form.try textarea')].filter(i => !i.id || !document.querySelector('label[for="' + i.id + '"]')).length`, &unlabelled),
		chromedp.Evaluate(`document.querySelectorAll('#description code').length`, &codes),
		chromedp.Evaluate(`document.getElementById('translate').open = true`, nil),
		chromedp.SetUploadFiles(`#translate form.try input[type=file][name=file]`, []string{page}, chromedp.ByQuery),
		chromedp.SetValue(`#translate form.try input[name=source_lang]`, "cs", chromedp.ByQuery),
		chromedp.Click(`#translate form.try button`, chromedp.ByQuery),
		chromedp.WaitVisible(`#translate a.saved`, chromedp.ByQuery),
		chromedp.Text(`#translate a.saved`, &saved, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('#translate a.saved').download`, &name),
	)
	if err != nil {
		t.Fatal(err)
	}
	if unlabelled != 0 || codes == 0 {
		t.Errorf("%d form fields without a label; %d code spans in the description", unlabelled, codes)
	}
	if name != "page_en.alto.xml" || !strings.Contains(saved, "Download the answer") {
		var shown string
		_ = chromedp.Run(ctx, chromedp.Text(`#translate pre.result`, &shown, chromedp.ByQuery))
		t.Errorf("download %q named %q; the page shows %.300s", saved, name, shown)
	}
}

// TestDocsPagePhone: on a phone's width (360 px) the /docs page with every
// route opened does not scroll sideways (it was 405 px wide: long paths
// and descriptions ran out of their cards), and neither does /frontend.
func TestDocsPagePhone(t *testing.T) {
	ctx := testenv.Chromium(t, 60*time.Second)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	for _, path := range []string{"/docs", "/frontend"} {
		var width, inner float64
		err := chromedp.Run(ctx,
			chromedp.EmulateViewport(360, 740),
			chromedp.Navigate(ts.URL+path),
			chromedp.WaitVisible("h1"),
			chromedp.Poll(`document.querySelectorAll('details.op').length > 0 || !location.pathname.startsWith('/docs')`, nil),
			chromedp.Evaluate(`document.querySelectorAll('details').forEach(d => d.open = true)`, nil),
			chromedp.Evaluate(`document.documentElement.scrollWidth`, &width),
			chromedp.Evaluate(`window.innerWidth`, &inner),
		)
		if err != nil {
			t.Fatal(err)
		}
		if width > inner {
			t.Errorf("%s on a %v px screen is %v px wide", path, inner, width)
		}
	}
}

// TestFrontendStop: while a document is translated the page shows the
// time so far beside its status line and a Stop button; Stop ends the
// wait, says the document was not translated (no error), and the focus
// is back on Translate. A long document showed one unchanging line for
// minutes, with no way to give up but leaving the page.
func TestFrontendStop(t *testing.T) {
	ctx := testenv.Chromium(t, 60*time.Second)
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	mt := translatortest.New(translatortest.Config{Hold: func(string) { <-release }})
	defer mt.Close()
	defer free()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	page := filepath.Join(t.TempDir(), "page.alto.xml")
	if err := os.WriteFile(page, []byte(pageALTO), 0o644); err != nil {
		t.Fatal(err)
	}
	var elapsed, status, focused string
	var errorHidden, stopHidden bool
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.SetUploadFiles("#file", []string{page}),
		chromedp.SetValue("#source", "cs"),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#stop"),
		chromedp.Poll(`document.querySelector('#elapsed').textContent.endsWith(" s so far")`, nil),
		chromedp.Text("#elapsed", &elapsed),
		chromedp.Click("#stop"),
		chromedp.Poll(`document.querySelector('#status').textContent.startsWith("Stopped")`, nil),
		chromedp.Text("#status", &status),
		chromedp.Evaluate(`document.querySelector('#error').hidden`, &errorHidden),
		chromedp.Evaluate(`document.querySelector('#stop').hidden`, &stopHidden),
		chromedp.Evaluate(`document.activeElement.id`, &focused),
	)
	if err != nil {
		t.Fatal(err)
	}
	if status != "Stopped: page.alto.xml was not translated." || !errorHidden || !stopHidden || focused != "submit" {
		t.Errorf("after Stop: status %q, error hidden %v, Stop hidden %v, focus on %q (time shown %q)", status, errorHidden, stopHidden, focused, elapsed)
	}
}

// TestFrontendBehindProxyPath: the page translates a document published
// under a reverse proxy's path, its prefix stripped (its files and calls
// went to the host's root, outside the path, and it showed nothing).
func TestFrontendBehindProxyPath(t *testing.T) {
	ctx := testenv.Chromium(t, 60*time.Second)
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"MAX_UPLOAD_MB": "7"}))
	base, stray := servicetest.BehindProxy(t, ts.URL, "/translate")
	page := filepath.Join(t.TempDir(), "page.alto.xml")
	if err := os.WriteFile(page, []byte(pageALTO), 0o644); err != nil {
		t.Fatal(err)
	}
	var title, docsLink string
	err := chromedp.Run(ctx,
		chromedp.Navigate(base+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.Poll(`document.querySelector('#max-mb').textContent === "7"`, nil), // /info answered
		chromedp.SetUploadFiles("#file", []string{page}),
		chromedp.SetValue("#source", "cs"),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#result"),
		chromedp.Text("#result-title", &title),
		chromedp.Evaluate(`document.querySelector('header a').href`, &docsLink),
	)
	if err != nil {
		t.Fatalf("%v (requests outside the proxy's path: %q)", err, stray())
	}
	if title != "page_en.alto.xml" || docsLink != base+"/docs" {
		t.Errorf("result %q, the API's link %q; want page_en.alto.xml and %s/docs", title, docsLink, base)
	}
	if got := stray(); len(got) > 0 {
		t.Errorf("the page asked for %q, outside the proxy's path", got)
	}
}
