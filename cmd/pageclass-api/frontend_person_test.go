package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"archivekit/internal/pageclass/classify/classifytest"
)

// TestFrontendToken: a service started with API_TOKEN (and jobs) asks
// nothing when the page loads (the legend says a token is needed); the
// first Classify of two files asks for it once, in a dialog whose field
// hides what is typed (window.prompt showed it, and asked once per file);
// a token not accepted is said to be so, in words, and asked for again at
// the next Classify; once one is accepted the batch goes as one job (the
// first batch after the token went file by file) and the model list and
// the legend are filled (they stayed empty until a reload).
func TestFrontendToken(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "API_TOKEN": "s3cret", "JOBS_DIR": t.TempDir()}, nil)
	imgs := classifytest.Pages(t, 1)[6:8]
	// asked lists the questions of the token dialogs opened, in order.
	const countAsks = `window.asked = []; {
		const show = HTMLDialogElement.prototype.showModal;
		HTMLDialogElement.prototype.showModal = function () { asked.push(document.getElementById("token-message").textContent); return show.call(this); };
	}`
	answer := func(token string) chromedp.Action {
		return chromedp.Tasks{
			chromedp.WaitVisible("#token-dialog[open] #token-input", chromedp.ByQuery),
			chromedp.SetValue("#token-input", token, chromedp.ByID),
			chromedp.Click("#token-send", chromedp.ByID),
		}
	}
	var note, refused, inputType string
	var asked []string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.WaitVisible("#legend-note"),
		chromedp.Text("#legend-note", &note),
		chromedp.Evaluate(countAsks, nil),
		chromedp.Evaluate(`document.getElementById("token-dialog") === null ? [] : ["a dialog at load"]`, &asked),
		chromedp.SetUploadFiles("#file", imgs),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#token-dialog[open] #token-input", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("token-input").type`, &inputType),
		answer("wrong"),
		chromedp.WaitVisible("#error"),
		chromedp.Text("#error", &refused),
		chromedp.Evaluate(`asked`, &asked),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "needs an access token") {
		t.Errorf("at load: legend note %q", note)
	}
	if len(asked) != 1 || inputType != "password" {
		t.Errorf("a Classify of two files with a wrong token asked %d times (%q), in a field of type %q; want once, hidden", len(asked), asked, inputType)
	}
	if !strings.Contains(refused, "none was accepted") || strings.Contains(refused, "API_TOKEN") {
		t.Errorf("a refused token shows %q", refused)
	}
	var models, legendRows int
	var hash string
	err = chromedp.Run(ctx,
		chromedp.Click("#submit"),
		answer("s3cret"),
		chromedp.WaitVisible(".page .pred"),
		chromedp.WaitReady(`#version option[value="v5.4"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#version option').length`, &models),
		chromedp.Evaluate(`document.querySelector('#legend-table').tBodies[0].rows.length`, &legendRows),
		chromedp.Evaluate(`location.hash`, &hash),
		chromedp.Evaluate(`asked`, &asked),
	)
	if err != nil {
		t.Fatal(err)
	}
	// The second says the first token was not accepted (it asked as if
	// none had been given).
	if len(asked) != 2 || !strings.Contains(asked[0], "needs an access token") || !strings.Contains(asked[1], "was not accepted") {
		t.Errorf("prompts %q, want two asking for the token, the second saying the first was not accepted", asked)
	}
	if !strings.HasPrefix(hash, "#job=") {
		t.Errorf("the batch after the token was accepted went file by file (address %q), not as a job", hash)
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

// TestFrontendFocusAndStaleError: an error of an earlier attempt is hidden
// when the browser refuses a field (it said "Choose an image … first"
// beside the browser's own message on a Top-N of 99); after a Classify
// the focus is back on the button (it was left on the page's body) and the
// results' scrolling box is reached with the keyboard.
func TestFrontendFocusAndStaleError(t *testing.T) {
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), nil, nil)
	img := classifytest.Pages(t, 1)[7]
	var first string
	var staleHidden bool
	var focused, scrollTab, scrollRole string
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#error"),
		chromedp.Text("#error", &first),
		chromedp.SetUploadFiles("#file", []string{img}),
		chromedp.SetValue("#topn", "99", chromedp.ByID),
		chromedp.Click("#submit"),
		chromedp.Evaluate(`document.querySelector('#error').hidden`, &staleHidden),
		chromedp.SetValue("#topn", "3", chromedp.ByID),
		chromedp.Click("#submit"),
		chromedp.WaitVisible(".page .pred"),
		chromedp.Poll(`!document.querySelector('#submit').disabled`, nil),
		chromedp.Evaluate(`document.activeElement.id`, &focused),
		chromedp.Evaluate(`document.querySelector('.scroll').getAttribute('tabindex') + ''`, &scrollTab),
		chromedp.Evaluate(`document.querySelector('.scroll').getAttribute('role') + ''`, &scrollRole),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first, "Choose an image") || !staleHidden {
		t.Errorf("first error %q; hidden when the browser refused Top-N: %v", first, staleHidden)
	}
	if focused != "submit" || scrollTab != "0" || scrollRole != "region" {
		t.Errorf("after Classify the focus is on %q; the results' box has tabindex %q, role %q", focused, scrollTab, scrollRole)
	}
}
