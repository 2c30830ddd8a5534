package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/service/servicetest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// golden compares got with testdata/golden/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", name, got, want)
	}
}

// testService builds a service from e with a few tool routes and serves it
// with httptest. Logs go to the returned buffer (read while requests are
// served: its reads and writes are serialised).
func testService(t *testing.T, e env, opts Options) (*Service, *httptest.Server, *servicetest.LogBuffer) {
	t.Helper()
	var logs servicetest.LogBuffer
	if opts.Name == "" {
		opts.Name = "test-api"
	}
	if opts.DefaultMaxUploadMB == 0 {
		opts.DefaultMaxUploadMB = 10
	}
	opts.LookupEnv = e.lookup
	opts.LogOutput = &logs
	svc, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	addTestRoutes(svc)
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(srv.Close)
	return svc, srv, &logs
}

// addTestRoutes registers the work routes both the in-process and the
// real-process tests use: GET /hello answers at once, POST /upload reads and
// counts the body (413 through WriteBodyError when it is over the cap).
func addTestRoutes(svc *Service) {
	svc.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"hello": "world"})
	})
	svc.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			WriteBodyError(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, map[string]int64{"bytes": n})
	})
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func do(t *testing.T, method, url string, body io.Reader, header map[string]string) response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header, b}
}

func TestEndpointsByState(t *testing.T) {
	var degraded atomic.Value
	degraded.Store("")
	svc, srv, _ := testService(t, env{}, Options{
		DeepCheck: func(context.Context) string { return degraded.Load().(string) },
	})
	type row struct {
		method, path string
		status       int
		golden       string // file under testdata/golden, or "" to skip the body check
	}
	check := func(state string, rows []row) {
		t.Helper()
		for _, r := range rows {
			got := do(t, r.method, srv.URL+r.path, nil, nil)
			if got.status != r.status {
				t.Errorf("%s: %s %s = %d, want %d; body %s", state, r.method, r.path, got.status, r.status, got.body)
			}
			if ct := got.header.Get("Content-Type"); r.golden != "" && ct != "application/json" {
				t.Errorf("%s: %s %s content type %q", state, r.method, r.path, ct)
			}
			if r.golden != "" {
				golden(t, r.golden, got.body)
			}
		}
	}

	check("starting", []row{
		{"GET", "/health", 200, "health.json"},
		{"GET", "/health?deep=true", 503, "health_deep_starting.json"},
		{"GET", "/ready", 503, "ready_starting.json"},
		{"GET", "/hello", 503, "work_starting.json"},
	})

	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	check("ready", []row{
		{"GET", "/health", 200, "health.json"},
		{"GET", "/health?deep=false", 200, "health.json"},
		{"GET", "/health?deep=true", 200, "health_deep_ok.json"},
		{"GET", "/health?deep=1", 200, "health_deep_ok.json"},
		{"GET", "/health?deep=maybe", 422, "health_deep_invalid.json"},
		{"GET", "/ready", 200, "ready_ready.json"},
		{"GET", "/hello", 200, ""},
		{"GET", "/nowhere", 404, "not_found.json"},
		{"DELETE", "/hello", 405, "method_not_allowed.json"},
		{"GET", "/metrics", 200, ""},
		{"GET", "/openapi.json", 200, ""},
		{"GET", "/docs", 200, ""},
		{"GET", "/docs/docs.js", 200, ""},
		{"GET", "/docs/secret.txt", 404, "not_found.json"},
	})

	degraded.Store("translation backend is cold: warm-up call failed")
	check("degraded", []row{
		{"GET", "/health", 200, "health.json"},
		{"GET", "/health?deep=true", 503, "health_deep_degraded.json"},
		{"GET", "/ready", 200, "ready_ready.json"},
	})
	degraded.Store("")

	// A check added by a part of the service (the job queue's folder)
	// degrades it too, with its own words.
	var full atomic.Value
	full.Store("")
	svc.AddDeepCheck(func(context.Context) string { return full.Load().(string) })
	full.Store("JOBS_DIR /state has 3 MiB free")
	if got := do(t, "GET", srv.URL+"/health?deep=true", nil, nil); got.status != 503 || !strings.Contains(string(got.body), `"detail":"JOBS_DIR /state has 3 MiB free"`) {
		t.Errorf("an added check: %d %s", got.status, got.body)
	}
	full.Store("")

	svc.BeginDrain()
	check("draining", []row{
		{"GET", "/health", 200, "health.json"},
		{"GET", "/health?deep=true", 503, "health_deep_draining.json"},
		{"GET", "/ready", 503, "ready_draining.json"},
		{"GET", "/hello", 503, "work_draining.json"},
		{"POST", "/upload", 503, "work_draining.json"},
		{"GET", "/docs", 503, "work_draining.json"},
		{"GET", "/metrics", 200, ""},
	})
}

