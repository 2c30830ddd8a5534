package book

import (
	"context"
	"sync"

	"archivekit/internal/lookahead"
)

// Remote text files are sniffed (TextSniff) as Read walks a METS file's
// pages, one after another; with Options.Fetchers over one, the files it
// will sniff are fetched that many at once, in page order, from the start
// of the walk, and the walk takes each from there (prefetched). The
// Fetcher keeps every file it fetched for the read either way, so memory
// is as without. Results and requests are the same as without: each file
// is requested once, a failure is the walk's as before.

// prefetched is a remote file fetched ahead: done is closed when data and
// err are set.
type prefetched struct {
	done chan struct{}
	data []byte
	err  error
}

// prefetchTexts starts fetching the remote files that the walk over divs
// will sniff, Options.Fetchers at once, and returns a stop
// that ends the fetches not yet started. It does nothing unless Fetchers
// is over one, text files are sniffed now and a Fetcher is set.
func (r *reader) prefetchTexts(base loc, imageGroup string, divs []div, files map[string]*file) (stop func()) {
	if r.opts.Fetchers <= 1 || r.opts.Text != TextSniff || r.opts.FetchLater || r.opts.Fetcher == nil {
		return func() {}
	}
	var locs []loc
	seen := map[string]bool{}
	for _, d := range divs {
		for _, pf := range r.pageFiles(base, imageGroup, d, files) {
			if pf.problem == "" && !pf.image && pf.l.url != nil && !seen[pf.l.String()] {
				seen[pf.l.String()] = true
				locs = append(locs, pf.l)
			}
		}
	}
	if len(locs) < 2 {
		return func() {}
	}
	r.ahead = make(map[string]*prefetched, len(locs))
	for _, l := range locs {
		r.ahead[l.String()] = &prefetched{done: make(chan struct{})}
	}
	next, end := lookahead.Run(r.ctx, len(locs), r.opts.Fetchers, func(ctx context.Context, i int) struct{} {
		p := r.ahead[locs[i].String()]
		p.data, p.err = r.fetch(ctx, locs[i])
		close(p.done)
		return struct{}{}
	})
	// The walk takes the files from r.ahead; this drains the look-ahead
	// so that it keeps Fetchers files in flight whatever the walk's pace.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for _, ok := next(); ok; _, ok = next() {
		}
	}()
	return func() { end(); wg.Wait() }
}
