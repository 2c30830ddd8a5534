package review

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"archivekit/internal/atomicfile"
	"archivekit/internal/filelock"
)

// DefaultTarget is the precision of the unflagged pages a calibration aims
// at when none is given (pageclass --review-precision).
const DefaultTarget = 0.90

// Sample is one labelled page of the evaluation split.
type Sample struct {
	Doubt
	// Correct is true when the averaged Top-1 is the page's gold category.
	Correct bool
}

// Point is the outcome of one choice of thresholds on the evaluation split.
type Point struct {
	Thresholds
	// Kept is the number of pages left unflagged, Correct how many of them
	// are right; Pages is the split's size.
	Kept    int `json:"kept"`
	Correct int `json:"correct"`
	Pages   int `json:"pages"`
	// Precision is Correct/Kept (nil when every page is flagged);
	// ReviewRate is the share of pages flagged.
	Precision  *float64 `json:"precision"`
	ReviewRate float64  `json:"review_rate"`
}

// Evaluate counts what thresholds t do on samples.
func Evaluate(samples []Sample, t Thresholds) Point {
	p := Point{Thresholds: t, Pages: len(samples)}
	for _, s := range samples {
		if len(t.Flags(s.Doubt)) == 0 {
			p.Kept++
			if s.Correct {
				p.Correct++
			}
		}
	}
	p.rates()
	return p
}

// rates sets Precision and ReviewRate from the counts.
func (p *Point) rates() {
	if p.Kept > 0 {
		p.Precision = ptr(float64(p.Correct) / float64(p.Kept))
	}
	if p.Pages > 0 {
		p.ReviewRate = float64(p.Pages-p.Kept) / float64(p.Pages)
	}
}

// FlagAll is a margin no page reaches (margins are at most 1): the
// thresholds of a calibration whose target could not be reached.
const FlagAll = 1.01

// ReportMargins are the margins Report shows.
var ReportMargins = []float64{0, 0.05, 0.1, 0.2, 0.3, 0.5}

// Report is the precision and review rate at ReportMargins, with no
// agreement condition and, for an ensemble, with a majority of the models
// required to agree.
func Report(samples []Sample, models int) []Point {
	ags := []int{0}
	if models > 1 {
		ags = append(ags, models/2+1)
	}
	var out []Point
	for _, a := range ags {
		for _, m := range ReportMargins {
			out = append(out, Evaluate(samples, Thresholds{MinAgreement: a, MinMargin: m}))
		}
	}
	return out
}

// DefaultMaxReviewRate is the largest share of the calibration pages a
// calibration may flag for doubt when none is given (pageclass
// --review-rate): a flag on nearly every page is no queue.
const DefaultMaxReviewRate = 0.30

// Calibrate picks the thresholds of the doubt flag on samples for a target
// precision of the pages left unflagged and a cap on the review rate (the
// share of pages flagged): of the thresholds that flag at most maxRate of
// the pages, those that flag the fewest while the unflagged pages reach the
// target (reachable true); when none reaches it, those whose unflagged pages
// have the highest precision (reachable false; ties go to the fewer flagged
// pages). Every minimum agreement from 0 to models and, for every margin of
// a sample, the margin halfway between it and the next lower one (the page
// with that margin kept) are tried; remaining ties go to the lower
// agreement, then the lower margin. With no cap (maxRate >= 1) and an
// unreachable target every page is flagged (MinMargin FlagAll).
func Calibrate(samples []Sample, models int, target, maxRate float64) (best Point, reachable bool) {
	margins := []float64{0}
	for _, s := range samples {
		margins = append(margins, s.Margin)
	}
	sort.Float64s(margins)
	var bestReach, bestPrec Point
	foundReach, foundPrec := false, false
	for a := 0; a <= models; a++ {
		for i, m := range margins {
			if i > 0 && m == margins[i-1] {
				continue
			}
			// halfway to the next lower margin: the same pages of the
			// split, and a page whose margin differs by a rounding (another
			// decoder, another machine) does not change sides
			if i > 0 {
				m = (margins[i-1] + m) / 2
			}
			p := Evaluate(samples, Thresholds{MinAgreement: a, MinMargin: m})
			if p.Precision == nil || p.ReviewRate > maxRate+1e-12 {
				continue
			}
			if *p.Precision >= target-1e-12 && (!foundReach || p.Kept > bestReach.Kept) {
				bestReach, foundReach = p, true
			}
			if !foundPrec || *p.Precision > *bestPrec.Precision+1e-12 ||
				(*p.Precision > *bestPrec.Precision-1e-12 && p.Kept > bestPrec.Kept) {
				bestPrec, foundPrec = p, true
			}
		}
	}
	switch {
	case foundReach:
		return bestReach, true
	case foundPrec && maxRate < 1:
		return bestPrec, false
	}
	return Evaluate(samples, Thresholds{MinMargin: FlagAll}), false
}

