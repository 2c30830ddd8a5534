package splits

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"archivekit/internal/testenv"
)

func pagesDir(t *testing.T) string { return testenv.Data(t, "pages") }

func TestSplitMix64ReferenceValues(t *testing.T) {
	g := NewSplitMix64(0)
	for _, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := g.Uint64(); got != want {
			t.Fatalf("splitmix64(0) = %#x, want %#x", got, want)
		}
	}
}

func permutation(n int, seed uint64) string {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	NewSplitMix64(seed).Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return strings.Trim(fmt.Sprint(p), "[]")
}

// The shuffle matches an independent Python implementation of the
// documented algorithm (testdata/shuffle_ref.py).
func TestShuffleMatchesReference(t *testing.T) {
	tests := []struct {
		n    int
		seed uint64
		want string
	}{
		{20, 420 << 8, "14 13 4 17 3 18 5 16 8 11 6 0 10 1 9 19 7 12 2 15"},
		{7, 12345, "1 6 4 2 0 3 5"},
	}
	for _, tc := range tests {
		if got := permutation(tc.n, tc.seed); got != tc.want {
			t.Errorf("shuffle(%d, %d) = %s, want %s", tc.n, tc.seed, got, tc.want)
		}
	}
	if py, err := exec.LookPath("python3"); err == nil {
		out, err := exec.Command(py, "testdata/shuffle_ref.py", "54", fmt.Sprint(421<<8)).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := permutation(54, 421<<8); got != strings.TrimSpace(string(out)) {
			t.Errorf("Go %s\nPython %s", got, out)
		}
	}
}

func TestStratifiedOnSamplePages(t *testing.T) {
	d, err := Scan(pagesDir(t), []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Items) != 184 || !reflect.DeepEqual(d.Ignored, []string{"LICENSE"}) {
		t.Fatalf("%d pages, ignored %v", len(d.Items), d.Ignored)
	}
	s1, err := Stratified(d, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s1.Seed != 420 {
		t.Errorf("split 1 seed %d", s1.Seed)
	}
	// A partition of all pages, stratified per category.
	seen := map[string]string{}
	perLabel := map[string][3]int{}
	for pi, part := range [][]Item{s1.Train, s1.Dev, s1.Test} {
		for _, it := range part {
			if prev, dup := seen[it.Path]; dup {
				t.Errorf("%s in two parts (%s)", it.Path, prev)
			}
			seen[it.Path] = it.Label
			c := perLabel[it.Label]
			c[pi]++
			perLabel[it.Label] = c
		}
	}
	if len(seen) != 184 || len(s1.Excluded) != 0 {
		t.Errorf("%d pages split, %d excluded", len(seen), len(s1.Excluded))
	}
	want := map[string][3]int{"DRAW": {44, 5, 5}, "TEXT": {15, 2, 2}, "DRAW_L": {1, 1, 1}, "PHOTO": {12, 1, 1}, "LINE_P": {27, 3, 3}}
	for l, w := range want {
		if perLabel[l] != w {
			t.Errorf("%s train/dev/test %v, want %v", l, perLabel[l], w)
		}
	}

	// Two runs write identical files; split 2 differs.
	a, b := t.TempDir(), t.TempDir()
	pa, err := s1.WriteFile(a, "260530-102033", "v4.4")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := Stratified(d, 1, Options{})
	pb, _ := again.WriteFile(b, "260530-102033", "v4.4")
	ba, _ := os.ReadFile(pa)
	bb, _ := os.ReadFile(pb)
	if filepath.Base(pa) != "260530-102033_v4.4_FOLD_1_DATASETS.txt" || !bytes.Equal(ba, bb) {
		t.Errorf("runs differ or bad name %s", pa)
	}
	if !bytes.Contains(ba, []byte("[test] 20\n")) || !bytes.Contains(ba, []byte("\nTEXT/")) {
		t.Errorf("DATASETS file:\n%s", ba)
	}
	s2, _ := Stratified(d, 2, Options{})
	if s2.Seed != 421 || reflect.DeepEqual(s2.Test, s1.Test) {
		t.Error("split 2 equals split 1")
	}

	capped, _ := Stratified(d, 1, Options{MaxPerClass: 10})
	if n := len(capped.Train) + len(capped.Dev) + len(capped.Test); n != 184-44-23-23-4-9 {
		t.Errorf("capped total %d, excluded %d", n, len(capped.Excluded))
	}
}

func TestFoldsCSV(t *testing.T) {
	d, err := Scan(pagesDir(t), []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "folds.csv")
	csv := "PNG,fold 1,fold 2\n" +
		d.Items[0].Path + ",train,test\n" +
		filepath.Base(d.Items[1].Path) + ",dev,train\n" +
		filepath.Base(d.Items[2].Path) + ", TEST ,dev\n" +
		"nowhere-1.png,train,train\n"
	os.WriteFile(p, []byte(csv), 0o644)
	f, err := ReadFoldsCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := f.Split(d, "fold 1")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Train) != 1 || len(s.Dev) != 1 || len(s.Test) != 1 || len(s.Excluded) != 181 || s.Fold != 1 {
		t.Errorf("train %d dev %d test %d excluded %d fold %d", len(s.Train), len(s.Dev), len(s.Test), len(s.Excluded), s.Fold)
	}
	if s.Test[0].Path != d.Items[2].Path || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "folds.csv:5") {
		t.Errorf("test %v warnings %v", s.Test, s.Warnings)
	}
	if s2, err := f.Split(d, "Fold2"); err != nil || s2.Test[0].Path != d.Items[0].Path || s2.Fold != 2 {
		t.Errorf("fold 2: %v %v", s2, err)
	}
	if _, err := f.Split(d, "fold 3"); err == nil || !strings.Contains(err.Error(), "no column") {
		t.Errorf("missing column: %v", err)
	}
	os.WriteFile(p, []byte("PNG,fold 1\n"+d.Items[0].Path+",validation\n"), 0o644)
	f, _ = ReadFoldsCSV(p)
	if _, err := f.Split(d, "fold 1"); err == nil || !strings.Contains(err.Error(), `folds.csv:2: fold 1 = "validation"`) {
		t.Errorf("bad cell: %v", err)
	}
	os.WriteFile(p, []byte("FILE,fold 1\n"), 0o644)
	if _, err := ReadFoldsCSV(p); err == nil || !strings.Contains(err.Error(), "PNG column") {
		t.Errorf("bad header: %v", err)
	}
}

