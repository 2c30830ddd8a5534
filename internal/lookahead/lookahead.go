// Package lookahead runs a slow step (reading, fetching, opening) for the
// items of a sequence a few at a time ahead of their use, and hands the
// results back in order.
//
// At most Workers items are being worked on or done and waiting at once,
// whatever the consumer's pace: memory is bounded by that many results.
package lookahead

import "context"

// Run starts work(ctx, i) for i = 0 … n-1, at most workers (at least one)
// at once ahead of the consumer, and returns next, which gives the
// results in order (ok false after the last, or once ctx is done), and
// stop, which ends the work not yet started and waits for none: a result
// being made when stop is called is dropped when it ends. Call stop
// when done, even after the last result; work must return when its
// context is done.
func Run[T any](ctx context.Context, n, workers int, work func(ctx context.Context, i int) T) (next func() (T, bool), stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	// The consumer holds one result's channel besides the buffered ones.
	queue := make(chan chan T, max(1, workers)-1)
	go func() {
		defer close(queue)
		for i := 0; i < n; i++ {
			c := make(chan T, 1)
			select {
			case queue <- c:
			case <-ctx.Done():
				return
			}
			go func() { c <- work(ctx, i) }()
		}
	}()
	next = func() (T, bool) {
		var zero T
		if ctx.Err() != nil {
			// Stopped: no result, not even one made already (the selects
			// below could pick a ready result over the done context).
			return zero, false
		}
		select {
		case c, ok := <-queue:
			if !ok {
				return zero, false
			}
			select {
			case v := <-c:
				return v, true
			case <-ctx.Done():
				return zero, false
			}
		case <-ctx.Done():
			return zero, false
		}
	}
	return next, cancel
}