// LeaveOneOut measures Calibrate's rule on pages it was not fitted to: each
// sample is judged by the thresholds calibrated on all the others, and the
// point counts what those judgements did (its Thresholds are zero). On a
// small split this is the honest figure; the calibration's own Result is
// measured on the pages it was fitted to.
func LeaveOneOut(samples []Sample, models int, target, maxRate float64) Point {
	p := Point{Pages: len(samples)}
	rest := make([]Sample, 0, len(samples))
	for i, s := range samples {
		rest = append(append(rest[:0], samples[:i]...), samples[i+1:]...)
		best, _ := Calibrate(rest, models, target, maxRate)
		if len(best.Thresholds.Flags(s.Doubt)) == 0 {
			p.Kept++
			if s.Correct {
				p.Correct++
			}
		}
	}
	p.rates()
	return p
}

// FileName is the calibration file kept in the folder that holds the model
// folders (weights/demo/calibration.json for the demo models).
const FileName = "calibration.json"

// Member is one model of a calibrated set: its name and its digest
// (modelmeta.Digest).
type Member struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// Calibration is the calibrated doubt flag of one model set.
type Calibration struct {
	// Models is the set the calibration holds for; it applies only to
	// exactly these models (names and digests, in any order).
	Models []Member `json:"models"`
	// Target is the precision of the unflagged pages aimed at.
	Target float64 `json:"target_precision"`
	// MaxReviewRate is the largest share of the calibration pages the
	// thresholds could flag (1, or absent in files written before it: no
	// cap).
	MaxReviewRate *float64   `json:"max_review_rate,omitempty"`
	Thresholds    Thresholds `json:"thresholds"`
	// Reachable is false when no thresholds within the review-rate cap
	// reached the target on the split: then the thresholds are those of
	// the highest precision within the cap, or, with no cap, every page is
	// flagged.
	Reachable bool `json:"reachable"`
	// Split says on which pages it was calibrated and what the chosen
	// thresholds did there; Table is the precision and review rate at a few
	// other thresholds.
	Split  Split `json:"split"`
	Result Point `json:"result"`
	// LeaveOneOut is what the rule did on pages it was not fitted to
	// (LeaveOneOut); nil in files written before it.
	LeaveOneOut *Point  `json:"leave_one_out,omitempty"`
	Table       []Point `json:"table"`
	Created     string  `json:"created"`
	Tool        string  `json:"tool"`
}

// Split names the evaluation pages of a calibration.
type Split struct {
	Folder string `json:"folder"`
	Pages  int    `json:"pages"`
}

// File is the content of a calibration file: one calibration per model set.
type File struct {
	SchemaVersion string        `json:"schema_version"`
	Calibrations  []Calibration `json:"calibrations"`
}

const schemaVersion = "1.0"

func sameSet(a, b []Member) bool {
	if len(a) != len(b) {
		return false
	}
	key := func(ms []Member) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			out[i] = m.Name + "\x00" + m.Digest
		}
		sort.Strings(out)
		return out
	}
	ka, kb := key(a), key(b)
	for i := range ka {
		if ka[i] != kb[i] {
			return false
		}
	}
	return true
}

// Find returns the calibration of exactly the model set ms, or nil.
func (f *File) Find(ms []Member) *Calibration {
	for i := range f.Calibrations {
		if sameSet(f.Calibrations[i].Models, ms) {
			return &f.Calibrations[i]
		}
	}
	return nil
}

