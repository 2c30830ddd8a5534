// Package splits makes the train/dev/test splits of the page classifier
// (spec page-classification 2.6, 4.1 rule 4) and writes the
// "{stamp}_{rev}_FOLD_{n}_DATASETS.txt" record of the split a fold used.
//
// Stratified splits: every category folder is split on its own. Its files
// are sorted by relative path, shuffled with Fisher–Yates driven by
// SplitMix64 seeded with (seed << 8) | category index (canonical order), so
// adding pages to one category leaves the others' splits alone; seed is
// 420 + (N - 1) for split N. The first round(n * testSize) shuffled files
// are test, the next round(n * testSize) dev, the rest train (80/10/10 for
// testSize 0.1); a category with fewer than 3 files goes wholly to train,
// with a warning. With a per-category cap, the cap applies to the shuffled
// list before splitting.
//
// A folds CSV takes precedence: a PNG column naming files (a base name, or
// a path relative to the data folder) and "fold N" columns whose cells hold
// train, dev or test. Pages the CSV does not list are excluded.
package splits

import (
	"archivekit/internal/dirwalk"
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"archivekit/internal/atomicfile"
	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/modelmeta"
)

// BaseSeed is the seed of split 1.
const BaseSeed = 420

// SeedFor returns the seed of split n (1-based): base + n - 1.
func SeedFor(base int64, n int) int64 { return base + int64(n) - 1 }

// Item is one labelled page.
type Item struct {
	// Path is relative to the data folder, '/'-separated: "TEXT/a-1.png".
	Path string
	// Label is the category (the folder name).
	Label string
}

// Dataset is the labelled pages under a data folder.
type Dataset struct {
	Root  string
	Items []Item // sorted by Path
	// Ignored lists top-level entries that are not category folders (a
	// LICENSE file, say) and files with other extensions.
	Ignored []string
	// NotCategories are the top-level folders whose name is not a
	// category (a misspelt TEXT_WH): their pages are not read.
	NotCategories []string
	// OtherExts counts the files of category folders left for their
	// extension, by extension (".tif": 3).
	OtherExts map[string]int
}

// Problems says, one sentence each, what of the data folder is not used
// and may be meant to be: folders whose name is not a category (with the
// category it is likely meant to be), files of other extensions, and, when
// all is true (training), the categories without a page. A training on a
// misspelt folder went on without its pages, without a word.
func (d *Dataset) Problems(all bool) []string {
	var out []string
	for _, f := range d.NotCategories {
		msg := fmt.Sprintf("%s: not a category folder, its pages are not read", filepath.Join(d.Root, f))
		if c := nearestCategory(f); c != "" {
			msg += fmt.Sprintf(" (is it %s?)", c)
		} else {
			msg += fmt.Sprintf(" (the categories are %s)", strings.Join(modelmeta.Categories, ", "))
		}
		out = append(out, msg)
	}
	if len(d.OtherExts) > 0 {
		var parts []string
		for _, e := range slices.Sorted(maps.Keys(d.OtherExts)) {
			parts = append(parts, fmt.Sprintf("%d %s", d.OtherExts[e], e))
		}
		out = append(out, fmt.Sprintf("files of other extensions in the category folders not read: %s (the file formats taken are set by files_format or -ff)", strings.Join(parts, ", ")))
	}
	if all {
		has := map[string]bool{}
		for _, it := range d.Items {
			has[it.Label] = true
		}
		var none []string
		for _, c := range modelmeta.Categories {
			if !has[c] {
				none = append(none, c)
			}
		}
		if len(none) > 0 {
			out = append(out, fmt.Sprintf("no pages of %s: the model is not trained on these categories by this data", strings.Join(none, ", ")))
		}
	}
	return out
}

// Relabelled says which files of the data folder are the same page under
// two or more categories (the same bytes; a page copied into a second
// folder trains the model both ways, without a word before), one sentence
// a page; a file that cannot be read is skipped (loading the pages says
// why).
func (d *Dataset) Relabelled() []string {
	byDigest := map[string][]Item{}
	var order []string
	for _, it := range d.Items {
		sum, err := ledger.Digest(filepath.Join(d.Root, filepath.FromSlash(it.Path)))
		if err != nil {
			continue
		}
		if _, ok := byDigest[sum]; !ok {
			order = append(order, sum)
		}
		byDigest[sum] = append(byDigest[sum], it)
	}
	var out []string
	for _, sum := range order {
		items := byDigest[sum]
		labels := map[string]bool{}
		var paths []string
		for _, it := range items {
			labels[it.Label] = true
			paths = append(paths, it.Path)
		}
		if len(labels) > 1 {
			out = append(out, fmt.Sprintf("one page under %d categories (the same file): %s", len(labels), strings.Join(paths, ", ")))
		}
	}
	return out
}

