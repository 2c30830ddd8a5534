package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func server(t *testing.T) (*httptest.Server, *atomic.Int32) {
	var flaky atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello")) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 2000))) })
	mux.HandleFunc("/chunked-big", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 20; i++ {
			w.Write([]byte(strings.Repeat("x", 100)))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/to-ok", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if flaky.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("at last"))
	})
	// A IIIF server refusing a size says why, in plain text; an HTML
	// page or a long body is not quoted.
	mux.HandleFunc("/refused", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "requested width 384 above\nmaxWidth 300", http.StatusBadRequest)
	})
	mux.HandleFunc("/refused-html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte("<html><body>bad</body></html>"))
	})
	mux.HandleFunc("/refused-long", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, strings.Repeat("why ", 100), http.StatusBadRequest)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &flaky
}

// TestRefusalNotQuoted: an HTML page or a long body is not quoted in the
// error of a refused request, nor a 404's ("404 page not found").
func TestRefusalNotQuoted(t *testing.T) {
	srv, _ := server(t)
	for _, path := range []string{"/refused-html", "/refused-long", "/missing"} {
		_, err := New(Policy{}, nil).Get(context.Background(), srv.URL+path)
		if err == nil || strings.Contains(err.Error(), "said") {
			t.Errorf("%s: %v", path, err)
		}
	}
}

func TestGet(t *testing.T) {
	srv, _ := server(t)
	for _, c := range []struct {
		path     string
		policy   Policy
		want     string
		is       error
		msg      string
		requests int
	}{
		{"/ok", Policy{}, "hello", nil, "", 1},
		{"/big", Policy{MaxBytes: 1000}, "", ErrTooLarge, "2000 bytes, limit 1000", 1},
		{"/chunked-big", Policy{MaxBytes: 1000}, "", ErrTooLarge, "limit 1000 bytes", 1},
		{"/to-ok", Policy{Private: PrivateAllowed}, "hello", nil, "", 2},
		{"/to-ok", Policy{}, "", ErrPrivate, "redirect refused: to http://127.0.0.1", 1},
		{"/loop", Policy{Private: PrivateAllowed, MaxRedirects: 3}, "", ErrRedirect, "more than 3 redirects", 4},
		{"/to-file", Policy{Private: PrivateAllowed}, "", ErrScheme, "to file:///etc/passwd", 1},
		{"/ok", Policy{Private: PrivateRefused}, "", ErrPrivate, "private range refused", 1},
		{"/missing", Policy{Retries: 3, Backoff: time.Millisecond}, "", nil, "404 Not Found", 1},
		{"/refused", Policy{}, "", nil, "400 Bad Request (the server said: requested width 384 above maxWidth 300)", 1},
		{"/slow", Policy{Timeout: 50 * time.Millisecond, Retries: 1, Backoff: time.Millisecond}, "", context.DeadlineExceeded, "no answer within 50ms, 2 tries", 2},
	} {
		t.Run(c.path+c.msg, func(t *testing.T) {
			f := New(c.policy, nil)
			got, err := f.Get(context.Background(), srv.URL+c.path)
			if c.want != "" {
				if err != nil || string(got) != c.want {
					t.Fatalf("%q, %v; want %q", got, err, c.want)
				}
			} else {
				if err == nil {
					t.Fatalf("%q: no error", got)
				}
				if c.is != nil && !errors.Is(err, c.is) {
					t.Errorf("%v: not %v", err, c.is)
				}
				if !strings.Contains(err.Error(), c.msg) {
					t.Errorf("%v: want %q", err, c.msg)
				}
			}
			if n, _ := f.Fetched(); n != c.requests {
				t.Errorf("%d requests, want %d: %+v", n, c.requests, f.Log())
			}
		})
	}
}

func TestRetryAndCache(t *testing.T) {
	srv, flaky := server(t)
	f := New(Policy{Retries: 2, Backoff: time.Millisecond}, nil)
	for i := 0; i < 3; i++ {
		got, err := f.Get(context.Background(), srv.URL+"/flaky")
		if err != nil || string(got) != "at last" {
			t.Fatalf("%q, %v", got, err)
		}
	}
	if n := flaky.Load(); n != 3 {
		t.Errorf("the server saw %d requests, want 3 (two 503s, one 200, then the cache)", n)
	}
	log := f.Log()
	if len(log) != 3 || log[0].Status != 503 || log[2].Status != 200 || log[2].Bytes != 7 {
		t.Errorf("log %+v", log)
	}
	if _, err := f.GetLinked(context.Background(), srv.URL+"/ok"); !errors.Is(err, ErrPrivate) {
		t.Errorf("a linked URL at a loopback address: %v", err)
	}
	if _, err := New(Policy{Private: PrivateAllowed}, nil).GetLinked(context.Background(), srv.URL+"/ok"); err != nil {
		t.Errorf("a linked URL with PrivateAllowed: %v", err)
	}
	if _, err := f.Get(context.Background(), "file:///etc/passwd"); !errors.Is(err, ErrScheme) {
		t.Errorf("file:// URL: %v", err)
	}
}