// readFile reads dir/FileName; a missing file is (nil, nil, nil).
func readFile(dir string) (*File, []byte, error) {
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.SchemaVersion != schemaVersion {
		return nil, nil, fmt.Errorf("%s: schema_version %q, want %q", path, f.SchemaVersion, schemaVersion)
	}
	for i, c := range f.Calibrations {
		if len(c.Models) == 0 || !(c.Target > 0 && c.Target <= 1) || c.Thresholds.MinAgreement < 0 || math.IsNaN(c.Thresholds.MinMargin) {
			return nil, nil, fmt.Errorf("%s: calibration %d: models, a target precision in (0, 1] and thresholds are required", path, i+1)
		}
	}
	return &f, data, nil
}

// Save writes c into dir/FileName, replacing the calibration of the same
// model set and keeping the others; the file is replaced atomically. Saves
// into one folder take turns (a lock on the folder itself, so none is left
// beside the models and processes with other temporary folders, or on
// other machines sharing the folder where the file system passes flock on,
// exclude each other), so calibrations of several model sets saved at once
// all stay: each reads the file the one before wrote.
func Save(dir string, c Calibration) (string, error) {
	unlock, err := filelock.LockDir(context.Background(), dir, nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", filepath.Join(dir, FileName), err)
	}
	defer unlock()
	f, _, err := readFile(dir)
	if err != nil {
		return "", err
	}
	if f == nil {
		f = &File{SchemaVersion: schemaVersion}
	}
	if c.Created == "" {
		c.Created = time.Now().UTC().Format(time.RFC3339)
	}
	if old := f.Find(c.Models); old != nil {
		*old = c
	} else {
		f.Calibrations = append(f.Calibrations, c)
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, FileName)
	return path, atomicfile.WriteFile(path, append(data, '\n'), 0o666)
}

// Applied is the calibration a run uses, with the file it came from.
type Applied struct {
	File       string `json:"file"`
	FileDigest string `json:"file_digest"`
	// Digest identifies the calibration itself (its entry in the file), so
	// it stays the same when calibrations of other model sets are added.
	Digest string  `json:"digest"`
	Target float64 `json:"target_precision"`
	// MaxReviewRate is the calibration's cap on the review rate (nil: none).
	MaxReviewRate *float64   `json:"max_review_rate,omitempty"`
	Thresholds    Thresholds `json:"thresholds"`
	Reachable     bool       `json:"reachable"`
	// Split and Result are what the thresholds did on the calibration split.
	Split  Split `json:"split"`
	Result Point `json:"result"`
}

// Public is a copy of a for a service's answers: the calibration file and
// the split's folder by their base names, so an answer does not tell a
// client the server's paths (nor the temporary folder of the machine that
// calibrated). nil for nil.
func (a *Applied) Public() *Applied {
	if a == nil {
		return nil
	}
	c := *a
	c.File = filepath.Base(a.File)
	if a.Split.Folder != "" {
		c.Split.Folder = filepath.Base(a.Split.Folder)
	}
	return &c
}

// Shortfall says, for a calibration whose target was not reachable, what
// the run does instead; "" when it was reached. With a cap on the review
// rate the thresholds are those that came closest within it, so pages are
// flagged as usual and the unflagged ones are less often right than the
// target; without a cap every page is flagged.
func (a *Applied) Shortfall() string {
	if a.Reachable {
		return ""
	}
	if a.MaxReviewRate == nil || *a.MaxReviewRate >= 1 {
		return fmt.Sprintf("the doubt calibration could not reach its target precision %.2f on its evaluation split: every page is flagged for review", a.Target) + recalibrate
	}
	got := "none"
	if a.Result.Precision != nil {
		got = fmt.Sprintf("%.2f", *a.Result.Precision)
	}
	return fmt.Sprintf("the doubt calibration could not reach its target precision %.2f while flagging at most %.0f%% of pages: "+
		"pages are flagged by the thresholds that came closest (the unflagged pages of its evaluation split were right %s of the time, %d pages), "+
		"so pages not flagged are less reliable than the target says", a.Target, 100**a.MaxReviewRate, got, a.Result.Pages) + recalibrate
}

