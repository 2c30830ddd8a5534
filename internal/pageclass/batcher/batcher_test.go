package batcher

import (
	"context"
	"errors"
	"runtime"
	"slices"
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

// op is one step of a scheduling scenario.
type op struct {
	do     []int // start a Do call with these items
	queued int   // wait until this many Do calls are queued behind the running batch
	batch  []int // expect the next batch to start with exactly these items
	linger bool  // expect the idle batcher to start lingering
	fire   bool  // end the linger (the fake clock's deadline passes)
	finish bool  // let the running batch return
}

// TestSchedule drives the batcher step by step: the batch function blocks
// until the test lets it return, and the linger runs on a fake clock, so
// every batch boundary is decided by the scenario, not by timing.
func TestSchedule(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxBatch int
		maxWait  time.Duration
		ops      []op
	}{
		{"a lone request runs at once", 4, 0, []op{
			{do: []int{1}}, {batch: []int{1}}, {finish: true},
			{do: []int{2, 3}}, {batch: []int{2, 3}}, {finish: true},
		}},
		{"requests queued while busy form the next batch", 8, 0, []op{
			{do: []int{1}}, {batch: []int{1}},
			{do: []int{2}}, {queued: 1}, {do: []int{3, 4}}, {queued: 2}, {do: []int{5}}, {queued: 3},
			{finish: true}, {batch: []int{2, 3, 4, 5}}, {finish: true},
		}},
		{"max batch splits a request, in order", 2, 0, []op{
			{do: []int{1}}, {batch: []int{1}},
			{do: []int{2, 3, 4}}, {queued: 1}, {do: []int{5}}, {queued: 2},
			{finish: true}, {batch: []int{2, 3}}, {finish: true}, {batch: []int{4, 5}}, {finish: true},
		}},
		{"a large idle request is cut into full batches", 2, 0, []op{
			{do: []int{1, 2, 3}}, {batch: []int{1, 2}}, {finish: true}, {batch: []int{3}}, {finish: true},
		}},
		{"linger: a lone request waits for the deadline", 4, time.Second, []op{
			{do: []int{1}}, {linger: true}, {fire: true}, {batch: []int{1}}, {finish: true},
		}},
		{"linger ends when the batch is full", 3, time.Second, []op{
			{do: []int{1}}, {linger: true}, {do: []int{2, 3}}, {batch: []int{1, 2, 3}}, {finish: true},
		}},
		{"no linger when the queue fills a batch", 2, time.Second, []op{
			{do: []int{1}}, {linger: true}, {fire: true}, {batch: []int{1}},
			{do: []int{2}}, {queued: 1}, {do: []int{3}}, {queued: 2},
			{finish: true}, {batch: []int{2, 3}}, {finish: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan []int)
			proceed := make(chan struct{})
			fn := func(items []int) ([]int, error) {
				started <- append([]int(nil), items...)
				<-proceed
				out := make([]int, len(items))
				for i, v := range items {
					out[i] = 2 * v
				}
				return out, nil
			}
			lingering := make(chan time.Duration, 8)
			deadline := make(chan time.Time)
			o := Options{MaxBatch: tc.maxBatch, MaxWait: tc.maxWait,
				after: func(d time.Duration) <-chan time.Time { lingering <- d; return deadline }}
			b := New(fn, o)
			defer b.Close()
			results := make(chan error, len(tc.ops))
			calls := 0
			// guard turns a scheduler that never does what is expected
			// into a failure instead of a hung test.
			guard := func() <-chan time.Time { return time.After(10 * time.Second) }
			for i, step := range tc.ops {
				switch {
				case step.do != nil:
					calls++
					go func(items []int) {
						got, err := b.Do(context.Background(), items...)
						if err == nil {
							for k := range items {
								if got[k] != 2*items[k] {
									err = errors.New("wrong result or order")
								}
							}
						}
						results <- err
					}(step.do)
				case step.queued > 0:
					for len(b.in) != step.queued {
						runtime.Gosched()
					}
				case step.batch != nil:
					select {
					case got := <-started:
						if !slices.Equal(got, step.batch) {
							t.Fatalf("step %d: batch %v, want %v", i, got, step.batch)
						}
					case <-guard():
						t.Fatalf("step %d: no batch started, want %v", i, step.batch)
					}
				case step.linger:
					select {
					case d := <-lingering:
						if d != tc.maxWait {
							t.Fatalf("step %d: linger of %v, want %v", i, d, tc.maxWait)
						}
					case got := <-started:
						t.Fatalf("step %d: batch %v ran instead of lingering", i, got)
					case <-guard():
						t.Fatalf("step %d: no linger", i)
					}
				case step.fire:
					deadline <- time.Time{}
				case step.finish:
					proceed <- struct{}{}
				}
			}
			for range calls {
				if err := <-results; err != nil {
					t.Fatal(err)
				}
			}
			select {
			case got := <-started:
				t.Fatalf("unexpected batch %v", got)
			case d := <-lingering:
				t.Fatalf("unexpected linger of %v", d)
			default:
			}
		})
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
	// The batch waits until the caller has given up: only its context
	// can end Do (a batch that merely took longer than the deadline could
	// finish first on a stalled machine).
	release := make(chan struct{})
	b := New(func(items []int) ([]int, error) { <-release; return items, nil }, Options{MaxWait: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := b.Do(ctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled Do: %v", err)
	}
	close(release)
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
