package lookahead_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"archivekit/internal/lookahead"
)

// TestOrder: results come back in order whatever order the work ends in.
func TestOrder(t *testing.T) {
	const n = 3
	var gates [n]chan struct{}
	started := make(chan int, n)
	for i := range gates {
		gates[i] = make(chan struct{})
	}
	next, stop := lookahead.Run(context.Background(), n, n, func(_ context.Context, i int) int {
		started <- i
		<-gates[i]
		return i * 10
	})
	defer stop()
	got := make(chan []int)
	go func() {
		var out []int
		for v, ok := next(); ok; v, ok = next() {
			out = append(out, v)
		}
		got <- out
	}()
	for range n {
		<-started
	}
	for i := n - 1; i >= 0; i-- { // the last ends first
		close(gates[i])
	}
	if out := <-got; fmt.Sprint(out) != "[0 10 20]" {
		t.Errorf("results %v, want [0 10 20]", out)
	}
}

// TestBound: at most workers items are worked on at once, and that many
// are, for several worker counts.
func TestBound(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			const n = 12
			var active, most atomic.Int32
			release := make(chan struct{})
			started := make(chan struct{}, n)
			next, stop := lookahead.Run(context.Background(), n, workers, func(_ context.Context, i int) int {
				a := active.Add(1)
				for m := most.Load(); a > m && !most.CompareAndSwap(m, a); m = most.Load() {
				}
				started <- struct{}{}
				<-release
				active.Add(-1)
				return i
			})
			defer stop()
			done := make(chan int)
			go func() {
				sum := 0
				for v, ok := next(); ok; v, ok = next() {
					sum += v
				}
				done <- sum
			}()
			for range workers { // with the consumer waiting, workers items start
				<-started
			}
			close(release)
			if sum := <-done; sum != n*(n-1)/2 {
				t.Errorf("sum of results %d, want %d", sum, n*(n-1)/2)
			}
			if m := most.Load(); m != int32(workers) {
				t.Errorf("at most %d items at once, want %d", m, workers)
			}
		})
	}
}

// TestStop: after stop, next gives no more results and the work calls
// under way have their context done (they return).
func TestStop(t *testing.T) {
	started, ended := make(chan struct{}, 100), make(chan struct{}, 100)
	next, stop := lookahead.Run(context.Background(), 100, 3, func(ctx context.Context, i int) int {
		started <- struct{}{}
		<-ctx.Done()
		ended <- struct{}{}
		return i
	})
	<-started
	<-started // two under way (the buffered ones; no consumer yet)
	stop()
	if v, ok := next(); ok {
		t.Errorf("next after stop gave %d", v)
	}
	<-ended
	<-ended
}

func ExampleRun() {
	pages := []string{"p1.png", "p2.png", "p3.png"}
	next, stop := lookahead.Run(context.Background(), len(pages), 2, func(_ context.Context, i int) string {
		return strings.ToUpper(pages[i]) // a fetch, in real use
	})
	defer stop()
	for v, ok := next(); ok; v, ok = next() {
		fmt.Println(v)
	}
	// Output:
	// P1.PNG
	// P2.PNG
	// P3.PNG
}