// TestConcurrentGets: callers asking for one URL at once share one request.
func TestConcurrentGets(t *testing.T) {
	var hits atomic.Int32
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-release
		w.Write([]byte("page"))
	}))
	defer srv.Close()
	f := New(Policy{}, nil)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := f.Get(context.Background(), srv.URL+"/p"); err != nil || string(got) != "page" {
				t.Errorf("%q, %v", got, err)
			}
		}()
	}
	for hits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // let the other callers arrive
	close(release)
	wg.Wait()
	if n := hits.Load(); n != 1 {
		t.Errorf("%d requests for one URL, want 1", n)
	}
}

func TestIsPrivate(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true, "169.254.169.254": true,
		"100.64.0.1": true, "0.0.0.0": true, "::1": true, "fd00::1": true, "fe80::1": true, "::ffff:127.0.0.1": true,
		"93.184.216.34": false, "2606:4700::1111": false, "100.128.0.1": false,
		// IPv6 addresses carrying a private IPv4 one: NAT64, NAT64's
		// local-use prefix, IPv4-compatible, 6to4, Teredo's client (they
		// passed; a trial reached the metadata address through them).
		"64:ff9b::a9fe:a9fe": true, "64:ff9b::7f00:1": true, "64:ff9b:1::a00:1": true, "::a9fe:a9fe": true,
		"::127.0.0.1": true, "2002:a9fe:a9fe::": true, "2002:7f00:1::": true, "2001:0:5db8:4136::80ff:fffe": true,
		// and public ones
		"64:ff9b::5db8:d822": false, "2002:5db8:d822::1": false, "2001:0:5db8:4136::a247:2dd9": false,
		// IPv4 ranges that are not public
		"0.1.2.3": true, "198.18.0.1": true, "240.0.0.1": true, "255.255.255.255": true, "192.0.0.8": true,
	} {
		if got := IsPrivate(netip.MustParseAddr(addr)); got != want {
			t.Errorf("IsPrivate(%s) = %v", addr, got)
		}
	}
}

