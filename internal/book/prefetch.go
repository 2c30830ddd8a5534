package book

import (
	"context"

	"archivekit/internal/fetch"
	"archivekit/internal/lookahead"
)

// Remote text files are sniffed (TextSniff) as Read walks a METS file's
// pages, one after another; with Options.Fetchers over one, the files it
// will sniff are fetched that many at once ahead of the walk, in page
// order (lookahead.RunKeyed), and the walk takes each from there
// (reader.get). Results and requests are the same as without: each file is
// requested once, a failure is the walk's as before.

// prefetchTexts starts fetching the remote files that the walk over divs
// will sniff, Options.Fetchers at once ahead of it, into r.ahead, and
// returns a stop that ends the fetches not yet started. It does nothing
// unless Fetchers is over one, text files are sniffed now and a Fetcher
// is set.
func (r *reader) prefetchTexts(base loc, imageGroup string, divs []div, files map[string]*file) (stop func()) {
	if r.opts.Fetchers <= 1 || r.opts.Text != TextSniff || r.opts.FetchLater || r.opts.Fetcher == nil {
		return func() {}
	}
	var locs []loc
	var keys []string
	seen := map[string]bool{}
	for _, d := range divs {
		for _, pf := range r.pageFiles(base, imageGroup, d, files) {
			if pf.problem == "" && !pf.image && pf.l.url != nil && !seen[pf.l.String()] {
				seen[pf.l.String()] = true
				locs, keys = append(locs, pf.l), append(keys, pf.l.String())
			}
		}
	}
	if len(locs) < 2 {
		return func() {}
	}
	byKey := make(map[string]loc, len(locs))
	for i, k := range keys {
		byKey[k] = locs[i]
	}
	r.ahead = lookahead.RunKeyed(r.ctx, keys, r.opts.Fetchers, func(ctx context.Context, k string) fetch.Result {
		data, err := r.fetch(ctx, byKey[k])
		return fetch.Result{Data: data, Err: err}
	})
	return r.ahead.Stop
}
