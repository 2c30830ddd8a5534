package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/imageio/decodertest"
)

// TestMain lets the test binary be the decoder processes the runs under
// test start (imageio.Isolation starts the running program again; a file
// named crash-* crashes its decoder process there), and the runs share one
// set of them (testDecoders).
func TestMain(m *testing.M) {
	os.Exit(decodertest.Main(m, func(d *imageio.Isolation) { testDecoders = d }))
}

// TestDecoderCrash: a page that crashes its decoder process fails alone,
// named in FAILURES.csv with the crash; the other pages are classified and
// the run succeeds. In process (--decode-in-process), where the test's
// crash does not happen, the same page is classified.
func TestDecoderCrash(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := e.linkPages(t, 1)
	crash := filepath.Join(filepath.Dir(pages[1]), "crash-"+filepath.Base(pages[1]))
	if err := os.Rename(pages[1], crash); err != nil {
		t.Fatal(err)
	}
	code, log := e.run(t, "-d", e.in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	failures := readCSV(t, e.output(t, "_FAILURES.csv"))
	// The signal is named by the runtime's dump (SIGSEGV) or, when the
	// process died before writing one, by its exit status (segmentation
	// fault): a signal sent with kill is either (it failed one CI run).
	if len(failures) != 2 || !strings.Contains(failures[1][1], crash) || !strings.Contains(failures[1][1], "the decoder crashed") ||
		!strings.Contains(failures[1][1], "SIGSEGV") && !strings.Contains(failures[1][1], "segmentation fault") {
		t.Fatalf("failures %q, want one row naming %s and its crash", failures, crash)
	}
	if rows := readCSV(t, e.output(t, "_TOP-3.csv")); len(rows) != len(pages) { // a header and the other pages
		t.Fatalf("TOP-3 has %d rows, want %d", len(rows), len(pages))
	}
	if got := readParadata(t, e).Config["decode_in_process"]; got != false {
		t.Errorf("run metadata decode_in_process %v, want false", got)
	}
	if got := readParadata(t, e).Config["decode_memory_mib"]; got != float64(2048) {
		t.Errorf("run metadata decode_memory_mib %v, want 2048", got)
	}

	e2 := newEnv(t, nil)
	e2.model(t, "v4.4")
	if code, log := e2.run(t, "-d", e.in, "--decode-in-process"); code != exitOK {
		t.Fatalf("--decode-in-process: exit %d: %s", code, log)
	}
	if rows := readCSV(t, e2.output(t, "_TOP-3.csv")); len(rows) != len(pages)+1 {
		t.Fatalf("--decode-in-process: TOP-3 has %d rows, want %d", len(rows), len(pages)+1)
	}
}