// recalibrate ends Shortfall's message with what a user can do about it
// (a newcomer read it at each run and could not act on it).
const recalibrate = "; the doubt calibration sets which pages are flagged for review (NEEDS_REVIEW): " +
	"calibrate these models on labelled pages like yours, pageclass --eval --calibrate -m MODELS -d LABELLED_FOLDER " +
	"(docs/pageclass.md, \"Review flags\"), or give a lower --review-precision or a higher --review-rate when calibrating"

// ID is the short name of the calibration written beside each flag: the
// first 12 hex digits of its Digest and the target.
func (a *Applied) ID() string {
	d := a.Digest
	if len(d) > len("sha256:")+12 {
		d = d[:len("sha256:")+12]
	}
	return fmt.Sprintf("%s@%g", d, a.Target)
}

// Resolve finds the calibration of the model set ms in dir/FileName. When
// there is none, it returns nil and says why in note; a file that cannot be
// read is an error naming it (never silently uncalibrated).
func Resolve(dir string, ms []Member) (a *Applied, note string, err error) {
	path := filepath.Join(dir, FileName)
	f, data, err := readFile(dir)
	if err != nil {
		return nil, "", err
	}
	if f == nil {
		return nil, fmt.Sprintf("no %s: the doubt of each page is reported but not turned into needs_review (calibrate with pageclass --eval --calibrate)", path), nil
	}
	c := f.Find(ms)
	if c == nil {
		return nil, fmt.Sprintf("%s holds no calibration for these models (names and digests): the doubt of each page is reported but not turned into needs_review (calibrate with pageclass --eval --calibrate)", path), nil
	}
	entry, err := json.Marshal(c)
	if err != nil {
		return nil, "", err
	}
	return &Applied{File: path, FileDigest: digest(data), Digest: digest(entry), Target: c.Target,
		MaxReviewRate: c.MaxReviewRate, Thresholds: c.Thresholds, Reachable: c.Reachable, Split: c.Split, Result: c.Result}, "", nil
}

// Place is the folder whose calibration file covers the model folders dirs:
// the folder holding them all. Model folders in different places have none.
func Place(dirs []string) (string, error) {
	if len(dirs) == 0 {
		return "", errors.New("review: no model folders")
	}
	place := filepath.Dir(filepath.Clean(dirs[0]))
	for _, d := range dirs[1:] {
		if p := filepath.Dir(filepath.Clean(d)); p != place {
			return "", fmt.Errorf("model folders %s and %s are in different folders: no one calibration file covers them", dirs[0], d)
		}
	}
	return place, nil
}

// FormatPoint writes one outcome in words.
func FormatPoint(p Point, reachable bool) string {
	if p.MinMargin >= FlagAll {
		return fmt.Sprintf("target not reached: every page flagged (%d pages)", p.Pages)
	}
	prefix := ""
	if !reachable {
		prefix = "target not reached within the review-rate cap, highest precision: "
	}
	return prefix + fmt.Sprintf("min agreement %d, min margin %.4f: %d of %d pages kept, %d right (precision %s), review rate %.1f%%",
		p.MinAgreement, p.MinMargin, p.Kept, p.Pages, p.Correct, FormatPrecision(p.Precision), 100*p.ReviewRate)
}

// FormatPrecision writes a precision as a percentage, "–" for none.
func FormatPrecision(p *float64) string {
	if p == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100**p)
}

// FormatReport writes Report's points as a console table.
func FormatReport(name string, ps []Point) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: precision of the pages not flagged, and review rate\n", name)
	fmt.Fprintf(&b, "%13s %10s %6s %10s %11s\n", "min_agreement", "min_margin", "kept", "precision", "review_rate")
	for _, p := range ps {
		fmt.Fprintf(&b, "%13d %10.2f %6s %10s %10.1f%%\n", p.MinAgreement, p.MinMargin,
			fmt.Sprintf("%d/%d", p.Kept, p.Pages), FormatPrecision(p.Precision), 100*p.ReviewRate)
	}
	return b.String()
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
