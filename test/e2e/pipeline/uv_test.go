package pipeline

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"archivekit/internal/book/booktest"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestBookOutUV opens the derived manifest that translate --book-out and
// pageclass --book-out publish (a three-page book, translated, then
// classified from the translation's manifest) in the Universal Viewer
// (the release pinned in test/mirador.txt), in headless Chromium, as a
// publisher embeds it (uv.html#?manifest=URL), Presentation 3 and 2: the
// viewer reads the manifest, shows the book's label and its three canvases
// by their labels, and draws the first canvas's image (requested from the
// book's image service and answered). The viewer shows no annotations of
// these motivations, so they are not looked for here (TestBookOutMirador
// checks them in Mirador).
func TestBookOutUV(t *testing.T) {
	uv := viewerPins(t, repoRoot(t), "universalviewer", "the Universal Viewer")[0]
	version, dist := uv.version, filepath.Join(uv.dir, "dist")
	root, bin := buildTools(t)
	czech, err := os.ReadFile(testenv.Path(t, "alto/MTX201501307_anon.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	czech = firstALTOPage(t, czech)
	api := translatortest.New(translatortest.Config{Pairs: []string{"cs-en", "sk-en", "pl-en", "de-en"}})
	defer api.Close()
	ctx := testenv.Chromium(t, 3*time.Minute)
	for _, v3 := range []bool{true, false} {
		name := map[bool]string{true: "Presentation 3", false: "Presentation 2"}[v3]
		t.Run(name, func(t *testing.T) {
			s := booktest.New(t, classifytest.Pages(t, 1)[:3], 3, v3)
			s.Levels = []int{0, 0, 0} // drawn from their listed sizes
			s.SetText(0, czech, "application/alto+xml", "http://www.loc.gov/standards/alto/ns-v3#")
			work := t.TempDir()
			mux := http.NewServeMux()
			mux.Handle("/t/", http.FileServer(http.Dir(work)))
			mux.Handle("/c/", http.FileServer(http.Dir(work)))
			mux.Handle("/uv/", http.StripPrefix("/uv/", http.FileServer(http.Dir(dist))))
			pub := httptest.NewServer(mux)
			defer pub.Close()
			derived := chainBookOut(t, root, bin, api.URL, "auto", s, work, pub.URL+"/t/", pub.URL+"/c/")
			manifestURL := pub.URL + "/c/" + filepath.Base(derived)
			s.Reset()
			// answered is told of each image request once it is answered.
			answered := make(chan struct{}, 64)
			s.SetHold(func() func() {
				return func() {
					select {
					case answered <- struct{}{}:
					default:
					}
				}
			})
			defer s.SetHold(nil)
			start := time.Now()
			var text string
			shows := `(() => { const t = document.body.innerText; return t.includes("A test book") && ["f. 1", "f. 2", "f. 3"].every(l => t.includes(l)); })()`
			err := chromedp.Run(ctx,
				chromedp.Navigate(pub.URL+"/uv/uv.html#?manifest="+manifestURL),
				chromedp.WaitReady("#uv", chromedp.ByQuery),
				chromedp.Poll(shows, nil, chromedp.WithPollingTimeout(90*time.Second)),
				chromedp.Evaluate(`document.body.innerText`, &text),
			)
			if err != nil {
				t.Fatalf("the Universal Viewer %s did not show the book's label and its three canvases: %v", version, err)
			}
			// The first canvas is drawn once its image was requested and
			// answered.
			timeout := time.After(60 * time.Second) // a failure's bound, not a synchronisation
			for _, _, sizes, _ := s.Served(); sizes[0] == ""; _, _, sizes, _ = s.Served() {
				select {
				case <-answered:
				case <-timeout:
					log, denied, _, _ := s.Served()
					t.Fatalf("the Universal Viewer %s never drew the first canvas's image (requests %v, refused %v)", version, log, denied)
				}
			}
			_, denied, sizes, _ := s.Served()
			t.Logf("the Universal Viewer %s, %s: %q; first image at %s (%.1f s); refused by the level 0 stand-in: %v",
				version, name, strings.Join(strings.Fields(text), " "), sizes[0], time.Since(start).Seconds(), denied)
		})
	}
}