func TestMethodNotAllowedKeepsAllow(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{})
	_ = svc.WarmUp(context.Background())
	got := do(t, "PUT", srv.URL+"/upload", nil, nil)
	if got.status != 405 || !strings.Contains(got.header.Get("Allow"), "POST") {
		t.Fatalf("PUT /upload: %d Allow=%q", got.status, got.header.Get("Allow"))
	}
}

// TestUncleanPathRedirected: a path the mux cleans ("/docs/../nowhere") is
// redirected to its clean form with the Location to follow (it was a 307
// without one).
func TestUncleanPathRedirected(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{})
	_ = svc.WarmUp(context.Background())
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.URL + "/docs/../nowhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/nowhere" {
		t.Fatalf("GET /docs/../nowhere: %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

func TestWarmUpFailureKeepsStarting(t *testing.T) {
	svc, _, _ := testService(t, env{}, Options{WarmUp: func(context.Context) error { return errors.New("model file missing") }})
	if err := svc.WarmUp(context.Background()); err == nil || svc.State() != Starting {
		t.Fatalf("err %v state %v", err, svc.State())
	}
}

func TestDeepHealthCountsInFlight(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	svc, srv, _ := testService(t, env{}, Options{})
	svc.HandleFunc("GET /block", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
		WriteJSON(w, 200, map[string]bool{"done": true})
	})
	_ = svc.WarmUp(context.Background())
	done := make(chan response)
	go func() { done <- do(t, "GET", srv.URL+"/block", nil, nil) }()
	<-entered
	svc.BeginDrain()
	got := do(t, "GET", srv.URL+"/health?deep=true", nil, nil)
	var body deepBody
	if err := json.Unmarshal(got.body, &body); err != nil {
		t.Fatal(err)
	}
	if got.status != 503 || body.InFlight != 1 || !body.Draining || body.Status != "draining" {
		t.Errorf("deep health while draining with one request: %d %+v", got.status, body)
	}
	close(release)
	if r := <-done; r.status != 200 {
		t.Errorf("in-flight request finished with %d", r.status)
	}
	if svc.InFlight() != 0 {
		t.Errorf("in flight after completion: %d", svc.InFlight())
	}
}

func TestCORS(t *testing.T) {
	tests := []struct {
		name       string
		env        env
		origin     string
		wantAllow  bool
		preflight  int // status of the preflight
		wantHeader string
	}{
		{"unset allows any", env{}, "http://anything.example", true, 204, "http://anything.example"},
		{"empty allows none", env{"ALLOWED_ORIGINS": ""}, "http://localhost:8080", false, 400, ""},
		{"listed origin", env{"ALLOWED_ORIGINS": "http://localhost:8080,http://127.0.0.1:8080"}, "http://127.0.0.1:8080", true, 204, "http://127.0.0.1:8080"},
		{"unlisted origin", env{"ALLOWED_ORIGINS": "http://localhost:8080,http://127.0.0.1:8080"}, "http://evil.example", false, 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, srv, _ := testService(t, tt.env, Options{})
			_ = svc.WarmUp(context.Background())
			got := do(t, "GET", srv.URL+"/hello", nil, map[string]string{"Origin": tt.origin})
			if got.status != 200 {
				t.Fatalf("GET with Origin: %d", got.status)
			}
			if h := got.header.Get("Access-Control-Allow-Origin"); h != tt.wantHeader {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", h, tt.wantHeader)
			}
			// A page of an allowed origin may read the job's Location, the
			// limits applied and translate-api's counts, not only the file
			// name.
			if exp := got.header.Get("Access-Control-Expose-Headers"); tt.wantHeader != "" && (!strings.Contains(exp, "Location") || !strings.Contains(exp, "X-Translation-Units")) {
				t.Errorf("Access-Control-Expose-Headers = %q", exp)
			}
			pf := do(t, "OPTIONS", srv.URL+"/upload", nil, map[string]string{
				"Origin": tt.origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type",
			})
			if pf.status != tt.preflight {
				t.Errorf("preflight status %d, want %d (%s)", pf.status, tt.preflight, pf.body)
			}
			if tt.wantAllow {
				if pf.header.Get("Access-Control-Allow-Origin") != tt.origin || !strings.Contains(pf.header.Get("Access-Control-Allow-Methods"), "POST") ||
					pf.header.Get("Access-Control-Allow-Headers") != "content-type" {
					t.Errorf("preflight headers %v", pf.header)
				}
			} else {
				if pf.header.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("refused preflight carries ACAO %q", pf.header.Get("Access-Control-Allow-Origin"))
				}
				golden(t, "cors_refused.json", bytes.ReplaceAll(pf.body, []byte(tt.origin), []byte("ORIGIN")))
			}
		})
	}
	// Without an Origin header nothing CORS-related is added.
	svc, srv, _ := testService(t, env{}, Options{})
	_ = svc.WarmUp(context.Background())
	if got := do(t, "GET", srv.URL+"/hello", nil, nil); got.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("ACAO without Origin: %q", got.header.Get("Access-Control-Allow-Origin"))
	}
}

