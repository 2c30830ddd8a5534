// Package results writes the classifier's CSV tables (spec
// page-classification 2.7): TOP-N, RAW, their EVAL variants, and the two
// BEST tables of an ensemble run.
//
// Conventions:
//   - FILE is the input's path relative to the input root, with '/'
//     separators, without the extension and, for images, without the page
//     suffix; so "a/scan-3.png" and "b/scan-3.png" stay apart.
//   - PAGE is, for a PDF or a TIFF of several pages, the 1-based page
//     number; for an image it is empty and FILE is the whole stem
//     ("scan-09.png" is FILE "scan-09"), so no name loses a digit or a
//     zero. Only with Keyer's pageFromName (pageclass --page-from-name)
//     is it the number N of a trailing "-N" or "_N" of the file stem
//     ("guide_troja-12.png" is FILE "guide_troja", PAGE 12; leading zeros
//     are ignored), the rule of ImageKey.
//   - SOURCE (WithSource, the last column) is the input's path relative to
//     the input root as on disk, extension included: the column that joins
//     a row to its file whatever FILE and PAGE say.
//   - Scores are written with 4 decimals ("0.9731").
//   - Rows are sorted by FILE (byte order), then PAGE numerically (empty
//     first).
//   - Top-N classes are ordered by descending score; equal scores keep
//     canonical category order.
package results

import (
	"archivekit/internal/utf8name"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"archivekit/internal/paradata"
)

// Key identifies one output row.
type Key struct {
	File string
	// Page is the page number, 0 when the input has none (written empty).
	Page int
}

// PageCell is the PAGE cell of the key.
func (k Key) PageCell() string {
	if k.Page == 0 {
		return ""
	}
	return strconv.Itoa(k.Page)
}

func (k Key) String() string {
	if k.Page == 0 {
		return k.File
	}
	return fmt.Sprintf("%s page %d", k.File, k.Page)
}

// Less orders keys by FILE, then PAGE.
func (k Key) Less(o Key) bool {
	if k.File != o.File {
		return k.File < o.File
	}
	return k.Page < o.Page
}

// SplitPageSuffix splits an image stem into its name and page number: the
// digits after the last '-' or '_', when that separator is not the first
// character and is followed only by digits. Without such a suffix the page
// is 0.
func SplitPageSuffix(stem string) (name string, page int) {
	i := strings.LastIndexAny(stem, "-_")
	if i <= 0 || i == len(stem)-1 {
		return stem, 0
	}
	digits := stem[i+1:]
	for _, c := range digits {
		if c < '0' || c > '9' {
			return stem, 0
		}
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n == 0 {
		return stem, 0
	}
	return stem[:i], n
}

// relStem returns file relative to root, slash-separated, extension removed.
func relStem(root, file string) (string, error) {
	rel, err := filepath.Rel(root, file)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not under the input root %s", file, root)
	}
	rel = filepath.ToSlash(rel)
	return utf8name.Escape(strings.TrimSuffix(rel, path.Ext(rel))), nil
}

// ImageKey is the row key of an image file under the input root (for a
// single-file run, root is the file's folder).
func ImageKey(root, file string) (Key, error) {
	s, err := relStem(root, file)
	if err != nil {
		return Key{}, err
	}
	dir, stem := path.Split(s)
	name, page := SplitPageSuffix(stem)
	return Key{File: dir + name, Page: page}, nil
}

// PDFKey is the row key of page (1-based) of a PDF (or of another file of
// several pages) under the input root.
func PDFKey(root, file string, page int) (Key, error) {
	if page < 1 {
		return Key{}, fmt.Errorf("%s: page %d: pages count from 1", file, page)
	}
	s, err := relStem(root, file)
	if err != nil {
		return Key{}, err
	}
	return Key{File: s, Page: page}, nil
}

// StampLayout is the layout of {stamp} in output names (YYMMDD-HHMMSS).
const StampLayout = paradata.StampLayout

