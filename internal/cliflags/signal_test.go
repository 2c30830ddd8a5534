package cliflags

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalHelper is the program TestSignals signals: it prints "ready"
// once SignalContext watches, then the cause that stopped its context and
// its exit code (Stopped.Code). It runs only as that child.
func TestSignalHelper(t *testing.T) {
	if os.Getenv("CLIFLAGS_SIGNAL_HELPER") != "1" {
		t.Skip("the child of TestSignals")
	}
	ctx, stop := SignalContext(context.Background())
	defer stop()
	fmt.Println("ready")
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute): // no signal came: the test fails on the output
	}
	// A run takes a moment to write its tables and run metadata.
	fmt.Println("stopping")
	time.Sleep(100 * time.Millisecond)
	s, ok := StoppedBy(ctx)
	fmt.Printf("%v|%d|%v\n", context.Cause(ctx), s.Code(), ok)
}

// TestSignals: a run is stopped by SIGINT, SIGTERM and SIGHUP (its terminal
// closed, as when an SSH connection drops), each named, with exit codes
// 130, 143 and 129; under nohup, which ignores SIGHUP, SIGHUP stays ignored
// (the run goes on) and a later SIGTERM stops it. Before, SIGHUP ended the
// program at once, writing neither its tables nor its run metadata.
func TestSignals(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup:", err)
	}
	// A test run under nohup (a CI job started so) ignores SIGHUP, and its
	// children inherit that: the SIGHUP case then ran as the nohup one.
	// Watching it here gives the children the default disposition again
	// (a handler does not survive exec; ignoring does).
	if signal.Ignored(syscall.SIGHUP) {
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	for _, c := range []struct {
		name  string
		nohup bool
		sigs  []syscall.Signal
		cause string
		code  int
	}{
		{"SIGINT", false, []syscall.Signal{syscall.SIGINT}, "interrupted by Ctrl-C (SIGINT)", 130},
		{"SIGTERM", false, []syscall.Signal{syscall.SIGTERM}, "stopped by SIGTERM", 143},
		{"SIGHUP", false, []syscall.Signal{syscall.SIGHUP}, "stopped by SIGHUP (its terminal closed", 129},
		{"nohup SIGHUP then SIGTERM", true, []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM}, "stopped by SIGTERM", 143},
		// Two at once, as timeout(1) sends them (to the program, then to
		// its group): one stop, not a second Ctrl-C that ends the program
		// before its run metadata is written.
		{"SIGINT twice at once", false, []syscall.Signal{syscall.SIGINT}, "interrupted by Ctrl-C (SIGINT)", 130},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{exe, "-test.run=^TestSignalHelper$"}
			if c.nohup {
				args = append([]string{nohup}, args...)
			}
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Env = append(os.Environ(), "CLIFLAGS_SIGNAL_HELPER=1")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(out)
			if !lines.Scan() || lines.Text() != "ready" {
				t.Fatalf("the child did not start: %q", lines.Text())
			}
			for _, s := range c.sigs {
				if err := cmd.Process.Signal(s); err != nil {
					t.Fatal(err)
				}
			}
			if !lines.Scan() || lines.Text() != "stopping" {
				t.Fatalf("the child did not stop: %q (%v)", lines.Text(), cmd.Wait())
			}
			if strings.HasSuffix(c.name, "twice at once") {
				// The copy timeout(1) sends to the group, while the run
				// writes its outputs.
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
			}
			if !lines.Scan() {
				t.Fatalf("the child ended without its cause (%v)", cmd.Wait())
			}
			got := strings.Split(lines.Text(), "|")
			if len(got) != 3 || !strings.HasPrefix(got[0], c.cause) || got[1] != fmt.Sprint(c.code) || got[2] != "true" {
				t.Errorf("cause|code|stopped %q, want %q…|%d|true", lines.Text(), c.cause, c.code)
			}
			_ = cmd.Wait()
		})
	}
}
