package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// ErrBodyTimeout is returned (wrapped) by a request body that did not
// arrive within BODY_TIMEOUT_S or fell below BODY_MIN_BYTES_PER_S; answer
// it with WriteBodyError (408).
var ErrBodyTimeout = errors.New("the request body arrived too slowly")

// ErrBodyDraining is returned (wrapped) by a request body cut because the
// service began to drain before it arrived; WriteBodyError answers 503.
var ErrBodyDraining = errors.New("the service is shutting down and the request body had not arrived")

// timedBody wraps a request body with read deadlines on the connection:
// the body must be complete within the body timeout and, after BodyGrace,
// keep at least the minimum rate. Once it has been read to its end the
// deadline is lifted, so that the work that follows is not cut by it.
type timedBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	start    time.Time
	timeout  time.Duration
	rate     int64
	services *bodySet

	mu       sync.Mutex
	n        int64
	drainBy  time.Time // set when a drain began
	finished bool
}

// deadline is the time by which the next byte is due. b.mu must be held.
func (b *timedBody) deadline() time.Time {
	d := b.start.Add(b.timeout)
	if b.rate > 0 {
		// n bytes are due by start + grace + n/rate; the next read must
		// bring at least one more.
		due := b.start.Add(BodyGrace + time.Duration(float64(b.n+1)/float64(b.rate)*float64(time.Second)))
		if due.Before(d) {
			d = due
		}
	}
	if !b.drainBy.IsZero() && b.drainBy.Before(d) {
		d = b.drainBy
	}
	return d
}

func (b *timedBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	if !b.finished {
		_ = b.rc.SetReadDeadline(b.deadline())
	}
	b.mu.Unlock()
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += int64(n)
	switch {
	case err == io.EOF:
		b.finishLocked()
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		if !b.drainBy.IsZero() {
			return n, fmt.Errorf("%w (after %d bytes)", ErrBodyDraining, b.n)
		}
		return n, fmt.Errorf("%w: %d bytes in %.0f s (limits: the whole body within BODY_TIMEOUT_S=%g s, and at least BODY_MIN_BYTES_PER_S=%d bytes per second after the first %g s)",
			ErrBodyTimeout, b.n, time.Since(b.start).Seconds(), b.timeout.Seconds(), b.rate, BodyGrace.Seconds())
	}
	return n, err
}

// finishLocked lifts the deadline once the body is complete. b.mu must be held.
func (b *timedBody) finishLocked() {
	if b.finished {
		return
	}
	b.finished = true
	_ = b.rc.SetReadDeadline(time.Time{})
	b.services.remove(b)
}

// drain gives a body still arriving DrainBodyGrace to finish.
func (b *timedBody) drain(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.finished {
		return
	}
	b.drainBy = now.Add(DrainBodyGrace)
	_ = b.rc.SetReadDeadline(b.deadline())
}

// drainer is a body being read or an answer being written: a drain
// brings its deadline forward.
type drainer interface{ drain(now time.Time) }

// bodySet holds the bodies being read and the answers being written, for
// the drain to tighten their deadlines.
type bodySet struct {
	mu     sync.Mutex
	bodies map[drainer]struct{}
	drain  time.Time
}

func (s *bodySet) add(b drainer) {
	s.mu.Lock()
	if s.bodies == nil {
		s.bodies = map[drainer]struct{}{}
	}
	s.bodies[b] = struct{}{}
	began := s.drain
	s.mu.Unlock()
	if !began.IsZero() {
		b.drain(began)
	}
}

func (s *bodySet) remove(b drainer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.bodies, b)
}

// beginDrain tightens the deadline of every body still arriving and every
// answer still being written.
func (s *bodySet) beginDrain() {
	s.mu.Lock()
	now := time.Now()
	s.drain = now
	list := make([]drainer, 0, len(s.bodies))
	for b := range s.bodies {
		list = append(list, b)
	}
	s.mu.Unlock()
	for _, b := range list {
		b.drain(now)
	}
}

// limitBody puts the body of r under the body deadlines; the returned
// function, called when the handler returns, forgets the body.
func (s *Service) limitBody(base http.ResponseWriter, r *http.Request) func() {
	if r.Body == nil || r.Body == http.NoBody {
		return func() {}
	}
	b := &timedBody{ReadCloser: r.Body, rc: http.NewResponseController(base), start: time.Now(),
		timeout: s.Config.BodyTimeout, rate: s.Config.BodyMinRate, services: &s.bodies}
	s.bodies.add(b)
	r.Body = b
	return func() { s.bodies.remove(b) }
}

// BodyError reports whether err comes from reading a request body that
// went over the upload cap, arrived too slowly or was cut by a drain:
// answer it with WriteBodyError.
func BodyError(err error) bool {
	return TooLarge(err) || errors.Is(err, ErrBodyTimeout) || errors.Is(err, ErrBodyDraining)
}

// deadlineFor runs h under the request deadline (REQUEST_TIMEOUT_S) and
// answers 503 when the deadline passed before h wrote anything.
func (s *Service) withDeadline(w *answer, r *http.Request, h http.Handler) {
	ctx, cancel := context.WithTimeout(r.Context(), s.Config.RequestTimeout)
	defer cancel()
	h.ServeHTTP(w, r.WithContext(ctx))
	if w.status == 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
		w.Header().Set("Connection", "close")
		WriteError(w, http.StatusServiceUnavailable, ReasonTimeout, fmt.Sprintf(
			"the request was not finished within REQUEST_TIMEOUT_S=%g s and its work was stopped", s.Config.RequestTimeout.Seconds()))
	}
}
