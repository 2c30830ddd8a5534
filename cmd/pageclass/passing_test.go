package main

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/cliflags"
	"archivekit/internal/pageclass/classify/classifytest"
)

// A page that fails in passing (a real EIO from the kernel: the file is a
// link to /proc/self/mem, whose first page no process maps) leaves its
// file to do: the run exits cliflags.ExitIncomplete saying that --resume
// finishes it, and once the file reads again the --resume classifies it
// alone. Before, the run exited 0 as if the file were done.
func TestPassingFailureLeavesFileToDo(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	flaky := filepath.Join(e.in, "TEXT", "flaky.png")
	if err := os.Symlink("/proc/self/mem", flaky); err != nil {
		t.Fatal(err)
	}
	code, log := e.run(t, "-d", e.in)
	if code != cliflags.ExitIncomplete {
		t.Fatalf("exit %d, want %d: %s", code, cliflags.ExitIncomplete, log)
	}
	for _, w := range []string{"input/output error", "--resume", "1 item(s) left to do"} {
		if !strings.Contains(log, w) {
			t.Errorf("the log does not say %q:\n%s", w, log)
		}
	}
	os.Remove(flaky)
	os.Remove(must(filepath.Glob(filepath.Join(e.results, "*_TOP-3.csv")))[0])
	if err := os.Symlink(classifytest.Pages(t, 2)[1], flaky); err != nil {
		t.Fatal(err)
	}
	code, log = e.run(t, "-d", e.in, "--resume")
	if code != exitOK {
		t.Fatalf("resume: exit %d: %s", code, log)
	}
	if n := toClassify(t, log); n != 1 {
		t.Errorf("resume classified %d files, want the one left to do", n)
	}
	if got := tableRows(t, e.results, "_v4.4_TOP-3.csv"); len(got) != len(pages)+2 {
		t.Errorf("%d rows after the resume, want %d", len(got)-1, len(pages)+1)
	}
}

// TestAddressSpaceWarned: under an address-space limit too small for the
// models (ulimit -v 2000000) the run says so first, with how to raise it
// (it ended with a stack dump or "could not create a primitive"); without
// one it says nothing. The limit is set in a child process (sh's ulimit).
func TestAddressSpaceWarned(t *testing.T) {
	if os.Getenv("PAGECLASS_TEST_ADDRESS_SPACE") == "1" {
		warnAddressSpace(slog.New(slog.NewTextHandler(os.Stdout, nil)))
		return
	}
	for _, c := range []struct {
		limit string
		warn  bool
	}{{"2000000", true}, {"unlimited", false}} {
		cmd := exec.Command("sh", "-c", `ulimit -v "$1" && exec "$0" -test.run='^TestAddressSpaceWarned$'`, os.Args[0], c.limit)
		cmd.Env = append(os.Environ(), "PAGECLASS_TEST_ADDRESS_SPACE=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ulimit -v %s: %v\n%s", c.limit, err, out)
		}
		if got := strings.Contains(string(out), "address-space limit (ulimit -v)"); got != c.warn {
			t.Errorf("ulimit -v %s: warned %v, want %v:\n%s", c.limit, got, c.warn, out)
		}
	}
}
