package jobs

import (
	"context"
	"time"

	"archivekit/internal/lookahead"
)

// A book job's run fetches the files of its items ahead of the item that
// runs (BookInput.Fetchers at once, in item order, internal/lookahead), so
// that a slow image or text server and the endpoint's work overlap. Each
// file is fetched once a run and handed to its own item, which checks and
// records it as it does a file fetched when it runs (a failed fetch fails
// or pauses that item alone, when its turn comes). The files fetched ahead
// are dropped, and the fetches under way canceled, when the run ends: the
// job done, canceled, paused (a stop, a passing failure), or its lease
// lost; a paused job's next run fetches them again.

// fetched is a book item's file as BookInput.Fetch gave it, and how long
// that took.
type fetched struct {
	data  []byte
	ctype string
	err   error
	took  time.Duration
}

// duration is how long the fetch took; 0 for none (nil).
func (f *fetched) duration() time.Duration {
	if f == nil {
		return 0
	}
	return f.took
}

// fetch fetches a book item's file, within ItemTimeout.
func (q *Queue) fetch(ctx context.Context, source string) *fetched {
	if q.opts.ItemTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.opts.ItemTimeout)
		defer cancel()
	}
	start := time.Now()
	data, ctype, err := q.opts.Book.Fetch(ctx, source)
	return &fetched{data: data, ctype: ctype, err: err, took: time.Since(start)}
}

// ahead is a run's fetches ahead, by item index, in order. A nil *ahead
// fetches nothing ahead.
type ahead struct {
	keyed *lookahead.Keyed[int, *fetched]
}

// fetchAhead starts fetching the files of a book job's queued items, in
// order, BookInput.Fetchers at once (counting the file of the item that
// runs, and, when items join, the next item's file held for it: one
// fewer is then fetched ahead): nil when Fetchers is below 2 or fewer
// than two items have a file to fetch.
func (q *Queue) fetchAhead(ctx context.Context, items []item, joining bool) *ahead {
	if q.opts.Book == nil || q.opts.Book.Fetchers < 2 {
		return nil
	}
	var order []int
	source := map[int]string{}
	for _, it := range items {
		if it.State == Queued && it.Source != "" {
			order = append(order, it.Index)
			source[it.Index] = it.Source
		}
	}
	if len(order) < 2 {
		return nil
	}
	workers := q.opts.Book.Fetchers
	if joining {
		workers--
	}
	return &ahead{lookahead.RunKeyed(ctx, order, workers, func(ctx context.Context, i int) *fetched {
		return q.fetch(ctx, source[i])
	})}
}

// take gives item i's file fetched ahead, nil when none was (an item
// without a file to fetch, or the run's context done).
func (a *ahead) take(i int) *fetched {
	if a == nil {
		return nil
	}
	f, _ := a.keyed.Take(i)
	return f
}

// stop cancels the fetches under way and drops the files fetched ahead.
func (a *ahead) stop() {
	if a != nil {
		a.keyed.Stop()
	}
}
