package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/testenv"
)

// The lifecycle tests run a real server process: the test binary itself,
// re-executed with serverEnv set, becomes a small service built on this
// package (see testServerMain).
const serverEnv = "ARCHIVEKIT_SERVICE_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		os.Exit(testServerMain())
	}
	os.Exit(m.Run())
}

// testServerMain is the test server: warm-up lasts TEST_WARMUP_MS; GET /slow
// sleeps ?ms= milliseconds; POST /upload reads and counts the body; GET
// /hello answers at once.
func testServerMain() int {
	warm, _ := strconv.Atoi(os.Getenv("TEST_WARMUP_MS"))
	svc, err := New(Options{
		Name: "test-api", Version: "0.0.1", DefaultMaxUploadMB: 10,
		ServeDuringWarmUp: os.Getenv("TEST_SERVE_WARMUP") == "1",
		WarmUp: func(ctx context.Context) error {
			select {
			case <-time.After(time.Duration(warm) * time.Millisecond):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		},
	})
	if err != nil {
		return ConfigFailed(os.Stderr, "test-api", err)
	}
	svc.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		ms, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		WriteJSON(w, http.StatusOK, map[string]int{"slept_ms": ms})
	})
	addTestRoutes(svc)
	return svc.Run()
}

// proc is a running test server.
type proc struct {
	cmd     *exec.Cmd
	base    string // http://127.0.0.1:port
	port    int
	out     *servicetest.LogBuffer // stdout: the log
	errOut  *servicetest.LogBuffer // stderr
	done    chan struct{}
	exitErr error
}

// startServer starts the test server with HOST=127.0.0.1, a free PORT and
// the extra variables in vars (which may override both).
func startServer(t testing.TB, vars ...string) *proc {
	t.Helper()
	return startServerWith(t, nil, vars...)
}

// startServerWith is startServer writing the server's log (stdout) to
// stdout when it is not nil.
func startServerWith(t testing.TB, stdout *os.File, vars ...string) *proc {
	t.Helper()
	if testing.Short() {
		t.Skip("lifecycle tests start processes")
	}
	port := servicetest.FreePort(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// Start from the test's environment without the service variables, so
	// that only the ones the test gives are set.
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case EnvHost, EnvPort, EnvLogLevel, EnvLogFormat, EnvGracefulShutdown, EnvAllowedOrigins, EnvMaxUploadMB, EnvMaxUploadBytes, EnvReload:
		default:
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, serverEnv+"=1", "HOST=127.0.0.1", "PORT="+strconv.Itoa(port), "LOG_LEVEL=DEBUG")
	cmd.Env = append(cmd.Env, vars...)
	for _, v := range vars {
		if strings.HasPrefix(v, "PORT=") {
			port, _ = strconv.Atoi(strings.TrimPrefix(v, "PORT="))
		}
	}
	p := &proc{cmd: cmd, port: port, base: "http://127.0.0.1:" + strconv.Itoa(port), out: &servicetest.LogBuffer{}, errOut: &servicetest.LogBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.errOut
	if stdout != nil {
		cmd.Stdout = stdout
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exitErr = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("server stdout:\n%s\nserver stderr:\n%s", p.out, p.errOut)
		}
	})
	return p
}

