package lookahead

import (
	"context"
	"math"
	"time"
)

// Keyed is Run over a list of keys, whose results are taken by key, in
// the keys' order: a key's result is waited for, the results of the keys
// before it that were not taken are dropped. It is for one consumer
// goroutine.
type Keyed[K comparable, T any] struct {
	keys   []K
	pos    map[K]int // a key's first position in the keys
	cursor int       // the position of the next result
	run    *run[T]
}

// RunKeyed starts work(ctx, key) for each of keys, in order, at most
// workers at once ahead of the consumer (as Run). Call Stop when done.
func RunKeyed[K comparable, T any](ctx context.Context, keys []K, workers int, work func(ctx context.Context, key K) T) *Keyed[K, T] {
	return runKeyed(ctx, keys, workers, work, nil)
}

func runKeyed[K comparable, T any](ctx context.Context, keys []K, workers int, work func(ctx context.Context, key K) T, made func(i int)) *Keyed[K, T] {
	k := &Keyed[K, T]{keys: keys, pos: make(map[K]int, len(keys))}
	for i, key := range keys {
		if _, ok := k.pos[key]; !ok {
			k.pos[key] = i
		}
	}
	k.run = start(ctx, len(keys), workers, func(ctx context.Context, i int) T { return work(ctx, keys[i]) }, made)
	return k
}

// Take waits for key's result and gives it; ok is false when key is not
// among the keys, was taken or passed over already, or the context is
// done (the caller then does the work itself, or gives up).
func (k *Keyed[K, T]) Take(key K) (v T, ok bool) {
	p, in := k.pos[key]
	if !in || p < k.cursor {
		return v, false
	}
	for k.cursor <= p {
		v, ok = k.run.next()
		k.cursor++
		if !ok {
			k.cursor = math.MaxInt // nothing more comes
			return v, false
		}
	}
	return v, true
}

// Ready gives keep, in the keys' order, the results not taken that are
// made already or within the next wait (0: none), up to the first not
// made by then: what a consumer that stops early keeps for later. It
// starts no more work (taking results frees their places), and Take gives
// nothing after it; call Stop after it.
func (k *Keyed[K, T]) Ready(wait time.Duration, keep func(K, T)) {
	k.run.halt()
	expired := make(chan struct{})
	if wait > 0 {
		t := time.AfterFunc(wait, func() { close(expired) })
		defer t.Stop()
	} else {
		close(expired)
	}
	for k.cursor < len(k.keys) {
		v, ok := k.run.take(expired)
		if !ok {
			break
		}
		keep(k.keys[k.cursor], v)
		k.cursor++
	}
	k.cursor = math.MaxInt
}

// Stop ends the work not yet started (Run's stop).
func (k *Keyed[K, T]) Stop() { k.run.cancel() }
