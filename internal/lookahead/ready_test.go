package lookahead

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestReady: Ready gives the results made and not taken, in order, up to
// the first still being made, without waiting for it, and starts no more
// work; Take gives nothing after it.
func TestReady(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	made := make(chan int, len(keys))
	var started atomic.Int32
	k := runKeyed(context.Background(), keys, 5, func(ctx context.Context, key string) string {
		started.Add(1)
		if key == "c" {
			<-ctx.Done() // still being made when Ready is called
			return ""
		}
		return "r:" + key
	}, func(i int) { made <- i })
	defer k.Stop()
	if v, ok := k.Take("a"); v != "r:a" || !ok {
		t.Fatalf("Take(a) = %q, %v", v, ok)
	}
	for seen := map[int]bool{}; !seen[1] || !seen[3] || !seen[4]; {
		seen[<-made] = true // b, d and e made
	}
	var got []string
	k.Ready(0, func(key, v string) { got = append(got, key+"="+v) })
	if len(got) != 1 || got[0] != "b=r:b" {
		t.Errorf("Ready gave %q, want b's result alone (c is being made)", got)
	}
	if v, ok := k.Take("d"); ok {
		t.Errorf("Take(d) after Ready = %q, want nothing", v)
	}
	// The places Ready freed are not filled: once the queue ends (no
	// more work is being queued), the work of a to e alone was started.
	for range k.run.queue {
	}
	// (c's work may not have begun yet: its goroutine is started.)
	if n := started.Load(); n > 5 {
		t.Errorf("%d items' work started, want a to e's alone (no more after Ready)", n)
	}
}

// TestReadyWaits: Ready waits up to its wait for a result being made (c,
// let through while b is kept), then gives the ones made after it.
func TestReadyWaits(t *testing.T) {
	gate, started := make(chan struct{}), make(chan struct{})
	k := RunKeyed(context.Background(), []string{"a", "b", "c", "d"}, 4, func(ctx context.Context, key string) string {
		if key == "c" {
			close(started)
			<-gate
		}
		return "r:" + key
	})
	defer k.Stop()
	<-started // a, b and c are under way
	var got []string
	k.Ready(time.Minute, func(key, v string) { // a failure's bound, not a synchronisation
		got = append(got, key+"="+v)
		if key == "b" {
			close(gate)
		}
	})
	// d's work, not started before Ready, is not started: Ready stops there.
	if strings.Join(got, " ") != "a=r:a b=r:b c=r:c" && strings.Join(got, " ") != "a=r:a b=r:b c=r:c d=r:d" {
		t.Errorf("Ready gave %q, want a's, b's and c's (c's made while it waited), and d's if it had started", got)
	}
}