// Stamp formats a run time stamp.
func Stamp(t time.Time) string { return t.Format(StampLayout) }

// TopNName is "{stamp}_{rev}_TOP-{N}.csv".
func TopNName(stamp, rev string, n int) string {
	return fmt.Sprintf("%s_%s_TOP-%d.csv", stamp, rev, n)
}

// RawName is "{stamp}_{rev}_RAW.csv".
func RawName(stamp, rev string) string { return fmt.Sprintf("%s_%s_RAW.csv", stamp, rev) }

// EvalTopNName is "{stamp}_{count}_{rev}_TOP-{N}_EVAL.csv".
func EvalTopNName(stamp string, count int, rev string, n int) string {
	return fmt.Sprintf("%s_%d_%s_TOP-%d_EVAL.csv", stamp, count, rev, n)
}

// EvalRawName is "{stamp}_{count}_{rev}_EVAL_RAW.csv".
func EvalRawName(stamp string, count int, rev string) string {
	return fmt.Sprintf("%s_%d_%s_EVAL_RAW.csv", stamp, count, rev)
}

// ConfMatName is "{stamp}_{count}_{rev}_conf_mat_TOP-{N}.png".
func ConfMatName(stamp string, count int, rev string, n int) string {
	return fmt.Sprintf("%s_%d_%s_conf_mat_TOP-%d.png", stamp, count, rev, n)
}

// BestTop1Name is "{stamp}_BEST_{models}_models_TOP-1.csv".
func BestTop1Name(stamp string, models int) string {
	return fmt.Sprintf("%s_BEST_%d_models_TOP-1.csv", stamp, models)
}

// BestAvgName is "{stamp}_BEST_{models}_models_AVG_TOP-{N}.csv".
func BestAvgName(stamp string, models, n int) string {
	return fmt.Sprintf("%s_BEST_%d_models_AVG_TOP-%d.csv", stamp, models, n)
}

// Keyer gives every input of one run its own row key. The usual key is
// ImageKey or PDFKey. Inputs whose usual keys collide — "scan-1.png",
// "scan_1.png" and "scan-01.png" are all FILE "scan" PAGE 1, and an image
// "doc-2.png" shares FILE "doc" PAGE 2 with page 2 of "doc.pdf" — do not lose
// a row: each colliding image keeps its whole stem as FILE with an empty PAGE
// ("scan-1", "scan_1", "scan-01"), and inputs that still collide (the same
// stem with two extensions, "scan-1.png" and "scan-1.jpg", or "doc.pdf" and
// "doc.PDF") keep their extension in FILE as well. A TIFF counts as a PDF
// here, since it may hold several pages (PageKey): "doc-2.png" beside
// "doc.tif" keeps its whole stem too. The rule depends only on the set of
// inputs, so the same inputs always get the same keys.
//
// Without pageFromName an image's usual key is already its whole stem, so
// only the same stem with two extensions collides (then both keep their
// extension).
type Keyer struct {
	root  string
	level map[string]int // file -> 0 usual, 1 whole stem, 2 with extension
	// byName reads an image's page number from its name (ImageKey).
	byName bool
}

