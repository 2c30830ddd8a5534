// Package results writes the classifier's CSV tables (spec
// page-classification 2.7): TOP-N, RAW, their EVAL variants, and the two
// BEST tables of an ensemble run.
//
// Conventions:
//   - FILE is the input's path relative to the input root, with '/'
//     separators, without the extension and, for images, without the page
//     suffix; so "a/scan-3.png" and "b/scan-3.png" stay apart.
//   - PAGE is, for a PDF, the 1-based page number; for an image, the number
//     N of a trailing "-N" or "_N" of the file stem ("guide_troja-12.png"
//     is FILE "guide_troja", PAGE 12; leading zeros are ignored). An image
//     stem without such a suffix keeps its whole stem as FILE and an empty
//     PAGE.
//   - Scores are written with 4 decimals ("0.9731").
//   - Rows are sorted by FILE (byte order), then PAGE numerically (empty
//     first).
//   - Top-N classes are ordered by descending score; equal scores keep
//     canonical category order.
package results

import (
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
	return strings.TrimSuffix(rel, path.Ext(rel)), nil
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

// PDFKey is the row key of page (1-based) of a PDF under the input root.
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
const StampLayout = "060102-150405"

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
