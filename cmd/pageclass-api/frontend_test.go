package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/testenv"
)

// TestFrontendInChromium uploads a sample page through /frontend in headless
// Chromium, waits for the Top-N, checks the bars and the thumbnail, then a
// validation error, and keeps a screenshot under test/artifacts/.
func TestFrontendInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a browser")
	}
	ctx := chromium(t)
	_, ts := startServer(t, testOptions(t), nil, nil)
	page := classifytest.Pages(t, 1)[7]

	var labels []string
	var barWidth, thumb, status, flag, reviewText string
	var shot []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.WaitReady(`#version option[value="v5.4"]`),
		chromedp.SetUploadFiles("#file", []string{page}),
		chromedp.SetValue("#topn", "5"),
		chromedp.Click("#submit"),
		chromedp.WaitVisible(".page .pred"),
		chromedp.Evaluate(`[...document.querySelectorAll('.pred .label')].map(e => e.textContent)`, &labels),
		chromedp.Evaluate(`document.querySelector('.bar span').style.width`, &barWidth),
		chromedp.Evaluate(`document.querySelector('.page img').src`, &thumb),
		chromedp.Text("#status", &status),
		chromedp.Text(".review .flag", &flag),
		chromedp.Text(".review", &reviewText),
		chromedp.FullScreenshot(&shot, 100), // 100: PNG,
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 5 || !strings.HasSuffix(barWidth, "%") || !strings.HasPrefix(thumb, "blob:") || !strings.Contains(status, "ensemble") {
		t.Fatalf("labels %v, bar %q, thumbnail %q, status %q", labels, barWidth, thumb, status)
	}
	// the page's review, in words: the fixture models have no calibration;
	// no margin, entropy or digest is shown, nor a page condition that did
	// not fire
	if !strings.Contains(flag, "no calibration") {
		t.Fatalf("review shown: %q", flag)
	}
	for _, w := range []string{"margin", "entropy", "sha256", "agreement", "turn", "rotate", "ink"} {
		if strings.Contains(strings.ToLower(reviewText), w) {
			t.Errorf("review shows %q: %q", w, reviewText)
		}
	}
	saveShot(t, "frontend-predict-image.png", shot)

	// A validation error shows the API's detail.
	var errText string
	err = chromedp.Run(ctx,
		chromedp.SetValue("#topn", "12"),
		chromedp.SetAttributeValue("#topn", "max", "20"),
		chromedp.Click("#submit"),
		chromedp.WaitVisible("#error"),
		chromedp.Text("#error", &errText),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errText, "422") || !strings.Contains(errText, "topn") || !strings.Contains(errText, "less than or equal to 11") {
		t.Fatalf("error shown: %q", errText)
	}
}

// chromium starts headless Chromium for the test (skipped under -short or
// without Chromium); it is stopped when the test ends, and the context
// ends after 60 s.
func chromium(t *testing.T) context.Context {
	t.Helper()
	return testenv.Chromium(t, 60*time.Second)
}

// TestFrontendDemoNotice: when the demo models answer, the page says so
// with their names; with the given models it says nothing of the kind.
func TestFrontendDemoNotice(t *testing.T) {
	page := classifytest.Pages(t, 1)[7]
	for _, demo := range []bool{true, false} {
		t.Run(fmt.Sprintf("demo=%v", demo), func(t *testing.T) { demoNotice(t, page, demo) })
	}
}

// demoNotice uploads a page through /frontend and checks the demo notice.
func demoNotice(t *testing.T, page string, demo bool) {
	ctx := chromium(t)
	o := testOptions(t)
	if demo {
		o.Demo, o.Models = o.Models, ""
	}
	_, ts := startServer(t, o, nil, nil)
	var notice string
	var hidden bool
	err := chromedp.Run(ctx,
		chromedp.Navigate(ts.URL+"/frontend"),
		chromedp.WaitVisible("#form"),
		chromedp.SetUploadFiles("#file", []string{page}),
		chromedp.Click("#submit"),
		chromedp.WaitVisible(".page .pred"),
		chromedp.Evaluate(`document.querySelector('#demo').hidden`, &hidden),
		chromedp.TextContent("#demo", &notice),
	)
	if err != nil {
		t.Fatal(err)
	}
	if demo && (hidden || !strings.Contains(notice, "Demo models answered (v1.4, v2.4, v3.4, v4.4, v5.4)")) {
		t.Errorf("demo answer: notice hidden %v, %q", hidden, notice)
	}
	if !demo && !hidden {
		t.Errorf("answer of the given models shows a demo notice: %q", notice)
	}
}
