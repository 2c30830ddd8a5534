// Package batcher groups work items submitted by many goroutines (for
// example the pages of concurrent HTTP requests) into batches for one
// consumer (a model's forward pass).
//
// One goroutine owns the consumer. It takes the first waiting item, then
// keeps collecting until the batch holds MaxBatch items or MaxWait has passed
// since that first item, whichever comes first, and runs the batch. Items
// arriving while a batch runs wait for the next one, so under load batches
// fill up without any wait, and a lone request waits at most MaxWait.
//
// The items of one Do call are kept in order and may be split across
// batches; results come back to each caller in the order of its items.
package batcher

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxBatch = 16
	DefaultMaxWait  = 5 * time.Millisecond
)

// ErrClosed is returned by Do after Close.
var ErrClosed = errors.New("batcher closed")

// Func runs one batch: it returns one result per item, in order. It is
// called from the batcher's goroutine only.
type Func[T, R any] func(items []T) ([]R, error)

// Options shape the batches.
type Options struct {
	// MaxBatch is the largest batch (0: DefaultMaxBatch).
	MaxBatch int
	// MaxWait is the longest time the first item of a batch waits for
	// others (0: DefaultMaxWait; negative: no wait, run what is queued).
	MaxWait time.Duration
	// OnBatch, when set, is called with the size of each batch before it runs.
	OnBatch func(n int)
	// OnWait, when set, is called for each item with the time it waited
	// between Do and the start of its batch.
	OnWait func(d time.Duration)
}

// Batcher feeds batches to one Func. It is safe for concurrent use.
type Batcher[T, R any] struct {
	fn   Func[T, R]
	opt  Options
	in   chan *job[T, R]
	done chan struct{}

	closeOnce sync.Once
	closing   chan struct{}
}

// job is one item waiting for its result.
type job[T, R any] struct {
	ctx   context.Context // the caller's: a job whose caller gave up is not run
	item  T
	since time.Time
	res   *R
	err   *error
	wg    *sync.WaitGroup
}

// New starts a batcher running fn; Close stops it.
func New[T, R any](fn Func[T, R], o Options) *Batcher[T, R] {
	if o.MaxBatch <= 0 {
		o.MaxBatch = DefaultMaxBatch
	}
	if o.MaxWait == 0 {
		o.MaxWait = DefaultMaxWait
	}
	b := &Batcher[T, R]{fn: fn, opt: o, in: make(chan *job[T, R], o.MaxBatch*4),
		done: make(chan struct{}), closing: make(chan struct{})}
	go b.loop()
	return b
}

// Do submits items and waits for their results, in the same order. When
// ctx ends first, Do returns its error (items already queued are still run,
// their results dropped).
func (b *Batcher[T, R]) Do(ctx context.Context, items ...T) ([]R, error) {
	res := make([]R, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	now := time.Now()
	for i := range items {
		wg.Add(1)
		j := &job[T, R]{ctx: ctx, item: items[i], since: now, res: &res[i], err: &errs[i], wg: &wg}
		select {
		case b.in <- j:
		case <-ctx.Done():
			wg.Done()
			return nil, ctx.Err()
		case <-b.closing:
			wg.Done()
			return nil, ErrClosed
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.done:
		select {
		case <-finished:
		default:
			return nil, ErrClosed
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Close stops accepting items, runs what is queued and waits for the
// goroutine to end.
func (b *Batcher[T, R]) Close() {
	b.closeOnce.Do(func() { close(b.closing) })
	<-b.done
}

func (b *Batcher[T, R]) loop() {
	defer close(b.done)
	batch := make([]*job[T, R], 0, b.opt.MaxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		var first *job[T, R]
		select {
		case first = <-b.in:
		case <-b.closing:
			// Drain what was queued before Close.
			for {
				select {
				case j := <-b.in:
					b.run(append(batch[:0], j))
				default:
					return
				}
			}
		}
		batch = append(batch[:0], first)
		if b.opt.MaxWait > 0 {
			timer.Reset(b.opt.MaxWait)
		collect:
			for len(batch) < b.opt.MaxBatch {
				select {
				case j := <-b.in:
					batch = append(batch, j)
				case <-timer.C:
					break collect
				}
			}
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		} else {
		queued:
			for len(batch) < b.opt.MaxBatch {
				select {
				case j := <-b.in:
					batch = append(batch, j)
				default:
					break queued
				}
			}
		}
		b.run(batch)
	}
}

// run calls fn on one batch and hands out the results. Jobs whose caller
// has gone (client disconnected, deadline passed) are dropped first.
func (b *Batcher[T, R]) run(batch []*job[T, R]) {
	live := batch[:0]
	for _, j := range batch {
		if err := j.ctx.Err(); err != nil {
			*j.err = err
			j.wg.Done()
			continue
		}
		live = append(live, j)
	}
	if batch = live; len(batch) == 0 {
		return
	}
	start := time.Now()
	items := make([]T, len(batch))
	for i, j := range batch {
		items[i] = j.item
		if b.opt.OnWait != nil {
			b.opt.OnWait(start.Sub(j.since))
		}
	}
	if b.opt.OnBatch != nil {
		b.opt.OnBatch(len(batch))
	}
	out, err := b.call(items)
	if err == nil && len(out) != len(items) {
		err = fmt.Errorf("batcher: %d results for %d items", len(out), len(items))
	}
	for i, j := range batch {
		if err != nil {
			*j.err = err
		} else {
			*j.res = out[i]
		}
		j.wg.Done()
	}
}

// call runs fn, turning a panic into an error so that one bad batch does
// not stop the batcher or leave its callers waiting.
func (b *Batcher[T, R]) call(items []T) (out []R, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("batcher: batch of %d failed: %v", len(items), p)
		}
	}()
	return b.fn(items)
}
