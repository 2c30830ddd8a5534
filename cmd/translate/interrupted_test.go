package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

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
