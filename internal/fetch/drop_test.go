package fetch

import (
	"context"
	"testing"
)

// A dropped URL is no longer in the cache: it is fetched again, and a URL
// not dropped is still answered from the cache.
func TestDrop(t *testing.T) {
	srv, _ := server(t)
	f := New(Policy{}, nil)
	ctx := context.Background()
	for _, step := range []struct {
		drop     bool
		requests int
	}{{false, 1}, {false, 1}, {true, 1}, {false, 2}} {
		if step.drop {
			f.Drop(srv.URL + "/ok")
		} else if body, err := f.Get(ctx, srv.URL+"/ok"); err != nil || string(body) != "hello" {
			t.Fatalf("Get: %q, %v", body, err)
		}
		if n, _ := f.Fetched(); n != step.requests {
			t.Errorf("after drop=%v: %d requests, want %d", step.drop, n, step.requests)
		}
	}
}
