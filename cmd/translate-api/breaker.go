package main

import (
	"sync"
	"time"
)

// Bounds of the backend breaker: after breakerTrip translations in a row
// failed by the backend (passing: unreachable, timed out, 429 or 5xx after
// its retries), synchronous requests are answered 503 at once for
// breakerCooldown, then one is let through to try it again.
const (
	breakerTrip     = 3
	breakerCooldown = 30 * time.Second
)

// breaker keeps a failing backend from holding every synchronous request:
// a backend that accepts connections and never answers held each one for
// the transport's retries, up to REQUEST_TIMEOUT_S, the work slots filling
// with requests that would fail. Job items are not held back by it (they
// wait and run again on their own: jobs.Queue's retries) but count in it,
// as their successes close it. It is safe for concurrent use.
type breaker struct {
	now func() time.Time // time.Now when nil

	mu        sync.Mutex
	failures  int       // passing failures in a row
	openUntil time.Time // zero when closed
	probing   bool      // one request is trying the backend after the cooldown
	last      string    // the last failure, for the answer
}

func (b *breaker) clock() time.Time {
	if b.now != nil {
		return b.now()
	}
	return time.Now()
}

// admit says whether a synchronous request may call the backend; when it
// may not, wait is how long until it may be tried again and why is the
// failure that opened the breaker. probe is set for the one request let
// through after the cooldown: its outcome must be given to done.
func (b *breaker) admit() (probe bool, wait time.Duration, why string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return false, 0, "", true
	}
	if now := b.clock(); now.Before(b.openUntil) {
		return false, b.openUntil.Sub(now), b.last, false
	}
	if b.probing {
		return false, time.Second, b.last, false
	}
	b.probing = true
	return true, 0, "", true
}

// abandon ends admit's probe without an outcome (the request ended
// before it called the backend, or its client went away): the next request
// tries the backend instead.
func (b *breaker) abandon(probe bool) {
	if !probe {
		return
	}
	b.mu.Lock()
	b.probing = false
	b.mu.Unlock()
}

// done records a translation's outcome: failed is whether the backend
// failed it in passing, answered whether the backend answered it (a
// success closes the breaker). A request that did neither (a document
// that failed on its own, or called no backend) leaves it as it is. probe
// is admit's.
func (b *breaker) done(probe, failed, answered bool, detail string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	switch {
	case failed:
		b.failures++
		b.last = detail
		if b.failures >= breakerTrip || probe {
			b.openUntil = b.clock().Add(breakerCooldown)
		}
	case answered:
		b.failures, b.openUntil, b.last = 0, time.Time{}, ""
	}
}
