package main

import (
	"path/filepath"
	"regexp"
	"testing"
)

// TestPDFLabelWarning: a PDF whose page labels cannot be read is
// classified with its pages numbered only, and the log warns once, naming
// the file (it was silent).
func TestPDFLabelWarning(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	mkdir(t, e.in)
	write(t, filepath.Join(e.in, "broken-labels.pdf"), string(scanPDF(t, 2, "<< /Nums [(x) << /S /r >>] >>")))
	code, log := e.run(t, "-d", e.in, "-ff", "pdf")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	warn := regexp.MustCompile(`(?m)^.*page labels cannot be read.*broken-labels\.pdf.*not a page index.*$`)
	if n := len(warn.FindAllString(log, -1)); n != 1 {
		t.Errorf("%d warnings naming the file and why, want 1:\n%s", n, log)
	}
	if rows := readCSV(t, e.output(t, "_v4.4_TOP-3.csv")); len(rows) != 3 {
		t.Errorf("%d rows, want the header and both pages", len(rows))
	}
}
