package service

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"archivekit/internal/service/servicetest"
)

// TestReasonsClosedList: the reason codes are distinct snake_case words,
// and the ErrorReason enum of the OpenAPI document every service serves
// is the Go list, in its order.
func TestReasonsClosedList(t *testing.T) {
	reasons := Reasons()
	word := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	seen := map[Reason]bool{}
	var want []string
	for _, r := range reasons {
		if !word.MatchString(string(r)) || seen[r] {
			t.Errorf("reason %q: not a snake_case word, or listed twice", r)
		}
		seen[r] = true
		want = append(want, string(r))
	}
	doc, err := completeOpenAPI(nil, "test-api", "1.0")
	if err != nil {
		t.Fatal(err)
	}
	if got := servicetest.ReasonEnum(t, doc); !slices.Equal(got, want) {
		t.Errorf("OpenAPI ErrorReason enum\n %v\nwant the Go list (Reasons)\n %v", got, want)
	}
}

// TestReasonsDocumented: docs/services.md lists every reason, in the order
// of Reasons, in its table of reasons ("| `code` | status | when |").
func TestReasonsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/services.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| [0-9, ]+ \\|")
	var got, want []string
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		got = append(got, m[1])
	}
	for _, r := range Reasons() {
		want = append(want, string(r))
	}
	if !slices.Equal(got, want) {
		t.Errorf("docs/services.md lists the reasons\n %v\nwant\n %v", got, want)
	}
}

// rawRequest sends head (and then body, one byte every pace when pace is
// set) on a new connection to addr and reads the answer.
func rawRequest(t *testing.T, addr, head, body string, pace time.Duration) (int, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if _, err := io.WriteString(conn, head); err != nil {
			return
		}
		for i := range len(body) {
			if pace > 0 {
				select {
				case <-answered:
					return
				case <-time.After(pace):
				}
			}
			if _, err := io.WriteString(conn, body[i:i+1]); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// TestErrorReasonsOverHTTP provokes, through the service's own handler,
// every reason the service package answers itself, and decodes status,
// reason and detail of each answer.
func TestErrorReasonsOverHTTP(t *testing.T) {
	svc, srv, _ := testService(t, env{"LOG_LEVEL": "ERROR", "MAX_UPLOAD_MB": "1", "REQUEST_TIMEOUT_S": "0.5",
		"BODY_TIMEOUT_S": "1", "MAX_CONCURRENT_PER_CLIENT": "1", "ALLOWED_ORIGINS": "http://ok.example"}, Options{})
	svc.HandleFunc("POST /wait", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	_, locked, _ := testService(t, env{"API_TOKEN": "s3cret-t0ken", "LOG_LEVEL": "ERROR"}, Options{})
	addr := strings.TrimPrefix(srv.URL, "http://")
	post := func(url, body string) func(t *testing.T) (int, []byte) {
		return func(t *testing.T) (int, []byte) {
			r := do(t, "POST", url, strings.NewReader(body), nil)
			return r.status, r.body
		}
	}
	get := func(method, url string, header map[string]string) func(t *testing.T) (int, []byte) {
		return func(t *testing.T) (int, []byte) {
			r := do(t, method, url, nil, header)
			return r.status, r.body
		}
	}
	tests := []struct {
		reason Reason
		status int
		detail string
		before func() // sets the state the row needs; after undoes it
		after  func()
		call   func(t *testing.T) (int, []byte)
	}{
		{reason: ReasonStarting, status: 503, detail: "starting", call: get("GET", srv.URL+"/hello", nil),
			after: func() { _ = svc.WarmUp(context.Background()) }},
		{reason: ReasonNotFound, status: 404, detail: "Not Found", call: get("GET", srv.URL+"/nowhere", nil)},
		{reason: ReasonMethodNotAllowed, status: 405, detail: "Method Not Allowed", call: get("DELETE", srv.URL+"/hello", nil)},
		{reason: ReasonBadField, status: 422, detail: `"deep"`, call: get("GET", srv.URL+"/health?deep=maybe", nil)},
		{reason: ReasonTooLarge, status: 413, detail: "MAX_UPLOAD_MB", call: post(srv.URL+"/upload", strings.Repeat("a", 2<<20))},
		{reason: ReasonBadRequest, status: 400, detail: "could not read the request body", call: func(t *testing.T) (int, []byte) {
			return rawRequest(t, addr, "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "", 0)
		}},
		{reason: ReasonBodyTimeout, status: 408, detail: "BODY_TIMEOUT_S", call: func(t *testing.T) (int, []byte) {
			return rawRequest(t, addr, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", strings.Repeat("x", 1000), 100*time.Millisecond)
		}},
		{reason: ReasonOriginNotAllowed, status: 400, detail: "http://evil.example", call: get("OPTIONS", srv.URL+"/upload",
			map[string]string{"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"})},
		{reason: ReasonUnauthorized, status: 401, detail: "bearer token", call: post(locked.URL+"/upload", "x")},
		{reason: ReasonOverloaded, status: 503, detail: "MAX_CONCURRENT_REQUESTS",
			before: func() {
				for range cap(svc.slots) {
					svc.slots <- struct{}{}
				}
			},
			after: func() {
				for range cap(svc.slots) {
					<-svc.slots
				}
			},
			call: post(srv.URL+"/upload", "x")},
		{reason: ReasonRateLimited, status: 503, detail: "MAX_CONCURRENT_PER_CLIENT",
			before: func() { svc.perClient.take("127.0.0.1", 1) },
			after:  func() { svc.perClient.give("127.0.0.1") },
			call:   post(srv.URL+"/upload", "x")},
		{reason: ReasonTimeout, status: 503, detail: "REQUEST_TIMEOUT_S=0.5", call: post(srv.URL+"/wait", "x")},
		{reason: ReasonDraining, status: 503, detail: "shutting down", before: svc.BeginDrain, call: get("GET", srv.URL+"/hello", nil)},
	}
	for _, tt := range tests {
		t.Run(string(tt.reason), func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			if tt.after != nil {
				defer tt.after()
			}
			code, body := tt.call(t)
			a := servicetest.CheckError(t, code, body, tt.status, string(tt.reason), tt.detail)
			t.Logf("%d %s %s", a.Status, a.Reason, a.Detail)
		})
	}
}
