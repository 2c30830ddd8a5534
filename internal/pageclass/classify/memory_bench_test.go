package classify_test

import (
	"archivekit/internal/testenv"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/pipeline"
)

// BenchmarkLargePageMemory: the peak resident memory of classifying one
// 169-megapixel page (a 13000×13000 PNG, under the decompression-bomb limit)
// and a folder of four, with the demo ensemble as classify.Load gives it
// and the pipeline's defaults (workers = cores, batch 16). The process is
// warmed first (models loaded, one sample page classified), then its peak
// is reset (testenv.ResetPeak) before each run. peak-MiB is the whole
// process's peak resident set (models and libtorch included: the figure a
// container limit sees); extra-MiB is that peak above the warm process.
// The goal (issue 15) is at most 600 MB.
//
//	go test -run '^$' -bench LargePageMemory -benchtime 1x ./internal/pageclass/classify
func BenchmarkLargePageMemory(b *testing.B) {
	torch.SetNumThreads(runtime.NumCPU())
	demo, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		b.Skipf("no demo ensemble: %v", err)
	}
	ms, err := classify.LoadAll(demo, "cpu")
	if err != nil {
		b.Fatal(err)
	}
	e, _ := classify.NewEnsemble(ms...)
	defer e.Close()
	dir := b.TempDir()
	big := hostile.PNG(13000, 13000)
	var four []string
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("master-%d.png", i+1))
		if err := os.WriteFile(p, big, 0o644); err != nil {
			b.Fatal(err)
		}
		four = append(four, p)
	}
	big = nil
	predictWith(b, e, samplePages(b)[:1], classify.Options{}) // warm-up
	for _, tc := range []struct {
		name  string
		files []string
	}{{"one-page", four[:1]}, {"four-pages", four}} {
		b.Run(tc.name, func(b *testing.B) {
			for n := 0; n < b.N; n++ {
				runtime.GC()
				debug.FreeOSMemory()
				if err := testenv.ResetPeak(); err != nil {
					b.Skip(err)
				}
				base, err := testenv.RSSKiB()
				if err != nil {
					b.Skip(err)
				}
				start := time.Now()
				pages := 0
				_, err = e.Predict(context.Background(), pipeline.Files(tc.files), classify.Options{}, func(p classify.Page) error {
					pages++
					return p.Err
				})
				if err != nil {
					b.Fatal(err)
				}
				if pages != len(tc.files) {
					b.Fatalf("%d pages classified, want %d", pages, len(tc.files))
				}
				peak, err := testenv.PeakRSSKiB()
				if err != nil {
					b.Skip(err)
				}
				b.ReportMetric(float64(peak)/1024, "peak-MiB")
				b.ReportMetric(float64(peak-base)/1024, "extra-MiB")
				b.ReportMetric(float64(base)/1024, "warm-MiB")
				b.ReportMetric(time.Since(start).Seconds()/float64(pages), "s/page")
			}
		})
	}
}
