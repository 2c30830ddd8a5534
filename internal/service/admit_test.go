package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/testenv"
)

// hostileConn opens a connection to addr and sends head; the connection
// stays open until the test ends. When trickle is set it then sends one
// body byte every 200 ms until the test ends. It never reads.
func hostileConn(t *testing.T, addr, head string, trickle bool, stop <-chan struct{}, wg *sync.WaitGroup) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer conn.Close()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if trickle {
					if _, err := conn.Write([]byte("x")); err != nil {
						<-stop
						return
					}
				}
			}
		}
	}()
}

// TestHostileClientsDoNotStarve: with 16 connections trickling their
// bodies at 5 bytes/s and 16 clients that never read their (large)
// answers, a legitimate request is still served, and a drain is not held
// hostage by them. On a service that takes its work slot before the body
// arrives and holds it while writing, all 16 slots are taken and the
// legitimate request gets 503.
func TestHostileClientsDoNotStarve(t *testing.T) {
	svc, srv, _ := testService(t, env{"LOG_LEVEL": "ERROR", "MAX_CONCURRENT_REQUESTS": "16"}, Options{})
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	svc.HandleFunc("POST /big", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for range 64 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	_ = svc.WarmUp(context.Background())
	addr := strings.TrimPrefix(srv.URL, "http://")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()
	for range 16 {
		hostileConn(t, addr, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n", true, stop, &wg)
		hostileConn(t, addr, "POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx", false, stop, &wg)
	}
	// All 32 are being served (bodies arriving, answers being written)
	// where the slots no longer hold them; 16 at most otherwise.
	all := testenv.WaitFor(5*time.Second, func() bool { return svc.InFlight() >= 32 })
	t.Logf("hostile requests in flight: %d (all 32 admitted: %v)", svc.InFlight(), all)

	client := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	resp, err := client.Post(srv.URL+"/upload", "text/plain", strings.NewReader("legitimate"))
	if err != nil {
		t.Fatalf("legitimate request: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("legitimate request: %d in %v: %s", resp.StatusCode, time.Since(start).Round(time.Millisecond), body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("legitimate request starved: %d %s", resp.StatusCode, body)
	}

	// A drain cuts both kinds after DrainBodyGrace instead of waiting for them.
	svc.BeginDrain()
	start = time.Now()
	if !testenv.WaitFor(10*time.Second, func() bool { return svc.InFlight() == 0 }) {
		t.Fatalf("%d hostile requests still in flight 10 s into the drain", svc.InFlight())
	}
	t.Logf("drain: in flight 0 after %v", time.Since(start).Round(time.Millisecond))
}

// dialFrom is an HTTP client whose connections come from the loopback
// address local (127.0.0.2 is another client than 127.0.0.1).
func dialFrom(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
}

// heldWork routes POST /work to a handler that says which client entered
// (clientKey) and holds the request until release is closed, and warms
// svc up.
func heldWork(svc *Service) (entered chan string, release chan struct{}) {
	release = make(chan struct{})
	entered = make(chan string, 4)
	svc.HandleFunc("POST /work", func(w http.ResponseWriter, r *http.Request) {
		entered <- clientKey(r)
		<-release
		WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	})
	_ = svc.WarmUp(context.Background())
	return entered, release
}

// TestPerClientCap: one client gets at most MAX_CONCURRENT_PER_CLIENT
// slots; another client is served meanwhile.
func TestPerClientCap(t *testing.T) {
	svc, srv, _ := testService(t, env{"LOG_LEVEL": "ERROR", "MAX_CONCURRENT_REQUESTS": "4", "MAX_CONCURRENT_PER_CLIENT": "1"}, Options{})
	entered, release := heldWork(svc)
	one, two := dialFrom("127.0.0.1"), dialFrom("127.0.0.2")
	post := func(c *http.Client) (int, string) {
		resp, err := c.Post(srv.URL+"/work", "text/plain", strings.NewReader("x"))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	first := make(chan int, 1)
	go func() { code, _ := post(one); first <- code }()
	<-entered
	if code, body := post(one); code != http.StatusServiceUnavailable || !strings.Contains(body, "MAX_CONCURRENT_PER_CLIENT") {
		t.Errorf("second request of the same client: %d %s", code, body)
	}
	other := make(chan int, 1)
	go func() { code, _ := post(two); other <- code }()
	if got := <-entered; got != "127.0.0.2" {
		t.Errorf("entered from %s, want 127.0.0.2", got)
	}
	close(release)
	if a, b := <-first, <-other; a != 200 || b != 200 {
		t.Errorf("first client %d, other client %d", a, b)
	}
}

// TestPerClientCapBehindProxy: behind a reverse proxy named in
// TRUSTED_PROXIES, two clients are two (all clients shared the proxy's
// address, and one client's request refused another's); a client that
// names another address in its own X-Forwarded-For, past the proxy, is
// still itself; a peer not trusted cannot claim another address.
func TestPerClientCapBehindProxy(t *testing.T) {
	svc, srv, logs := testService(t, env{"LOG_LEVEL": "INFO", "MAX_CONCURRENT_REQUESTS": "4", "MAX_CONCURRENT_PER_CLIENT": "1", "TRUSTED_PROXIES": "127.0.0.1"}, Options{})
	entered, release := heldWork(svc)
	post := func(c *http.Client, xff string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+"/work", strings.NewReader("x"))
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	proxy, other := dialFrom("127.0.0.1"), dialFrom("127.0.0.2")
	first := make(chan int, 1)
	go func() { code, _ := post(proxy, "198.51.100.4"); first <- code }()
	if got := <-entered; got != "198.51.100.4" {
		t.Errorf("entered as %s, want the forwarded client 198.51.100.4", got)
	}
	// The same client again, with a forged address of its own left of the
	// one the proxy added: refused as itself.
	if code, body := post(proxy, "203.0.113.9, 198.51.100.4"); code != http.StatusServiceUnavailable || !strings.Contains(body, "MAX_CONCURRENT_PER_CLIENT") {
		t.Errorf("second request of the same client through the proxy: %d %s", code, body)
	}
	second := make(chan int, 1)
	go func() { code, _ := post(proxy, "198.51.100.5"); second <- code }()
	if got := <-entered; got != "198.51.100.5" {
		t.Errorf("entered as %s, want 198.51.100.5", got)
	}
	// A peer that is no trusted proxy is its own address, whatever it says.
	third := make(chan int, 1)
	go func() { code, _ := post(other, "198.51.100.6"); third <- code }()
	if got := <-entered; got != "127.0.0.2" {
		t.Errorf("an untrusted peer entered as %s, want 127.0.0.2", got)
	}
	close(release)
	if a, b, c := <-first, <-second, <-third; a != 200 || b != 200 || c != 200 {
		t.Errorf("answers %d %d %d, want 200", a, b, c)
	}
	if !strings.Contains(logs.String(), `"client_addr":"198.51.100.4"`) {
		t.Errorf("the access log does not name the forwarded client:\n%s", logs.String())
	}
}

// TestSpooledBody: a body over SpoolMemory reaches the handler whole, and
// no file of it is in the temporary folder while the handler reads it (a
// service killed mid-request left the client's document there for ever)
// nor after the answer.
func TestSpooledBody(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	svc, srv, _ := testService(t, env{"LOG_LEVEL": "ERROR"}, Options{})
	svc.HandleFunc("POST /sum", func(w http.ResponseWriter, r *http.Request) {
		if named, _ := os.ReadDir(dir); len(named) != 0 {
			t.Errorf("the body is named in the temporary folder while it is read: %v", named)
		}
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			WriteBodyError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, map[string]string{"sum": fmt.Sprintf("%x", h.Sum(nil)), "n": fmt.Sprint(n, r.ContentLength)})
	})
	_ = svc.WarmUp(context.Background())
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*SpoolMemory/16+5)
	got := do(t, "POST", srv.URL+"/sum", bytes.NewReader(data), nil)
	want := fmt.Sprintf(`"sum":"%x"`, sha256.Sum256(data))
	if got.status != 200 || !strings.Contains(string(got.body), want) || !strings.Contains(string(got.body), fmt.Sprintf(`"n":"%d %d"`, len(data), len(data))) {
		t.Errorf("%d %s, want %s", got.status, got.body, want)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("spool files left: %v", left)
	}
}

// TestUploadCutOff: a client that goes away in the middle of a large
// upload is logged as cut and counted 499, not as the service's failure
// (it was 500 internal, logged at ERROR, "storing the request body:
// unexpected EOF"), and its spooled part is removed.
func TestUploadCutOff(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	svc, srv, logs := testService(t, env{"LOG_LEVEL": "INFO"}, Options{})
	svc.HandleFunc("POST /sum", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		WriteJSON(w, http.StatusOK, "ok")
	})
	_ = svc.WarmUp(context.Background())
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /sum HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", 4*SpoolMemory)
	conn.Write(make([]byte, 2*SpoolMemory))
	conn.Close()
	if !testenv.WaitFor(10*time.Second, func() bool { return strings.Contains(logs.String(), `"cut"`) }) {
		t.Fatalf("the cut upload was not logged as cut:\n%s", logs)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) || strings.Contains(logs.String(), "storing the request body") || strings.Contains(logs.String(), "bad_request") {
		t.Errorf("a client's cut upload logged as the service's failure:\n%s", logs)
	}
	metrics := do(t, "GET", srv.URL+"/metrics", nil, nil)
	if !strings.Contains(string(metrics.body), `status="499"`) || strings.Contains(string(metrics.body), `status="500"`) {
		t.Errorf("metrics do not count the cut upload as 499:\n%s", metrics.body)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("spool files left: %v", left)
	}
}

// TestTempDirUnusable: a temporary folder (TMPDIR) that cannot hold request
// bodies fails the start naming it and TMPDIR; one that goes away after the
// start makes a large upload the service's failure, 500 with the cause in
// the log at ERROR and no path in the answer (before, the service started
// and answered each large upload 400 bad_request, as the client's fault).
func TestTempDirUnusable(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	t.Setenv("TMPDIR", missing)
	if _, err := New(Options{Name: "test-api", DefaultMaxUploadMB: 10, LookupEnv: env{}.lookup}); err == nil ||
		!strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "TMPDIR") {
		t.Errorf("start with TMPDIR=%s: %v, want an error naming it", missing, err)
	}

	dir := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", dir)
	svc, srv, logs := testService(t, env{"LOG_LEVEL": "WARNING"}, Options{})
	svc.HandleFunc("POST /sum", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		WriteJSON(w, http.StatusOK, "ok")
	})
	_ = svc.WarmUp(context.Background())
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	got := do(t, "POST", srv.URL+"/sum", bytes.NewReader(make([]byte, 2*SpoolMemory)), nil)
	if got.status != 500 || !strings.Contains(string(got.body), `"reason":"internal"`) || strings.Contains(string(got.body), dir) {
		t.Errorf("upload with the temporary folder gone: %d %s, want 500 internal naming no path", got.status, got.body)
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), dir) {
		t.Errorf("no ERROR record naming the folder:\n%s", logs)
	}
}

