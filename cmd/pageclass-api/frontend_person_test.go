package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"archivekit/internal/pageclass/classify/classifytest"
)

// TestFrontendToken: a service started with API_TOKEN asks nothing when the
// page loads (the legend says a token is needed); the first Classify asks for
// it; a token not accepted is said to be so, in words, and asked for again
// at the next Classify; once one is accepted the page is answered and the
// model list and the legend are filled (they stayed empty until a reload).
func TestFrontendToken(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "API_TOKEN": "s3cret"}, nil)
	img := classifytest.Pages(t, 1)[7]

	var mu sync.Mutex
	var asked []string                     // the prompts' messages, in order
	answers := []string{"wrong", "s3cret"} // what the person types
	chromedp.ListenTarget(ctx, func(ev any) {
		e, ok := ev.(*page.EventJavascriptDialogOpening)
		if !ok {
			return
		}
		mu.Lock()
		asked = append(asked, e.Message)
		answer := ""
		if len(answers) > 0 {
			answer, answers = answers[0], answers[1:]
		}
		mu.Unlock()
		go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(true).WithPromptText(answer)) }()
	})
	var note, refused string
	var promptsAtLoad int
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.WaitVisible("#legend-note"),
		chromedp.Text("#legend-note", &note),
		chromedp.ActionFunc(func(context.Context) error {
			mu.Lock()
			promptsAtLoad = len(asked)
			mu.Unlock()
			return nil
		}),
		chromedp.SetUploadFiles("#file", []string{img}),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#error"),
		chromedp.Text("#error", &refused),
	)
	if err != nil {
		t.Fatal(err)
	}
	if promptsAtLoad != 0 || !strings.Contains(note, "needs an access token") {
		t.Errorf("at load: %d prompts, legend note %q", promptsAtLoad, note)
	}
	if !strings.Contains(refused, "none was accepted") || strings.Contains(refused, "API_TOKEN") {
		t.Errorf("a refused token shows %q", refused)
	}
	var models, legendRows int
	err = chromedp.Run(ctx,
		chromedp.Click("#submit"),
		chromedp.WaitVisible(".page .pred"),
		chromedp.WaitReady(`#version option[value="v5.4"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#version option').length`, &models),
		chromedp.Evaluate(`document.querySelector('#legend-table').tBodies[0].rows.length`, &legendRows),
	)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.Contains(asked[0], "needs an access token") || !strings.Contains(asked[1], "needs an access token") {
		t.Errorf("prompts %q, want two asking for the token", asked)
	}
	if models != 6 || legendRows != 11 {
		t.Errorf("after the token: %d models in the list (want all and five), %d categories in the legend", models, legendRows)
	}
}

// TestFrontendPhone: on a phone's width (375 px) the page with a result does
// not scroll sideways (the table scrolls in its own box) and the card's
// scores are on the screen; before, the table made the page 449 px wide
// and cut off the Review column and the scores.
func TestFrontendPhone(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), nil, nil)
	img := classifytest.Pages(t, 1)[7]
	var pageWidth, scoreRight, inner float64
	err := chromedp.Run(ctx,
		chromedp.EmulateViewport(375, 700),
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.SetUploadFiles("#file", []string{img}),
		chromedp.Click("#submit"),
		chromedp.WaitVisible(".page .pred"),
		chromedp.WaitVisible("#batch"),
		chromedp.Evaluate(`document.documentElement.scrollWidth`, &pageWidth),
		chromedp.Evaluate(`Math.max(...[...document.querySelectorAll('.page .score')].map(e => e.getBoundingClientRect().right))`, &scoreRight),
		chromedp.Evaluate(`window.innerWidth`, &inner),
	)
	if err != nil {
		t.Fatal(err)
	}
	if pageWidth > inner || scoreRight > inner {
		t.Errorf("on a %v px screen the page is %v px wide, the scores end at %v px", inner, pageWidth, scoreRight)
	}
}

