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
	r := start(ctx, n, workers, work, nil)
	return r.next, r.cancel
}

// run is Run's state: the results' channels, in order.
type run[T any] struct {
	ctx    context.Context
	cancel func()
	queue  chan chan T
	// halted, closed by halt, starts no more work.
	halted chan struct{}
}

// halt starts no more work; the work under way goes on.
func (r *run[T]) halt() { close(r.halted) }

// start starts Run's work; made, when not nil, is called with i once
// item i's result can be taken (the tests' view of the work).
func start[T any](ctx context.Context, n, workers int, work func(ctx context.Context, i int) T, made func(i int)) *run[T] {
	r := &run[T]{halted: make(chan struct{})}
	r.ctx, r.cancel = context.WithCancel(ctx)
	// The consumer holds one result's channel besides the buffered ones.
	r.queue = make(chan chan T, max(1, workers)-1)
	go func() {
		defer close(r.queue)
		for i := 0; i < n; i++ {
			c := make(chan T, 1)
			select {
			case r.queue <- c:
			case <-r.ctx.Done():
				return
			case <-r.halted:
				return
			}
			select {
			case <-r.halted:
				close(c) // queued, never started: take passes it over
				return
			default:
			}
			go func() {
				c <- work(r.ctx, i)
				if made != nil {
					made(i)
				}
			}()
		}
	}()
	return r
}

// next gives the next result, waiting for it.
func (r *run[T]) next() (T, bool) { return r.take(nil) }

// take gives the next result, waiting for it until expired is closed
// (nil: for as long as it takes); a result made already is given even
// when expired is closed. ok is false when none comes in time, after the
// last, or once the run's context is done.
func (r *run[T]) take(expired <-chan struct{}) (T, bool) {
	var zero T
	if r.ctx.Err() != nil {
		// Stopped: no result, not even one made already (the selects
		// below could pick a ready result over the done context).
		return zero, false
	}
	var c chan T
	var ok bool
	select {
	case c, ok = <-r.queue:
	default:
		select {
		case c, ok = <-r.queue:
		case <-r.ctx.Done():
		case <-expired:
		}
	}
	if !ok {
		return zero, false
	}
	select {
	case v, made := <-c:
		return v, made
	default:
		select {
		case v, made := <-c:
			return v, made
		case <-r.ctx.Done():
		case <-expired:
		}
	}
	return zero, false
}
