package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/summary"
)

// mixedFolder is an archivist's folder as found (issue 27): PNG pages named
// by date and zero-padded numbers, a JPEG named by year, a TIFF master of
// three pages in a sub-folder, a PDF of two pages, a PNG whose name has no
// extension (as some scanners write them), and a text file. It
// returns the readable files, relative to the folder, with their pages.
func mixedFolder(t *testing.T, e *env) map[string]int {
	t.Helper()
	src := classifytest.Pages(t, 1)
	mkdir(t, filepath.Join(e.in, "box"))
	for i, n := range []string{"1878-01-03.png", "scan-09.png", "scan-9.png"} {
		if err := os.Symlink(src[i], filepath.Join(e.in, n)); err != nil {
			t.Fatal(err)
		}
	}
	img := image.NewGray(image.Rect(0, 0, 300, 420))
	for i := range img.Pix {
		img.Pix[i] = uint8(40 + i%190)
	}
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, img, nil); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(e.in, "letter_1923.jpg"), jpg.String())
	tif := []hostile.TIFFPage{{W: 200, H: 300, Grey: 20}, {W: 300, H: 200, Grey: 140}, {W: 250, H: 250, Grey: 240}}
	write(t, filepath.Join(e.in, "box", "master.tif"), string(hostile.TIFF(tif...)))
	pdf, err := filepath.Abs(filepath.Join("..", "..", "internal", "pageclass", "imageio", "testdata", "two.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pdf, filepath.Join(e.in, "report.pdf")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src[0], filepath.Join(e.in, "scan0007")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(e.in, "notes.txt"), "not a page\n")
	return map[string]int{"1878-01-03.png": 1, "scan-09.png": 1, "scan-9.png": 1, "letter_1923.jpg": 1,
		"box/master.tif": 3, "report.pdf": 2, "scan0007": 1}
}

// summaryOf reads a run's summary table and checks that its counts add up
// and equal the run metadata's.
func summaryOf(t *testing.T, e *env) *summary.Summary {
	t.Helper()
	s, err := summary.ReadTable(e.output(t, "_"+summary.TableName))
	if err != nil {
		t.Fatal(err)
	}
	add := func(m map[string]int) int {
		n := 0
		for _, v := range m {
			n += v
		}
		return n
	}
	if add(s.Categories) != s.Pages || add(s.Sources) != s.Pages || add(s.Failures) != s.Failed {
		t.Errorf("counts do not add up: %d pages, %d by category, %d by source; %d failed, %d by file",
			s.Pages, add(s.Categories), add(s.Sources), s.Failed, add(s.Failures))
	}
	d := readParadata(t, e)
	b, _ := json.Marshal(d.Summary)
	var meta summary.Summary
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Pages != s.Pages || meta.Flagged != s.Flagged || meta.Failed != s.Failed || len(meta.Sources) != len(s.Sources) {
		t.Errorf("run metadata summary %+v, table %+v", meta, s)
	}
	return s
}

// The default (-ff png) run says what it left, by extension, with the flag
// that takes it: no readable page is skipped without a word.
func TestFolderRunReportsWhatItLeft(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	mixedFolder(t, e)
	code, log := e.run(t, "-d", e.in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	for _, want := range []string{"not collected: 1 .jpg, 1 .pdf, 1 .tif", "-ff png,jpg,pdf,tif", "-ff all",
		"files without a page extension that read as pages by content: 1 .png (take them with -ff all)"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	s := summaryOf(t, e)
	if s.Pages != 3 || s.NotCollected[".jpg"] != 1 || s.NotCollected[".tif"] != 1 || s.NotCollected[".pdf"] != 1 || s.NotCollected[".txt"] != 0 ||
		s.NotCollected[ContentLeft(".png")] != 1 {
		t.Errorf("summary %+v", s)
	}
	if d := readParadata(t, e); !strings.Contains(strings.Join(d.Warnings, "\n"), "not collected") {
		t.Errorf("run metadata warnings %q", d.Warnings)
	}
	// Without --inner, the readable files of sub-folders are counted too.
	e3 := newEnv(t, nil)
	e3.model(t, "v4.4")
	mixedFolder(t, e3)
	code, log = e3.run(t, "-d", e3.in, "-ff", "all", "--no-inner")
	if code != exitOK || !strings.Contains(log, "1 readable files in sub-folders not searched (take them with --inner)") {
		t.Errorf("exit %d: %s", code, log)
	}
	if s := summaryOf(t, e3); s.Pages != 7 || s.NotCollected[NestedLeft] != 1 || len(s.NotCollected) != 1 {
		t.Errorf("summary without --inner %+v", s)
	}
	// A folder with nothing of the format asked for says what it has.
	e2 := newEnv(t, nil)
	e2.model(t, "v4.4")
	write(t, filepath.Join(e2.in, "a.tiff"), string(hostile.TIFF(hostile.TIFFPage{W: 20, H: 20, Grey: 9})))
	if code, log := e2.run(t, "-d", e2.in); code == exitOK || !strings.Contains(log, "not collected: 1 .tiff (take them with -ff png,tif or -ff all)") {
		t.Errorf("exit %d: %s", code, log)
	}
	// Images in formats it does not read (GIF, BMP) are named, even by a
	// run taking every format (they were left without a word); other
	// files (notes) are not pages and not named.
	e4 := newEnv(t, nil)
	e4.model(t, "v4.4")
	write(t, filepath.Join(e4.in, "a.tif"), string(hostile.TIFF(hostile.TIFFPage{W: 20, H: 20, Grey: 9})))
	write(t, filepath.Join(e4.in, "b.gif"), "GIF89a\x14\x00\x14\x00")
	write(t, filepath.Join(e4.in, "c.bmp"), "BM\x36\x00\x0c\x00\x00\x00\x00\x00\x36\x00\x00\x00")
	write(t, filepath.Join(e4.in, "notes.txt"), "notes")
	code, log = e4.run(t, "-d", e4.in, "-ff", "all")
	if code != exitOK || !strings.Contains(log, "images in formats pageclass does not read: 1 BMP, 1 GIF") {
		t.Errorf("exit %d: %s", code, log)
	}
	if s := summaryOf(t, e4); s.Pages != 1 || s.NotCollected[UnreadLeft("GIF")] != 1 || s.NotCollected[UnreadLeft("BMP")] != 1 || len(s.NotCollected) != 2 {
		t.Errorf("summary with a GIF and a BMP %+v", s)
	}
}

// Every page of a mixed folder has a row whose SOURCE is its file as on
// disk, names keep their digits, zeros and extensions, and the summary
// counts add up to the rows.
func TestEveryRowJoinsToItsFile(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	files := mixedFolder(t, e)
	code, log := e.run(t, "-d", e.in, "-ff", "all")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if strings.Contains(log, "not collected") {
		t.Errorf("-ff all left files:\n%s", log)
	}
	for _, table := range []string{"_v4.4_TOP-3.csv", "_v4.4_REVIEW.csv"} {
		recs := readCSV(t, e.output(t, table))
		if h := recs[0]; h[len(h)-1] != "SOURCE" {
			t.Fatalf("%s header %v", table, h)
		}
		rows := map[string][]string{} // SOURCE -> PAGEs
		keys := map[string]string{}   // SOURCE -> FILE
		for _, r := range recs[1:] {
			src := r[len(r)-1]
			if _, err := os.Stat(filepath.Join(e.in, filepath.FromSlash(src))); err != nil {
				t.Errorf("%s: SOURCE %q is not a file of the folder: %v", table, src, err)
			}
			rows[src] = append(rows[src], r[1])
			keys[src] = r[0]
		}
		for f, pages := range files {
			if len(rows[f]) != pages {
				t.Errorf("%s: %s has %d rows, want %d", table, f, len(rows[f]), pages)
			}
		}
		if len(rows) != len(files) {
			t.Errorf("%s: rows of %d files, want %d", table, len(rows), len(files))
		}
		for src, file := range map[string]string{"1878-01-03.png": "1878-01-03", "scan-09.png": "scan-09",
			"scan-9.png": "scan-9", "letter_1923.jpg": "letter_1923", "box/master.tif": "box/master", "report.pdf": "report",
			"scan0007": "scan0007"} {
			if keys[src] != file {
				t.Errorf("%s: FILE of %s is %q, want %q", table, src, keys[src], file)
			}
		}
		if p := rows["box/master.tif"]; strings.Join(sorted(p), ",") != "1,2,3" {
			t.Errorf("%s: TIFF pages %v", table, p)
		}
		if p := rows["1878-01-03.png"]; p[0] != "" {
			t.Errorf("%s: a date-named image has PAGE %q", table, p[0])
		}
	}
	s := summaryOf(t, e)
	if s.Pages != 10 || s.Sources["box/master.tif"] != 3 || s.Sources["report.pdf"] != 2 || len(s.Sources) != 7 || s.Failed != 0 || len(s.NotCollected) != 0 {
		t.Errorf("summary %+v", s)
	}
	flagged := 0
	for _, r := range readCSV(t, e.output(t, "_v4.4_REVIEW.csv"))[1:] {
		if r[7] == "yes" {
			flagged++
		}
	}
	if flagged != s.Flagged {
		t.Errorf("summary flags %d pages, the review table %d", s.Flagged, flagged)
	}
	if !strings.Contains(log, `"msg":"run summary"`) || !strings.Contains(log, `"pages":10`) {
		t.Errorf("no run summary in the log:\n%s", log)
	}
	if !strings.Contains(log, `"not_collected":{}`) || strings.Contains(log, `:null`) {
		t.Errorf("the run summary record says none with null, not {}:\n%s", log)
	}
	// It names the results folder, as translate's names its output folder.
	if want := `"output":` + strconv.Quote(e.results); !strings.Contains(log, want) {
		t.Errorf("the run summary record lacks %s:\n%s", want, log)
	}
}

// --page-from-name reads the page number from the end of a name, the old
// rule; SOURCE still joins every row to its file.
func TestPageFromNameFlag(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	mixedFolder(t, e)
	if code, log := e.run(t, "-d", e.in, "--page-from-name"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	got := map[string]string{}
	for _, r := range readCSV(t, e.output(t, "_TOP-3.csv"))[1:] {
		got[r[len(r)-1]] = r[0] + "|" + r[1]
	}
	for src, key := range map[string]string{"1878-01-03.png": "1878-01|3", "scan-09.png": "scan-09|", "scan-9.png": "scan-9|"} {
		if got[src] != key {
			t.Errorf("%s: %q, want %q", src, got[src], key)
		}
	}
	if d := readParadata(t, e); d.Config["page_from_name"] != true {
		t.Errorf("config page_from_name %v", d.Config["page_from_name"])
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Slice(out, func(i, j int) bool {
		a, _ := strconv.Atoi(out[i])
		b, _ := strconv.Atoi(out[j])
		return a < b
	})
	return out
}

// The summary of merged shards is the one-shot run's: the counts add, and
// the files not collected, which every shard saw, are counted once.
func TestMergedSummaryEqualsOneShot(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	mixedFolder(t, e)
	write(t, filepath.Join(e.in, "broken.png"), "not a png")
	whole := filepath.Join(e.root, "whole")
	if code, log := e.run(t, "-d", e.in, "--results", whole); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	shards := filepath.Join(e.root, "shards")
	for i := 0; i < 2; i++ {
		if code, log := e.run(t, "-d", e.in, "--results", shards, "--shard", fmt.Sprintf("%d/2", i)); code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, code, log)
		}
	}
	merged := filepath.Join(e.root, "merged")
	if code, log := e.run(t, "--merge", "--results", merged, shards); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, log)
	}
	got, want := tableRows(t, merged, "_"+summary.TableName), tableRows(t, whole, "_"+summary.TableName)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("merged summary:\n%s\nwant the one-shot run's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(strings.Join(want, "\n"), "failed,broken.png") {
		t.Errorf("one-shot summary without the failure:\n%s", strings.Join(want, "\n"))
	}
}
