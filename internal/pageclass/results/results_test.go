package results

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from golden:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

func TestSplitPageSuffix(t *testing.T) {
	tests := []struct {
		stem string
		name string
		page int
	}{
		{"guide_troja-12", "guide_troja", 12},
		{"pages_online_10", "pages_online", 10},
		{"caa_conference-04", "caa_conference", 4},
		{"scan", "scan", 0},
		{"scan-", "scan-", 0},
		{"-3", "-3", 0},
		{"scan-0", "scan-0", 0},
		{"scan-3a", "scan-3a", 0},
		{"a-b-7", "a-b", 7},
		{"1990", "1990", 0},
	}
	for _, tc := range tests {
		name, page := SplitPageSuffix(tc.stem)
		if name != tc.name || page != tc.page {
			t.Errorf("SplitPageSuffix(%q) = %q, %d; want %q, %d", tc.stem, name, page, tc.name, tc.page)
		}
	}
}

func TestKeys(t *testing.T) {
	root := filepath.FromSlash("/in")
	tests := []struct {
		file string
		want Key
	}{
		{"/in/TEXT/guide_troja-2.png", Key{"TEXT/guide_troja", 2}},
		{"/in/DRAW/guide_troja-2.png", Key{"DRAW/guide_troja", 2}},
		{"/in/top.jpeg", Key{"top", 0}},
		{"/in/a.b/c_5.tif", Key{"a.b/c", 5}},
	}
	for _, tc := range tests {
		k, err := ImageKey(root, filepath.FromSlash(tc.file))
		if err != nil || k != tc.want {
			t.Errorf("ImageKey(%s) = %+v, %v; want %+v", tc.file, k, err, tc.want)
		}
	}
	if k, err := PDFKey(root, filepath.FromSlash("/in/sub/report-3.pdf"), 7); err != nil || k != (Key{"sub/report-3", 7}) {
		t.Errorf("PDFKey = %+v, %v", k, err)
	}
	if _, err := ImageKey(root, filepath.FromSlash("/elsewhere/x.png")); err == nil {
		t.Error("file outside root accepted")
	}
	if _, err := PDFKey(root, filepath.FromSlash("/in/x.pdf"), 0); err == nil {
		t.Error("page 0 accepted")
	}
}

// probs builds a canonical vector from category-index/score pairs.
func probs(pairs ...float64) []float64 {
	v := make([]float64, 11)
	for i := 0; i < len(pairs); i += 2 {
		v[int(pairs[i])] = pairs[i+1]
	}
	return v
}

var rows = []Row{
	{Key: Key{"TEXT/guide_troja", 2}, Scores: probs(7, 0.9, 9, 0.06, 10, 0.04), True: "TEXT"},
	{Key: Key{"DRAW/guide_troja", 2}, Scores: probs(0, 0.5, 1, 0.5), True: "DRAW_L"},
	{Key: Key{"TEXT/guide_troja", 10}, Scores: probs(8, 0.123456, 7, 0.876544), True: "TEXT_HW"},
	{Key: Key{"PHOTO/single", 0}, Scores: probs(5, 1), True: "PHOTO"},
}

