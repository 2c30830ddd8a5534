package service

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"archivekit/internal/testenv"
)

// TestIndex: / and /info are built from the routes registered with Route,
// in the documented order; a route added later is listed at once; routes
// registered with Handle are not listed; the tool's limits and members
// follow the service's own, in their order.
func TestIndex(t *testing.T) {
	svc, srv, _ := testService(t, env{"MAX_UPLOAD_MB": "7", EnvDockerImage: "img:1"}, Options{
		Version: "9.9",
		Index: &Index{
			Welcome:    "test-api: POST to /work",
			DeepHealth: "checks the widget",
			Limits:     struct{ MaxItems int }{3},
			Info: struct {
				Kinds []string `json:"kinds"`
			}{[]string{"a", "b"}},
		},
	})
	ok := func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, http.StatusOK, "ok") }
	svc.Route("POST /work", "do the work", ok)
	svc.Route("GET /page", "a page", ok)
	svc.Handle("GET /page/{asset}", http.HandlerFunc(ok))
	svc.Route("PUT /more", "more work", ok)
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"/", `{"info":"/info","message":"test-api: POST to /work"}` + "\n"},
		{"/info", `{"container_image":"img:1","service":"test-api","version":"9.9","endpoints":[` +
			`{"method":"GET","path":"/","description":"welcome message pointing at /info"},` +
			`{"method":"GET","path":"/info","description":"this description"},` +
			`{"method":"POST","path":"/work","description":"do the work"},` +
			`{"method":"PUT","path":"/more","description":"more work"},` +
			`{"method":"GET","path":"/health","description":"liveness: always 200 {\"status\": \"ok\"}; ?deep=true checks the widget"},` +
			`{"method":"GET","path":"/ready","description":"readiness: 503 while starting or draining, 200 when ready"},` +
			`{"method":"GET","path":"/metrics","description":"Prometheus metrics"},` +
			`{"method":"GET","path":"/docs","description":"interactive API documentation"},` +
			`{"method":"GET","path":"/openapi.json","description":"OpenAPI 3.1 document"},` +
			`{"method":"GET","path":"/page","description":"a page"}],` +
			`"limits":{"max_upload_mb":7,"MaxItems":3},"kinds":["a","b"]}` + "\n"},
	} {
		r := do(t, "GET", srv.URL+tc.path, nil, nil)
		if r.status != http.StatusOK || string(r.body) != tc.want || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: %d %s %s\nwant 200 application/json %s", tc.path, r.status, r.header.Get("Content-Type"), r.body, tc.want)
		}
	}
}

// TestIndexPage: a browser's GET / (Accept: text/html) is a page with the
// welcome message and links to the tool's pages, /docs and /info; a
// program's (curl's */*) is the welcome JSON.
func TestIndexPage(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{Name: "test-api", Version: "9.9", Index: &Index{Welcome: "test-api: POST to /work"}})
	ok := func(w http.ResponseWriter, _ *http.Request) { WriteJSON(w, http.StatusOK, "ok") }
	svc.Route("POST /work", "do the work", ok)
	svc.Route("GET /page", "a page for people", ok)
	svc.Handle("GET /page/{asset}", http.HandlerFunc(ok))
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := do(t, "GET", srv.URL+"/", nil, map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"})
	body := string(r.body)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || r.header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("browser's GET /: %d %s, X-Frame-Options %q", r.status, r.header.Get("Content-Type"), r.header.Get("X-Frame-Options"))
	}
	if r := do(t, "GET", srv.URL+"/docs", nil, nil); r.header.Get("X-Frame-Options") != "DENY" || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("/docs headers %v", r.header)
	}
	// /docs/ leads to the page (it was a 404).
	if r := do(t, "GET", srv.URL+"/docs/", nil, nil); r.status != http.StatusOK || !strings.Contains(string(r.body), "API documentation") {
		t.Errorf("/docs/: %d %.200s", r.status, r.body)
	}
	for _, want := range []string{`<html lang="en">`, "test-api: POST to /work", `<a href="page">/page</a>: a page for people`, `<a href="docs">`, `<a href="info">`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "{asset}") || strings.Contains(body, `href="work"`) {
		t.Errorf("page links a pattern or a POST route:\n%s", body)
	}
	if r := do(t, "GET", srv.URL+"/", nil, map[string]string{"Accept": "*/*"}); r.header.Get("Content-Type") != "application/json" {
		t.Errorf("program's GET /: %s %s", r.header.Get("Content-Type"), r.body)
	}
}

// TestNoIndex: without an Index, / and /info are not served and the
// endpoints list only the service's own routes and those given to Route.
func TestNoIndex(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{})
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/info"} {
		if r := do(t, "GET", srv.URL+path, nil, nil); r.status != http.StatusNotFound {
			t.Errorf("GET %s: %d %s, want 404", path, r.status, r.body)
		}
	}
	got := svc.Endpoints()
	if len(got) != 5 || got[0].Path != "/health" || got[0].Description != `liveness: always 200 {"status": "ok"}; ?deep=true also reports draining` {
		t.Errorf("endpoints %+v", got)
	}
}

func TestJoinObjects(t *testing.T) {
	for _, tc := range []struct {
		name       string
		base, more any
		want       string
		err        bool
	}{
		{"nil", map[string]int{"a": 1}, nil, `{"a":1}`, false},
		{"members", map[string]int{"a": 1}, struct{ B, C int }{2, 3}, `{"a":1,"B":2,"C":3}`, false},
		{"empty more", map[string]int{"a": 1}, struct{}{}, `{"a":1}`, false},
		{"empty base", struct{}{}, map[string]int{"b": 2}, `{"b":2}`, false},
		{"not an object", map[string]int{"a": 1}, []int{1}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := joinObjects(tc.base, tc.more)
			if (err != nil) != tc.err || (!tc.err && string(got) != tc.want) {
				t.Errorf("joinObjects = %s, %v; want %s (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

// TestIndexPageInChromium: the browser's / is styled from the service's own
// stylesheet under the pages' Content-Security-Policy (an inline style,
// which it had, is refused by it; testenv.Chromium fails a test on any
// refusal), and the policy is the one every page carries.
func TestIndexPageInChromium(t *testing.T) {
	ctx := testenv.Chromium(t, 30*time.Second)
	svc, srv, _ := testService(t, env{}, Options{Name: "test-api", Version: "9.9", Index: &Index{Welcome: "test-api: POST to /work"}})
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	var font string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible("h1"),
		chromedp.Poll(`getComputedStyle(document.body).fontFamily.includes("system-ui")`, nil),
		chromedp.Evaluate(`getComputedStyle(document.body).fontFamily`, &font),
	); err != nil {
		t.Fatalf("%v (body font %q)", err, font)
	}
	for _, path := range []string{"/", "/docs"} {
		r := do(t, "GET", srv.URL+path, nil, map[string]string{"Accept": "text/html"})
		if got := r.header.Get("Content-Security-Policy"); got != PagePolicy || !strings.Contains(got, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy %q", path, got)
		}
	}
}
