package lookahead

import (
	"context"
	"sync/atomic"
	"testing"
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
	k.Ready(func(key, v string) { got = append(got, key+"="+v) })
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
	if n := started.Load(); n != 5 {
		t.Errorf("%d items' work started, want a to e's alone (no more after Ready)", n)
	}
}