// exitCode waits up to limit for the process to end and returns its exit code.
func (p *proc) exitCode(t testing.TB, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(limit):
		t.Fatalf("server still running after %v", limit)
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// client never reuses connections, so each request sees the server's
// current state on a fresh connection.
var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// get returns the status and body of GET url, or status 0 when the
// connection was refused.
func get(t testing.TB, url string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		if isRefused(err) {
			return 0, nil, nil
		}
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// isRefused says err is a connection the server did not answer because
// its listener is closed: refused, reset, or (a connection the kernel had
// queued when the listener closed) closed before any answer, EOF.
func isRefused(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection refused") || strings.Contains(err.Error(), "connection reset") ||
		errors.Is(err, io.EOF))
}

// waitReady polls /ready every 50 ms until it answers 200, returning the
// statuses seen before (0 for a refused connection).
func (p *proc) waitReady(t testing.TB, limit time.Duration) []int {
	t.Helper()
	var seen []int
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		code, _, _ := get(t, p.base+"/ready")
		if code == 200 {
			return seen
		}
		if len(seen) == 0 || seen[len(seen)-1] != code {
			seen = append(seen, code)
		}
		select {
		case <-p.done:
			t.Fatalf("server exited while starting: %v", p.exitErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("not ready after %v; saw %v", limit, seen)
	return nil
}

func TestLifecycleWarmUpThenReady(t *testing.T) {
	p := startServer(t, "TEST_WARMUP_MS=800")
	start := time.Now()
	before := p.waitReady(t, 10*time.Second)
	if elapsed := time.Since(start); elapsed < 700*time.Millisecond {
		t.Errorf("ready after %v, before the 800 ms warm-up could finish", elapsed)
	}
	// Warm-up runs before the listener opens: only refused connections
	// (or 503) may be seen before 200.
	if len(before) == 0 {
		t.Errorf("no refused connection or 503 seen during warm-up")
	}
	for _, c := range before {
		if c != 0 && c != 503 {
			t.Errorf("/ready answered %d while starting", c)
		}
	}
	if code, _, body := get(t, p.base+"/health"); code != 200 || string(body) != "{\"status\":\"ok\"}\n" {
		t.Errorf("/health: %d %s", code, body)
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.exitCode(t, 5*time.Second); code != ExitSIGTERM {
		t.Errorf("exit code %d, want 143", code)
	}
}

// TestLifecycleServeDuringWarmUp: with ServeDuringWarmUp the listener is
// open while the (here endless) warm-up runs: /health 200, /ready and the
// deep check 503 starting, a tool route 503 with Retry-After; SIGTERM then
// ends the process with 143 and closes the listener.
func TestLifecycleServeDuringWarmUp(t *testing.T) {
	p := startServer(t, "TEST_WARMUP_MS=600000", "TEST_SERVE_WARMUP=1")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _, _ := get(t, p.base+"/health"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/health never answered while warming up")
		}
		select {
		case <-p.done:
			t.Fatalf("server exited while warming up: %v", p.exitErr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if code, _, body := get(t, p.base+"/ready"); code != 503 || !strings.Contains(string(body), `"starting"`) {
		t.Errorf("/ready while warming up: %d %s", code, body)
	}
	if code, _, body := get(t, p.base+"/health?deep=true"); code != 503 || !strings.Contains(string(body), `"starting"`) {
		t.Errorf("/health?deep=true while warming up: %d %s", code, body)
	}
	code, h, body := get(t, p.base+"/hello")
	if code != 503 || h.Get("Retry-After") == "" || !strings.Contains(string(body), "starting") {
		t.Errorf("/hello while warming up: %d Retry-After %q %s", code, h.Get("Retry-After"), body)
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.exitCode(t, 5*time.Second); code != ExitSIGTERM {
		t.Errorf("exit code %d, want 143", code)
	}
	if code, _, _ := get(t, p.base+"/health"); code != 0 {
		t.Errorf("/health answered %d after the process ended", code)
	}
}

func TestLifecycleSIGTERMDuringSlowRequest(t *testing.T) {
	p := startServer(t, "GRACEFUL_SHUTDOWN_S=10")
	p.waitReady(t, 10*time.Second)

	type result struct {
		code int
		body []byte
		err  error
	}
	slow := make(chan result, 1)
	go func() {
		resp, err := client.Get(p.base + "/slow?ms=2000")
		if err != nil {
			slow <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		slow <- result{resp.StatusCode, b, err}
	}()
	waitInFlight(t, p)
	sent := time.Now()
	p.signal(t, syscall.SIGTERM)
	// Until the signal is handled.
	if !testenv.WaitFor(10*time.Second, func() bool { code, _, _ := get(t, p.base+"/ready"); return code == 503 }) {
		t.Error("/ready did not turn 503 after SIGTERM")
	}

	// While the slow request runs the listener stays open in the draining state.
	if code, _, body := get(t, p.base+"/ready"); code != 503 || !bytes.Contains(body, []byte(`"draining"`)) {
		t.Errorf("/ready while draining: %d %s", code, body)
	}
	if code, h, body := get(t, p.base+"/hello"); code != 503 || !bytes.Contains(body, []byte(`"detail":`)) || h.Get("Content-Type") != "application/json" {
		t.Errorf("new work while draining: %d %s", code, body)
	}
	if code, _, _ := get(t, p.base+"/health"); code != 200 {
		t.Errorf("/health while draining: %d", code)
	}
	if code, _, body := get(t, p.base+"/health?deep=true"); code != 503 || !bytes.Contains(body, []byte(`"draining":true`)) || !bytes.Contains(body, []byte(`"in_flight":1`)) {
		t.Errorf("deep health while draining: %d %s", code, body)
	}

	r := <-slow
	if r.err != nil || r.code != 200 || string(r.body) != "{\"slept_ms\":2000}\n" {
		t.Fatalf("slow request: %d %s %v", r.code, r.body, r.err)
	}
	if code := p.exitCode(t, 5*time.Second); code != ExitSIGTERM {
		t.Errorf("exit code %d, want 143", code)
	}
	if took := time.Since(sent); took > 4*time.Second {
		t.Errorf("stop took %v after SIGTERM with a 2 s request", took)
	}
	// After exit nothing answers.
	if code, _, _ := get(t, p.base+"/health"); code != 0 {
		t.Errorf("server still answering after exit: %d", code)
	}
}

func TestLifecycleDrainWindowCutsLongRequest(t *testing.T) {
	// A request longer than the drain window is not waited for by the
	// listener; http.Server.Shutdown still lets it finish within the grace.
	p := startServer(t, "GRACEFUL_SHUTDOWN_S=0.3")
	p.waitReady(t, 10*time.Second)
	slow := make(chan int, 1)
	go func() {
		resp, err := client.Get(p.base + "/slow?ms=1500")
		if err != nil {
			slow <- 0
			return
		}
		resp.Body.Close()
		slow <- resp.StatusCode
	}()
	waitInFlight(t, p)
	p.signal(t, syscall.SIGTERM)
	// Past the 0.3 s window the listener closes, long before the
	// request's 1.5 s are over.
	if !testenv.WaitFor(5*time.Second, func() bool { code, _, _ := get(t, p.base+"/ready"); return code == 0 }) {
		t.Error("/ready still answers after the drain window, want a refused connection")
	}
	if code := <-slow; code != 200 {
		t.Errorf("in-flight request: %d, want 200 within the grace period", code)
	}
	if code := p.exitCode(t, 5*time.Second); code != ExitSIGTERM {
		t.Errorf("exit code %d", code)
	}
}

func TestLifecycleStopSignals(t *testing.T) {
	tests := []struct {
		name   string
		warmMS string
		sig    syscall.Signal
		ready  bool
		want   int
	}{
		{"SIGTERM when idle", "0", syscall.SIGTERM, true, ExitSIGTERM},
		{"SIGINT when idle", "0", syscall.SIGINT, true, ExitSIGINT},
		// It ended the process at once, without a word or a drain.
		{"SIGHUP when idle", "0", syscall.SIGHUP, true, ExitSIGHUP},
		{"SIGTERM during warm-up", "20000", syscall.SIGTERM, false, ExitSIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startServer(t, "TEST_WARMUP_MS="+tt.warmMS)
			if tt.ready {
				p.waitReady(t, 10*time.Second)
			} else {
				waitForLog(t, p, `"msg":"starting"`)
				if code, _, _ := get(t, p.base+"/ready"); code != 0 {
					t.Errorf("/ready during warm-up: %d, want a refused connection", code)
				}
			}
			sent := time.Now()
			p.signal(t, tt.sig)
			if code := p.exitCode(t, 3*time.Second); code != tt.want {
				t.Errorf("exit code %d, want %d", code, tt.want)
			}
			if took := time.Since(sent); took > time.Second {
				t.Errorf("idle stop took %v", took)
			}
			if log := p.out.String(); tt.ready && (!strings.Contains(log, `"msg":"stop signal received"`) || !strings.Contains(log, `"signal":"`+tt.sig.String()+`"`)) {
				t.Errorf("the stop is not logged:\n%s", p.out)
			}
		})
	}
}

// TestLifecycleLogReaderGone: a service whose log reader has gone (a pipe
// to logger or svlogd, restarted) goes on answering; it was ended by
// SIGPIPE at its next log line, the request that wrote it unanswered.
func TestLifecycleLogReaderGone(t *testing.T) {
	p := startServer(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The server's stdout is a pipe the test owns: restart it on one
	// whose reader is closed.
	_ = p.cmd.Process.Kill()
	<-p.done
	p = startServerWith(t, w)
	w.Close()
	go io.Copy(io.Discard, r)
	p.waitReady(t, 10*time.Second)
	r.Close() // the reader goes
	for i := range 3 {
		if code, _, _ := get(t, p.base+"/hello"); code != http.StatusOK {
			t.Fatalf("request %d after the log reader went: %d", i, code)
		}
	}
	p.signal(t, syscall.SIGTERM)
	if code := p.exitCode(t, 5*time.Second); code != ExitSIGTERM {
		t.Errorf("exit code %d, want %d", code, ExitSIGTERM)
	}
}

func waitForLog(t *testing.T, p *proc, substr string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.out.String(), substr) {
		if time.Now().After(deadline) {
			t.Fatalf("log never contained %s", substr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLifecycleHostAndPort(t *testing.T) {
	port := servicetest.FreePort(t)
	p := startServer(t, "PORT="+strconv.Itoa(port), "HOST=127.0.0.1")
	p.waitReady(t, 10*time.Second)
	if p.port != port {
		t.Fatalf("server port %d, want %d", p.port, port)
	}
	waitForLog(t, p, fmt.Sprintf(`"addr":"127.0.0.1:%d"`, port))
	// Bound to 127.0.0.1 only: another loopback address is refused.
	if code, _, _ := get(t, fmt.Sprintf("http://127.0.0.2:%d/health", port)); code != 0 {
		t.Errorf("HOST=127.0.0.1 but 127.0.0.2 answered %d", code)
	}
	p.signal(t, syscall.SIGTERM)
	p.exitCode(t, 5*time.Second)

	// Default HOST 0.0.0.0 answers on any loopback address.
	port = servicetest.FreePort(t)
	q := startServer(t, "PORT="+strconv.Itoa(port), "HOST=0.0.0.0")
	q.waitReady(t, 10*time.Second)
	if code, _, _ := get(t, fmt.Sprintf("http://127.0.0.2:%d/health", port)); code != 200 {
		t.Errorf("HOST=0.0.0.0 but 127.0.0.2 answered %d", code)
	}
	q.signal(t, syscall.SIGTERM)
	q.exitCode(t, 5*time.Second)
}

func TestLifecycleLogLevel(t *testing.T) {
	tests := []struct {
		level    string
		wantInfo bool
	}{
		{"WARNING", false},
		{"INFO", true},
	}
	for _, tt := range tests {
		t.Run(tt.level, func(t *testing.T) {
			p := startServer(t, "LOG_LEVEL="+tt.level, "MAX_UPLOAD_MB=1", "MAX_UPLOAD_BYTES=5") // both set: a WARN record
			p.waitReady(t, 10*time.Second)
			get(t, p.base+"/hello")
			p.signal(t, syscall.SIGTERM)
			p.exitCode(t, 5*time.Second)
			levels := map[string]int{}
			sc := bufio.NewScanner(strings.NewReader(p.out.String()))
			for sc.Scan() {
				var rec map[string]any
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatalf("log line is not JSON: %q", sc.Text())
				}
				levels[fmt.Sprint(rec["level"])]++
			}
			if got := levels["INFO"] > 0; got != tt.wantInfo {
				t.Errorf("INFO records present = %v, want %v (%v)", got, tt.wantInfo, levels)
			}
			if levels["WARN"] == 0 {
				t.Errorf("the WARN record is missing (%v)", levels)
			}
			if levels["DEBUG"] > 0 {
				t.Errorf("DEBUG records at %s: %v", tt.level, levels)
			}
			if p.errOut.String() != "" {
				t.Errorf("stderr not empty: %s", p.errOut)
			}
		})
	}
}

func TestLifecycleStartupFailures(t *testing.T) {
	tests := []struct {
		vars []string
		want string
	}{
		{[]string{"GRACEFUL_SHUTDOWN_S="}, "GRACEFUL_SHUTDOWN_S is set but empty"},
		{[]string{"PORT="}, "PORT is set but empty"},
		{[]string{"LOG_LEVEL="}, "LOG_LEVEL is set but empty"},
		{[]string{"PORT=http"}, `PORT="http" is not a port number`},
		{[]string{"MAX_UPLOAD_MB=lots"}, `MAX_UPLOAD_MB="lots"`},
		// refused from its syntax, before any name lookup
		{[]string{"HOST=no such host!"}, `HOST="no such host!": not an IP address or host name`},
		{[]string{"REQUEST_TIMEOUT_S=-3"}, `REQUEST_TIMEOUT_S="-3"`},
	}
	for _, tt := range tests {
		t.Run(tt.vars[0], func(t *testing.T) {
			p := startServer(t, tt.vars...)
			if code := p.exitCode(t, 5*time.Second); code != ExitConfig {
				t.Errorf("exit code %d, want %d", code, ExitConfig)
			}
			// One JSON record, as the log's records are (off a
			// terminal): it was a plain line.
			var rec map[string]any
			if err := json.Unmarshal([]byte(p.errOut.String()), &rec); err != nil || rec["level"] != "CRITICAL" || rec["service"] != "test-api" {
				t.Errorf("stderr is not one CRITICAL JSON record of the service: %v %q", err, p.errOut)
			}
			if e, _ := rec["error"].(string); !strings.Contains(e, tt.want) {
				t.Errorf("stderr %q lacks %q", p.errOut, tt.want)
			}
		})
	}
}

func TestLifecycleListenFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	// Said before a long warm-up (it was said after it, the models loaded).
	p := startServer(t, "PORT="+strconv.Itoa(port), "TEST_WARMUP_MS=60000")
	if code := p.exitCode(t, 5*time.Second); code != ExitFailure {
		t.Errorf("exit code %d, want %d", code, ExitFailure)
	}
	if !strings.Contains(p.out.String(), "cannot listen") || !strings.Contains(p.out.String(), `"level":"CRITICAL"`) {
		t.Errorf("log lacks the CRITICAL listen failure:\n%s", p.out)
	}
}

func TestLifecycleCORS(t *testing.T) {
	p := startServer(t, "ALLOWED_ORIGINS=http://localhost:8080,http://127.0.0.1:8080")
	p.waitReady(t, 10*time.Second)
	if code, h, _ := get(t, p.base+"/hello", "Origin", "http://localhost:8080"); code != 200 || h.Get("Access-Control-Allow-Origin") != "http://localhost:8080" {
		t.Errorf("accepted origin: %d ACAO=%q", code, h.Get("Access-Control-Allow-Origin"))
	}
	if code, h, _ := get(t, p.base+"/hello", "Origin", "http://elsewhere.example"); code != 200 || h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("refused origin: %d ACAO=%q", code, h.Get("Access-Control-Allow-Origin"))
	}
	p.signal(t, syscall.SIGTERM)
	p.exitCode(t, 5*time.Second)
}

// TestLifecycleUploadCapRefusesBeforeReading sends the request over a raw
// connection and reads the answer before the body is complete: a server that
// waited for (or buffered) the whole body could not answer in time.
func TestLifecycleUploadCapRefusesBeforeReading(t *testing.T) {
	p := startServer(t, "MAX_UPLOAD_MB=1")
	p.waitReady(t, 10*time.Second)
	const total = 2 << 20
	chunk := bytes.Repeat([]byte("x"), 64<<10)

	t.Run("declared Content-Length", func(t *testing.T) {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", total)
		if _, err := conn.Write(chunk); err != nil {
			t.Fatal(err)
		}
		// Only 64 KiB of 2 MiB are sent: a 413 now means the server did not wait for the body.
		status, body := readResponse(t, conn)
		if status != 413 || !strings.Contains(body, "upload limit of 1 MB") {
			t.Errorf("status %d body %q after 64 KiB of a declared 2 MiB", status, body)
		}
	})

	t.Run("chunked", func(t *testing.T) {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.port))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
		written := 0
		for written < (1<<20)+(256<<10) { // 1.25 MiB: past the cap, well short of 2 MiB
			fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk)
			written += len(chunk)
		}
		status, body := readResponse(t, conn)
		if status != 413 {
			t.Errorf("status %d body %q after %d of %d bytes", status, body, written, total)
		}
	})

	// Ordinary clients must read the 413, not a connection reset, whether
	// they close the connection, keep it alive or wait for 100 Continue.
	clients := []struct {
		name   string
		c      *http.Client
		expect bool
	}{
		{"client with Connection: close", client, false},
		{"keep-alive client", &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}, false},
		{"client expecting 100-continue", &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{ExpectContinueTimeout: 5 * time.Second}}, true},
	}
	for _, tc := range clients {
		t.Run(tc.name, func(t *testing.T) {
			for i := 0; i < 5; i++ {
				req, _ := http.NewRequest("POST", p.base+"/upload", bytes.NewReader(make([]byte, total)))
				req.Header.Set("Content-Type", "application/octet-stream")
				if tc.expect {
					req.Header.Set("Expect", "100-continue")
				}
				resp, err := tc.c.Do(req)
				if err != nil {
					t.Fatalf("attempt %d: %v", i, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 413 || !strings.Contains(string(b), "upload limit of 1 MB") {
					t.Errorf("attempt %d: 2 MiB upload with MAX_UPLOAD_MB=1: %d %s", i, resp.StatusCode, b)
				}
			}
		})
	}
	p.signal(t, syscall.SIGTERM)
	p.exitCode(t, 5*time.Second)
}

// readResponse reads one HTTP response from conn within 3 s.
func readResponse(t *testing.T, conn net.Conn) (int, string) {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response while the body was still being sent: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitInFlight waits until p has one request in flight (its deep health
// says so).
func waitInFlight(t *testing.T, p *proc) {
	t.Helper()
	if !testenv.WaitFor(10*time.Second, func() bool {
		_, _, body := get(t, p.base+"/health?deep=true")
		var d deepBody
		_ = json.Unmarshal(body, &d)
		return d.InFlight == 1
	}) {
		t.Fatal("slow request never became in flight")
	}
}

// TestLifecycleTokensFileLogged: a service whose clients each have a token
// (API_TOKENS_FILE) says at start that a token is required (it said false:
// only API_TOKEN counted).
func TestLifecycleTokensFileLogged(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(f, []byte("alice tok-a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, "API_TOKENS_FILE="+f)
	p.waitReady(t, 10*time.Second)
	if !strings.Contains(p.out.String(), `"token_required":true`) {
		t.Errorf("start record does not say a token is required:\n%s", p.out)
	}
	p.signal(t, syscall.SIGTERM)
	p.exitCode(t, 5*time.Second)
}

// TestDrainWaitsForBusyWork: with work in flight that is no request (a
// job, AddBusy), the drain keeps the listener open, /ready answering 503
// draining, until the work is done (it closed the listener at once).
func TestDrainWaitsForBusyWork(t *testing.T) {
	svc, srv, _ := testService(t, env{"LOG_LEVEL": "ERROR", "GRACEFUL_SHUTDOWN_S": "20"}, Options{})
	_ = svc.WarmUp(context.Background())
	var busy atomic.Int32
	busy.Store(1)
	svc.AddBusy(func() int { return int(busy.Load()) })
	svc.BeginDrain()
	done := make(chan struct{})
	go func() {
		svc.drain(srv.Config)
		close(done)
	}()
	if got := do(t, "GET", srv.URL+"/ready", nil, nil); got.status != 503 || !bytes.Contains(got.body, []byte(`"draining"`)) {
		t.Errorf("/ready while a job runs in the drain: %d %s", got.status, got.body)
	}
	select {
	case <-done:
		t.Fatal("the drain ended while a job was running")
	default:
	}
	busy.Store(0)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the drain did not end once the job was done")
	}
}
