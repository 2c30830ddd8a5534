package lookahead

import (
	"context"
	"math"
)

// Keyed is Run over a list of keys, whose results are taken by key, in
// the keys' order: a key's result is waited for, the results of the keys
// before it that were not taken are dropped. It is for one consumer
// goroutine.
type Keyed[K comparable, T any] struct {
	pos    map[K]int // a key's first position in the keys
	cursor int       // the position of the next result
	next   func() (T, bool)
	stop   func()
}

// RunKeyed starts work(ctx, key) for each of keys, in order, at most
// workers at once ahead of the consumer (as Run). Call Stop when done.
func RunKeyed[K comparable, T any](ctx context.Context, keys []K, workers int, work func(ctx context.Context, key K) T) *Keyed[K, T] {
	k := &Keyed[K, T]{pos: make(map[K]int, len(keys))}
	for i, key := range keys {
		if _, ok := k.pos[key]; !ok {
			k.pos[key] = i
		}
	}
	k.next, k.stop = Run(ctx, len(keys), workers, func(ctx context.Context, i int) T { return work(ctx, keys[i]) })
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
		v, ok = k.next()
		k.cursor++
		if !ok {
			k.cursor = math.MaxInt // nothing more comes
			return v, false
		}
	}
	return v, true
}

// Stop ends the work not yet started (Run's stop).
func (k *Keyed[K, T]) Stop() { k.stop() }
