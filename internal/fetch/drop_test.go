package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
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

// A URL an earlier run kept is not requested.
func TestUseKept(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.Write([]byte("served " + r.URL.Path))
	}))
	defer srv.Close()
	f := New(Policy{}, nil)
	f.UseKept(func(u string) ([]byte, bool) {
		if u == srv.URL+"/kept" {
			return []byte("kept"), true
		}
		return nil, false
	})
	for _, c := range []struct{ path, want string }{{"/kept", "kept"}, {"/kept", "kept"}, {"/other", "served /other"}} {
		b, err := f.Get(context.Background(), srv.URL+c.path)
		if err != nil || string(b) != c.want {
			t.Errorf("Get %s = %q, %v; want %q", c.path, b, err, c.want)
		}
	}
	if hits != 1 {
		t.Errorf("%d requests, want 1 (the URL not kept)", hits)
	}
}
