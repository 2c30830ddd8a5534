package testenv

import (
	"context"
	"log"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"
)

// Chromium starts headless Chromium (/usr/bin/chromium, else chromium on
// the PATH) for a test driving a browser, with a throwaway profile and a
// 1280×900 window; the test is skipped under -short or without Chromium
// (make test installs it). The browser stops when the test ends, and the
// context ends after limit. Whatever a page's Content-Security-Policy
// refuses in the meantime fails the test.
func Chromium(t testing.TB, limit time.Duration) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("drives a browser")
	}
	browser := "/usr/bin/chromium"
	if _, err := os.Stat(browser); err != nil {
		if browser, err = exec.LookPath("chromium"); err != nil {
			t.Skip("Chromium is not installed (make test installs it): this test drives a browser")
		}
	}
	profile, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.NoFirstRun, chromedp.Flag("disable-sync", true), chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// Debian 12's Chromium sends network events newer than the cdproto
	// chromedp pins, and DOM events of a dialog's top layer that chromedp
	// does not follow: chromedp would log each as an error, and no test
	// reads them.
	quiet := chromedp.WithErrorf(func(format string, args ...any) {
		if !strings.HasPrefix(format, "could not unmarshal event") && !strings.HasPrefix(format, "unhandled node event") {
			log.Printf(format, args...)
		}
	})
	ctx, cancelCtx := chromedp.NewContext(actx, quiet)
	ctx, cancelTime := context.WithTimeout(ctx, limit)
	// What a page's Content-Security-Policy refused (an inline style, a
	// script or image from elsewhere) fails the test: the page would not
	// work as the test saw it only by luck.
	var mu sync.Mutex
	var refused []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*cdplog.EventEntryAdded); ok && e.Entry.Source == cdplog.SourceSecurity && strings.Contains(e.Entry.Text, "Content Security Policy") {
			mu.Lock()
			refused = append(refused, e.Entry.URL+": "+e.Entry.Text)
			mu.Unlock()
		}
	})
	if err := chromedp.Run(ctx, cdplog.Enable()); err != nil {
		t.Fatalf("Chromium: %v", err)
	}
	t.Cleanup(func() {
		mu.Lock()
		for _, r := range refused {
			t.Errorf("the page's Content-Security-Policy refused: %s", r)
		}
		mu.Unlock()
		cancelTime()
		cancelCtx()
		cancelAlloc() // waits for the browser process to end
		// Chromium's helpers may still write its profile for a moment.
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	return ctx
}
