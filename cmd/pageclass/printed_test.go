package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestOneFilePrinted: `pageclass -f page.png` prints the page's Top-N on
// stdout, one line, as the original tool printed its prediction (stdout was
// empty: the log goes to stderr, the tables to the results folder); a
// folder run prints nothing there.
func TestOneFilePrinted(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := e.linkPages(t, 1)
	code, out, errOut := e.runOut(t, "-f", pages[0], "--topn", "2")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	line := regexp.MustCompile(`^[^:\n]+: [A-Z_]+ [01]\.\d{4}, [A-Z_]+ [01]\.\d{4}\n$`)
	if !line.MatchString(out) || !strings.HasPrefix(out, strings.TrimSuffix(filepath.Base(pages[0]), ".png")+": ") {
		t.Errorf("stdout %q, want the page's name and its two best categories", out)
	}
	if code, out, errOut := e.runOut(t, "-d", e.in); code != exitOK || out != "" {
		t.Errorf("folder run: exit %d, stdout %q: %s", code, out, errOut)
	}
}

// brokenStdout fails every write as a pipe whose reader went away does.
type brokenStdout struct{}

func (brokenStdout) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestPrintedStdoutBroken: a stdout that cannot be written (| head -1, a
// full disk) is said once and the run ends as usual, its tables written
// (the process was killed at the first line, or the lines were lost
// without a word).
func TestPrintedStdoutBroken(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := e.linkPages(t, 1)
	var errOut bytes.Buffer
	code := run(context.Background(), []string{"--config", e.cfg, "-f", pages[0]}, brokenStdout{}, &errOut)
	if code != exitOK || strings.Count(errOut.String(), "standard output cannot be written") != 1 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if rows := tableRows(t, e.results, "_v4.4_TOP-3.csv"); len(rows) != 2 {
		t.Errorf("table rows %q", rows)
	}
}
