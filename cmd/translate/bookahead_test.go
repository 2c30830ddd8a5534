package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestBookTextsFetchedAhead: the text files of a remote IIIF manifest
// (which reading the book does not fetch) are fetched --fetch-workers at
// once ahead of their turn (4 by default; the server holds each until
// that many are in flight, 5 s at most), each once, and every page is
// translated. Before, they were fetched one after another.
func TestBookTextsFetchedAhead(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int
	}{{nil, 4}, {[]string{"--fetch-workers", "2"}, 2}} {
		t.Run(strings.Join(append([]string{"args"}, c.args...), " "), func(t *testing.T) { textsFetchedAhead(t, c.args, c.want) })
	}
}

// textsFetchedAhead runs translate with args on a IIIF book whose server
// holds each text file's request until want are in flight.
func textsFetchedAhead(t *testing.T, args []string, want int) {
	const n = 7
	alto := readOrFatal(t, testenv.Path(t, sampleALTO))
	srv := newBookServer(t)
	var canvases []string
	for k := 1; k <= n; k++ {
		p := fmt.Sprintf("/iiif/text/%d.alto.xml", k)
		srv.put(p, append(append([]byte{}, alto...), fmt.Sprintf("<!-- page %d -->\n", k)...))
		canvases = append(canvases, iiifCanvas(srv.URL, k, `{"id": "`+srv.URL+p+`", "type": "Dataset", "format": "application/xml", "profile": "http://www.loc.gov/standards/alto/ns-v4#"}`))
	}
	srv.put("/iiif/book.json", []byte(fmt.Sprintf(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "%s/iiif/book.json", "type": "Manifest",
  "label": {"en": ["ahead"]}, "items": [%s]}`, srv.URL, strings.Join(canvases, ","))))
	var (
		mu             sync.Mutex
		inFlight, most int
		four           = make(chan struct{})
		fourOnce       sync.Once
	)
	srv.mu.Lock()
	srv.hold = func(p string) {
		if !strings.HasPrefix(p, "/iiif/text/") {
			return
		}
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		if inFlight >= want {
			fourOnce.Do(func() { close(four) })
		}
		mu.Unlock()
		select {
		case <-four:
		case <-time.After(5 * time.Second):
		}
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	srv.mu.Unlock()
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	if r := runCLI(t, newEnv(api), append([]string{srv.URL + "/iiif/book.json", "-o", out, "-src", "de", "--vocabulary", "", "--fast-align"}, args...)...); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if most != want {
		t.Errorf("%d text files fetched at once at most, want %d", most, want)
	}
	for k := 1; k <= n; k++ {
		if h := srv.hitsOf(fmt.Sprintf("/iiif/text/%d.alto.xml", k)); h != 1 {
			t.Errorf("page %d's text file requested %d times, want once", k, h)
		}
	}
	translated, _ := filepath.Glob(filepath.Join(out, "text", "*_en.alto.xml"))
	if len(translated) != n {
		var all []string
		filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				all = append(all, p)
			}
			return nil
		})
		t.Errorf("%d translated pages, want %d: %v", len(translated), n, all)
	}
}