// added is an unchunked table of layout l at p holding rs, not closed.
func added(t *testing.T, p string, l Layout, rs []Row) *Writer {
	t.Helper()
	w, err := Create(p, l, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func writeAll(t *testing.T, l Layout, rs []Row) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "out.csv")
	w := added(t, p, l, rs)
	if _, err := os.Stat(p); err == nil {
		t.Error("unchunked writer touched the disk before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	return string(b)
}

func TestTables(t *testing.T) {
	must := func(l Layout, err error) Layout {
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	revs := []string{"v1.4", "v2.4", "v3.4"}
	var best []Row
	for _, r := range rows {
		per := [][]float64{r.Scores, probs(3, 1), probs(7, 0.5, 0, 0.5)}
		best = append(best, Row{Key: r.Key, PerModel: per, Scores: Average(per)})
	}
	tests := []struct {
		name string
		l    Layout
		rows []Row
	}{
		{"top3", must(TopNLayout(3, false)), rows},
		{"top1", must(TopNLayout(1, false)), rows},
		{"top3_eval", must(TopNLayout(3, true)), rows},
		{"top1_eval", must(TopNLayout(1, true)), rows},
		{"raw", RawLayout(false), rows},
		{"raw_eval", RawLayout(true), rows},
		{"best_top1", BestTop1Layout(revs), best},
		{"best_avg_top5", must(BestAvgLayout(revs, 5)), best},
		{"best_avg_top1", must(BestAvgLayout(revs, 1)), best},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { golden(t, tc.name+".csv", writeAll(t, tc.l, tc.rows)) })
	}
}

func TestTopNLayoutRange(t *testing.T) {
	for _, n := range []int{0, 12, -1} {
		if _, err := TopNLayout(n, false); err == nil {
			t.Errorf("TopNLayout(%d) accepted", n)
		}
	}
	l, _ := TopNLayout(11, false)
	if _, err := l.Cells(Row{Key: Key{"x", 1}, Scores: []float64{1}}); err == nil {
		t.Error("short score vector accepted")
	}
}

func TestChunkedAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "chunk.csv")
	l, _ := TopNLayout(1, false)
	w, err := Create(p, l, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[:3] {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	// After two rows one chunk is on disk: header + 2 lines.
	b, _ := os.ReadFile(p)
	if n := strings.Count(string(b), "\n"); n != 3 {
		t.Errorf("after one chunk the file has %d lines:\n%s", n, b)
	}
	if err := w.Add(rows[0]); !errors.Is(err, ErrDuplicate) {
		t.Errorf("duplicate in one run: %v", err)
	}
	closeWithAll(t, w, l, rows[3:])
	// A new chunked table at the same path starts again (the ledger, not
	// the old file, says what an earlier run did).
	w2, err := Create(p, l, 2)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); strings.Count(string(b), "\n") != 1 || w2.Len() != 0 {
		t.Errorf("a new chunked table keeps old rows:\n%s", b)
	}
}

func TestNames(t *testing.T) {
	stamp := Stamp(time.Date(2026, 5, 30, 10, 20, 33, 0, time.UTC))
	got := []string{TopNName(stamp, "v4.4", 3), RawName(stamp, "v4.4"), EvalTopNName(stamp, 184, "v1.4", 1),
		EvalRawName(stamp, 184, "v1.4"), ConfMatName(stamp, 184, "v1.4", 3), BestTop1Name(stamp, 5), BestAvgName(stamp, 5, 3)}
	want := []string{"260530-102033_v4.4_TOP-3.csv", "260530-102033_v4.4_RAW.csv", "260530-102033_184_v1.4_TOP-1_EVAL.csv",
		"260530-102033_184_v1.4_EVAL_RAW.csv", "260530-102033_184_v1.4_conf_mat_TOP-3.png", "260530-102033_BEST_5_models_TOP-1.csv",
		"260530-102033_BEST_5_models_AVG_TOP-3.csv"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("name %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestKeyerGivesEveryInputItsOwnRow(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  []string // "FILE|PAGE" per file (PDFs at page 2)
	}{
		{"usual keys", []string{"r/a-3.png", "r/b.png", "r/c.pdf"}, []string{"a|3", "b|", "c|2"}},
		{"same page number three ways", []string{"r/scan-1.png", "r/scan_1.png", "r/scan-01.png", "r/x-1.png"},
			[]string{"scan-1|", "scan_1|", "scan-01|", "x|1"}},
		{"same stem two extensions", []string{"r/s-1.png", "r/s-1.jpg", "r/s_1.png"}, []string{"s-1.png|", "s-1.jpg|", "s_1|"}},
		{"image meets a PDF page", []string{"r/doc-2.png", "r/doc.pdf"}, []string{"doc-2|", "doc|2"}},
		{"two PDFs of one stem", []string{"r/d/doc.pdf", "r/d/doc.PDF"}, []string{"d/doc.pdf|2", "d/doc.PDF|2"}},
		{"other folders stay apart", []string{"r/a/scan-1.png", "r/b/scan_1.png"}, []string{"a/scan|1", "b/scan|1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := NewKeyer("r", tt.files, true)
			seen := map[Key]bool{}
			for i, f := range tt.files {
				key, err := k.Key(f, 2)
				if err != nil {
					t.Fatal(err)
				}
				if got := key.File + "|" + key.PageCell(); got != tt.want[i] {
					t.Errorf("%s: %s, want %s", f, got, tt.want[i])
				}
				if seen[key] {
					t.Errorf("%s: key %v taken twice", f, key)
				}
				seen[key] = true
			}
		})
	}
}

func TestKeyerRenamed(t *testing.T) {
	root := filepath.Join("in")
	plain := NewKeyer(root, []string{filepath.Join(root, "scan-1.png"), filepath.Join(root, "b.png")}, true)
	if got := plain.Renamed(); len(got) != 0 {
		t.Errorf("no collision: renamed %q", got)
	}
	k := NewKeyer(root, []string{filepath.Join(root, "scan-1.png"), filepath.Join(root, "scan_1.png"), filepath.Join(root, "b.png")}, true)
	if got := strings.Join(k.Renamed(), ","); got != "scan-1.png\x00stem,scan_1.png\x00stem" {
		t.Errorf("renamed %q", got)
	}
}

// Every page of a multi-page TIFF gets its own row, keyed like a PDF's
// pages, and no other input's key meets one of them: the keys are kept
// free for every TIFF, as its page count is known only once it is opened.
func TestKeyerMultiPageTIFF(t *testing.T) {
	files := []string{"r/scan.tif", "r/scan-2.png", "r/one-3.tiff", "r/doc.tif", "r/doc.pdf"}
	k := NewKeyer("r", files, true)
	cases := []pageCase{
		{"r/scan.tif", 1, 3, "scan|1"}, {"r/scan.tif", 2, 3, "scan|2"}, {"r/scan.tif", 3, 3, "scan|3"},
		{"r/scan-2.png", 1, 1, "scan-2|"},
		{"r/one-3.tiff", 1, 1, "one|3"}, // a single-page TIFF keeps the usual image key
		{"r/doc.tif", 1, 2, "doc.tif|1"}, {"r/doc.tif", 2, 2, "doc.tif|2"},
		{"r/doc.pdf", 1, 2, "doc.pdf|1"}, {"r/doc.pdf", 2, 2, "doc.pdf|2"},
	}
	checkPageKeys(t, k, cases)
}

// pageCase is page of pages of file, whose key is want ("FILE|PAGE").
type pageCase struct {
	file        string
	page, pages int
	want        string
}

// checkPageKeys checks each case's key and that no two cases share one.
func checkPageKeys(t *testing.T, k *Keyer, cases []pageCase) {
	t.Helper()
	seen := map[Key]string{}
	for _, c := range cases {
		key, err := k.PageKey(c.file, c.page, c.pages)
		if err != nil {
			t.Fatal(err)
		}
		if got := key.File + "|" + key.PageCell(); got != c.want {
			t.Errorf("%s page %d of %d: %s, want %s", c.file, c.page, c.pages, got, c.want)
		}
		if other, ok := seen[key]; ok {
			t.Errorf("%s page %d: key %v taken by %s", c.file, c.page, key, other)
		}
		seen[key] = c.file
	}
}

// Without pageFromName (pageclass's default) an image keeps its whole stem
// as FILE: dates, years and zero-padded numbers at the end of a name stay
// in it, and only the same stem with two extensions needs the extension.
// SOURCE (WithSource) is what joins a row to its file in every case.
func TestKeyerWholeStem(t *testing.T) {
	files := []string{"r/1878-01-03.png", "r/letter_1923.png", "r/scan-09.png", "r/scan-9.png",
		"r/s.png", "r/s.jpg", "r/doc.tif", "r/doc.png", "r/b.pdf", "r/b-2.png", "r/x/scan-09.png"}
	k := NewKeyer("r", files, false)
	cases := []pageCase{
		{"r/1878-01-03.png", 1, 1, "1878-01-03|"}, {"r/letter_1923.png", 1, 1, "letter_1923|"},
		{"r/scan-09.png", 1, 1, "scan-09|"}, {"r/scan-9.png", 1, 1, "scan-9|"},
		{"r/s.png", 1, 1, "s.png|"}, {"r/s.jpg", 1, 1, "s.jpg|"},
		// a TIFF may hold one page, keyed "doc" like doc.png: both keep their extension
		{"r/doc.tif", 2, 3, "doc.tif|2"}, {"r/doc.png", 1, 1, "doc.png|"},
		{"r/b.pdf", 2, 2, "b|2"}, {"r/b-2.png", 1, 1, "b-2|"}, {"r/x/scan-09.png", 1, 1, "x/scan-09|"},
	}
	checkPageKeys(t, k, cases)
	if got := strings.Join(k.Renamed(), ","); got != "doc.png\x00ext,doc.tif\x00ext,s.jpg\x00ext,s.png\x00ext" {
		t.Errorf("renamed %q", got)
	}
}

func TestWithSource(t *testing.T) {
	l := WithSource(RawLayout(false))
	h := l.Header()
	if h[0] != "FILE" || h[len(h)-1] != SourceColumn || len(h) != len(RawLayout(false).Header())+1 {
		t.Errorf("header %q", h)
	}
	scores := make([]float64, 11)
	scores[3] = 1
	c, err := l.Cells(Row{Key: Key{File: "scan-09"}, Scores: scores, Source: "scan-09.png"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != len(h) || c[len(c)-1] != "scan-09.png" {
		t.Errorf("cells %q", c)
	}
}

// TestWriterCells: Cells gives a row's cells by column name, as the CSV
// file holds them (here the TOP-3 row of a page), before and after Close.
func TestWriterCells(t *testing.T) {
	l, _ := TopNLayout(3, false)
	p := filepath.Join(t.TempDir(), "top.csv")
	w := added(t, p, l, rows)
	check := func(when string) {
		c, ok := w.Cells(Key{"TEXT/guide_troja", 10})
		if !ok || c["CLASS-1"] != "TEXT" || c["SCORE-1"] != "0.8765" || c["CLASS-2"] != "TEXT_HW" || c["SCORE-2"] != "0.1235" || c["PAGE"] != "10" {
			t.Errorf("%s: cells %v (ok %v)", when, c, ok)
		}
		if _, ok := w.Cells(Key{"TEXT/guide_troja", 3}); ok {
			t.Errorf("%s: a key never added has cells", when)
		}
	}
	check("before close")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	check("after close")
	b, _ := os.ReadFile(p)
	if !strings.Contains(string(b), "TEXT/guide_troja,10,TEXT,TEXT_HW,") || !strings.Contains(string(b), ",0.8765,0.1235,") {
		t.Errorf("file differs from the cells:\n%s", b)
	}
}
