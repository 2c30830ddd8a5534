package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
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

// Callers fetching at once send at most MaxPerHost requests to one host at
// a time; the others wait their turn and are all answered.
func TestMaxPerHost(t *testing.T) {
	const limit, callers = 3, 9
	arrived := make(chan struct{}, callers)
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, most := 0, 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		w.Write([]byte(r.URL.Path))
	}))
	defer srv.Close()
	f := New(Policy{MaxPerHost: limit}, nil)
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.Get(context.Background(), fmt.Sprintf("%s/%d", srv.URL, i))
			errs <- err
		}()
	}
	for range limit {
		<-arrived // the first limit requests are in flight at once
	}
	select {
	case <-arrived:
		t.Errorf("a request beyond the %d in flight reached the server", limit)
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if most != limit {
		t.Errorf("%d requests in flight at most, want %d", most, limit)
	}
}
