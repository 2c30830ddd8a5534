package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// BenchmarkBookJob measures a book job of 20 ALTO text files whose server
// answers each file 20 ms late (a remote repository), translated by the
// local MT stand-in: the wall time from POST /jobs to the job's end, with
// the next files fetched while a file is translated (BOOK_FETCH_WORKERS
// 4, the default) and without (BOOK_FETCH_WORKERS 1: each file fetched
// when its item runs, as every translate-api book job did before). Two
// services, one of each, run the same book in turn, five rounds, the
// order alternating, so that load from other processes hits both alike
// (testenv.Speedup, as pageclass-api's BenchmarkBookJob): it reports the
// best round of each and the ratio without/with (the speed-up) of the
// best rounds and the median of the per-round ratios.
//
//	go test -run '^$' -bench BookJob -benchtime 1x ./cmd/translate-api
func BenchmarkBookJob(b *testing.B) {
	const pages, rounds = 20, 5
	mt := translatortest.New(translatortest.Config{})
	b.Cleanup(mt.Close)
	books, _ := serveFilesWith(b, aheadBook(pages), func(r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/b/ocr/") {
			time.Sleep(20 * time.Millisecond) // the remote server's latency, not a synchronisation
		}
	})
	// jobTimer starts a service with BOOK_FETCH_WORKERS workers; the
	// function it returns times one book job there.
	jobTimer := func(workers string) func() time.Duration {
		s, ts := startServer(b, testEnv(mt.URL, map[string]string{"BOOK_HOSTS": "127.0.0.1", "JOBS_DIR": b.TempDir(), "BOOK_FETCH_WORKERS": workers}))
		return func() time.Duration {
			start := time.Now()
			st := waitJobEnd(b, s, ts.URL, submitBook(b, ts.URL, books.URL+"/b/mets.xml"))
			took := time.Since(start)
			if want := (jobs.Counts{Total: pages, Succeeded: pages}); st.State != jobs.Succeeded || st.Items != want {
				b.Fatalf("BOOK_FETCH_WORKERS %s: job %+v, want %+v", workers, st, want)
			}
			return took
		}
	}
	testenv.Speedup(b, rounds, "fetching ahead", jobTimer("1"), jobTimer("4"))
}

// waitJobEnd waits for job id on s (at base) to end, woken by the queue's
// changes; it fails after 60 s.
func waitJobEnd(t testing.TB, s *server, base, id string) jobs.Status {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		changed := s.jobs.Changed() // before the read: a change after it wakes the wait
		resp, err := http.Get(base + "/jobs/" + id)
		if err != nil {
			t.Fatal(err)
		}
		var st jobs.Status
		if err := json.Unmarshal(readBody(t, resp), &st); err != nil {
			t.Fatal(err)
		}
		if ended(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %+v", st)
		}
		select {
		case <-changed:
		case <-time.After(time.Second):
		}
	}
}
