package imageio

import (
	"context"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
)

// inFlight is the process-wide budget of decoded pixels (MaxPixelsInFlight).
var inFlight = newPixelBudget(MaxPixelsInFlight)

// pixelBudget is a weighted semaphore counting decoded pixels
// (golang.org/x/sync/semaphore): waiters are served in arrival order, so a
// large page is not starved by small ones, and a wait cut by its context
// leaves the budget as it was. A request larger than the budget takes the
// whole budget: it waits until it is alone.
type pixelBudget struct {
	size int64
	sem  *semaphore.Weighted
	used atomic.Int64 // pixels taken, for tests
}

func newPixelBudget(size int64) *pixelBudget {
	return &pixelBudget{size: size, sem: semaphore.NewWeighted(size)}
}

// clamp limits a request to the whole budget.
func (b *pixelBudget) clamp(n int64) int64 { return min(max(n, 0), b.size) }

// acquire takes n pixels of the budget, waiting until they are free or ctx
// is done (then it returns ctx's error, also when ctx was done before the
// call).
func (b *pixelBudget) acquire(ctx context.Context, n int64) error {
	n = b.clamp(n)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return err
	}
	b.used.Add(n)
	return nil
}

// release gives back n pixels taken by acquire.
func (b *pixelBudget) release(n int64) {
	n = b.clamp(n)
	b.used.Add(-n)
	b.sem.Release(n)
}

// inUse reports the pixels currently taken (for tests).
func (b *pixelBudget) inUse() int64 { return b.used.Load() }
