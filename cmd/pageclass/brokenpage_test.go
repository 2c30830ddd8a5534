package main

import (
	"bytes"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"archivekit/bindings/pdfium"
)

// TestBrokenPageObject: a 3-page PDF whose page 2 is broken (its page
// object unreadable, or the page tree pointing to a missing object) has,
// rendered by poppler without PDFium, rows for pages 1 and 3 alone, with
// the scores of pages 1 and 3 of the intact PDF, and FAILURES names its
// page 2; poppler had classified page 3 as page 2 and failed page 3.
// (This file sorts before pdfium_test.go, whose tests load PDFium for the
// rest of the process; TestBrokenPageObjectPDFium is the same with it.)
func TestBrokenPageObject(t *testing.T) {
	if pdfium.Loaded() != "" {
		t.Skip("an earlier test of this process loaded PDFium")
	}
	t.Setenv("PDFIUM_LIBRARY", filepath.Join(t.TempDir(), "libpdfium.so"))
	checkBrokenPage(t)
}

// checkBrokenPage classifies the PDFs of TestBrokenPageObject, with
// refArgs for the intact PDF's reference rows.
func checkBrokenPage(t *testing.T, refArgs ...string) {
	t.Helper()
	intact := scanPDF(t, 3, "")
	broken := map[string][]byte{
		// Same lengths, so that the table's offsets stay right.
		"kid points to a missing object": bytes.Replace(intact, []byte("4 0 R 7 0 R 10 0 R "), []byte("4 0 R 77 0 R 10 0 R"), 1),
		"page object unreadable":         bytes.Replace(intact, []byte("\n7 0 obj\n"), []byte("\n7 0 xxx\n"), 1),
	}
	want, _, _ := rawRows(t, intact, refArgs...)
	for name, pdf := range broken {
		if bytes.Equal(pdf, intact) {
			t.Fatalf("%s: the PDF was not broken", name)
		}
		got, failures, log := rawRows(t, pdf)
		// Said in the run's log (it went to the default logger, plain
		// text on stderr).
		if !strings.Contains(log, `"msg":"a PDF's page tree has broken pages"`) {
			t.Errorf("%s: the run's log does not say the page tree is broken:\n%s", name, log)
		}
		if len(got) != 2 || got["1"] == nil || got["3"] == nil {
			t.Errorf("%s: rows for pages %v, want 1 and 3", name, keys(got))
			continue
		}
		for _, page := range []string{"1", "3"} {
			if d := scoreDiff(got[page], want[page]); d > 1e-3 {
				t.Errorf("%s: page %s's scores differ by %.4f from the intact PDF's:\n%q\n%q", name, page, d, got[page], want[page])
			}
		}
		if len(failures) != 1 || !regexp.MustCompile(`\bpage 2: `).MatchString(failures[0][1]) ||
			regexp.MustCompile(`page [013-9]`).MatchString(failures[0][1]) {
			t.Errorf("%s: failures %q, want page 2's alone", name, failures)
		}
	}
}

// rawRows classifies doc (badpage.pdf) with args and returns its RAW
// rows by page number, its failures and the run's log.
func rawRows(t *testing.T, doc []byte, args ...string) (map[string][]string, [][]string, string) {
	t.Helper()
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	path := filepath.Join(e.root, "badpage.pdf")
	write(t, path, string(doc))
	code, log := e.run(t, append([]string{"-f", path, "--raw"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	rows := map[string][]string{}
	for _, r := range readCSV(t, e.output(t, "_v4.4_RAW.csv"))[1:] {
		rows[r[1]] = r
	}
	var failures [][]string
	if m, _ := filepath.Glob(filepath.Join(e.results, "*_FAILURES.csv")); len(m) == 1 {
		failures = readCSV(t, m[0])[1:]
	}
	return rows, failures, log
}

// scoreDiff is the largest difference between the numeric columns of two
// rows (+Inf where one has a number the other has not).
func scoreDiff(a, b []string) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	worst := 0.0
	for i := range a {
		x, errA := strconv.ParseFloat(a[i], 64)
		y, errB := strconv.ParseFloat(b[i], 64)
		switch {
		case errA == nil && errB == nil:
			worst = max(worst, math.Abs(x-y))
		case (errA == nil) != (errB == nil):
			return math.Inf(1)
		}
	}
	return worst
}

// keys are the keys of m.
func keys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
