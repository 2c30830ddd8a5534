package main

import (
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/testenv"
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkPredictImage measures /predict_image on the demo ensemble (the
// five fixture models where weights/demo is absent) at concurrency 1, 8
// and 32, with and without cross-request batching: two servers, one of
// each, answer b.N requests in turn, three rounds, the order alternating
// each round, so that load from other processes hits both alike. It
// reports requests per second (best round of each), the ratio
// batching/none of the best rounds and the median of the per-round
// ratios, the p50/p99 latency of the batching server, and the load
// average.
//
//	go test -run '^$' -bench PredictImage -benchtime 200x ./cmd/pageclass-api
func BenchmarkPredictImage(b *testing.B) {
	name, png := samplePage(b)
	body, ct := multipartForm(b, upload{Field: "file", Name: name, CType: "image/png", Data: png})
	payload := body.Bytes()
	urls := map[bool]string{}
	for _, batching := range []bool{false, true} {
		o := benchOptions(b)
		o.NoBatch = !batching
		_, ts := startServer(b, o, nil, nil)
		urls[batching] = ts.URL
	}
	// load sends n requests, conc at a time; it returns requests per second
	// and the sorted latencies.
	load := func(b *testing.B, url string, conc, n int) (float64, []time.Duration) {
		lat := make([]time.Duration, n)
		var next atomic.Int64
		var wg sync.WaitGroup
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
		t0 := time.Now()
		for w := 0; w < conc; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					s := time.Now()
					resp, err := client.Post(url+"/predict_image", ct, bytes.NewReader(payload))
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
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return float64(n) / el.Seconds(), lat
	}
	for _, conc := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("c=%d", conc), func(b *testing.B) {
			load(b, urls[false], conc, conc) // warm both servers' threads
			load(b, urls[true], conc, conc)
			best := map[bool]float64{}
			var ratios []float64
			var lat []time.Duration
			var batched, batches float64 // pages and batches sent to the models by the batching server
			for r := 0; r < 3; r++ {
				rps := map[bool]float64{}
				for _, batching := range []bool{r%2 == 1, r%2 == 0} {
					var l []time.Duration
					if batching {
						sum, n := batchSizes(b, urls[true])
						batched, batches = batched-sum, batches-n
					}
					rps[batching], l = load(b, urls[batching], conc, b.N)
					if batching {
						sum, n := batchSizes(b, urls[true])
						batched, batches = batched+sum, batches+n
					}
					if batching && rps[batching] > best[true] {
						lat = l
					}
					best[batching] = max(best[batching], rps[batching])
				}
				ratios = append(ratios, rps[true]/rps[false])
			}
			sort.Float64s(ratios)
			b.ReportMetric(best[false], "req/s-none")
			b.ReportMetric(best[true], "req/s-batching")
			b.ReportMetric(best[true]/best[false], "batching/none")
			b.ReportMetric(ratios[1], "median-round-ratio")
			b.ReportMetric(batched/batches, "mean-batch")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			b.ReportMetric(testenv.LoadAvg(), "load-avg")
		})
	}
}

// batchSizes reads the service's inference_batch_size histogram: the pages
// and the batches sent to its models so far (every member counts its own).
func batchSizes(b *testing.B, url string) (sum, count float64) {
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	found := 0
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		switch f[0] {
		case "inference_batch_size_sum":
			sum, err = strconv.ParseFloat(f[1], 64)
		case "inference_batch_size_count":
			count, err = strconv.ParseFloat(f[1], 64)
		default:
			continue
		}
		if err != nil {
			b.Fatal(err)
		}
		found++
	}
	if found != 2 {
		b.Fatalf("/metrics has no inference_batch_size sum and count")
	}
	return sum, count
}

