package webpage

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"archivekit/internal/service"
)

// TestHandler: /frontend is the tool's index.html, its assets come from
// its files, common.js and common.css from this package, each with its
// type; an unknown asset is a 404.
func TestHandler(t *testing.T) {
	h := Handler(fstest.MapFS{
		"static/index.html": {Data: []byte("<!doctype html><p>tool page")},
		"static/app.js":     {Data: []byte("// tool script")},
	}, "static")
	for _, tt := range []struct {
		path, ctype, body string
		status            int
	}{
		{"/frontend", "text/html; charset=utf-8", "tool page", 200},
		{"/frontend/app.js", "text/javascript; charset=utf-8", "tool script", 200},
		{"/frontend/common.js", "text/javascript; charset=utf-8", "async function api(", 200},
		{"/frontend/common.css", "text/css; charset=utf-8", "#error {", 200},
		{"/frontend/missing.js", "application/json", "no asset missing.js", 404},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tt.path, nil))
		if w.Code != tt.status || w.Header().Get("Content-Type") != tt.ctype || !strings.Contains(w.Body.String(), tt.body) {
			t.Errorf("%s: %d %s %.80q; want %d %s with %q", tt.path, w.Code, w.Header().Get("Content-Type"), w.Body.String(), tt.status, tt.ctype, tt.body)
		}
		// Not framed by another site, not sniffed, under the pages' policy.
		if tt.status == 200 && (w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("Content-Security-Policy") != service.PagePolicy || w.Header().Get("X-Content-Type-Options") != "nosniff") {
			t.Errorf("%s: headers %v", tt.path, w.Header())
		}
	}
}
