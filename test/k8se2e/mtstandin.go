package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// failMarker in a text sent for translation makes the stand-in refuse the
// call with 400 while blocked is set, as a hosted API refuses a request it
// cannot take: the document holding it fails, and with it the batch shard
// that holds only that document (exit 3), which the Indexed Job then
// retries once the driver has cleared blocked.
const failMarker = "AKFAILMARK"

// mtStandIn is a local stand-in for the hosted translation API (the mtapi
// protocol of internal/translate/mtapi): GET /models lists the pairs, POST
// /models/{src}-{tgt} answers the form field input_text unchanged after a
// configurable delay, so a large ALTO file takes as long as wanted. The
// answer is each line's words in reverse order: as long as the source and
// not a copy of it, so the translator's degeneracy guards accept it.
type mtStandIn struct {
	srv     *http.Server
	ln      net.Listener
	delay   atomic.Int64 // nanoseconds per call
	calls   atomic.Int64
	refused atomic.Int64
	blocked atomic.Bool // refuse texts holding failMarker
	mu      sync.Mutex
	started chan struct{} // closed at the first translation call after arm
	armOnce *sync.Once
	// log, while not nil, records every translation call (startLog).
	log *[]mtCall
}

// mtCall is one translation call: who sent it (the pod's address), its
// text, and when it came.
type mtCall struct {
	from, text string
	at         time.Time
}

// startLog starts recording the translation calls (afresh).
func (m *mtStandIn) startLog() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log = &[]mtCall{}
}

// logged returns the calls recorded since startLog (a copy).
func (m *mtStandIn) logged() []mtCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.log == nil {
		return nil
	}
	return append([]mtCall(nil), (*m.log)...)
}

// startStandIn listens on addr (the node's bridge address, reachable from
// the pods).
func startStandIn(addr string) (*mtStandIn, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("MT stand-in: %v", err)
	}
	m := &mtStandIn{ln: ln}
	m.arm()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /models", func(w http.ResponseWriter, r *http.Request) {
		var pairs []string
		for _, l := range []string{"cs", "de", "fr", "sk", "pl", "uk", "ru", "es", "it", "hu"} {
			pairs = append(pairs, `"`+l+`-en"`)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "[%s]", strings.Join(pairs, ","))
	})
	mux.HandleFunc("POST /models/{pair}", func(w http.ResponseWriter, r *http.Request) {
		text := r.FormValue("input_text")
		m.calls.Add(1)
		refuse := m.blocked.Load() && strings.Contains(text, failMarker)
		m.mu.Lock()
		started := m.started
		once := m.armOnce
		if m.log != nil {
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			*m.log = append(*m.log, mtCall{from: host, text: text, at: time.Now()})
		}
		m.mu.Unlock()
		once.Do(func() { close(started) })
		if refuse {
			m.refused.Add(1)
			http.Error(w, "stand-in: refused on purpose", http.StatusBadRequest)
			return
		}
		select {
		case <-time.After(time.Duration(m.delay.Load())):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, reverseWords(text))
	})
	m.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := m.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Println("MT stand-in stopped:", err)
		}
	}()
	return m, nil
}

// arm makes the next translation call close a fresh channel, returned.
func (m *mtStandIn) arm() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.started = make(chan struct{})
	m.armOnce = new(sync.Once)
	return m.started
}

func (m *mtStandIn) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.srv.Shutdown(ctx)
}

// reverseWords reverses the order of the words of each line.
func reverseWords(text string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		w := strings.Fields(l)
		for a, b := 0, len(w)-1; a < b; a, b = a+1, b-1 {
			w[a], w[b] = w[b], w[a]
		}
		lines[i] = strings.Join(w, " ")
	}
	return strings.Join(lines, "\n")
}