// BenchmarkMemory reports the resident memory of the service after warm-up
// and after 10,000 /predict_image requests (8 at a time), in MiB, and that
// of its decoder processes together at the end.
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
	if kb, err := testenv.ChildrenRSSKiB(); err == nil {
		// The uploads are decoded in decoder processes (DECODE_IN_PROCESS
		// unset): their memory is not in the service's own.
		b.ReportMetric(float64(kb)/1024, "decoders-rss-MiB")
	}
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
	kb, err := testenv.RSSKiB()
	if err != nil {
		b.Skip(err)
	}
	return float64(kb) / 1024
}

// BenchmarkBatchCost: what cross-request batching can save at most on
// this machine. With the forward passes as the service runs them (the
// bench ensemble, batching off, each pass on engine.forwardThreads
// threads), it measures in process CPU time, which load from other
// processes barely moves: a request's decoding and preprocessing of the
// sample page (classify.Step.Prepare: the ensemble's preprocessing, the ink count),
// and for each member the forward cost per image at batch 1 and at batch 8,
// 5 rounds in turn, the cheapest of each. It reports each member's
// batch-8/batch-1 cost, the sums, and the most that batching 8 requests
// could gain in requests per second when the CPU is the limit:
// (decode+preprocess + forwards at 1) / (decode+preprocess + forwards at 8).
//
//	go test -run '^$' -bench BatchCost -benchtime 1x ./cmd/pageclass-api
func BenchmarkBatchCost(b *testing.B) {
	name, png := samplePage(b)
	o := benchOptions(b)
	o.NoBatch = true
	s, _ := startServer(b, o, nil, nil)
	ms := s.engine.ensemble
	// use decodes the sample page and hands it to f, as a request does.
	use := func(f func(imageio.Image) error) {
		doc, err := imageio.Decode(png, name)
		if err != nil {
			b.Fatal(err)
		}
		if err := doc.Use(context.Background(), 0, f); err != nil {
			b.Fatal(err)
		}
	}
	step := classify.NewStep(modelsOf(ms), nil, nil)
	prep := func() {
		use(func(img imageio.Image) error { _, err := step.Prepare(img); return err })
	}
	var in [][]float32 // each member's input
	use(func(img imageio.Image) (err error) { in, err = classify.PreprocessEach(img, modelsOf(ms)); return err })
	const rounds, images = 5, 16
	minPer := func(f func()) func(float64) float64 { // CPU ms per image, the cheapest round so far
		return func(best float64) float64 {
			t := testenv.CPUTime()
			f()
			v := float64(testenv.CPUTime()-t) / 1e6 / images
			if best == 0 || v < best {
				return v
			}
			return best
		}
	}
	var dp float64
	one, eight := make([]float64, len(ms)), make([]float64, len(ms))
	for r := 0; r < b.N*rounds; r++ {
		dp = minPer(func() {
			for range images {
				prep()
			}
		})(dp)
		for i, m := range ms {
			page := in[i]
			run := func(n int) func() {
				return func() {
					pages := make([][]float32, n)
					for k := range pages {
						pages[k] = page
					}
					for range images / n {
						if _, err := m.forward(pages); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			if r%2 == 0 {
				one[i] = minPer(run(1))(one[i])
				eight[i] = minPer(run(8))(eight[i])
			} else {
				eight[i] = minPer(run(8))(eight[i])
				one[i] = minPer(run(1))(one[i])
			}
		}
	}
	var f1, f8 float64
	for i, m := range ms {
		f1 += one[i]
		f8 += eight[i]
		b.ReportMetric(eight[i]/one[i], m.model.Name+"-batch8/batch1")
	}
	b.ReportMetric(dp, "decode+prep-cpu-ms")
	b.ReportMetric(f1, "forwards-batch1-cpu-ms/img")
	b.ReportMetric(f8, "forwards-batch8-cpu-ms/img")
	b.ReportMetric((dp+f1)/(dp+f8), "max-batching-gain")
	b.ReportMetric(testenv.LoadAvg(), "load-avg")
}
