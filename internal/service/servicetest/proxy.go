package servicetest

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
)

// BehindProxy publishes the service at target under prefix ("/pageclass"),
// as nginx's `location /pageclass/ { proxy_pass http://service/; }` does:
// the prefix is stripped before a request reaches the service. It returns
// the service's URL through the proxy (the proxy's URL and prefix) and a
// function listing the requests made outside the prefix (answered 404).
func BehindProxy(t testing.TB, target, prefix string) (base string, stray func() []string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var outside []string
	inner := http.StripPrefix(prefix, httputil.NewSingleHostReverseProxy(u))
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, prefix+"/") {
			mu.Lock()
			outside = append(outside, r.Method+" "+r.URL.RequestURI())
			mu.Unlock()
			http.NotFound(w, r)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	return proxy.URL + prefix, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(outside)
	}
}
