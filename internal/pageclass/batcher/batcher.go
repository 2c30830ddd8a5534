// Package batcher groups work items submitted by many goroutines (for
// example the pages of concurrent HTTP requests) into batches for one
// consumer (a model's forward pass).
//
// The schedule is work-conserving: one goroutine owns the consumer and, as
// soon as the consumer is idle, runs everything that is queued (at most
// MaxBatch items) without waiting for more. A lone request therefore runs at
// once, as it would without a batcher, and the requests that arrive while a
// batch runs form the next batch, so batches grow with the load by
// themselves. Options.MaxWait > 0 adds a linger: an idle consumer waits up
// to that long for a fuller batch (fewer, larger batches at the cost of the
// lone request's latency).
//
// The items of one Do call are queued together and kept in order; they may
// be split across batches of MaxBatch, and results come back to each caller
// in the order of its items.
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
	// DefaultMaxWait is no linger: run what is queued as soon as the
	// consumer is idle.
	DefaultMaxWait = time.Duration(0)
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
	// MaxWait is how long an idle consumer waits for a batch to fill
	// before running what is queued (0 or negative: no wait, the
	// work-conserving default).
	MaxWait time.Duration
	// OnBatch, when set, is called with the size of each batch before it runs.
	OnBatch func(n int)
	// OnWait, when set, is called for each item with the time it waited
	// between Do and the start of its batch.
	OnWait func(d time.Duration)

	// after is the clock of the linger (time.After; tests set a fake one).
	after func(time.Duration) <-chan time.Time
}

// Batcher feeds batches to one Func. It is safe for concurrent use.
type Batcher[T, R any] struct {
	fn   Func[T, R]
	opt  Options
	in   chan []*job[T, R] // one element per Do call: its items, in order
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
	if o.after == nil {
		o.after = time.After
	}
	b := &Batcher[T, R]{fn: fn, opt: o, in: make(chan []*job[T, R], o.MaxBatch*4),
		done: make(chan struct{}), closing: make(chan struct{})}
	go b.loop()
	return b
}

// Do submits items and waits for their results, in the same order. When
// ctx ends first, Do returns its error (items still queued are dropped
// before their batch runs).
func (b *Batcher[T, R]) Do(ctx context.Context, items ...T) ([]R, error) {
	if len(items) == 0 {
		return []R{}, nil
	}
	res := make([]R, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	now := time.Now()
	jobs := make([]*job[T, R], len(items))
	for i := range items {
		jobs[i] = &job[T, R]{ctx: ctx, item: items[i], since: now, res: &res[i], err: &errs[i], wg: &wg}
	}
	wg.Add(len(jobs))
	select {
	case b.in <- jobs:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.closing:
		return nil, ErrClosed
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
	var pending []*job[T, R] // queued items, oldest first
	for {
		if len(pending) == 0 {
			select {
			case s := <-b.in:
				pending = append(pending, s...)
			case <-b.closing:
				b.drain()
				return
			}
		}
		// What queued while the consumer was busy joins this batch.
		pending = b.take(pending)
		if b.opt.MaxWait > 0 && len(pending) < b.opt.MaxBatch {
			pending = b.linger(pending)
		}
		n := min(len(pending), b.opt.MaxBatch)
		b.run(pending[:n])
		pending = append(pending[:0], pending[n:]...)
	}
}

// take appends the submissions waiting in the channel to pending, without
// blocking, until pending holds a full batch.
func (b *Batcher[T, R]) take(pending []*job[T, R]) []*job[T, R] {
	for len(pending) < b.opt.MaxBatch {
		select {
		case s := <-b.in:
			pending = append(pending, s...)
		default:
			return pending
		}
	}
	return pending
}

// linger waits up to MaxWait for pending to fill a batch.
func (b *Batcher[T, R]) linger(pending []*job[T, R]) []*job[T, R] {
	deadline := b.opt.after(b.opt.MaxWait)
	for len(pending) < b.opt.MaxBatch {
		select {
		case s := <-b.in:
			pending = append(pending, s...)
		case <-deadline:
			return pending
		case <-b.closing:
			return pending
		}
	}
	return pending
}

// drain runs, after Close, what was queued before it.
func (b *Batcher[T, R]) drain() {
	var pending []*job[T, R]
	for {
		pending = b.take(pending)
		if len(pending) == 0 {
			return
		}
		n := min(len(pending), b.opt.MaxBatch)
		b.run(pending[:n])
		pending = append(pending[:0], pending[n:]...)
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
