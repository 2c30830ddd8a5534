package service

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// slowClient opens a connection, sends the headers of a POST /upload with
// a 1,000-byte body, then one byte every interval until the server answers
// or closes. It returns the status line's code (0 when the connection was
// closed without an answer).
func slowClient(addr string, interval time.Duration) (int, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nContent-Type: application/octet-stream\r\n\r\n"); err != nil {
		return 0, err
	}
	answered := make(chan int, 1)
	go func() {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			answered <- 0
			return
		}
		var code int
		fmt.Sscanf(line, "HTTP/1.1 %d", &code)
		answered <- code
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case code := <-answered:
			return code, nil
		case <-tick.C:
			if _, err := conn.Write([]byte("x")); err != nil {
				return <-answered, nil
			}
		}
	}
}

// TestSlowBodiesAreCut: 50 clients sending their bodies at 10 bytes/s hold
// no connection past BODY_TIMEOUT_S; each gets 408 and the service has
// nothing in flight afterwards.
func TestSlowBodiesAreCut(t *testing.T) {
	svc, srv, _ := testService(t, env{"BODY_TIMEOUT_S": "1", "MAX_CONCURRENT_REQUESTS": "64", "LOG_LEVEL": "ERROR"}, Options{})
	svc.state.Store(int32(Ready))
	addr := strings.TrimPrefix(srv.URL, "http://")
	const clients = 50
	codes := make([]int, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := slowClient(addr, 100*time.Millisecond)
			if err != nil {
				t.Error(err)
			}
			codes[i] = code
		}()
	}
	wg.Wait()
	took := time.Since(start)
	held := 0
	for _, c := range codes {
		if c != http.StatusRequestTimeout {
			held++
		}
	}
	t.Logf("%d slow clients: all answered within %.1f s, %d not answered 408, %d in flight after", clients, took.Seconds(), held, svc.InFlight())
	if held > 0 {
		t.Errorf("codes %v: want 408 for every slow client", codes)
	}
	if n := svc.InFlight(); n != 0 {
		t.Errorf("%d requests still in flight", n)
	}
}

// TestBodyDeadlineSchedule: the minimum rate and the whole-body timeout
// give the deadline of the next byte; a drain brings it forward.
func TestBodyDeadlineSchedule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := &timedBody{start: t0, timeout: 120 * time.Second, rate: 1000}
	if got, want := b.deadline(), t0.Add(BodyGrace+time.Millisecond); !got.Equal(want) {
		t.Errorf("first byte due %v, want %v", got.Sub(t0), want.Sub(t0))
	}
	b.n = 49_999 // 50 s of budget at 1,000 bytes/s
	if got, want := b.deadline(), t0.Add(BodyGrace+50*time.Second); !got.Equal(want) {
		t.Errorf("byte 50,000 due %v, want %v", got.Sub(t0), want.Sub(t0))
	}
	b.n = 10_000_000 // the rate would allow hours: the timeout wins
	if got, want := b.deadline(), t0.Add(120*time.Second); !got.Equal(want) {
		t.Errorf("big body due %v, want the 120 s timeout", got.Sub(t0))
	}
	b.drainBy = t0.Add(3 * time.Second)
	if got := b.deadline(); !got.Equal(b.drainBy) {
		t.Errorf("draining body due %v, want the drain's %v", got.Sub(t0), b.drainBy.Sub(t0))
	}
	b = &timedBody{start: t0, timeout: 5 * time.Second, rate: 0}
	if got := b.deadline(); !got.Equal(t0.Add(5 * time.Second)) {
		t.Errorf("rate check off: due %v, want 5 s", got.Sub(t0))
	}
}

// TestDrainCutsArrivingBodies: a body still arriving when the drain begins
// gets DrainBodyGrace, then 503 with Retry-After.
func TestDrainCutsArrivingBodies(t *testing.T) {
	svc, srv, _ := testService(t, env{"LOG_LEVEL": "ERROR"}, Options{})
	svc.state.Store(int32(Ready))
	addr := strings.TrimPrefix(srv.URL, "http://")
	got := make(chan int, 1)
	go func() {
		code, _ := slowClient(addr, 200*time.Millisecond)
		got <- code
	}()
	for svc.InFlight() == 0 {
		time.Sleep(5 * time.Millisecond) // poll for the request to arrive
	}
	start := time.Now()
	svc.BeginDrain()
	code := <-got
	t.Logf("slow body cut %.1f s after the drain began", time.Since(start).Seconds())
	if code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", code)
	}
}

