package main

import (
	"net/http"
	"testing"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
)

// TestBackendFailureRetryAfter: a translation failed by the backend (it
// answers 503 to every call, or it went away after start and refuses
// connections) is 500 backend_error, as the specification's errors table
// has it, with Retry-After, so that a client knows the same request may
// pass later; a document that fails on its own (not well-formed) has no
// Retry-After.
func TestBackendFailureRetryAfter(t *testing.T) {
	failing := translatortest.New(translatortest.Config{FailAlways: 503})
	defer failing.Close()
	_, failTS := startServer(t, testEnv(failing.URL, nil))
	gone := translatortest.New(translatortest.Config{})
	_, goneTS := startServer(t, testEnv(gone.URL, nil))
	gone.Close() // warm at start, then refusing connections

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
