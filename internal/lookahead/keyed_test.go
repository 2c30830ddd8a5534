package lookahead

import (
	"context"
	"sync/atomic"
	"testing"
)

// Keyed: results are taken by key in the keys' order, each key's work
// done once; a key passed over, taken already or never listed gives ok
// false.
func TestKeyed(t *testing.T) {
	var calls atomic.Int32
	work := func(_ context.Context, key string) string { calls.Add(1); return "r:" + key }
	k := RunKeyed(context.Background(), []string{"a", "b", "c", "d"}, 2, work)
	defer k.Stop()
	for _, c := range []struct {
		key, want string
		ok        bool
	}{
		{"a", "r:a", true},
		{"c", "r:c", true}, // b passed over
		{"b", "", false},   // passed over
		{"c", "", false},   // taken
		{"x", "", false},   // never listed
		{"d", "r:d", true},
	} {
		if got, ok := k.Take(c.key); got != c.want || ok != c.ok {
			t.Errorf("Take(%s) = %q, %v; want %q, %v", c.key, got, ok, c.want, c.ok)
		}
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("%d calls of work, want one a key", n)
	}
}