func TestScanIgnoresNonCategories(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"TEXT/a-1.png", "TEXT/sub/b-2.PNG", "TEXT/notes.txt", "TEXT/.hidden.png", "misc/c-1.png", "LICENSE"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	d, err := Scan(root, []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(d.Items); got != "[{TEXT/a-1.png TEXT} {TEXT/sub/b-2.PNG TEXT}]" {
		t.Errorf("items %s", got)
	}
	if got := fmt.Sprint(d.Ignored); got != "[LICENSE TEXT/notes.txt misc]" {
		t.Errorf("ignored %s", got)
	}
	s, _ := Stratified(d, 1, Options{})
	if len(s.Train) != 2 || len(s.Warnings) != 1 {
		t.Errorf("tiny class: %+v", s)
	}
	if _, err := Scan(t.TempDir(), []string{"png"}); err == nil {
		t.Error("empty folder accepted")
	}
}

// A category folder, or a folder inside one, that is a link to pages kept
// elsewhere is read as a folder (it was ignored); a link back to a folder
// above is ignored, named.
func TestScanFollowsLinkedFolders(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	for _, f := range []string{"photos/p-1.png", "drawings/d-1.png"} {
		p := filepath.Join(elsewhere, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x"), 0o644)
	}
	os.Mkdir(filepath.Join(root, "DRAW"), 0o755)
	for _, l := range [][2]string{{filepath.Join(elsewhere, "photos"), "PHOTO"}, {filepath.Join(elsewhere, "drawings"), "DRAW/box"}, {"..", "DRAW/up"}} {
		if err := os.Symlink(l[0], filepath.Join(root, filepath.FromSlash(l[1]))); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Scan(root, []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(d.Items); got != "[{DRAW/box/d-1.png DRAW} {PHOTO/p-1.png PHOTO}]" {
		t.Errorf("items %s", got)
	}
	if got := fmt.Sprint(d.Ignored); got != "[DRAW/up (a folder reached again through a link)]" {
		t.Errorf("ignored %s", got)
	}
}

// A category too small for the test fraction still gets one test and one
// dev page, and the split says so (the DATASETS header gives the fraction
// asked for, silently not kept).
func TestStratifiedSmallCategorySaysSo(t *testing.T) {
	d := &Dataset{}
	for i := range 3 {
		d.Items = append(d.Items, Item{Path: fmt.Sprintf("DRAW/d-%d.png", i), Label: "DRAW"})
	}
	for i := range 30 {
		d.Items = append(d.Items, Item{Path: fmt.Sprintf("TEXT/t-%d.png", i), Label: "TEXT"})
	}
	s, err := Stratified(d, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Test) != 4 || len(s.Dev) != 4 || len(s.Warnings) != 1 || s.Warnings[0] != "DRAW has 3 pages: 1 test and 1 dev page (33% each, not 10%), 1 to train" {
		t.Errorf("test %d, dev %d, warnings %q", len(s.Test), len(s.Dev), s.Warnings)
	}
}

// TestProblems: what of a data folder is not read is said: a misspelt
// category folder (with the category it is likely meant to be), a folder
// like no category, files of other extensions, and, for a training, the
// categories without a page (a training went on without them, without a
// word).
func TestProblems(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"TEXT/a.png", "TEXT/b.tif", "TEXT_WH/c.png", "maps/d.png", "DRAW/e.png", ".git/config", "LICENSE"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Scan(root, []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(d.Problems(true), "\n")
	for _, want := range []string{
		filepath.Join(root, "TEXT_WH") + ": not a category folder, its pages are not read (is it TEXT_HW?)",
		filepath.Join(root, "maps") + ": not a category folder, its pages are not read (the categories are DRAW,",
		"files of other extensions in the category folders not read: 1 .tif",
		"no pages of DRAW_L, LINE_HW, LINE_P, LINE_T, PHOTO, PHOTO_L, TEXT_HW, TEXT_P, TEXT_T:",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, ".git") || strings.Contains(got, "LICENSE") {
		t.Errorf("a hidden folder or a file is named:\n%s", got)
	}
	if ev := strings.Join(d.Problems(false), "\n"); strings.Contains(ev, "no pages of") {
		t.Errorf("an evaluation is told of categories without pages:\n%s", ev)
	}
}

// TestDrop: pages that could not be read leave the split's sets for its
// excluded list, with a warning, so that the DATASETS file is the split
// actually used (they were listed as trained or tested on).
func TestDrop(t *testing.T) {
	s := &Split{Train: []Item{{Path: "TEXT/a.png"}, {Path: "TEXT/bad.png"}}, Test: []Item{{Path: "DRAW/b.tif"}}, Dev: []Item{{Path: "DRAW/c.png"}}}
	s.Drop(map[string]string{"TEXT/bad.png": "cannot decode", "DRAW/b.tif": "3 pages"})
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"[train] 1\nTEXT/a.png\n", "[test] 0\n", "[excluded] 2\nDRAW/b.tif\nTEXT/bad.png\n", "# warning: 2 pages that could not be read are left out"} {
		if !strings.Contains(out, want) {
			t.Errorf("split file lacks %q:\n%s", want, out)
		}
	}
}

// TestRelabelled: the same file under two categories is named, once; the
// same content twice in one category is not a problem of labels.
func TestRelabelled(t *testing.T) {
	root := t.TempDir()
	for f, data := range map[string]string{"TEXT/a.png": "one", "DRAW/a-copy.png": "one", "DRAW/b.png": "two", "DRAW/b2.png": "two", "PHOTO/c.png": "three"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Scan(root, []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	got := d.Relabelled()
	if len(got) != 1 || got[0] != "one page under 2 categories (the same file): DRAW/a-copy.png, TEXT/a.png" {
		t.Errorf("got %q", got)
	}
}
