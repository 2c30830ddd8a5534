package main

import (
	"archivekit/pkg/classify"
	"archivekit/pkg/procstat"
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPredictImage measures /predict_image on the five fixture models
// at concurrency 1, 8 and 32, with and without cross-request batching. It
// reports requests per second and the p50/p99 latency.
//
//	go test -run '^$' -bench PredictImage -benchtime 200x ./cmd/pageclass-api
func BenchmarkPredictImage(b *testing.B) {
	name, png := samplePage(b)
	body, ct := multipartForm(b, upload{Field: "file", Name: name, CType: "image/png", Data: png})
	payload := body.Bytes()
	for _, batching := range []bool{false, true} {
		o := benchOptions(b)
		o.NoBatch = !batching
		_, ts := startServer(b, o, nil, nil)
		for _, conc := range []int{1, 8, 32} {
			b.Run(fmt.Sprintf("batching=%v/c=%d", batching, conc), func(b *testing.B) {
				lat := make([]time.Duration, b.N)
				var next atomic.Int64
				var wg sync.WaitGroup
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
				b.ResetTimer()
				t0 := time.Now()
				for w := 0; w < conc; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := int(next.Add(1)) - 1
							if i >= b.N {
								return
							}
							s := time.Now()
							resp, err := client.Post(ts.URL+"/predict_image", ct, bytes.NewReader(payload))
							if err != nil || resp.StatusCode != 200 {
								b.Errorf("request: %v", err)
								return
							}
							resp.Body.Close()
							lat[i] = time.Since(s)
						}
					}()
				}
				wg.Wait()
				el := time.Since(t0)
				b.StopTimer()
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				b.ReportMetric(float64(b.N)/el.Seconds(), "req/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			})
		}
	}
}

// BenchmarkMemory reports the resident memory of the service after warm-up
// and after 10,000 /predict_image requests (8 at a time), in MiB.
//
//	go test -run '^$' -bench Memory -benchtime 1x ./cmd/pageclass-api
func BenchmarkMemory(b *testing.B) {
	name, png := samplePage(b)
	body, ct := multipartForm(b, upload{Field: "file", Name: name, CType: "image/png", Data: png})
	payload := body.Bytes()
	_, ts := startServer(b, testOptions(b), nil, nil)
	b.ReportMetric(rssMiB(b), "rss-warm-MiB")
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > 10000 {
					return
				}
				if i%2500 == 0 {
					runtime.GC()
					b.Logf("RSS after %d requests: %.1f MiB", i, rssMiB(b))
				}
				resp, err := http.Post(ts.URL+"/predict_image", ct, bytes.NewReader(payload))
				if err != nil {
					b.Error(err)
					return
				}
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
	runtime.GC()
	b.ReportMetric(rssMiB(b), "rss-10k-MiB")
}

// benchOptions serves the shipped demo ensemble (five real, small models)
// when weights/demo holds it, else the tiny test models.
func benchOptions(b *testing.B) options {
	o := testOptions(b)
	if _, err := classify.DemoEnsemble("../../weights/demo"); err == nil {
		// The demo folder holds model_v14 ... model_v54: served as the
		// ensemble (a given -models folder never falls back to the demo).
		o.Models = "../../weights/demo"
	}
	return o
}

// rssMiB is the resident set size of this process (the service runs in it).
func rssMiB(b *testing.B) float64 {
	kb, err := procstat.RSSKiB()
	if err != nil {
		b.Skip(err)
	}
	return float64(kb) / 1024
}