func TestUploadCap(t *testing.T) {
	svc, srv, _ := testService(t, env{"MAX_UPLOAD_MB": "1"}, Options{})
	_ = svc.WarmUp(context.Background())
	under := bytes.Repeat([]byte("a"), 1<<20)
	over := bytes.Repeat([]byte("a"), 2<<20)
	tests := []struct {
		name   string
		body   io.Reader
		status int
	}{
		{"exactly the cap", bytes.NewReader(under), 200},
		{"declared length over the cap", bytes.NewReader(over), 413},
		// io.MultiReader hides the length, so the client sends it chunked and
		// the cap is hit while the handler reads.
		{"chunked over the cap", io.MultiReader(bytes.NewReader(over)), 413},
		{"chunked under the cap", io.MultiReader(bytes.NewReader(under[:1000])), 200},
	}
	for _, tt := range tests {
		got := do(t, "POST", srv.URL+"/upload", tt.body, nil)
		if got.status != tt.status {
			t.Errorf("%s: status %d, want %d: %s", tt.name, got.status, tt.status, got.body)
		}
		if tt.status == 413 {
			golden(t, "upload_too_large.json", got.body)
		}
	}
}

// TestCompressedBody: a body sent with a Content-Encoding is refused with
// 415 naming it (a gzipped multipart form was read as it came and answered
// 400 "multipart: NextPart: EOF"); identity is no coding.
func TestCompressedBody(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{})
	_ = svc.WarmUp(context.Background())
	for _, c := range []struct {
		coding string
		status int
	}{{"gzip", 415}, {"br", 415}, {"identity", 200}} {
		got := do(t, "POST", srv.URL+"/upload", strings.NewReader("abc"), map[string]string{"Content-Encoding": c.coding})
		if got.status != c.status || c.status == 415 && !strings.Contains(string(got.body), `"reason":"unsupported_media_type"`) {
			t.Errorf("Content-Encoding %s: %d %s, want %d", c.coding, got.status, got.body, c.status)
		}
	}
}