// NewKeyer prepares the keys of files under root. PDFs are recognised by
// their extension. pageFromName keys an image by the page number at the
// end of its name (ImageKey: "scan-09.png" is FILE "scan", PAGE 9);
// without it an image is keyed by its whole stem with an empty PAGE.
func NewKeyer(root string, files []string, pageFromName bool) *Keyer {
	k := &Keyer{root: root, level: map[string]int{}, byName: pageFromName}
	for round := 0; round < 3; round++ {
		groups := map[Key][]string{}
		pdfs := map[string][]string{} // FILE of a PDF or TIFF -> those files
		var images []string
		for _, f := range files {
			key, err := k.key(f, 1)
			if err != nil {
				continue
			}
			if IsPDF(f) {
				pdfs[key.File] = append(pdfs[key.File], f)
				continue
			}
			if MayHavePages(f) {
				// Keyed by page like a PDF when it has several pages,
				// which is known only once it is opened.
				if pk, err := k.keyOf(f, 1, true); err == nil {
					pdfs[pk.File] = append(pdfs[pk.File], f)
				}
			}
			groups[key] = append(groups[key], f)
			images = append(images, f)
		}
		changed := false
		bump := func(f string) {
			if k.level[f] < 2 {
				k.level[f]++
				changed = true
			}
		}
		for _, g := range groups {
			if len(g) > 1 {
				for _, f := range g {
					bump(f)
				}
			}
		}
		for _, g := range pdfs {
			if len(g) > 1 {
				for _, f := range g {
					k.level[f] = 2
					changed = true
				}
			}
		}
		for _, f := range images {
			if key, _ := k.key(f, 1); key.Page > 0 && len(pdfs[key.File]) > 0 {
				bump(f)
			}
		}
		if !changed {
			break
		}
	}
	return k
}

// Renamed lists, sorted, the inputs whose key is not the usual one, each as
// its path relative to the root and the rule applied ("stem" or "ext"). It
// is empty when no keys collide. Adding or removing a colliding input
// changes it, so it belongs in anything that must change when rows' keys do
// (the key of a chunked run's tables).
func (k *Keyer) Renamed() []string {
	var out []string
	for f, level := range k.level {
		if level == 0 {
			continue
		}
		rel, err := filepath.Rel(k.root, f)
		if err != nil {
			rel = f
		}
		out = append(out, filepath.ToSlash(rel)+"\x00"+[]string{"", "stem", "ext"}[level])
	}
	sort.Strings(out)
	return out
}

// Key is the row key of page (1-based, used for PDFs) of file.
func (k *Keyer) Key(file string, page int) (Key, error) {
	return k.PageKey(file, page, 1)
}

// PageKey is the row key of page (1-based) of file, which has pages pages.
// A PDF, and an image file of several pages (a multi-page TIFF), is keyed
// like a PDF: its whole stem as FILE and the page number as PAGE. NewKeyer
// keeps those keys free for every TIFF (MayHavePages), whatever its page
// count: beside scan.tif, scan-2.png is keyed by its whole stem.
func (k *Keyer) PageKey(file string, page, pages int) (Key, error) {
	paged := IsPDF(file) || pages > 1
	if paged && page < 1 {
		return Key{}, fmt.Errorf("%s: page %d: pages count from 1", file, page)
	}
	return k.keyOf(file, page, paged)
}

func (k *Keyer) key(file string, page int) (Key, error) {
	return k.keyOf(file, page, IsPDF(file))
}

func (k *Keyer) keyOf(file string, page int, paged bool) (Key, error) {
	level := k.level[file]
	if level == 2 {
		rel, err := filepath.Rel(k.root, file)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return Key{}, fmt.Errorf("%s is not under the input root %s", file, k.root)
		}
		key := Key{File: utf8name.Escape(filepath.ToSlash(rel))}
		if paged {
			key.Page = page
		}
		return key, nil
	}
	if paged {
		return PDFKey(k.root, file, page)
	}
	if level == 1 || !k.byName {
		s, err := relStem(k.root, file)
		return Key{File: s}, err
	}
	return ImageKey(k.root, file)
}

// IsPDF reports whether an input is read as a PDF (by its extension): its
// rows are keyed by page number.
func IsPDF(file string) bool { return strings.EqualFold(filepath.Ext(file), ".pdf") }

// MayHavePages reports whether an image input may hold several pages (a
// TIFF, by its extension): NewKeyer keeps the keys its pages would have
// free, as it does a PDF's.
func MayHavePages(file string) bool {
	ext := strings.ToLower(filepath.Ext(file))
	return ext == ".tif" || ext == ".tiff"
}
