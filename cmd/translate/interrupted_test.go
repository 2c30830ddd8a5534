package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"archivekit/internal/cliflags"
	"archivekit/internal/paradata"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// killChild, set in the environment of a child process of a test
// (runKilled), makes it run translate with the arguments and environment
// it holds (JSON) and kill itself with SIGKILL once two inputs are
// recorded in the ledger (killedChild).
const killChild = "ARCHIVEKIT_TEST_TRANSLATE_KILLED_RUN"

type killedRun struct {
	Args []string `json:"args"`
	Env  env      `json:"env"`
}

// killedChild, in the child process of runKilled, runs translate and is
// killed with SIGKILL once two inputs are recorded; it returns at once in
// the test's own process.
func killedChild(t *testing.T) {
	v := os.Getenv(killChild)
	if v == "" {
		return
	}
	var k killedRun
	if err := json.Unmarshal([]byte(v), &k); err != nil {
		t.Fatal(err)
	}
	itemHook = func(n int) {
		if n == 2 {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	run(context.Background(), k.Args, k.Env.get, io.Discard, io.Discard)
	t.Fatal("the run was not killed")
}

// runKilled runs translate with args and e in a child process of the test
// named test (which calls killedChild first), killed with SIGKILL once two
// inputs are recorded in the ledger.
func runKilled(t *testing.T, test string, args []string, e env) {
	t.Helper()
	v, _ := json.Marshal(killedRun{Args: args, Env: e})
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), killChild+"="+string(v))
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child not killed by SIGKILL: %v", err)
	}
}

// A translate run killed with kill -9 leaves its run metadata saying
// "running"; the --resume (or --retry-failed) that continues it records it
// as interrupted, naming itself, and lists it in its own interrupted_runs.
// A run that completed is never marked. Before, only pageclass did this.
func TestResumeRecordsKilledRun(t *testing.T) {
	killedChild(t)
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := recordsTree(t, recs)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	metas := func() map[string]bool {
		m, _ := filepath.Glob(filepath.Join(out, "*_translator.json"))
		set := map[string]bool{}
		for _, p := range m {
			set[p] = true
		}
		return set
	}
	read := func(p string) (m map[string]any) {
		t.Helper()
		if b, err := os.ReadFile(p); err != nil || json.Unmarshal(b, &m) != nil {
			t.Fatalf("%s: not run metadata (%v)", p, err)
		}
		return m
	}
	// kill runs translate in a child process killed with SIGKILL part-way
	// and returns its run metadata.
	kill := func() string {
		t.Helper()
		before := metas()
		runKilled(t, "TestResumeRecordsKilledRun", recordArgs(root, out), newEnv(api))
		for p := range metas() {
			if !before[p] {
				if st := read(p)["status"]; st != "running" {
					t.Fatalf("killed run's metadata says %v", st)
				}
				return p
			}
		}
		t.Fatal("the killed run wrote no run metadata")
		return ""
	}
	// resume continues with flag and returns its run metadata.
	resume := func(flag string) string {
		t.Helper()
		before := metas()
		if r := runCLI(t, newEnv(api), recordArgs(root, out, flag)...); r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", flag, r.code, r.stderr)
		}
		for p := range metas() {
			if !before[p] {
				return p
			}
		}
		t.Fatalf("%s wrote no run metadata", flag)
		return ""
	}
	check := func(flag, killed, resumed string) {
		t.Helper()
		old, now := read(killed), read(resumed)
		if old["status"] != "interrupted" || !strings.Contains(fmt.Sprint(old["error"]), "continued by run "+fmt.Sprint(now["run_id"])) {
			t.Errorf("%s: killed run: status %v, error %v; want interrupted, continued by run %v", flag, old["status"], old["error"], now["run_id"])
		}
		if now["status"] != "completed" || fmt.Sprint(now["interrupted_runs"]) != fmt.Sprintf("[map[file:%s run_id:%v]]", killed, old["run_id"]) {
			t.Errorf("%s: continuing run: status %v, interrupted_runs %v; want completed, [%v]", flag, now["status"], now["interrupted_runs"], old["run_id"])
		}
	}

	killed := kill()
	resumed := resume("--resume")
	check("--resume", killed, resumed)

	// Killed again, continued with --retry-failed: only that run is
	// marked; the completed one stays completed.
	killed2 := kill()
	retried := resume("--retry-failed")
	check("--retry-failed", killed2, retried)
	if got := read(resumed)["status"]; got != "completed" {
		t.Errorf("completed run now %v", got)
	}
	// A further resume finds nothing interrupted.
	last := resume("--resume")
	if got := read(last)["interrupted_runs"]; got != nil {
		t.Errorf("a resume after completed runs lists interrupted runs: %v", got)
	}
}

// Ctrl-C in the middle of a book's text file (the context cancelled with
// the signal as its cause, as main does) ends the run with exit 130 and
// says how to continue; the run metadata records the run as interrupted by
// Ctrl-C, the failures table lists nothing (the file in flight and those
// not started are not the inputs' failures), --book-out is not written
// from half a run (the METS is not fetched again), and --resume finishes
// the book. Before, the run exited 3 ("run failed: context canceled"), the
// file in flight was a failure row ("context canceled") and the run
// metadata said failed.
func TestCtrlCInterruptsRun(t *testing.T) {
	const n = 4
	srv := altoBookServer(t, n)
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	var posts atomic.Int32
	api := startAPI(t, translatortest.Config{Garbage: func(in string) string {
		// the 3rd call of the second file (one call a page with
		// --fast-align; the sample has 65 pages with text)
		if posts.Add(1) == 65+3 {
			cancel(cliflags.Stopped{Signal: os.Interrupt})
		}
		return translatortest.Translate(in)
	}})
	out := t.TempDir()
	args := []string{srv.URL + "/b/mets.xml", "-o", out, "--vocabulary", "", "--fast-align", "--book-out"}
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, newEnv(api).get, &stdout, &stderr)
	if code != cliflags.ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, cliflags.ExitInterrupted, stderr.String())
	}
	log := stderr.String()
	if strings.Contains(log, "run failed") || !strings.Contains(log, "--resume") {
		t.Errorf("the log should say the run was interrupted and how to continue (--resume), not that it failed:\n%s", log)
	}
	d := readParadata(t, out)
	if d.Status != paradata.StatusInterrupted || !strings.Contains(d.Error, "Ctrl-C") {
		t.Errorf("run metadata status %q error %q, want interrupted by Ctrl-C", d.Status, d.Error)
	}
	tables, _ := filepath.Glob(filepath.Join(out, "*_failures.csv"))
	if len(tables) != 1 {
		t.Fatalf("failures tables %v", tables)
	}
	if b := readOrFatal(t, tables[0]); strings.Count(string(b), "\n") != 1 {
		t.Errorf("failures table of an interrupted run lists inputs:\n%s", b)
	}
	if h := srv.hitsOf("/b/mets.xml"); h != 1 {
		t.Errorf("the METS requested %d times: --book-out ran after the interruption", h)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*.mets.xml")); len(m) != 0 {
		t.Errorf("--book-out wrote %v from an interrupted run", m)
	}
	if r := runCLI(t, newEnv(api), append(args, "--resume")...); r.code != exitOK || translated(t, r.stderr) != n-1 {
		t.Fatalf("resume: exit %d, %d translated, want %d: %s", r.code, translated(t, r.stderr), n-1, r.stderr)
	}
}