// nearestCategory is the category name within two edits of name (case
// aside), "" when none is.
func nearestCategory(name string) string {
	best, bestD := "", 3
	for _, c := range modelmeta.Categories {
		if d := editDistance(strings.ToUpper(name), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Scan collects FOLDER/<CATEGORY>/** files whose extension (case-
// insensitive, without dot) is in exts. Top-level entries that are not
// category folders, hidden files and other extensions are ignored.
func Scan(root string, exts []string) (*Dataset, error) {
	want := map[string]bool{}
	for _, e := range exts {
		want[strings.ToLower(strings.TrimPrefix(e, "."))] = true
	}
	top, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	d := &Dataset{Root: root}
	// The category folders are walked by one Walker, the root marked: a
	// link to the root or to another category is not walked under this
	// one's label.
	var walker dirwalk.Walker
	if err := walker.Mark(root); err != nil {
		return nil, err
	}
	for _, e := range top {
		if !isDir(root, e) || modelmeta.CategoryIndex(e.Name()) < 0 {
			d.Ignored = append(d.Ignored, e.Name())
			if isDir(root, e) && !strings.HasPrefix(e.Name(), ".") {
				d.NotCategories = append(d.NotCategories, e.Name())
			}
			continue
		}
		label := e.Name()
		err := walker.Walk(filepath.Join(root, label), func(p string, de fs.DirEntry, err error) error {
			if errors.Is(err, dirwalk.ErrWalked) {
				rel, _ := filepath.Rel(root, p)
				d.Ignored = append(d.Ignored, filepath.ToSlash(rel)+" (a folder reached again through a link)")
				return nil
			}
			if err != nil {
				return err
			}
			if strings.HasPrefix(de.Name(), ".") && p != filepath.Join(root, label) {
				if de.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if de.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if !want[strings.ToLower(strings.TrimPrefix(path.Ext(rel), "."))] {
				d.Ignored = append(d.Ignored, rel)
				if d.OtherExts == nil {
					d.OtherExts = map[string]int{}
				}
				d.OtherExts[cmp.Or(strings.ToLower(path.Ext(rel)), "(none)")]++
				return nil
			}
			d.Items = append(d.Items, Item{Path: rel, Label: label})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", root, err)
		}
	}
	sort.Slice(d.Items, func(i, j int) bool { return d.Items[i].Path < d.Items[j].Path })
	if len(d.Items) == 0 {
		return nil, fmt.Errorf("%s: no %s files in category folders (%s)", root, strings.Join(exts, "/"), strings.Join(modelmeta.Categories, ", "))
	}
	return d, nil
}

// Split is the train/dev/test partition one fold uses.
type Split struct {
	Fold int
	// Seed is the PRNG seed (0 for a folds-CSV split).
	Seed int64
	// Source says how the split was made, for the DATASETS file.
	Source           string
	Train, Dev, Test []Item
	// Excluded lists pages of the data folder left out (not in the folds
	// CSV, or over the per-category cap).
	Excluded []string
	Warnings []string
}

// Options tune Stratified.
type Options struct {
	// BaseSeed is the seed of split 1 (BaseSeed when 0).
	BaseSeed int64
	// TestSize is the fraction for test and again for dev (0.1 when 0).
	TestSize float64
	// MaxPerClass caps the pages per category (no cap when 0).
	MaxPerClass int
}

// Stratified makes split n (1-based) of the dataset.
func Stratified(d *Dataset, n int, o Options) (*Split, error) {
	if n < 1 {
		return nil, fmt.Errorf("split %d: splits count from 1", n)
	}
	if o.BaseSeed == 0 {
		o.BaseSeed = BaseSeed
	}
	if o.TestSize == 0 {
		o.TestSize = 0.1
	}
	if o.TestSize < 0 || o.TestSize >= 0.5 {
		return nil, fmt.Errorf("test size %v: want a fraction below 0.5", o.TestSize)
	}
	seed := SeedFor(o.BaseSeed, n)
	s := &Split{Fold: n, Seed: seed,
		Source: fmt.Sprintf("stratified per category, test and dev %.0f%% each, seed %d", o.TestSize*100, seed)}
	byLabel := map[string][]Item{}
	for _, it := range d.Items {
		byLabel[it.Label] = append(byLabel[it.Label], it)
	}
	for ci, label := range modelmeta.Categories {
		items := append([]Item(nil), byLabel[label]...)
		if len(items) == 0 {
			continue
		}
		g := NewSplitMix64(uint64(seed)<<8 | uint64(ci))
		g.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		if o.MaxPerClass > 0 && len(items) > o.MaxPerClass {
			for _, it := range items[o.MaxPerClass:] {
				s.Excluded = append(s.Excluded, it.Path)
			}
			items = items[:o.MaxPerClass]
		}
		if len(items) < 3 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s has %d page(s); all go to train", label, len(items)))
			s.Train = append(s.Train, items...)
			continue
		}
		k := int(math.Round(float64(len(items)) * o.TestSize))
		if k < 1 {
			// Too few pages for the fraction: one each, said, as the
			// DATASETS file's header gives the fraction asked for.
			k = 1
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s has %d pages: 1 test and 1 dev page (%.0f%% each, not %.0f%%), %d to train",
				label, len(items), 100/float64(len(items)), o.TestSize*100, len(items)-2))
		}
		s.Test = append(s.Test, items[:k]...)
		s.Dev = append(s.Dev, items[k:2*k]...)
		s.Train = append(s.Train, items[2*k:]...)
	}
	s.sort()
	return s, nil
}

func (s *Split) sort() {
	for _, part := range [][]Item{s.Train, s.Dev, s.Test} {
		sort.Slice(part, func(i, j int) bool { return part[i].Path < part[j].Path })
	}
	sort.Strings(s.Excluded)
}

// FoldsCSV is a parsed folds file.
type FoldsCSV struct {
	Path string
	// Columns are the fold columns as written in the header.
	Columns []string
	names   []string            // PNG column, one per row
	cells   map[string][]string // normalised column -> cell per row
	lines   []int               // file line of each row
}

// normColumn makes "Fold 1", "fold1" and "fold_1" the same column.
func normColumn(s string) string {
	return strings.NewReplacer(" ", "", "_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(s)))
}

// ReadFoldsCSV reads a folds CSV: a PNG column and one or more "fold N"
// columns. Errors name the file and line.
func ReadFoldsCSV(p string) (*FoldsCSV, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff"))))
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: no header: %w", p, err)
	}
	f := &FoldsCSV{Path: p, cells: map[string][]string{}}
	pngCol := -1
	foldCols := map[int]string{}
	for i, h := range header {
		n := normColumn(h)
		switch {
		case n == "png":
			pngCol = i
		case strings.HasPrefix(n, "fold"):
			f.Columns = append(f.Columns, strings.TrimSpace(h))
			foldCols[i] = n
		}
	}
	if pngCol < 0 || len(foldCols) == 0 {
		return nil, fmt.Errorf("%s: header %q: want a PNG column and fold N columns", p, strings.Join(header, ","))
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		line, _ := r.FieldPos(0)
		f.names = append(f.names, strings.TrimSpace(rec[pngCol]))
		f.lines = append(f.lines, line)
		for i, n := range foldCols {
			f.cells[n] = append(f.cells[n], strings.ToLower(strings.TrimSpace(rec[i])))
		}
	}
	return f, nil
}

// Split applies fold column col ("fold 2") to the dataset. Pages the CSV
// does not list are excluded; CSV rows naming no page of the dataset are
// warnings; a cell other than train/dev/test is an error naming the line.
// A base name that matches pages in several categories assigns all of them,
// with a warning.
func (f *FoldsCSV) Split(d *Dataset, col string) (*Split, error) {
	cells, ok := f.cells[normColumn(col)]
	if !ok {
		return nil, fmt.Errorf("%s: no column %q (have %s)", f.Path, col, strings.Join(f.Columns, ", "))
	}
	fold := 0
	fmt.Sscanf(strings.TrimPrefix(normColumn(col), "fold"), "%d", &fold)
	s := &Split{Fold: fold, Source: fmt.Sprintf("folds CSV %s, column %q", f.Path, col)}
	byPath := map[string]Item{}
	byBase := map[string][]Item{}
	for _, it := range d.Items {
		byPath[it.Path] = it
		byBase[path.Base(it.Path)] = append(byBase[path.Base(it.Path)], it)
	}
	assigned := map[string]string{}
	var errs []error
	for i, name := range f.names {
		var matches []Item
		if it, ok := byPath[filepath.ToSlash(name)]; ok {
			matches = []Item{it}
		} else {
			matches = byBase[path.Base(filepath.ToSlash(name))]
		}
		if len(matches) == 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: %q is not a page of %s", f.Path, f.lines[i], name, d.Root))
			continue
		}
		if len(matches) > 1 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s:%d: %q matches %d pages; all take its split", f.Path, f.lines[i], name, len(matches)))
		}
		part := cells[i]
		switch part {
		case "train", "dev", "test":
		default:
			errs = append(errs, fmt.Errorf("%s:%d: %s = %q: want train, dev or test", f.Path, f.lines[i], col, cells[i]))
			continue
		}
		for _, it := range matches {
			if prev, dup := assigned[it.Path]; dup && prev != part {
				errs = append(errs, fmt.Errorf("%s:%d: %s listed again as %s (was %s)", f.Path, f.lines[i], it.Path, part, prev))
				continue
			} else if dup {
				continue
			}
			assigned[it.Path] = part
			switch part {
			case "train":
				s.Train = append(s.Train, it)
			case "dev":
				s.Dev = append(s.Dev, it)
			case "test":
				s.Test = append(s.Test, it)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, it := range d.Items {
		if _, ok := assigned[it.Path]; !ok {
			s.Excluded = append(s.Excluded, it.Path)
		}
	}
	s.sort()
	return s, nil
}

// FileName is "{stamp}_{rev}_FOLD_{n}_DATASETS.txt".
func FileName(stamp, rev string, n int) string {
	return fmt.Sprintf("%s_%s_FOLD_%d_DATASETS.txt", stamp, rev, n)
}

// Write writes the split as text: a commented header (fold, how it was
// made, per-category counts), then "[train] N", "[dev] N", "[test] N" and
// "[excluded] N" sections with one relative path per line, sorted. The
// content depends only on the data and the split, never on the clock.
func (s *Split) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# fold %d\n# %s\n", s.Fold, s.Source)
	fmt.Fprintf(bw, "# %-8s %6s %6s %6s\n", "category", "train", "dev", "test")
	count := func(items []Item, label string) int {
		n := 0
		for _, it := range items {
			if it.Label == label {
				n++
			}
		}
		return n
	}
	for _, c := range modelmeta.Categories {
		tr, dv, te := count(s.Train, c), count(s.Dev, c), count(s.Test, c)
		if tr+dv+te > 0 {
			fmt.Fprintf(bw, "# %-8s %6d %6d %6d\n", c, tr, dv, te)
		}
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(bw, "# warning: %s\n", w)
	}
	for _, sec := range []struct {
		name  string
		items []Item
	}{{"train", s.Train}, {"dev", s.Dev}, {"test", s.Test}} {
		fmt.Fprintf(bw, "[%s] %d\n", sec.name, len(sec.items))
		for _, it := range sec.items {
			fmt.Fprintln(bw, it.Path)
		}
	}
	fmt.Fprintf(bw, "[excluded] %d\n", len(s.Excluded))
	for _, p := range s.Excluded {
		fmt.Fprintln(bw, p)
	}
	return bw.Flush()
}

// Drop takes the pages of bad (path: why) out of the train, dev and test
// sets into Excluded, with a warning: the file is the split actually used
// (the pages that could not be read were listed as trained or tested on).
func (s *Split) Drop(bad map[string]string) {
	if len(bad) == 0 {
		return
	}
	n := 0
	keep := func(items []Item) []Item {
		out := items[:0:0]
		for _, it := range items {
			if _, ok := bad[it.Path]; ok {
				s.Excluded = append(s.Excluded, it.Path)
				n++
				continue
			}
			out = append(out, it)
		}
		return out
	}
	s.Train, s.Dev, s.Test = keep(s.Train), keep(s.Dev), keep(s.Test)
	if n > 0 {
		sort.Strings(s.Excluded)
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d pages that could not be read are left out (listed under [excluded]; the run's log says why)", n))
	}
}

// WriteFile writes the split atomically to dir/FileName(stamp, rev, Fold)
// and returns the path.
func (s *Split) WriteFile(dir, stamp, rev string) (string, error) {
	p := filepath.Join(dir, FileName(stamp, rev, s.Fold))
	return p, atomicfile.Write(p, 0o666, s.Write)
}

// isDir reports whether the entry e of root is a folder or a link to one
// (a category folder linked from elsewhere is a category).
func isDir(root string, e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink != 0 {
		st, err := os.Stat(filepath.Join(root, e.Name()))
		return err == nil && st.IsDir()
	}
	return e.IsDir()
}
