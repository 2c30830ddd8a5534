package service

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestToken: with API_TOKEN set every route but the probes and the static
// pages needs "Authorization: Bearer <token>"; without it, 401.
func TestToken(t *testing.T) {
	svc, srv, _ := testService(t, env{"API_TOKEN": "s3cret-t0ken"}, Options{Pages: []string{"GET /page"}})
	svc.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) })
	_ = svc.WarmUp(context.Background())
	bearer := map[string]string{"Authorization": "Bearer s3cret-t0ken"}
	tests := []struct {
		method, path string
		header       map[string]string
		want         int
	}{
		{"GET", "/health", nil, 200},
		{"GET", "/ready", nil, 200},
		{"GET", "/docs", nil, 200},
		{"GET", "/page", nil, 200},
		{"GET", "/openapi.json", nil, 200},
		{"GET", "/hello", nil, 401},
		{"GET", "/metrics", nil, 401},
		{"GET", "/health?deep=true", nil, 200},
		{"GET", "/nowhere", nil, 401},
		{"POST", "/upload", nil, 401},
		{"POST", "/upload", map[string]string{"Authorization": "Bearer wrong"}, 401},
		{"POST", "/upload", map[string]string{"Authorization": "Basic s3cret-t0ken"}, 401},
		{"GET", "/hello", bearer, 200},
		{"GET", "/metrics", bearer, 200},
		{"POST", "/upload", bearer, 200},
		{"POST", "/upload", map[string]string{"Authorization": "bearer s3cret-t0ken"}, 200},
	}
	for _, tt := range tests {
		got := do(t, tt.method, srv.URL+tt.path, strings.NewReader("body"), tt.header)
		if got.status != tt.want {
			t.Errorf("%s %s %v: %d, want %d (%s)", tt.method, tt.path, tt.header, got.status, tt.want, got.body)
		}
		if got.status == 401 && (got.header.Get("WWW-Authenticate") != `Bearer realm="test-api"` || !strings.Contains(string(got.body), `"detail"`)) {
			t.Errorf("%s %s: 401 without WWW-Authenticate or detail: %v %s", tt.method, tt.path, got.header, got.body)
		}
	}
	// A refused call is counted under its route (it was "unmatched"); a
	// path no route has stays unmatched.
	m := string(do(t, "GET", srv.URL+"/metrics", nil, bearer).body)
	for _, want := range []string{`http_requests_total{method="POST",path="/upload",status="401"} 3`,
		`http_requests_total{method="GET",path="/metrics",status="401"} 1`, `http_requests_total{method="GET",path="unmatched",status="401"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, m)
		}
	}
}

// TestTokenConfig: API_TOKEN_FILE is read and trimmed; setting both, an
// empty file or a file that is not a token fails start-up without quoting
// the file.
func TestTokenConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string { return writeSecret(t, dir, name, data) }
	good, empty, prose := write("token", "abc.DEF-123\n"), write("empty", "\n"), write("prose", "the secret words\n")
	c, err := LoadConfig(env{"API_TOKEN_FILE": good}.lookup, 10)
	if err != nil || c.Token != "abc.DEF-123" {
		t.Errorf("token file: %q %v", c.Token, err)
	}
	if c.Origins.Allows("http://localhost:8080") {
		t.Error("with a token and ALLOWED_ORIGINS unset, an origin is allowed")
	}
	for _, tc := range []struct {
		e    env
		want string
	}{
		{env{"API_TOKEN": "x", "API_TOKEN_FILE": good}, "both API_TOKEN and API_TOKEN_FILE are set"},
		{env{"API_TOKEN_FILE": empty}, "API_TOKEN_FILE (" + empty + ") is empty"},
		{env{"API_TOKEN_FILE": prose}, "API_TOKEN_FILE (" + prose + ") holds characters"},
		{env{"API_TOKEN_FILE": filepath.Join(dir, "missing")}, "API_TOKEN_FILE: open " + filepath.Join(dir, "missing")},
		{env{"API_TOKEN": " "}, "API_TOKEN is empty"},
	} {
		_, err := LoadConfig(tc.e.lookup, 10)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret words") {
			t.Errorf("%v: %v, want %q", tc.e, err, tc.want)
		}
	}
}

// TestCORSClosed: "null" is never allowed, even when every origin is; a
// service with a token allows only the origins ALLOWED_ORIGINS lists, and
// its preflight lets the browser send the Authorization header.
func TestCORSClosed(t *testing.T) {
	for _, tc := range []struct {
		name, origin string
		e            env
		allowed      bool
	}{
		{"null with origins unset", "null", env{}, false},
		{"null listed", "null", env{"ALLOWED_ORIGINS": "null,*"}, false},
		{"token, origins unset", "http://localhost:8080", env{"API_TOKEN": "t"}, false},
		{"token, origin listed", "http://localhost:8080", env{"API_TOKEN": "t", "ALLOWED_ORIGINS": "http://localhost:8080"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, srv, _ := testService(t, tc.e, Options{})
			_ = svc.WarmUp(context.Background())
			got := do(t, "GET", srv.URL+"/hello", nil, map[string]string{"Origin": tc.origin, "Authorization": "Bearer t"})
			if acao := got.header.Get("Access-Control-Allow-Origin"); (acao == tc.origin) != tc.allowed || (acao != "" && acao != tc.origin) {
				t.Errorf("GET: Access-Control-Allow-Origin %q", acao)
			}
			pf := do(t, "OPTIONS", srv.URL+"/upload", nil, map[string]string{
				"Origin": tc.origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization",
			})
			if tc.allowed != (pf.status == 204) || (tc.allowed && pf.header.Get("Access-Control-Allow-Headers") != "authorization") {
				t.Errorf("preflight %d %v", pf.status, pf.header)
			}
		})
	}
}

// TestClientTokens: with API_TOKENS_FILE each client sends its own token;
// any other is refused. The request log names the client (never its
// token), and MAX_CONCURRENT_PER_CLIENT counts each client by its name,
// so two clients behind one address (a proxy) are not one client, and
// one client's requests count together.
func TestClientTokens(t *testing.T) {
	path := writeSecret(t, t.TempDir(), "tokens", "# who may use the service\nalice  tok-alice-1\n\nbob\ttok-bob-2\n")
	svc, srv, logs := testService(t, env{"API_TOKENS_FILE": path, "MAX_CONCURRENT_REQUESTS": "4", "MAX_CONCURRENT_PER_CLIENT": "1"}, Options{})
	release := make(chan struct{})
	entered := make(chan string, 4)
	svc.HandleFunc("POST /work", func(w http.ResponseWriter, r *http.Request) {
		entered <- clientKey(r)
		<-release
		WriteJSON(w, http.StatusOK, map[string]string{"client": ClientOf(r.Context())})
	})
	_ = svc.WarmUp(context.Background())
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	for _, tc := range []struct {
		tok  string
		want int
	}{{"tok-alice-1", 200}, {"tok-bob-2", 200}, {"tok-alice-2", 401}, {"", 401}, {"alice", 401}} {
		if got := do(t, "GET", srv.URL+"/hello", nil, bearer(tc.tok)); got.status != tc.want {
			t.Errorf("token %q: %d, want %d", tc.tok, got.status, tc.want)
		}
	}
	// Both clients from 127.0.0.1: alice's second request is refused,
	// bob's is served.
	first, other := make(chan int, 1), make(chan int, 1)
	go func() { first <- do(t, "POST", srv.URL+"/work", strings.NewReader("x"), bearer("tok-alice-1")).status }()
	if got := <-entered; got != "client alice" {
		t.Errorf("admitted as %q, want client alice", got)
	}
	if got := do(t, "POST", srv.URL+"/work", strings.NewReader("x"), bearer("tok-alice-1")); got.status != http.StatusServiceUnavailable {
		t.Errorf("alice's second request: %d, want 503 (MAX_CONCURRENT_PER_CLIENT)", got.status)
	}
	go func() { other <- do(t, "POST", srv.URL+"/work", strings.NewReader("x"), bearer("tok-bob-2")).status }()
	if got := <-entered; got != "client bob" {
		t.Errorf("admitted as %q, want client bob", got)
	}
	close(release)
	if a, b := <-first, <-other; a != 200 || b != 200 {
		t.Errorf("alice %d, bob %d", a, b)
	}
	log := logs.String()
	if !strings.Contains(log, `"path":"/hello","status":200`) || !strings.Contains(log, `"client":"alice"`) || !strings.Contains(log, `"client":"bob"`) ||
		strings.Contains(log, "tok-") {
		t.Errorf("request log does not name the clients, or shows a token:\n%s", log)
	}
}

// TestClientTokensConfig: API_TOKENS_FILE with another token variable, a
// malformed line, a name or token twice, or no client fails start-up,
// naming the file and the line, never a token.
func TestClientTokensConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string { return writeSecret(t, dir, name, data) }
	good := write("good", "alice tok-a\n")
	c, err := LoadConfig(env{"API_TOKENS_FILE": good}.lookup, 10)
	if err != nil || len(c.Clients) != 1 || c.Clients[0] != (Client{"alice", "tok-a"}) || !c.Closed() || c.Origins.Allows("http://localhost:8080") {
		t.Errorf("tokens file: %+v %v", c.Clients, err)
	}
	for _, tc := range []struct {
		e    env
		want string
	}{
		{env{"API_TOKENS_FILE": good, "API_TOKEN": "x"}, "set one of the three"},
		{env{"API_TOKENS_FILE": write("one", "alice\n")}, "line 1: want a client's name and its token"},
		{env{"API_TOKENS_FILE": write("three", "# c\nalice tok-a extra-secret\n")}, "line 2: want a client's name"},
		{env{"API_TOKENS_FILE": write("name", "al/ice tok-a\n")}, `the name "al/ice"`},
		{env{"API_TOKENS_FILE": write("twice", "alice tok-a\nalice tok-b\n")}, "line 2: client alice is named twice"},
		{env{"API_TOKENS_FILE": write("shared", "alice tok-secret\nbob tok-secret\n")}, "client bob has the token of another client"},
		{env{"API_TOKENS_FILE": write("none", "# nobody yet\n\n")}, "names no client"},
		{env{"API_TOKENS_FILE": " "}, "API_TOKENS_FILE is set but empty"},
	} {
		_, err := LoadConfig(tc.e.lookup, 10)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%v: %v, want %q", tc.e, err, tc.want)
		}
	}
}

// writeSecret writes data to dir/name, readable by its owner only, as a
// mounted Secret is, and returns its path.
func writeSecret(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestClientTokensReload: API_TOKENS_FILE changed while the service runs
// (a Secret updated in place) counts without a restart: a client removed
// is refused, one added served. A change that cannot be read keeps the
// clients read before, and the log says so.
func TestClientTokensReload(t *testing.T) {
	dir := t.TempDir()
	path := writeSecret(t, dir, "tokens", "alice tok-alice-1\n")
	svc, srv, logs := testService(t, env{"API_TOKENS_FILE": path}, Options{})
	svc.tokens.mu.Lock()
	svc.tokens.recheck = 0 // every request looks at the file
	svc.tokens.mu.Unlock()
	_ = svc.WarmUp(context.Background())
	status := func(tok string) int {
		return do(t, "GET", srv.URL+"/hello", nil, map[string]string{"Authorization": "Bearer " + tok}).status
	}
	if a, b := status("tok-alice-1"), status("tok-bob-2"); a != 200 || b != 401 {
		t.Fatalf("before: alice %d, bob %d", a, b)
	}
	writeSecret(t, dir, "tokens", "bob tok-bob-2\n")
	if a, b := status("tok-alice-1"), status("tok-bob-2"); a != 401 || b != 200 {
		t.Errorf("alice removed, bob added: alice %d, bob %d", a, b)
	}
	writeSecret(t, dir, "tokens", "bob tok-bob-2 and-a-word-too-many\n")
	if b := status("tok-bob-2"); b != 200 {
		t.Errorf("after a malformed change: bob %d, want the clients read before", b)
	}
	if !strings.Contains(logs.String(), "API_TOKENS_FILE changed and cannot be read") || strings.Contains(logs.String(), "and-a-word") {
		t.Errorf("log:\n%s", logs.String())
	}
}

// TestOpenAPIDescribesToken: the OpenAPI document says which operations
// need the bearer token, and a closed service answers exactly those 401
// without one (the document named neither the scheme nor the status).
func TestOpenAPIDescribesToken(t *testing.T) {
	tool, err := os.ReadFile(filepath.Join("testdata", "openapi_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc, srv, _ := testService(t, env{"API_TOKEN": "s3cret-t0ken"}, Options{OpenAPI: tool})
	_ = svc.WarmUp(context.Background())
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ SecuritySchemes map[string]map[string]any }
	}
	if err := json.Unmarshal(do(t, "GET", srv.URL+"/openapi.json", nil, nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	if s := doc.Components.SecuritySchemes["bearer"]; s["type"] != "http" || s["scheme"] != "bearer" {
		t.Fatalf("securitySchemes %v, want an http bearer scheme", doc.Components.SecuritySchemes)
	}
	secured := 0
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Security  []map[string]any
				Responses map[string]any
			}
			if json.Unmarshal(raw, &op) != nil || op.Responses == nil {
				continue
			}
			described := len(op.Security) > 0 && op.Responses["401"] != nil
			got := do(t, strings.ToUpper(method), srv.URL+strings.NewReplacer("{", "", "}", "").Replace(path), strings.NewReader("x"), nil)
			if (got.status == 401) != described {
				t.Errorf("%s %s: %d without a token; the document describes the token: %v", method, path, got.status, described)
			}
			if described {
				secured++
			}
		}
	}
	if secured == 0 {
		t.Error("no operation describes the token")
	}
}

// TestChunkedRequestClosesConnection: a request with both Transfer-Encoding
// and Content-Length (net/http drops the length unseen) is answered and its
// connection closed, so that a request smuggled behind it is never read;
// the trial saw two answers on one connection.
func TestChunkedRequestClosesConnection(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{})
	_ = svc.WarmUp(context.Background())
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute)) // a kept-open connection fails the test, not hangs it
	if _, err := io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if !resp.Close {
		t.Errorf("the answer to a chunked request keeps its connection open (Connection %q)", resp.Header.Get("Connection"))
	}
	if second, err := http.ReadResponse(br, nil); err == nil {
		t.Errorf("a second answer on the connection: %s", second.Status)
	}
}

// TestOpenAPIHeaders: the document describes the headers every answer
// carries (X-Request-ID; Retry-After on a 503), the software's licence,
// and says the open routes are open (security: []), which generated
// clients and linters read.
func TestOpenAPIHeaders(t *testing.T) {
	tool, err := os.ReadFile(filepath.Join("testdata", "openapi_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc, srv, _ := testService(t, env{}, Options{OpenAPI: tool})
	_ = svc.WarmUp(context.Background())
	var doc struct {
		Info struct {
			License struct{ Name string }
		}
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Responses map[string]struct{ Headers map[string]any }
		}
	}
	if err := json.Unmarshal(do(t, "GET", srv.URL+"/openapi.json", nil, nil).body, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Info.License.Name != "MIT" {
		t.Errorf("info.license %+v, want MIT", doc.Info.License)
	}
	for path, ops := range doc.Paths {
		for method, raw := range ops {
			var op struct {
				Security  *[]any
				Responses map[string]struct {
					Ref     string `json:"$ref"`
					Headers map[string]any
				}
			}
			if json.Unmarshal(raw, &op) != nil || op.Responses == nil {
				continue
			}
			if op.Security == nil {
				t.Errorf("%s %s: no security (open routes say security: [])", method, path)
			}
			for status, r := range op.Responses {
				headers := r.Headers
				if r.Ref != "" {
					headers = doc.Components.Responses[strings.TrimPrefix(r.Ref, "#/components/responses/")].Headers
				}
				if headers["X-Request-ID"] == nil {
					t.Errorf("%s %s %s: no X-Request-ID header described", method, path, status)
				}
				if status == "503" && headers["Retry-After"] == nil {
					t.Errorf("%s %s 503: no Retry-After described", method, path)
				}
			}
		}
	}
	// the probes are open and said so
	var health struct {
		Get struct{ Security []any }
	}
	raw, _ := json.Marshal(doc.Paths["/health"])
	if err := json.Unmarshal(raw, &health); err != nil || health.Get.Security == nil || len(health.Get.Security) != 0 {
		t.Errorf("/health security %v, want []", health.Get.Security)
	}
}