// TestRequestDeadlineStopsWork: past REQUEST_TIMEOUT_S the handler's
// context is done and the client gets 503 naming the limit.
func TestRequestDeadlineStopsWork(t *testing.T) {
	svc, srv, logs := testService(t, env{"REQUEST_TIMEOUT_S": "0.2", "LOG_LEVEL": "WARNING"}, Options{})
	svc.state.Store(int32(Ready))
	stopped := make(chan error, 1)
	svc.HandleFunc("POST /work", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		stopped <- r.Context().Err()
	})
	resp := do(t, "POST", srv.URL+"/work", strings.NewReader("x"), nil)
	if resp.status != http.StatusServiceUnavailable || !strings.Contains(string(resp.body), "REQUEST_TIMEOUT_S=0.2") {
		t.Errorf("got %d %s", resp.status, resp.body)
	}
	if err := <-stopped; err != context.DeadlineExceeded {
		t.Errorf("handler context ended with %v", err)
	}
	if !strings.Contains(logs.String(), `"status":503`) {
		t.Errorf("the 503 is not logged at WARNING: %s", logs)
	}
}

// TestClientDisconnectStopsWork: the handler's context ends when the
// client goes away.
func TestClientDisconnectStopsWork(t *testing.T) {
	svc, srv, _ := testService(t, env{"LOG_LEVEL": "ERROR"}, Options{})
	svc.state.Store(int32(Ready))
	started, stopped := make(chan struct{}), make(chan error, 1)
	svc.HandleFunc("POST /work", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		close(started)
		<-r.Context().Done()
		stopped <- r.Context().Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/work", strings.NewReader("payload"))
	go func() { <-started; cancel() }()
	_, err := http.DefaultClient.Do(req)
	if err == nil {
		t.Fatal("request succeeded")
	}
	if err := <-stopped; err != context.Canceled {
		t.Errorf("handler context ended with %v, want canceled", err)
	}
}

// TestConcurrencyCap: beyond MAX_CONCURRENT_REQUESTS heavy requests get
// 503 with Retry-After at once; GET routes are not capped.
func TestConcurrencyCap(t *testing.T) {
	svc, srv, _ := testService(t, env{"MAX_CONCURRENT_REQUESTS": "2", "LOG_LEVEL": "ERROR"}, Options{})
	svc.state.Store(int32(Ready))
	release := make(chan struct{})
	entered := make(chan struct{}, 10)
	svc.HandleFunc("POST /work", func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	})
	results := make(chan int, 2)
	for range 2 {
		go func() { results <- do(t, "POST", srv.URL+"/work", strings.NewReader("x"), nil).status }()
	}
	<-entered
	<-entered
	third := do(t, "POST", srv.URL+"/work", strings.NewReader("x"), nil)
	if third.status != http.StatusServiceUnavailable || third.header.Get("Retry-After") == "" || !strings.Contains(string(third.body), "MAX_CONCURRENT_REQUESTS") {
		t.Errorf("third request: %d Retry-After %q %s", third.status, third.header.Get("Retry-After"), third.body)
	}
	if r := do(t, "GET", srv.URL+"/hello", nil, nil); r.status != http.StatusOK {
		t.Errorf("GET while at the cap: %d", r.status)
	}
	close(release)
	for range 2 {
		if s := <-results; s != http.StatusOK {
			t.Errorf("capped request: %d", s)
		}
	}
	if r := do(t, "POST", srv.URL+"/work", strings.NewReader("x"), nil); r.status != http.StatusOK {
		t.Errorf("after the cap cleared: %d", r.status)
	}
}

// TestRefusalsDoNotWaitForSlowBodies: a request refused before its body is
// read (starting, draining, busy) is answered at once, whatever the pace
// of its body.
func TestRefusalsDoNotWaitForSlowBodies(t *testing.T) {
	svc, srv, _ := testService(t, env{"LOG_LEVEL": "ERROR"}, Options{})
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, st := range []State{Starting, Draining} {
		svc.state.Store(int32(st))
		start := time.Now()
		code, err := slowClient(addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusServiceUnavailable {
			t.Errorf("%v: status %d, want 503", st, code)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: the 503 took %v: it waited for the body", st, d)
		}
	}
}
