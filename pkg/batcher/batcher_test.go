package batcher

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a batch function doubling its items and recording batch sizes.
type recorder struct {
	mu    sync.Mutex
	sizes []int
	delay time.Duration
}

func (r *recorder) run(items []int) ([]int, error) {
	r.mu.Lock()
	r.sizes = append(r.sizes, len(items))
	r.mu.Unlock()
	time.Sleep(r.delay)
	out := make([]int, len(items))
	for i, v := range items {
		out[i] = 2 * v
	}
	return out, nil
}

func TestConcurrentCallersShareBatches(t *testing.T) {
	for _, tc := range []struct {
		name            string
		callers, items  int
		maxBatch        int
		wantSharedBatch bool
	}{
		{"32 single-page requests", 32, 1, 16, true},
		{"8 three-page requests", 8, 3, 16, true},
		{"max batch 4", 16, 2, 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{delay: 2 * time.Millisecond}
			b := New(rec.run, Options{MaxBatch: tc.maxBatch, MaxWait: 20 * time.Millisecond})
			defer b.Close()
			var wg sync.WaitGroup
			errs := make(chan error, tc.callers)
			for c := 0; c < tc.callers; c++ {
				wg.Add(1)
				go func(c int) {
					defer wg.Done()
					items := make([]int, tc.items)
					for i := range items {
						items[i] = c*100 + i
					}
					got, err := b.Do(context.Background(), items...)
					if err != nil {
						errs <- err
						return
					}
					for i, v := range got {
						if v != 2*items[i] {
							errs <- errors.New("result out of order or wrong")
							return
						}
					}
				}(c)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			total, largest := 0, 0
			for _, n := range rec.sizes {
				total += n
				largest = max(largest, n)
				if n > tc.maxBatch {
					t.Fatalf("batch of %d over the maximum %d", n, tc.maxBatch)
				}
			}
			if total != tc.callers*tc.items {
				t.Fatalf("%d items run, want %d", total, tc.callers*tc.items)
			}
			if tc.wantSharedBatch && largest <= tc.items {
				t.Fatalf("no batch mixed requests: sizes %v", rec.sizes)
			}
		})
	}
}

func TestLoneItemWaitsAtMostMaxWait(t *testing.T) {
	var waits []time.Duration
	var sizes []int
	rec := &recorder{}
	b := New(rec.run, Options{MaxWait: 30 * time.Millisecond,
		OnWait: func(d time.Duration) { waits = append(waits, d) }, OnBatch: func(n int) { sizes = append(sizes, n) }})
	defer b.Close()
	t0 := time.Now()
	got, err := b.Do(context.Background(), 21)
	if err != nil || len(got) != 1 || got[0] != 42 {
		t.Fatalf("Do = %v, %v", got, err)
	}
	el := time.Since(t0)
	if len(sizes) != 1 || sizes[0] != 1 || len(waits) != 1 {
		t.Fatalf("sizes %v waits %v", sizes, waits)
	}
	if waits[0] < 25*time.Millisecond || el > time.Second {
		t.Fatalf("lone item waited %v (elapsed %v), want about the 30ms bound", waits[0], el)
	}
	// No wait: a negative MaxWait runs at once.
	b2 := New(rec.run, Options{MaxWait: -1})
	defer b2.Close()
	t0 = time.Now()
	if _, err := b2.Do(context.Background(), 1); err != nil || time.Since(t0) > 25*time.Millisecond {
		t.Fatalf("no-wait batcher took %v (%v)", time.Since(t0), err)
	}
}

func TestErrorsAndPanics(t *testing.T) {
	calls := 0
	fn := func(items []int) ([]int, error) {
		calls++
		switch items[0] {
		case -1:
			return nil, errors.New("model failed")
		case -2:
			panic("native crash")
		case -3:
			return []int{1, 2, 3}, nil
		}
		return items, nil
	}
	b := New(fn, Options{MaxWait: -1})
	defer b.Close()
	for _, tc := range []struct {
		item int
		want string
	}{
		{-1, "model failed"}, {-2, "native crash"}, {-3, "3 results for 1 items"}, {7, ""},
	} {
		got, err := b.Do(context.Background(), tc.item)
		if tc.want == "" {
			if err != nil || got[0] != tc.item {
				t.Fatalf("item %d: %v %v", tc.item, got, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("item %d: error %v, want %q", tc.item, err, tc.want)
		}
	}
}

func TestCancelAndClose(t *testing.T) {
	rec := &recorder{delay: 100 * time.Millisecond}
	b := New(rec.run, Options{MaxWait: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := b.Do(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled Do: %v", err)
	}
	b.Close()
	if _, err := b.Do(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Close: %v", err)
	}
}

// TestGoneCallersAreNotRun: items whose caller gave up while they waited
// in the queue are dropped, not run through the function.
func TestGoneCallersAreNotRun(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	var mu sync.Mutex
	var seen []int
	fn := func(items []int) ([]int, error) {
		mu.Lock()
		seen = append(seen, items...)
		mu.Unlock()
		select {
		case started <- struct{}{}:
		default:
		}
		<-release
		return items, nil
	}
	b := New(fn, Options{MaxBatch: 1, MaxWait: -1})
	defer b.Close()
	first := make(chan error, 1)
	go func() { _, err := b.Do(context.Background(), 1); first <- err }()
	<-started // item 1 is running and holds the loop
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan error, 1)
	go func() { _, err := b.Do(ctx, 2); gone <- err }()
	for len(b.in) == 0 { // wait until item 2 is queued behind item 1
		runtime.Gosched()
	}
	cancel()
	if err := <-gone; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Do: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if _, err := b.Do(context.Background(), 3); err != nil { // the loop goes on
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, v := range seen {
		if v == 2 {
			t.Errorf("the cancelled item ran: %v", seen)
		}
	}
}
