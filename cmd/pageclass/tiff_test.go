package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
)

// Every page of a multi-page TIFF (a scanner's multi-page scan) is
// classified and gets its own row, FILE its stem and PAGE its number, each
// row the one the page alone gives; an image beside it whose name reads as
// one of its pages keeps its own row; and --resume writes the same rows
// from the ledger. Before, only the first page was read: the TIFF gave one
// row and its other pages were dropped without a word.
func TestMultiPageTIFFEveryPage(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := []hostile.TIFFPage{{W: 200, H: 300, Grey: 20}, {W: 300, H: 200, Grey: 140}, {W: 250, H: 250, Grey: 240}}
	write(t, filepath.Join(e.in, "scan.tif"), string(hostile.TIFF(pages...)))
	write(t, filepath.Join(e.in, "scan-2.tif"), string(hostile.TIFF(pages[0])))
	alone := filepath.Join(e.root, "alone")
	for i, p := range pages {
		write(t, filepath.Join(alone, "p"+string(rune('1'+i))+".tif"), string(hostile.TIFF(p)))
	}

	if code, log := e.run(t, "-d", e.in, "-ff", "tif"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	rows := readCSV(t, e.output(t, "_TOP-3.csv"))[1:]
	if code, log := e.run(t, "-d", alone, "-ff", "tif", "--results", filepath.Join(e.root, "r-alone")); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	want := map[string][]string{} // FILE|PAGE -> the row's classes and scores
	for _, r := range readCSV(t, tableIn(t, filepath.Join(e.root, "r-alone"), "_TOP-3.csv"))[1:] {
		want[r[0]] = r[2 : len(r)-1] // classes and scores, not SOURCE
	}
	expect := map[string]string{"scan|1": "p1", "scan|2": "p2", "scan|3": "p3", "scan-2|": "p1"}
	if len(rows) != len(expect) {
		t.Fatalf("%d rows, want %d: %v", len(rows), len(expect), rows)
	}
	for _, r := range rows {
		key := r[0] + "|" + r[1]
		p, ok := expect[key]
		if !ok {
			t.Errorf("unexpected row %v", r)
			continue
		}
		if src := r[len(r)-1]; src != map[bool]string{true: "scan.tif", false: "scan-2.tif"}[r[0] == "scan"] {
			t.Errorf("row %s: SOURCE %q", key, src)
		}
		if got, w := strings.Join(r[2:len(r)-1], ","), strings.Join(want[p], ","); got != w {
			t.Errorf("row %s = %s, want %s (the page classified alone)", key, got, w)
		}
	}
	if f := readCSV(t, e.output(t, "_FAILURES.csv")); len(f) != 1 {
		t.Errorf("failures: %v", f)
	}

	// --resume writes the same rows from the ledger, keyed by page.
	resumed := resumeCopy(t, e, 0, "-ff", "tif")
	first := flat(readCSV(t, e.output(t, "_TOP-3.csv")))
	var again []string
	m, _ := filepath.Glob(filepath.Join(resumed, "*_TOP-3.csv"))
	for _, f := range m {
		if filepath.Base(f) != filepath.Base(e.output(t, "_TOP-3.csv")) {
			again = flat(readCSV(t, f))
		}
	}
	if strings.Join(again, "\n") != strings.Join(first, "\n") {
		t.Errorf("resumed table\n%s\nwant\n%s", strings.Join(again, "\n"), strings.Join(first, "\n"))
	}
}

// tableIn returns the only file of dir whose name ends with suffix.
func tableIn(t *testing.T, dir, suffix string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	if len(m) != 1 {
		t.Fatalf("%d files *%s in %s", len(m), suffix, dir)
	}
	return m[0]
}

// A TIFF recorded in the ledger by a binary that read only its first page
// (no page count in its entry) is classified again by --resume, so the
// resumed tables hold all its pages; other files stay done.
func TestResumeRedoesTIFFRecordedAsOnePage(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := []hostile.TIFFPage{{W: 200, H: 300, Grey: 20}, {W: 300, H: 200, Grey: 140}, {W: 250, H: 250, Grey: 240}}
	write(t, filepath.Join(e.in, "scan.tif"), string(hostile.TIFF(pages...)))
	write(t, filepath.Join(e.in, "one.tif"), string(hostile.TIFF(pages[1])))
	src := classifytest.Pages(t, 1)[0]
	if err := os.Symlink(src, filepath.Join(e.in, "page.png")); err != nil {
		t.Fatal(err)
	}
	if code, log := e.run(t, "-d", e.in, "-ff", "tif,png"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	want := flat(readCSV(t, e.output(t, "_TOP-3.csv")))
	if len(want) != 6 {
		t.Fatalf("table %v", want)
	}
	// Make the TIFFs' entries those of the binary before: the first page
	// only, no page count.
	files, _ := ledgerEntries(t, e.results)
	if len(files) != 1 {
		t.Fatalf("ledger files %v", files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if item, _ := m["item"].(string); strings.HasSuffix(item, ".tif") {
			d := m["data"].(map[string]any)
			if _, ok := d["page_count"]; !ok {
				t.Fatalf("%s recorded without its page count: %s", item, l)
			}
			delete(d, "page_count")
			d["pages"] = d["pages"].([]any)[:1]
			nl, _ := json.Marshal(m)
			l = string(nl)
		}
		lines = append(lines, l)
	}
	write(t, files[0], strings.Join(lines, "\n")+"\n")
	if err := os.Remove(e.output(t, "_TOP-3.csv")); err != nil { // the resumed run's table is then the only one
		t.Fatal(err)
	}
	resumed := resumeCopy(t, e, 2, "-ff", "tif,png") // the TIFFs
	if got := flat(readCSV(t, tableIn(t, resumed, "_TOP-3.csv"))); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed table\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// resumeCopy copies e's results folder and runs pageclass -d e.in with args
// --resume into the copy, which it returns; the resumed run must classify
// want files.
func resumeCopy(t *testing.T, e *env, want int, args ...string) string {
	t.Helper()
	resumed := filepath.Join(e.root, "r-resumed")
	if err := os.CopyFS(resumed, os.DirFS(e.results)); err != nil {
		t.Fatal(err)
	}
	code, log := e.run(t, append(append([]string{"-d", e.in}, args...), "--results", resumed, "--resume")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if n := toClassify(t, log); n != want {
		t.Errorf("resumed run classified %d files, want %d", n, want)
	}
	return resumed
}
