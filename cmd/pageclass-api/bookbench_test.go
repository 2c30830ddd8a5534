package main

import (
	"context"
	"net/url"
	"slices"
	"testing"
	"time"

	"archivekit/internal/book/booktest"
	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/classify/classifytest"
)

// BenchmarkBookJob measures a book job of 20 pages whose image server
// answers each image request 150 ms late (a slow remote IIIF server): the
// wall time from POST /jobs to the job's end, with its pages' fetches
// ahead of their classification (BOOK_FETCH_WORKERS 4, the default) and
// without (BOOK_FETCH_WORKERS 1: each page fetched when its item runs, as
// every book job did before). Two services (the bench ensemble), one of
// each, run the same book in turn, three rounds, the order alternating, so
// that load from other processes hits both alike. It reports the best
// round of each and the ratio without/with (the speed-up) of the best
// rounds and the median of the per-round ratios.
//
//	go test -run '^$' -bench BookJob -benchtime 1x ./cmd/pageclass-api
func BenchmarkBookJob(b *testing.B) {
	const pages, latency, rounds = 20, 150 * time.Millisecond, 3
	bk := booktest.New(b, classifytest.Pages(b, 1), pages, true)
	bk.SetHold(func() func() {
		time.Sleep(latency) // the remote server's latency, not a synchronisation
		return func() {}
	})
	urls, servers := map[string]string{}, map[string]*server{}
	for _, workers := range []string{"1", "4"} {
		s, ts := startServer(b, benchOptions(b), map[string]string{"LOG_LEVEL": "WARNING", "JOBS_DIR": b.TempDir(),
			EnvBookHosts: must(url.Parse(bk.URL)).Host, EnvBookFetchWorkers: workers}, nil)
		b.Cleanup(func() { _ = s.jobs.Close(context.Background()) }) // before the models close
		urls[workers], servers[workers] = ts.URL, s
	}
	run := func(workers string) time.Duration {
		start := time.Now()
		st := waitJob(b, servers[workers], urls[workers], submitForm(b, urls[workers], upload{Field: "book", Data: []byte(bk.ManifestURL())}))
		took := time.Since(start)
		if st.State != jobs.Succeeded || st.Items != (jobs.Counts{Total: pages, Succeeded: pages}) {
			b.Fatalf("BOOK_FETCH_WORKERS %s: job %+v", workers, st)
		}
		return took
	}
	run("1") // warm both services (models, connections)
	run("4")
	best := map[string]time.Duration{}
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			order := []string{"1", "4"}
			if r%2 == 1 {
				order = []string{"4", "1"}
			}
			took := map[string]time.Duration{}
			for _, w := range order {
				took[w] = run(w)
				if best[w] == 0 || took[w] < best[w] {
					best[w] = took[w]
				}
			}
			ratios = append(ratios, took["1"].Seconds()/took["4"].Seconds())
			b.Logf("round %d: %v without fetching ahead, %v with (%.2f)", r+1, took["1"].Round(time.Millisecond), took["4"].Round(time.Millisecond), ratios[len(ratios)-1])
		}
	}
	b.ReportMetric(best["1"].Seconds(), "s-without")
	b.ReportMetric(best["4"].Seconds(), "s-with")
	b.ReportMetric(best["1"].Seconds()/best["4"].Seconds(), "speedup")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "speedup-median")
}
