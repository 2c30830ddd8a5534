package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
)

// TestBackendFailureRetryAfter: a translation failed by the backend (it
// answers 503 to every call, or it went away after start and refuses
// connections) is 500 backend_error, as the specification's errors table
// has it, with Retry-After, so that a client knows the same request may
// pass later; a document that fails on its own (not well-formed) has no
// Retry-After; nor does a backend that refuses the service's credentials
// (401).
func TestBackendFailureRetryAfter(t *testing.T) {
	failing := translatortest.New(translatortest.Config{FailAlways: 503})
	defer failing.Close()
	_, failTS := startServer(t, testEnv(failing.URL, nil))
	gone := translatortest.New(translatortest.Config{})
	_, goneTS := startServer(t, testEnv(gone.URL, nil))
	gone.Close() // warm at start, then refusing connections
	refusing := translatortest.New(translatortest.Config{FailAlways: http.StatusUnauthorized})
	defer refusing.Close()
	_, refusedTS := startServer(t, testEnv(refusing.URL, nil))

	cs := part{Field: "source_lang", Data: []byte("cs")}
	doc := part{Field: "file", Name: "p.alto.xml", File: true, Data: []byte(pageALTO)}
	broken := part{Field: "file", Name: "b.alto.xml", File: true, Data: []byte("<alto><Layout>")}
	for _, tt := range []struct {
		name, base string
		file       part
		reason     string
		retry      bool
	}{
		{"backend answers 503", failTS.URL, doc, "backend_error", true},
		{"backend refuses connections", goneTS.URL, doc, "backend_error", true},
		// Its credentials refused: the backend's failure (it was 500
		// internal, "the service failed"), which waiting does not mend.
		{"backend refuses the credentials", refusedTS.URL, doc, "backend_error", false},
		{"document not well-formed", failTS.URL, broken, "not_well_formed", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body, ct := multipartBody(t, tt.file, cs)
			resp := post(t, tt.base+"/translate", ct, body)
			b := readBody(t, resp)
			servicetest.CheckError(t, resp.StatusCode, b, http.StatusInternalServerError, tt.reason, "")
			if got := resp.Header.Get("Retry-After"); (got != "") != tt.retry {
				t.Errorf("Retry-After %q, want one: %v", got, tt.retry)
			}
		})
	}
}

// TestBackendBreaker: after three translations in a row failed by the
// backend, synchronous requests are answered 503 backend_unavailable at
// once, with the time until it is tried again as Retry-After, without
// calling it (a backend that never answered held each request up to
// REQUEST_TIMEOUT_S); after the cooldown one request tries it, and its
// success lets every request through again. A document's own failure is
// not the backend's.
func TestBackendBreaker(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	mt := translatortest.New(translatortest.Config{Failing: func() int {
		if down.Load() {
			return 503
		}
		return 0
	}})
	defer mt.Close()
	s, ts := startServer(t, testEnv(mt.URL, nil))
	now := time.Now()
	s.breaker.now = func() time.Time { return now }
	send := func(file part) (*http.Response, []byte) {
		body, ct := multipartBody(t, file, part{Field: "source_lang", Data: []byte("cs")})
		resp := post(t, ts.URL+"/translate", ct, body)
		return resp, readBody(t, resp)
	}
	doc := part{Field: "file", Name: "p.alto.xml", File: true, Data: []byte(pageALTO)}
	broken := part{Field: "file", Name: "b.alto.xml", File: true, Data: []byte("<alto><Layout>")}
	for i := range 3 {
		if resp, b := send(doc); resp.StatusCode != 500 {
			t.Fatalf("failure %d: %d %s", i+1, resp.StatusCode, b)
		}
		if i == 0 { // not the backend's failure: the count goes on
			if resp, b := send(broken); resp.StatusCode != 500 || !strings.Contains(string(b), "not_well_formed") {
				t.Fatalf("broken document: %d %s", resp.StatusCode, b)
			}
		}
	}
	posts := mt.Posts.Load()
	resp, b := send(part{Field: "file", Name: "q.alto.xml", File: true, Data: []byte(pageALTO)})
	servicetest.CheckError(t, resp.StatusCode, b, http.StatusServiceUnavailable, "backend_unavailable", "failed the last 3 requests")
	if strings.Contains(string(b), "p.alto.xml") || !strings.Contains(string(b), "HTTP 503") {
		t.Errorf("open: the answer names another request's document, or not the backend's failure: %s", b)
	}
	if got := resp.Header.Get("Retry-After"); got != "30" || mt.Posts.Load() != posts {
		t.Errorf("open: Retry-After %q, backend called %d times more", got, mt.Posts.Load()-posts)
	}
	down.Store(false)
	now = now.Add(31 * time.Second)
	for i := range 2 {
		if resp, b := send(doc); resp.StatusCode != 200 {
			t.Errorf("after the cooldown, request %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
}

// TestBackendBreakerHanging: a backend that accepts requests and never
// answers opens the breaker too: three requests run out of
// REQUEST_TIMEOUT_S (503 timeout), then the next is answered 503
// backend_unavailable at once, without reaching the backend (the requests
// that timed out were not counted: each later one waited its whole
// REQUEST_TIMEOUT_S as well).
func TestBackendBreakerHanging(t *testing.T) {
	release := make(chan struct{})
	mt := translatortest.New(translatortest.Config{Hold: func(string) { <-release }})
	defer mt.Close()
	defer close(release)
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"REQUEST_TIMEOUT_S": "1"}))
	send := func(name string) (*http.Response, []byte) {
		body, ct := multipartBody(t, part{Field: "file", Name: name, File: true, Data: []byte(pageALTO)}, part{Field: "source_lang", Data: []byte("cs")})
		resp := post(t, ts.URL+"/translate", ct, body)
		return resp, readBody(t, resp)
	}
	for i := range 3 {
		if resp, b := send("p.alto.xml"); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), `"timeout"`) {
			t.Fatalf("request %d: %d %s", i+1, resp.StatusCode, b)
		}
	}
	posts := mt.Posts.Load()
	start := time.Now()
	resp, b := send("q.alto.xml")
	servicetest.CheckError(t, resp.StatusCode, b, http.StatusServiceUnavailable, "backend_unavailable", "no answer within REQUEST_TIMEOUT_S=1 s")
	if mt.Posts.Load() != posts || resp.Header.Get("Retry-After") == "" {
		t.Errorf("open: backend called %d times more, Retry-After %q (%v)", mt.Posts.Load()-posts, resp.Header.Get("Retry-After"), time.Since(start))
	}
}