func TestMetricsExposition(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{Batching: true})
	_ = svc.WarmUp(context.Background())
	do(t, "GET", srv.URL+"/hello", nil, nil)
	do(t, "GET", srv.URL+"/hello", nil, nil)
	do(t, "GET", srv.URL+"/health", nil, nil)
	do(t, "GET", srv.URL+"/health?deep=true", nil, nil)
	do(t, "GET", srv.URL+"/nowhere/"+strings.Repeat("x", 10), nil, nil)
	svc.Metrics.ObserveBatch(3)
	svc.Metrics.ObserveBatch(16)
	svc.Metrics.ObserveQueueWait(4 * time.Millisecond)
	svc.Metrics.SetModelLoadTime("v1.4", 1500*time.Millisecond)
	got := do(t, "GET", srv.URL+"/metrics", nil, nil)
	if ct := got.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("content type %q", ct)
	}
	text := string(got.body)
	for _, want := range []string{
		`http_requests_total{method="GET",path="/hello",status="200"} 2`,
		`http_requests_total{method="GET",path="unmatched",status="404"} 1`,
		`http_request_duration_seconds_count{method="GET",path="/hello"} 2`,
		`http_request_duration_seconds_bucket{method="GET",path="/hello",le="+Inf"} 2`,
		// The deep check apart from the liveness probe (its 503s were
		// counted with the probe's 200s).
		`http_requests_total{method="GET",path="/health",status="200"} 1`,
		`http_requests_total{method="GET",path="/health?deep",status="200"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	for _, want := range []string{
		"http_requests_in_flight 0",
		`service_state{state="ready"} 1`,
		`service_state{state="draining"} 0`,
		`inference_batch_size_bucket{le="2"} 0`,
		`inference_batch_size_bucket{le="4"} 1`,
		`inference_batch_size_bucket{le="16"} 2`,
		"inference_batch_size_sum 19",
		"inference_batch_size_count 2",
		`inference_queue_wait_seconds_bucket{le="0.005"} 1`,
		"inference_queue_wait_seconds_count 1",
		`model_load_seconds{model="v1.4"} 1.5`,
		"# TYPE http_request_duration_seconds histogram",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("metrics lack line %q", want)
		}
	}
	// A service without batches has no batch histograms (they stayed at
	// zero for ever).
	plain, _, _ := testService(t, env{}, Options{})
	var b strings.Builder
	if err := plain.Metrics.Write(&b); err != nil || strings.Contains(b.String(), "inference_") {
		t.Errorf("a service without batching writes batch metrics (%v):\n%s", err, b.String())
	}
	// Every non-comment line is "name{labels} value".
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		if f := strings.Fields(line); len(f) != 2 {
			t.Errorf("malformed sample line %q", line)
		}
	}
}

func TestRequestLogging(t *testing.T) {
	tests := []struct {
		level     string
		wantWork  bool
		wantProbe bool
	}{
		{"DEBUG", true, true},
		{"INFO", true, false},
		{"WARNING", false, false},
	}
	for _, tt := range tests {
		svc, srv, logs := testService(t, env{"LOG_LEVEL": tt.level}, Options{})
		_ = svc.WarmUp(context.Background())
		do(t, "GET", srv.URL+"/hello", nil, nil)
		do(t, "GET", srv.URL+"/ready", nil, nil)
		var work, probe bool
		for _, line := range bytes.Split(bytes.TrimSpace([]byte(logs.String())), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var rec map[string]any
			if err := json.Unmarshal(line, &rec); err != nil {
				t.Fatalf("log line is not JSON: %q", line)
			}
			if rec["msg"] != "request" {
				continue
			}
			switch rec["path"] {
			case "/hello":
				work = rec["level"] == "INFO" && rec["status"] == float64(200) && rec["method"] == "GET" && rec["duration_ms"] != nil
			case "/ready":
				probe = rec["level"] == "DEBUG"
			}
		}
		if work != tt.wantWork || probe != tt.wantProbe {
			t.Errorf("LOG_LEVEL=%s: work line %v (want %v), probe line %v (want %v)\n%s", tt.level, work, tt.wantWork, probe, tt.wantProbe, logs)
		}
	}
}

// TestStorageFullLogged: a request answered 507 storage_full has its
// cause, the full disk's path and error, in its request log record at
// ERROR, for the operator; the client's answer names no path.
func TestStorageFullLogged(t *testing.T) {
	svc, srv, logs := testService(t, env{"LOG_LEVEL": "WARNING"}, Options{})
	svc.HandleFunc("POST /stage", func(w http.ResponseWriter, r *http.Request) {
		WriteBodyError(w, &os.PathError{Op: "write", Path: "/var/lib/jobs/upload-7/in/0", Err: syscall.ENOSPC})
	})
	_ = svc.WarmUp(context.Background())
	resp, err := http.Post(srv.URL+"/stage", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 507 || strings.Contains(string(body), "/var/lib") {
		t.Fatalf("%d %s, want 507 naming no path", resp.StatusCode, body)
	}
	var logged bool
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(logs.String())), []byte("\n")) {
		var rec map[string]any
		if json.Unmarshal(line, &rec) == nil && rec["msg"] == "request" && rec["path"] == "/stage" {
			logged = rec["level"] == "ERROR" && rec["status"] == float64(507) && rec["cause"] == "write /var/lib/jobs/upload-7/in/0: no space left on device"
		}
	}
	if !logged {
		t.Errorf("no ERROR request record with the cause:\n%s", logs)
	}
}

// TestRequestLogReasonAndCut: an error answer's request record carries
// its reason (a 503 for being rate limited and one for a timeout looked
// the same in the log); a request the client left before any answer is
// logged with status 0 and cut, at WARN (it was logged 200).
func TestRequestLogReasonAndCut(t *testing.T) {
	svc, srv, logs := testService(t, env{"LOG_LEVEL": "INFO"}, Options{})
	started := make(chan struct{})
	svc.HandleFunc("POST /refuse", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, http.StatusUnprocessableEntity, ReasonUndecodable, "no")
	})
	svc.HandleFunc("POST /hang", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	})
	_ = svc.WarmUp(context.Background())
	resp, err := http.Post(srv.URL+"/refuse", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/hang", strings.NewReader("x"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	<-done
	srv.Close() // waits for the handlers, whose records are then written
	var refused, cut bool
	for _, line := range bytes.Split(bytes.TrimSpace([]byte(logs.String())), []byte("\n")) {
		var rec map[string]any
		if json.Unmarshal(line, &rec) != nil || rec["msg"] != "request" {
			continue
		}
		switch rec["path"] {
		case "/refuse":
			refused = rec["status"] == float64(422) && rec["reason"] == "undecodable"
		case "/hang":
			cut = rec["status"] == float64(0) && rec["level"] == "WARN" && rec["cut"] != nil
		}
	}
	if !refused || !cut {
		t.Errorf("reason logged %v, cut logged %v:\n%s", refused, cut, logs)
	}
}

func TestOpenAPIDocument(t *testing.T) {
	tool, err := os.ReadFile(filepath.Join("testdata", "openapi_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	svc, srv, _ := testService(t, env{}, Options{OpenAPI: tool})
	_ = svc.WarmUp(context.Background())
	got := do(t, "GET", srv.URL+"/openapi.json", nil, nil)
	if got.status != 200 || got.header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d type %q", got.status, got.header.Get("Content-Type"))
	}
	golden(t, "openapi_merged.json", got.body)
	var doc struct {
		Paths      map[string]any
		Components struct{ Schemas map[string]any }
	}
	if err := json.Unmarshal(got.body, &doc); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/hello", "/upload", "/health", "/ready", "/metrics", "/openapi.json", "/docs"} {
		if doc.Paths[p] == nil {
			t.Errorf("path %s missing", p)
		}
	}
	for _, s := range []string{"HTTPError", "HTTPValidationError", "ValidationError", "DeepHealth"} {
		if doc.Components.Schemas[s] == nil {
			t.Errorf("schema %s missing", s)
		}
	}
}

func TestOpenAPIRejectsBadDocuments(t *testing.T) {
	tests := []struct{ doc, want string }{
		{`not json`, "not JSON"},
		{`{"openapi":"2.0"}`, `"openapi" is "2.0"`},
		{`{"openapi":"3.1.0","paths":[]}`, `"paths" is not an object`},
	}
	for _, tt := range tests {
		_, err := New(Options{Name: "x", DefaultMaxUploadMB: 1, OpenAPI: []byte(tt.doc), LookupEnv: env{}.lookup, LogOutput: io.Discard})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.doc, err, tt.want)
		}
	}
}

func TestDocsPageIsSelfContained(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{})
	_ = svc.WarmUp(context.Background())
	page := do(t, "GET", srv.URL+"/docs", nil, nil)
	if !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") {
		t.Fatalf("content type %q", page.header.Get("Content-Type"))
	}
	html := string(page.body)
	for _, asset := range []string{"docs/docs.js", "docs/docs.css"} {
		if !strings.Contains(html, `"`+asset+`"`) {
			t.Errorf("page does not load %s", asset)
		}
		a := do(t, "GET", srv.URL+"/"+asset, nil, nil)
		if a.status != 200 || len(a.body) < 500 {
			t.Errorf("%s: %d, %d bytes", asset, a.status, len(a.body))
		}
	}
	js := do(t, "GET", srv.URL+"/docs/docs.js", nil, nil)
	for _, text := range [][]byte{page.body, js.body} {
		if bytes.Contains(text, []byte("http://")) || bytes.Contains(text, []byte("https://")) {
			t.Error("docs page or script refers to an outside address")
		}
	}
	if !bytes.Contains(js.body, []byte(`fetch("openapi.json")`)) {
		t.Error("script does not load the service's own openapi.json")
	}
}

func TestNewRejectsBadOptionsAndEnv(t *testing.T) {
	tests := []struct {
		opts Options
		want string
	}{
		{Options{DefaultMaxUploadMB: 10}, "Name is empty"},
		{Options{Name: "x"}, "DefaultMaxUploadMB must be positive"},
		{Options{Name: "x", DefaultMaxUploadMB: 10, LookupEnv: env{"GRACEFUL_SHUTDOWN_S": ""}.lookup}, "x: configuration: GRACEFUL_SHUTDOWN_S is set but empty"},
	}
	for _, tt := range tests {
		tt.opts.LogOutput = io.Discard
		if _, err := New(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err %v, want %q", err, tt.want)
		}
	}
}

func TestParseBool(t *testing.T) {
	for _, s := range []string{"true", "TRUE", "1", "yes", "on", "t", "y"} {
		if v, ok := ParseBool(s); !v || !ok {
			t.Errorf("ParseBool(%q) = %v, %v", s, v, ok)
		}
	}
	for _, s := range []string{"false", "0", "No", "off", "f", "n"} {
		if v, ok := ParseBool(s); v || !ok {
			t.Errorf("ParseBool(%q) = %v, %v", s, v, ok)
		}
	}
	for _, s := range []string{"", "2", "maybe"} {
		if _, ok := ParseBool(s); ok {
			t.Errorf("ParseBool(%q) accepted", s)
		}
	}
}

func TestWriteHelpers(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteValidation(rec, ValidationError{Loc: []any{"body", "file"}, Msg: "Field required", Type: "missing"})
	if rec.Code != 422 {
		t.Errorf("status %d", rec.Code)
	}
	golden(t, "validation_missing_file.json", rec.Body.Bytes())

	rec = httptest.NewRecorder()
	WriteValidation(rec, MissingError("body", "file"), IntParsingError("body", "topn"), GreaterEqualError(1, "body", "topn"),
		LessEqualError(11, "body", "topn"), BoolParsingError("query", "is_alto"))
	golden(t, "validation_kinds.json", rec.Body.Bytes())

	rec = httptest.NewRecorder()
	WriteBodyError(rec, fmt.Errorf("reading part: %w", &http.MaxBytesError{Limit: 50 << 20}))
	if rec.Code != 413 || !strings.Contains(rec.Body.String(), "50 MB") {
		t.Errorf("MaxBytesError: %d %s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	WriteBodyError(rec, io.ErrUnexpectedEOF)
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "unexpected EOF") {
		t.Errorf("EOF: %d %s", rec.Code, rec.Body)
	}
	// A body staged on a full disk: the service's condition (507, to try
	// again), not the client's (before: 400 with the staging path).
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT} {
		rec = httptest.NewRecorder()
		WriteBodyError(rec, fmt.Errorf("multipart: %w", &os.PathError{Op: "write", Path: "/var/lib/jobs/upload-1/in/0", Err: errno}))
		var b ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || rec.Code != 507 || b.Reason != ReasonStorageFull ||
			rec.Header().Get("Retry-After") == "" || strings.Contains(b.Detail, "/var/lib") {
			t.Errorf("%v: %d %s (Retry-After %q), want 507 storage_full, no path", errno, rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
	}
	if !TooLarge(fmt.Errorf("x: %w", &http.MaxBytesError{Limit: 1})) || TooLarge(io.EOF) {
		t.Error("TooLarge misclassifies")
	}
}

func TestMetricsCounters(t *testing.T) {
	svc, srv, _ := testService(t, env{}, Options{})
	_ = svc.WarmUp(context.Background())
	m := svc.Metrics
	m.DeclareCounter("pages_classified_total", "Pages classified, by category.", "category")
	m.DeclareCounter("backend_errors_total", "Backend errors.", "")
	m.AddCount("pages_classified_total", "TEXT_P", 2)
	m.AddCount("pages_classified_total", "DRAW_L", 1)
	m.AddCount("pages_classified_total", "TEXT_P", 1)
	m.AddCount("units_total", "", 5)
	text := string(do(t, "GET", srv.URL+"/metrics", nil, nil).body)
	for _, want := range []string{
		"# TYPE pages_classified_total counter",
		"# HELP pages_classified_total Pages classified, by category.",
		`pages_classified_total{category="DRAW_L"} 1`,
		`pages_classified_total{category="TEXT_P"} 3`,
		"backend_errors_total 0",
		"units_total 5",
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("metrics lack line %q:\n%s", want, text)
		}
	}
}

// TestToolDefaults: a tool's DefaultPort applies when PORT is unset (PORT
// still wins), and the OpenAPI document (so /docs) carries the release
// version given in Options, not the placeholder of the tool's file.
func TestToolDefaults(t *testing.T) {
	for _, tc := range []struct {
		env  env
		port int
	}{
		{env{}, 8001},
		{env{"PORT": "9000"}, 9000},
		{env{"PORT": "8000"}, 8000},
	} {
		svc, _, _ := testService(t, tc.env, Options{DefaultPort: 8001})
		if svc.Config.Port != tc.port {
			t.Errorf("env %v: port %d, want %d", tc.env, svc.Config.Port, tc.port)
		}
	}
	if svc, _, _ := testService(t, env{}, Options{}); svc.Config.Port != DefaultPort {
		t.Errorf("no tool default: port %d, want %d", svc.Config.Port, DefaultPort)
	}
	tool, err := os.ReadFile(filepath.Join("testdata", "openapi_tool.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range [][]byte{tool, nil} {
		svc, srv, _ := testService(t, env{}, Options{OpenAPI: doc, Version: "4.5.6"})
		_ = svc.WarmUp(context.Background())
		got := do(t, "GET", srv.URL+"/openapi.json", nil, nil)
		var d struct {
			Info struct{ Title, Version string }
		}
		if err := json.Unmarshal(got.body, &d); err != nil || d.Info.Version != "4.5.6" || d.Info.Title != "test-api" {
			t.Errorf("info %+v (%v), want version 4.5.6 and title test-api", d.Info, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`Post "http://10.0.0.5:8080/models/cs-en?src=cs": dial tcp 10.0.0.5:8080: connect: connection refused`,
			`Post "<internal service>": dial tcp <internal address>: connect: connection refused`},
		{"dial tcp: lookup mt.internal on 127.0.0.53:53: no such host", "dial tcp: lookup <internal address> on <internal address>: no such host"},
		{"read tcp 127.0.0.1:5555->127.0.0.1:1234: read: connection reset by peer", "read tcp <internal address>-><internal address>: read: connection reset by peer"},
		{"dial tcp mt-api:8080: i/o timeout", "dial tcp <internal address>: i/o timeout"},
		{"dial tcp [::1]:8080: connect: connection refused", "dial tcp <internal address>: connect: connection refused"},
		{"localhost:9000 refused", "<internal address> refused"},
		{"XML syntax error on line 3: unexpected EOF at 12:04", "XML syntax error on line 3: unexpected EOF at 12:04"},
		{"model v4.4 of version 0.1.0 on page 2", "model v4.4 of version 0.1.0 on page 2"},
		// A standard's namespace names no service: kept (it read
		// "{<internal service> and it holds no METS element").
		{"its XML root element is {http://www.loc.gov/METS}mets, and it holds no METS element",
			"its XML root element is {http://www.loc.gov/METS}mets, and it holds no METS element"},
		{"JSON without a IIIF context (http://iiif.io/api/presentation/3/context.json)", "JSON without a IIIF context (http://iiif.io/api/presentation/3/context.json)"},
		{"Get http://www.loc.gov.mt.internal/x 500", "Get <internal service> 500"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
		// Redacting twice (a book error redacted, then its 5xx answer)
		// changes nothing more: it read "lookup <internal address> address>".
		if got := Redact(Redact(tc.in)); got != tc.want {
			t.Errorf("Redact twice (%q)\n = %q\nwant %q", tc.in, got, tc.want)
		}
	}
	// Every error body goes through it.
	rec := httptest.NewRecorder()
	WriteError(rec, http.StatusInternalServerError, ReasonBackendError, "translation failed: dial tcp 127.0.0.1:1: connect: connection refused")
	if strings.Contains(rec.Body.String(), "127.0.0.1") {
		t.Errorf("body %s names the address", rec.Body)
	}
}