// TestRetryAfterFollowsWork: a request refused for want of a slot is told
// to come back after about the time a slot is held (it was told 1 s while
// documents held their slots for 20 s), from 1 to 60 s.
func TestRetryAfterFollowsWork(t *testing.T) {
	for _, c := range []struct {
		held []time.Duration
		want string
	}{
		{nil, "1"},
		{[]time.Duration{20 * time.Second}, "20"},
		{[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, "1"},
		{[]time.Duration{10 * time.Minute}, "60"},
		{[]time.Duration{20 * time.Second, 20 * time.Second, 0}, "18"},
	} {
		var st slotTimes
		for _, d := range c.held {
			st.note(d)
		}
		if got := st.retryAfter(); got != c.want {
			t.Errorf("slots held %v: Retry-After %s, want %s", c.held, got, c.want)
		}
	}
}

// TestRetryAfterBeforeAnySlotFreed: on a service just started, before any
// slot was freed, a refused request is told how long the oldest slot held
// now has been held (it was told 1 s while each slot held a 13 s
// document); once slots are freed, their mean.
func TestRetryAfterBeforeAnySlotFreed(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	st := slotTimes{now: func() time.Time { return at }}
	if got := st.retryAfter(); got != "1" {
		t.Errorf("nothing held: Retry-After %s, want 1", got)
	}
	first := st.begin()
	at = at.Add(4 * time.Second)
	st.begin()
	at = at.Add(5 * time.Second)
	if got := st.retryAfter(); got != "9" {
		t.Errorf("two slots held 9 s and 5 s, none freed: Retry-After %s, want 9", got)
	}
	at = at.Add(4 * time.Second)
	st.end(first)
	if got := st.retryAfter(); got != "13" {
		t.Errorf("one slot freed after 13 s: Retry-After %s, want 13", got)
	}
}

// TestAnswerCutLogged: an answer its client stops reading half-way is
// logged as cut off after the bytes sent, at WARNING (it was an INFO line
// with status 200 like any other).
func TestAnswerCutLogged(t *testing.T) {
	svc, srv, logs := testService(t, env{"LOG_LEVEL": "INFO"}, Options{})
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	svc.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		for range 512 { // 32 MiB, more than the sockets' buffers
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	_ = svc.WarmUp(context.Background())
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	io.ReadFull(conn, make([]byte, 4096))
	conn.Close()
	if !testenv.WaitFor(20*time.Second, func() bool { return strings.Contains(logs.String(), "the answer was cut off after") }) {
		t.Fatalf("the cut answer is not logged as cut:\n%s", logs)
	}
	if !strings.Contains(logs.String(), `"level":"WARN"`) {
		t.Errorf("the cut answer is not a warning:\n%s", logs)
	}
}
