package translator

import (
	"context"
	"os"
	"sync"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestPageDoneReachesCaller: Options.PageDone is told of every page of an
// ALTO document, with its page count (the command names the page on its
// progress line).
func TestPageDoneReachesCaller(t *testing.T) {
	src, err := os.ReadFile(testenv.Path(t, "alto/MTX201501307_anon.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	be, _ := newMT(t, translatortest.Config{})
	var mu sync.Mutex
	var calls, total, last int
	out, err := Translate(context.Background(), src, "MTX201501307_anon.alto.xml", Options{Backend: be, Source: "cs",
		PageDone: func(done, n int) {
			mu.Lock()
			defer mu.Unlock()
			calls, total, last = calls+1, n, max(last, done)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if p := out.Stats.Pages; p < 2 || calls != p || total != p || last != p {
		t.Errorf("%d pages; PageDone called %d times, told %d pages, last done %d", p, calls, total, last)
	}
}