// TestFrontendKeyboardRows: a page's row of the table is reached with the
// keyboard, and Enter shows its card (before, rows took clicks only).
func TestFrontendKeyboardRows(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), nil, nil)
	pages := classifytest.Pages(t, 2)
	var tab int
	var selected string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.SetUploadFiles("#file", []string{pages[0], pages[1]}),
		chromedp.Click("#submit"),
		chromedp.WaitVisible(`#table tbody tr[data-card="1"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#downloads"),
		chromedp.Evaluate(`document.querySelector('#table tbody tr[data-card="1"]').tabIndex`, &tab),
		chromedp.Focus(`#table tbody tr[data-card="1"]`, chromedp.ByQuery),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(`.page.selected`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('.page.selected').dataset.card`, &selected),
	)
	if err != nil {
		t.Fatal(err)
	}
	if tab != 0 || selected != "1" {
		t.Errorf("row tabIndex %d, card selected by Enter %q; want 0 and 1", tab, selected)
	}
}

// TestFrontendTooLarge: the page says how large a file the service takes
// (from /info), and a file over it fails in those words, not with the
// service's variable name.
func TestFrontendTooLarge(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "MAX_UPLOAD_MB": "1"}, nil)
	big := filepath.Join(t.TempDir(), "big.png")
	if err := os.WriteFile(big, append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 2<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	var intro, shown string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitReady(`#version option[value="v5.4"]`, chromedp.ByQuery),
		chromedp.Text("header p", &intro),
		chromedp.SetUploadFiles("#file", []string{big}),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#error"),
		chromedp.Text("#error", &shown),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(intro, "files of at most 1 MB") {
		t.Errorf("introduction %q does not give the limit", intro)
	}
	if !strings.Contains(shown, "larger than this service takes (1 MB a file)") || strings.Contains(shown, "MAX_UPLOAD_MB") {
		t.Errorf("error shown %q", shown)
	}
}

// TestFrontendStop: Stop, pressed while the page sends its files one by one
// (a service without jobs), lets the file in progress end and sends no
// more: the others are listed as skipped, and the batch's downloads hold
// what was classified (before, there was no way to stop but to leave the
// page, losing every result).
func TestFrontendStop(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), nil, nil)
	pages := classifytest.Pages(t, 1)[:5]
	var status string
	var skipped, classified int
	var stopHidden bool
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitReady(`#version option[value="v5.4"]`, chromedp.ByQuery),
		// Each request takes 400 ms more, so that Stop comes while the
		// first files are being classified.
		chromedp.Evaluate(`(() => { const f = window.fetch; window.fetch = (u, o) => new Promise((r) => setTimeout(r, 400)).then(() => f(u, o)); })()`, nil),
		chromedp.SetUploadFiles("#file", pages),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#stop"),
		chromedp.Click("#stop"),
		chromedp.Poll(`document.querySelector('#status').textContent.startsWith("5 files:")`, nil),
		chromedp.Text("#status", &status),
		chromedp.Evaluate(`[...document.querySelectorAll('#table tbody tr')].filter(tr => tr.textContent.includes("Skipped: stopped before it was sent")).length`, &skipped),
		chromedp.Evaluate(`document.querySelectorAll('#table tbody tr[data-card]').length`, &classified),
		chromedp.Evaluate(`document.querySelector('#stop').hidden`, &stopHidden),
	)
	if err != nil {
		t.Fatal(err)
	}
	if skipped < 3 || classified+skipped != 5 || !stopHidden || !strings.Contains(status, "skipped") {
		t.Errorf("after Stop: %d classified, %d skipped, Stop hidden %v, status %q", classified, skipped, stopHidden, status)
	}
}

// TestFrontendCSVFormulas: the page's CSV download writes a cell that a
// spreadsheet would run as a formula (a file named "=1+2.png") with a
// leading apostrophe; other cells as they are.
func TestFrontendCSVFormulas(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), nil, nil)
	var got []string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.Evaluate(`["=1+2.png", "+x", "-1", "@SUM(A1)", "scan 1.png", "a,b"].map(csvCell)`, &got),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"'=1+2.png", "'+x", "'-1", "'@SUM(A1)", "scan 1.png", `"a,b"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("cells %q, want %q", got, want)
	}
}
