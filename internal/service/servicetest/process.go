package servicetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Build compiles the command in the current directory into a temporary
// folder and returns the binary's path.
func Build(t testing.TB, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// FreePort returns a free loopback TCP port.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Process is a running service.
type Process struct {
	Cmd  *exec.Cmd
	Base string // http://127.0.0.1:PORT
	mu   sync.Mutex
	log  bytes.Buffer
	done chan struct{}
}

// Log returns what the process has written so far.
func (p *Process) Log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *Process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.Write(b)
}

// Start runs bin with args and env (added to the test's environment) on a
// free port of 127.0.0.1; the process is killed at the end of the test.
func Start(t testing.TB, bin string, env []string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	return StartCmd(t, cmd)
}

// StartCmd starts cmd (its environment, folder and credentials set by the
// caller) on a free port of 127.0.0.1, adding HOST and PORT to cmd.Env; the
// process is killed at the end of the test.
func StartCmd(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	port := FreePort(t)
	cmd.Env = append(cmd.Env, "HOST=127.0.0.1", fmt.Sprintf("PORT=%d", port))
	p := &Process{Cmd: cmd, Base: fmt.Sprintf("http://127.0.0.1:%d", port), done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p, p
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// WaitReady polls /ready until it answers 200. Before that, a refused
// connection or a 503 is the only acceptable answer; it returns how many
// such answers it saw.
func (p *Process) WaitReady(t testing.TB, timeout time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(timeout)
	notReady := 0
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.Base + "/ready")
		if err == nil {
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				return notReady
			case http.StatusServiceUnavailable:
			default:
				t.Fatalf("/ready answered %d while starting", resp.StatusCode)
			}
		}
		notReady++
		select {
		case <-p.done:
			t.Fatalf("the service exited while starting:\n%s", p.Log())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("not ready after %v:\n%s", timeout, p.Log())
	return notReady
}

// Wait waits for the process to exit and returns its exit code.
func (p *Process) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.Cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("still running after %v:\n%s", timeout, p.Log())
	}
	return -1
}

// WaitInFlight polls /health?deep=true until it reports work in flight and
// reports whether it did within timeout.
func (p *Process) WaitInFlight(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(p.Base + "/health?deep=true")
		if err == nil {
			var h struct {
				InFlight int `json:"in_flight"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if h.InFlight > 0 {
				return true
			}
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Terminate sends SIGTERM, the clean stop of a container, and waits (up
// to 10 s, a loaded machine) until the service has begun draining: /ready
// answers 503, or nothing answers any more; it returns when the signal
// was sent.
func (p *Process) Terminate(t testing.TB) time.Time {
	t.Helper()
	t0 := time.Now()
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := client.Get(p.Base + "/ready")
		if err != nil {
			break // the listener is closed: past draining
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	return t0
}
