package fetch

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestFreshSharesConnectionsNotCache: Fresh fetchers of one Fetcher reach
// the server over the connection the first one opened, and each fetches
// the URL itself (no cache shared), with its own log.
func TestFreshSharesConnectionsNotCache(t *testing.T) {
	var conns, requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte("page"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	base := New(Policy{Private: PrivateAllowed}, nil)
	for i := range 3 {
		f := base.Fresh()
		b, err := f.Get(context.Background(), srv.URL+"/p")
		if err != nil || string(b) != "page" {
			t.Fatalf("fetch %d: %q %v", i, b, err)
		}
		if n, _ := f.Fetched(); n != 1 {
			t.Errorf("fetch %d: its log has %d requests, want 1", i, n)
		}
	}
	// net/http drops a connection whose request write is not reported
	// within 50 ms (a stalled machine): one more dial is allowed then.
	if requests.Load() != 3 || conns.Load() > 2 {
		t.Errorf("3 fresh fetchers: %d requests over %d connections, want 3 over 1 (2 at most on a stalled machine)", requests.Load(), conns.Load())
	}
}
