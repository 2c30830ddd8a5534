package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestBookRedirectRefusedOnce: a page image whose URL on a BOOK_HOSTS host
// redirects to another host is refused at the first answer, naming the
// host (a security trial saw it requested three times: the service's own
// transport refused it as a passing failure, retried).
func TestBookRedirectRefusedOnce(t *testing.T) {
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("x")) }))
	defer other.Close()
	var n atomic.Int32
	var a *httptest.Server
	a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/manifest.json":
			fmt.Fprintf(w, `{"@context":"http://iiif.io/api/presentation/3/context.json","id":"%s/manifest.json","type":"Manifest","items":[{"id":"%s/c1","type":"Canvas","width":100,"height":100,"items":[{"id":"%s/p1","type":"AnnotationPage","items":[{"id":"%s/a1","type":"Annotation","motivation":"painting","target":"%s/c1","body":{"id":"%s/redir","type":"Image","format":"image/png"}}]}]}]}`, a.URL, a.URL, a.URL, a.URL, a.URL, a.URL)
		case "/redir":
			n.Add(1)
			http.Redirect(w, r, other.URL+"/p.png", http.StatusFound)
		}
	}))
	defer a.Close()
	host := must(url.Parse(a.URL)).Host
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", EnvBookHosts: host}, nil)
	status, body := postForm(t, ts.URL+"/predict_document", upload{Field: "book", Data: []byte(a.URL + "/manifest.json")})
	if status != 422 || n.Load() != 1 || !strings.Contains(string(body), "127.0.0.1") {
		t.Errorf("status %d, /redir requested %d times (want once): %.300s", status, n.Load(), body)
	}
}
