package jobs

import (
	"bytes"
	"context"
	"time"

	"archivekit/internal/lookahead"
)

// A book job's run fetches the files of its items ahead of the item that
// runs (BookInput.Fetchers at once, in item order, internal/lookahead), so
// that a slow image or text server and the endpoint's work overlap. Each
// file is fetched once a job and handed to its own item, which checks and
// records it as it does a file fetched when it runs (a failed fetch fails
// or pauses that item alone, when its turn comes). When the run ends the
// fetches under way are canceled; when it pauses (a stop, a passing
// failure) the files fetched ahead and not yet taken are kept in the job's
// scratch (Scratch, keepAhead), where the next run's items, on this
// replica or another, take them instead of fetching them again. Otherwise
// (the job done or canceled, its lease lost) they are dropped.

// fetched is a book item's file as BookInput.Fetch gave it, and how long
// that took.
type fetched struct {
	source string
	data   []byte
	ctype  string
	err    error
	took   time.Duration
}

// duration is how long the fetch took; 0 for none (nil).
func (f *fetched) duration() time.Duration {
	if f == nil {
		return 0
	}
	return f.took
}

// fetch fetches a book item's file, within ItemTimeout, or takes the copy
// an earlier run of the job fetched ahead and kept (keepAhead).
func (q *Queue) fetch(ctx context.Context, source string) *fetched {
	if f := q.keptAhead(ctx, source); f != nil {
		return f
	}
	if q.opts.ItemTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, q.opts.ItemTimeout)
		defer cancel()
	}
	start := time.Now()
	data, ctype, err := q.opts.Book.Fetch(ctx, source)
	return &fetched{source: source, data: data, ctype: ctype, err: err, took: time.Since(start)}
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

// aheadName is the scratch name of a file fetched ahead: apart from the
// names (URLs) the endpoints keep there.
func aheadName(source string) string { return "fetched ahead " + source }

// keepAheadWait is how long a run that pauses waits for the files being
// fetched ahead to arrive, to keep them (a stop's drain has its own
// bound, GRACEFUL_SHUTDOWN_S).
const keepAheadWait = 2 * time.Second

// keepAhead keeps, in the job's scratch, the files fetched ahead and not
// taken by a run that pauses (held: files fetched for the item before
// them), those fetched already or within keepAheadWait; one still being
// fetched then is dropped. A file that cannot be kept is fetched again by
// its item.
func (q *Queue) keepAhead(ctx context.Context, id string, a *ahead, held map[int]*fetched) {
	scratch := ScratchOf(ctx)
	kept, failed := 0, 0
	keep := func(f *fetched) {
		if f == nil || f.err != nil {
			return
		}
		// The content type first, then the file: a type has no new line.
		data := make([]byte, 0, len(f.ctype)+1+len(f.data))
		data = append(append(append(data, f.ctype...), '\n'), f.data...)
		if err := scratch.Keep(ctx, aheadName(f.source), data); err != nil {
			if failed == 0 {
				q.log.Warn("a file fetched ahead is not kept for the job's next run, which fetches it again", "job", id, "file", f.source, "error", err)
			}
			failed++
			return
		}
		kept++
	}
	for _, f := range held {
		keep(f)
	}
	if a != nil {
		a.keyed.Ready(keepAheadWait, func(_ int, f *fetched) { keep(f) })
	}
	if kept > 0 {
		q.log.Info("the files fetched ahead are kept for the job's next run", "job", id, "files", kept)
	}
}

// keptAhead takes the copy of source an earlier run kept (keepAhead); nil
// when there is none.
func (q *Queue) keptAhead(ctx context.Context, source string) *fetched {
	data, ok, err := ScratchOf(ctx).Take(ctx, aheadName(source))
	if err != nil {
		q.log.Warn("a file fetched ahead by an earlier run cannot be taken; it is fetched again", "file", source, "error", err)
	}
	if !ok {
		return nil
	}
	ctype, rest, found := bytes.Cut(data, []byte{'\n'})
	if !found {
		return nil
	}
	return &fetched{source: source, data: rest, ctype: string(ctype)}
}
