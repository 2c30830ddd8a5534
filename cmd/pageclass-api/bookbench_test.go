package main

import (
	"context"
	"net/url"
	"testing"
	"time"

	"archivekit/internal/book/booktest"
	"archivekit/internal/jobs"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/testenv"
)

// BenchmarkBookJob measures a book job of 20 pages whose image server
// answers each image request 150 ms late (a slow remote IIIF server): the
// wall time from POST /jobs to the job's end, with its pages' fetches
// ahead of their classification (BOOK_FETCH_WORKERS 4, the default) and
// without (BOOK_FETCH_WORKERS 1: each page fetched when its item runs, as
// every book job did before). Two services (the bench ensemble), one of
// each, run the same book in turn, three rounds, the order alternating, so
// that load from other processes hits both alike (testenv.Speedup). It
// reports the best round of each and the ratio without/with (the
// speed-up) of the best rounds and the median of the per-round ratios.
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
	testenv.Speedup(b, rounds, "fetching ahead", func() time.Duration { return run("1") }, func() time.Duration { return run("4") })
}
