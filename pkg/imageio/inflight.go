package imageio

import (
	"context"
	"sync"
)

// inFlight is the process-wide budget of decoded pixels (MaxPixelsInFlight).
var inFlight = newPixelBudget(MaxPixelsInFlight)

// pixelBudget is a weighted semaphore counting decoded pixels. Waiters are
// served in arrival order, so a large page is not starved by small ones.
type pixelBudget struct {
	mu      sync.Mutex
	size    int64
	used    int64
	waiters []*pixelWaiter
}

type pixelWaiter struct {
	n     int64
	ready chan struct{}
}

func newPixelBudget(size int64) *pixelBudget { return &pixelBudget{size: size} }

// clamp limits a request to the whole budget: a page larger than the budget
// waits until it is alone.
func (b *pixelBudget) clamp(n int64) int64 { return min(max(n, 0), b.size) }

// acquire takes n pixels of the budget, waiting until they are free or ctx
// is done.
func (b *pixelBudget) acquire(ctx context.Context, n int64) error {
	n = b.clamp(n)
	b.mu.Lock()
	if len(b.waiters) == 0 && b.used+n <= b.size {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &pixelWaiter{n: n, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.used -= n
			b.grant()
		default:
			for i, x := range b.waiters {
				if x == w {
					b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
					break
				}
			}
			b.grant()
		}
		return ctx.Err()
	}
}

// release gives back n pixels taken by acquire.
func (b *pixelBudget) release(n int64) {
	n = b.clamp(n)
	b.mu.Lock()
	b.used -= n
	b.grant()
	b.mu.Unlock()
}

// grant wakes the waiters at the head of the queue that now fit.
// b.mu must be held.
func (b *pixelBudget) grant() {
	for len(b.waiters) > 0 {
		w := b.waiters[0]
		if b.used+w.n > b.size {
			return
		}
		b.used += w.n
		b.waiters = b.waiters[1:]
		close(w.ready)
	}
}

// inUse reports the pixels currently taken (for tests).
func (b *pixelBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
