package service

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRestartsUnderLoad starts the test server b.N times; each time 8
// keep-alive clients send GET /hello and POST /upload without pause, the
// server gets SIGTERM after 300 ms and drains (GRACEFUL_SHUTDOWN_S=1). It
// reports the requests answered, answered 503 (retryable), refused (never
// sent: the listener was closed) and dropped (sent on an open connection
// and lost to a reset or an early close) per restart. Only a drop loses a
// request a client cannot safely retry.
//
//	go test -run '^$' -bench RestartsUnderLoad -benchtime 20x ./internal/service
func BenchmarkRestartsUnderLoad(b *testing.B) {
	var ok, unavailable, refused, dropped atomic.Int64
	var kinds sync.Map
	for range b.N {
		p := startServer(b, "GRACEFUL_SHUTDOWN_S=1", "LOG_LEVEL=ERROR")
		p.waitReady(b, 10*time.Second)
		var wg sync.WaitGroup
		stop := make(chan struct{})
		for c := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
				defer cl.CloseIdleConnections()
				for {
					select {
					case <-stop:
						return
					default:
					}
					var resp *http.Response
					var err error
					if c%2 == 0 {
						resp, err = cl.Get(p.base + "/hello")
					} else {
						resp, err = cl.Post(p.base+"/upload", "application/octet-stream", strings.NewReader("payload"))
					}
					switch {
					case err != nil && errors.Is(err, syscall.ECONNREFUSED):
						refused.Add(1)
						time.Sleep(10 * time.Millisecond) // the process is gone or going
					case err != nil:
						dropped.Add(1)
						kinds.Store(dropKind(err), true)
					default:
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if resp.StatusCode == http.StatusServiceUnavailable {
							unavailable.Add(1)
						} else {
							ok.Add(1)
						}
					}
				}
			}()
		}
		time.Sleep(300 * time.Millisecond) // load before the signal
		p.signal(b, syscall.SIGTERM)
		<-p.done
		time.Sleep(50 * time.Millisecond) // clients meet the closed port
		close(stop)
		wg.Wait()
	}
	kinds.Range(func(k, _ any) bool { b.Logf("dropped: %s", k); return true })
	n := float64(b.N)
	b.ReportMetric(float64(ok.Load())/n, "ok/restart")
	b.ReportMetric(float64(unavailable.Load())/n, "503/restart")
	b.ReportMetric(float64(refused.Load())/n, "refused/restart")
	b.ReportMetric(float64(dropped.Load())/n, "dropped/restart")
}

// dropKind names the way a request was lost.
func dropKind(err error) string {
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before the answer"
	}
	return err.Error()
}