// TestAllowHosts: a host of the allow-list is reached at a private
// address (first URL, link and redirect target); with OnlyHosts, any other
// host is refused before a request is sent.
func TestAllowHosts(t *testing.T) {
	srv, _ := server(t)
	host := strings.TrimPrefix(srv.URL, "http://") // 127.0.0.1:port
	for _, c := range []struct {
		name     string
		policy   Policy
		linked   bool
		path     string
		is       error
		requests int
	}{
		{"refused without the list", Policy{Private: PrivateRefused}, false, "/ok", ErrPrivate, 1},
		{"allowed by host:port", Policy{Private: PrivateRefused, AllowHosts: []string{host}}, false, "/ok", nil, 1},
		{"allowed by address", Policy{Private: PrivateRefused, AllowHosts: []string{"127.0.0.1"}}, false, "/to-ok", nil, 2},
		{"link refused without the list", Policy{}, true, "/ok", ErrPrivate, 0},
		{"link allowed", Policy{AllowHosts: []string{"127.0.0.1"}}, true, "/ok", nil, 1},
		{"only hosts: another host", Policy{Private: PrivateAllowed, AllowHosts: []string{"archive.example.org"}, OnlyHosts: true}, false, "/ok", ErrHost, 0},
		{"only hosts: this host", Policy{Private: PrivateRefused, AllowHosts: []string{"127.0.0.1"}, OnlyHosts: true}, false, "/ok", nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := New(c.policy, nil)
			got, err := f.Getter(c.linked)(context.Background(), srv.URL+c.path)
			switch {
			case c.is == nil && (err != nil || string(got) != "hello"):
				t.Errorf("%q, %v; want hello", got, err)
			case c.is != nil && !errors.Is(err, c.is):
				t.Errorf("%v; want %v", err, c.is)
			}
			// A refusal names the host refused (a service tells its client
			// which host to allow); other outcomes are no HostError.
			if h, ok := RefusedHost(err); ok != (c.is != nil) || (ok && h != host) {
				t.Errorf("RefusedHost(%v) = %q, %v; want %q, %v", err, h, ok, host, c.is != nil)
			}
			if n, _ := f.Fetched(); n != c.requests {
				t.Errorf("%d requests, want %d", n, c.requests)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want time.Duration
	}{
		{"", 0}, {"3", 3 * time.Second}, {"1.5", 1500 * time.Millisecond}, {"0", 0}, {"-4", 0}, {"soon", 0}, {"NaN", 0},
		{"1e20", 24 * time.Hour},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		if got := RetryAfter(c.v, now); got != c.want {
			t.Errorf("RetryAfter(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

// A 429 or 503 with Retry-After is asked again no sooner than it said
// (the fetcher asked again after its own backoff, 0.5 s and 1 s, whatever
// the server asked); an answer cut off is retried, and a passing failure
// when every attempt was cut off.
func TestRetryAfterAndCutOff(t *testing.T) {
	var n atomic.Int32
	var mu sync.Mutex // the handler's calls run on goroutines of their own
	var first time.Time
	var again time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/later":
			mu.Lock()
			defer mu.Unlock()
			if n.Add(1) == 1 {
				first = time.Now()
				w.Header().Set("Retry-After", "1")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			again = time.Since(first)
			w.Write([]byte("now"))
		case "/cut":
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("short"))
		}
	}))
	defer srv.Close()
	f := New(Policy{Retries: 2, Backoff: time.Millisecond, Private: PrivateAllowed}, nil)
	got, err := f.Get(context.Background(), srv.URL+"/later")
	mu.Lock()
	defer mu.Unlock()
	if err != nil || string(got) != "now" || again < time.Second {
		t.Errorf("%q, %v; asked again after %v, want at least the 1 s asked", got, err, again)
	}
	_, err = f.Get(context.Background(), srv.URL+"/cut")
	var cut *CutOffError
	if !errors.As(err, &cut) || !cut.Transient() || !strings.Contains(err.Error(), "cut off") {
		t.Errorf("an answer cut off: %v", err)
	}
	if reqs, _ := f.Fetched(); reqs != 2+3 {
		t.Errorf("%d requests, want 2 for /later and 3 for /cut", reqs)
	}
}

// A host that gave no answer to three fetches in a row is not asked for a
// minute: its fetches fail at once, passing (a book on a dead server cost
// three tries of the time limit a page). Another host is asked as before.
func TestHostDown(t *testing.T) {
	var hung atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/hung") {
			hung.Add(1)
			<-r.Context().Done()
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	f := New(Policy{Timeout: 30 * time.Millisecond, Retries: -1, Private: PrivateAllowed}, nil)
	for i := 0; i < hostDownAfter; i++ {
		if _, err := f.Get(context.Background(), fmt.Sprintf("%s/hung/%d", srv.URL, i)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("fetch %d: %v", i, err)
		}
	}
	_, err := f.Get(context.Background(), srv.URL+"/hung/next")
	var down *HostDownError
	if !errors.As(err, &down) || !down.Transient() || hung.Load() != hostDownAfter {
		t.Errorf("after %d fetches without an answer: %v (%d requests); want a HostDownError, not sent", hostDownAfter, err, hung.Load())
	}
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	if b, err := f.Get(context.Background(), other+"/ok"); err != nil || string(b) != "ok" {
		t.Errorf("another host: %q, %v", b, err)
	}
}

// Fetches already waiting for their slot when the host is held down are
// not sent either, and an error that does not pass (a TLS refusal, an
// HTTP answer to HTTPS) does not hold the host down.
func TestHostDownWaiting(t *testing.T) {
	var hung atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		<-r.Context().Done()
	}))
	defer srv.Close()
	f := New(Policy{Timeout: 30 * time.Millisecond, Retries: -1, Private: PrivateAllowed, MaxPerHost: 1}, nil)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Get(context.Background(), fmt.Sprintf("%s/p/%d", srv.URL, i))
		}()
	}
	wg.Wait()
	// A fetch's failure is counted when its Get returns, just after it
	// gave up the slot: the next one may be sent before it is (one more).
	if n := hung.Load(); n < hostDownAfter || n > hostDownAfter+1 {
		t.Errorf("%d requests sent of 8 queued for one slot, want %d (or one more)", n, hostDownAfter)
	}

	// An HTTP server asked as HTTPS: an error of the address, not passing.
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer plain.Close()
	g := New(Policy{Retries: -1, Private: PrivateAllowed}, nil)
	tls := strings.Replace(plain.URL, "http://", "https://", 1)
	for i := 0; i < hostDownAfter+1; i++ {
		_, err := g.Get(context.Background(), fmt.Sprintf("%s/p/%d", tls, i))
		var down *HostDownError
		if errors.As(err, &down) {
			t.Fatalf("fetch %d over TLS of an HTTP server held the host down: %v", i, err)
		}
	}
}
