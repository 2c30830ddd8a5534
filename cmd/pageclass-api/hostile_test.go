package main

import (
	"archivekit/internal/testenv"
	"net/http"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/pageclass/imageio/hostile"
)

// TestHostileUploadsBoundedMemory sends uploads that are small on the wire
// and huge in pixels, and checks that each costs at most 600 MiB of
// resident memory above the warm service (the goal), logging the
// peak, the time and the memory left after the request.
func TestHostileUploadsBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 170-million-pixel uploads")
	}
	o := testOptions(t)
	// The deadline is not what this test measures: on a loaded machine the
	// 16-page PDF can take minutes, so REQUEST_TIMEOUT_S is raised well
	// above any run time (TestDeadlineStopsDecoding covers the deadline).
	_, ts := startServer(t, o, map[string]string{"LOG_LEVEL": "WARNING", "REQUEST_TIMEOUT_S": "1800"}, nil)
	type req struct {
		path, ctype, name string
		data              []byte
	}
	png := hostile.PNG(13000, 13000)
	cases := []struct {
		name string
		reqs []req
	}{
		{"png 13000x13000", []req{{"/predict_image", "image/png", "big.png", png}}},
		{"two png 13000x13000 at once", []req{{"/predict_image", "image/png", "a.png", png}, {"/predict_image", "image/png", "b.png", png}}},
		{"pdf 85-inch page", []req{{"/predict_document", "application/pdf", "wide.pdf", hostile.PDF(1, 85, 85)}}},
		{"pdf 16 pages of 40 inches", []req{{"/predict_document", "application/pdf", "sixteen.pdf", hostile.PDF(16, 40, 40)}}},
	}
	// One small request first, so that the models' first-use memory is
	// part of "warm".
	name, page := samplePage(t)
	postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: name, CType: "image/png", Data: page})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			debug.FreeOSMemory()
			warm, err := testenv.RSSKiB()
			if err != nil {
				t.Skip(err)
			}
			if err := testenv.ResetPeak(); err != nil {
				t.Skip(err)
			}
			start := time.Now()
			var wg sync.WaitGroup
			for _, r := range tc.reqs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					status, body := postForm(t, ts.URL+r.path, upload{Field: "file", Name: r.name, CType: r.ctype, Data: r.data})
					if status != http.StatusOK {
						t.Errorf("%s: %d %s", r.name, status, body)
					}
				}()
			}
			wg.Wait()
			took := time.Since(start)
			peak, _ := testenv.PeakRSSKiB()
			runtime.GC()
			after, _ := testenv.RSSKiB()
			extra := float64(peak-warm) / 1024
			t.Logf("%s (%d bytes): peak %.0f MiB above warm, %.1f s, %.0f MiB above warm after the request",
				tc.name, len(tc.reqs[0].data), extra, took.Seconds(), float64(after-warm)/1024)
			if extra > 600 {
				t.Errorf("peak %.0f MiB above the warm service, goal 600", extra)
			}
		})
	}
}

// TestDeadlineStopsDecoding: a PDF of 16 large pages (about 20 s of work)
// under REQUEST_TIMEOUT_S=1 is answered 503 naming the limit once the page
// being decoded is done, and the service is free again.
func TestDeadlineStopsDecoding(t *testing.T) {
	if testing.Short() {
		t.Skip("renders large PDF pages")
	}
	s, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "ERROR", "REQUEST_TIMEOUT_S": "1"}, nil)
	start := time.Now()
	status, body := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "sixteen.pdf", CType: "application/pdf", Data: hostile.PDF(16, 40, 40)})
	took := time.Since(start)
	t.Logf("16 pages of 40 inches under a 1 s deadline: %d after %.1f s", status, took.Seconds())
	if status != http.StatusServiceUnavailable || !strings.Contains(string(body), "REQUEST_TIMEOUT_S=1") {
		t.Errorf("status %d: %s", status, body)
	}
	if n := s.svc.InFlight(); n != 0 {
		t.Errorf("%d requests in flight after the answer", n)
	}
}

// TestTinyPDFOfHugePages: a PDF of a few kilobytes holding 50 blank pages
// of 85 × 85 inches is refused with 422 naming -max-render once its pages
// have cost the request's rendering budget (here 2 s), instead of
// rendering all 50; each page is rendered within the PDF page budget.
func TestTinyPDFOfHugePages(t *testing.T) {
	if testing.Short() {
		t.Skip("renders large PDF pages")
	}
	o := testOptions(t)
	o.MaxRender = 2 * time.Second
	s, ts := startServer(t, o, map[string]string{"LOG_LEVEL": "ERROR", "REQUEST_TIMEOUT_S": "600"}, nil)
	pdf := hostile.PDF(50, 85, 85)
	start := time.Now()
	status, body := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "blank.pdf", CType: "application/pdf", Data: pdf})
	t.Logf("%d-byte PDF of 50 pages of 85 inches: %d after %.1f s: %s", len(pdf), status, time.Since(start).Seconds(), body)
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(body), "-max-render") || strings.Contains(string(body), " 50 of 50 pages") {
		t.Errorf("status %d: %s", status, body)
	}
	if n := s.svc.InFlight(); n != 0 {
		t.Errorf("%d requests in flight after the answer", n)
	}
}
