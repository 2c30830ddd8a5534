package review

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"archivekit/internal/pageclass/modelmeta"
)

// vec is a canonical probability vector with the given category scores.
func vec(scores map[string]float64) []float64 {
	v := make([]float64, len(modelmeta.Categories))
	for k, s := range scores {
		v[modelmeta.CategoryIndex(k)] = s
	}
	return v
}

func TestMeasure(t *testing.T) {
	const tol = 1e-9
	uniform := make([]float64, len(modelmeta.Categories))
	for i := range uniform {
		uniform[i] = 1 / float64(len(uniform))
	}
	a := vec(map[string]float64{"TEXT": 0.7, "DRAW": 0.3})
	b := vec(map[string]float64{"TEXT": 0.2, "DRAW": 0.8})
	c := vec(map[string]float64{"TEXT": 0.9, "PHOTO": 0.1})
	mean := vec(map[string]float64{"TEXT": 0.6, "DRAW": 11.0 / 30, "PHOTO": 1.0 / 30})
	for _, tc := range []struct {
		name      string
		per       [][]float64
		mean      []float64
		top1      string
		agreement int
		models    int
		margin    float64
		entropy   float64
	}{
		{"single certain", [][]float64{vec(map[string]float64{"PHOTO": 1})}, vec(map[string]float64{"PHOTO": 1}), "PHOTO", 1, 1, 1, 0},
		{"single uniform: ties go to canonical order", [][]float64{uniform}, uniform, "DRAW", 1, 1, 0, math.Log(11)},
		{"three models, two agree", [][]float64{a, b, c}, mean, "TEXT", 2, 3, 0.6 - 11.0/30,
			-(0.6*math.Log(0.6) + 11.0/30*math.Log(11.0/30) + 1.0/30*math.Log(1.0/30))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Measure(tc.per, tc.mean)
			if d.Top1 != tc.top1 || d.Agreement != tc.agreement || d.Models != tc.models {
				t.Errorf("top1 %s agreement %d/%d, want %s %d/%d", d.Top1, d.Agreement, d.Models, tc.top1, tc.agreement, tc.models)
			}
			if math.Abs(d.Margin-tc.margin) > tol || math.Abs(d.Entropy-tc.entropy) > tol {
				t.Errorf("margin %v entropy %v, want %v %v", d.Margin, d.Entropy, tc.margin, tc.entropy)
			}
		})
	}
}

func TestAssess(t *testing.T) {
	sure := vec(map[string]float64{"TEXT": 0.9, "DRAW": 0.1})
	unsure := vec(map[string]float64{"TEXT": 0.55, "DRAW": 0.45})
	other := vec(map[string]float64{"DRAW": 0.9, "TEXT": 0.1})
	cal := &Applied{Digest: "sha256:0123456789abcdef", Target: 0.9, Thresholds: Thresholds{MinAgreement: 2, MinMargin: 0.2}}
	blank := &Ink{Coverage: 0.0001, NearBlank: true}
	turned := &Rotation{Angle: 90, Rotated: true}
	for _, tc := range []struct {
		name    string
		per     [][]float64
		mean    []float64
		cond    Condition
		cal     *Applied
		need    string // "yes", "no", "" unknown
		reasons string
	}{
		{"calibrated, sure", [][]float64{sure, sure}, sure, Condition{}, cal, "no", ""},
		{"calibrated, low margin", [][]float64{unsure, unsure}, unsure, Condition{}, cal, "yes", "low_margin"},
		{"calibrated, disagreement", [][]float64{sure, other}, sure, Condition{}, cal, "yes", "disagreement"},
		{"uncalibrated: unknown", [][]float64{sure}, sure, Condition{}, nil, "", "uncalibrated"},
		{"uncalibrated but near-blank", [][]float64{sure}, sure, Condition{Ink: blank}, nil, "yes", "near_blank;uncalibrated"},
		{"calibrated, rotated", [][]float64{sure, sure}, sure, Condition{Rotation: turned}, cal, "yes", "rotated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Assess(tc.per, tc.mean, tc.cond, tc.cal)
			need := ""
			if p.NeedsReview != nil {
				need = map[bool]string{true: "yes", false: "no"}[*p.NeedsReview]
			}
			if need != tc.need || strings.Join(p.Reasons, ";") != tc.reasons {
				t.Errorf("needs_review %q reasons %q, want %q %q", need, strings.Join(p.Reasons, ";"), tc.need, tc.reasons)
			}
			want := "none"
			if tc.cal != nil {
				want = "sha256:0123456789ab@0.9"
			}
			if p.Calibration != want {
				t.Errorf("calibration %q, want %q", p.Calibration, want)
			}
		})
	}
}

func sample(margin float64, agree int, correct bool) Sample {
	return Sample{Doubt: Doubt{Agreement: agree, Models: 3, Margin: margin}, Correct: correct}
}

func TestCalibrate(t *testing.T) {
	// Right pages have large margins, except one; wrong ones small.
	s := []Sample{
		sample(0.9, 3, true), sample(0.8, 3, true), sample(0.7, 2, true), sample(0.6, 3, false),
		sample(0.5, 3, true), sample(0.3, 1, false), sample(0.2, 2, false), sample(0.1, 3, true),
	}
	best, ok := Calibrate(s, 3, 0.9, 1)
	if !ok || math.Abs(best.MinMargin-0.65) > 1e-9 || best.MinAgreement != 0 || best.Kept != 3 || best.Correct != 3 {
		t.Errorf("target 0.9: %+v reachable %v, want margin 0.65, 3 kept", best, ok)
	}
	// 0.75: margin 0.5 keeps 5 of which 4 right (0.8).
	best, ok = Calibrate(s, 3, 0.75, 1)
	if !ok || math.Abs(best.MinMargin-0.4) > 1e-9 || best.Kept != 5 || *best.Precision != 0.8 || best.ReviewRate != 3.0/8 {
		t.Errorf("target 0.75: %+v, want margin 0.4, 5 kept, precision 0.8", best)
	}
	// Agreement helps: requiring 3 of 3 keeps 0.9, 0.8, 0.6, 0.5, 0.1 (4 of 5 right).
	best, ok = Calibrate(s, 3, 0.8, 1)
	if !ok || best.Kept != 5 || *best.Precision < 0.8 {
		t.Errorf("target 0.8: %+v", best)
	}
	// Unreachable: every page flagged, said so.
	wrong := []Sample{sample(0.9, 3, false), sample(0.5, 3, false)}
	best, ok = Calibrate(wrong, 3, 0.9, 1)
	if ok || best.Kept != 0 || best.ReviewRate != 1 || best.MinMargin != FlagAll {
		t.Errorf("unreachable: %+v reachable %v", best, ok)
	}
	// Its flags say why: not a low margin (0.9 is not low), the target.
	if r := best.Thresholds.Flags(Doubt{Agreement: 3, Models: 3, Margin: 0.9}); len(r) != 1 || r[0] != ReasonUnreachable {
		t.Errorf("unreachable calibration's reasons %q, want [%s]", r, ReasonUnreachable)
	}
}

// With a cap on the review rate, the thresholds flag at most that share of
// the pages: the fewest flags that reach the target, else the highest
// precision within the cap, never every page.
func TestCalibrateCapped(t *testing.T) {
	s := []Sample{
		sample(0.9, 3, true), sample(0.8, 3, true), sample(0.7, 2, true), sample(0.6, 3, false),
		sample(0.5, 3, true), sample(0.3, 1, false), sample(0.2, 2, false), sample(0.1, 3, true),
	}
	for _, c := range []struct {
		name      string
		target    float64
		cap       float64
		reachable bool
		kept      int
		precision float64
	}{
		// 0.75 is reached flagging 3 of 8 (margin 0.4), within a cap of 0.4.
		{"reached within the cap", 0.75, 0.4, true, 5, 0.8},
		// a cap of 0.25 flags at most 2 pages: agreement 2 flags the wrong
		// 0.3 page (5 of 7 right); margin 0.25 flags 0.2 and 0.1 (4 of 6),
		// agreement 2 and margin 0.15 flags 0.3 and 0.1 (4 of 6).
		{"best precision within the cap", 0.9, 0.25, false, 7, 5.0 / 7},
		// no flag at all: the precision of every page.
		{"cap zero", 0.9, 0, false, 8, 5.0 / 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			best, ok := Calibrate(s, 3, c.target, c.cap)
			if ok != c.reachable || best.Kept != c.kept || best.Precision == nil || math.Abs(*best.Precision-c.precision) > 1e-9 {
				t.Fatalf("%+v reachable %v, want reachable %v, %d kept at precision %.3f", best, ok, c.reachable, c.kept, c.precision)
			}
			if best.ReviewRate > c.cap+1e-9 || best.MinMargin >= FlagAll {
				t.Errorf("review rate %.3f over the cap %.2f, or every page flagged (margin %v)", best.ReviewRate, c.cap, best.MinMargin)
			}
		})
	}
	// An all-wrong split under a cap: flags no more than the cap allows.
	wrong := []Sample{sample(0.9, 3, false), sample(0.5, 3, false), sample(0.4, 3, false), sample(0.1, 3, false)}
	if best, ok := Calibrate(wrong, 3, 0.9, 0.3); ok || best.ReviewRate > 0.3 || best.MinMargin >= FlagAll {
		t.Errorf("all wrong, cap 0.3: %+v reachable %v", best, ok)
	}
}

// LeaveOneOut judges each page by thresholds fitted without it: a page the
// rule keeps only because it was fitted to it is flagged.
func TestLeaveOneOut(t *testing.T) {
	// Right pages have high margins, wrong ones low: every left-out page
	// is judged like the rest, all 8 right calls.
	var clean []Sample
	for i := 0; i < 4; i++ {
		clean = append(clean, sample(0.8+0.01*float64(i), 3, true), sample(0.1+0.01*float64(i), 3, false))
	}
	p := LeaveOneOut(clean, 3, 0.9, 0.5)
	if p.Pages != 8 || p.Kept != 4 || p.Correct != 4 || p.ReviewRate != 0.5 {
		t.Errorf("separable split: %+v, want the 4 right pages kept, the 4 wrong flagged", p)
	}
	// One more right page, below every wrong one: precision 0.9 needs a
	// margin above the wrong pages, so it is flagged with them.
	s := append(append([]Sample{}, clean...), sample(0.05, 3, true))
	p = LeaveOneOut(s, 3, 0.9, 1)
	if p.Pages != 9 || p.Kept != 4 || p.Correct != 4 {
		t.Errorf("low right page: %+v, want 4 kept (all right)", p)
	}
	if *p.Precision != 1 || math.Abs(p.ReviewRate-5.0/9) > 1e-9 {
		t.Errorf("low right page: precision %v, review rate %v", *p.Precision, p.ReviewRate)
	}
}

func TestSaveResolve(t *testing.T) {
	dir := t.TempDir()
	set := []Member{{"v1.4", "sha256:aa"}, {"v2.4", "sha256:bb"}}
	a, note, err := Resolve(dir, set)
	if a != nil || err != nil || !strings.Contains(note, "no "+filepath.Join(dir, FileName)) {
		t.Fatalf("no file: %v %q %v", a, note, err)
	}
	c := Calibration{Models: set, Target: 0.9, Thresholds: Thresholds{MinAgreement: 2, MinMargin: 0.25}, Reachable: true}
	if _, err := Save(dir, c); err != nil {
		t.Fatal(err)
	}
	single := Calibration{Models: set[:1], Target: 0.8, Thresholds: Thresholds{MinMargin: 0.5}, Reachable: true}
	if _, err := Save(dir, single); err != nil {
		t.Fatal(err)
	}
	// the same set in another order finds the ensemble's calibration
	a, _, err = Resolve(dir, []Member{set[1], set[0]})
	if err != nil || a == nil || a.Thresholds.MinAgreement != 2 || a.Target != 0.9 || !strings.HasPrefix(a.FileDigest, "sha256:") {
		t.Fatalf("ensemble: %+v %v", a, err)
	}
	first := a.Digest
	// recalibrating the single model keeps the ensemble's entry and its digest
	single.Thresholds.MinMargin = 0.4
	if _, err := Save(dir, single); err != nil {
		t.Fatal(err)
	}
	a, _, _ = Resolve(dir, set)
	if a.Digest != first {
		t.Errorf("ensemble calibration digest changed when another set was recalibrated")
	}
	b, _, _ := Resolve(dir, set[:1])
	if b == nil || b.Thresholds.MinMargin != 0.4 {
		t.Errorf("single: %+v", b)
	}
	// another digest (the model was retrained): no calibration, said why
	a, note, err = Resolve(dir, []Member{{"v1.4", "sha256:cc"}})
	if a != nil || err != nil || !strings.Contains(note, "no calibration for these models") {
		t.Errorf("retrained model: %v %q %v", a, note, err)
	}
	// a broken file is an error naming it, never "uncalibrated"
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Resolve(dir, set); err == nil || !strings.Contains(err.Error(), FileName) {
		t.Errorf("broken file: %v", err)
	}
}

func TestPlace(t *testing.T) {
	if p, err := Place([]string{"/m/model_v14", "/m/model_v24/"}); err != nil || p != "/m" {
		t.Errorf("%q %v", p, err)
	}
	if _, err := Place([]string{"/m/model_v14", "/n/model_v24"}); err == nil {
		t.Error("model folders in two places: no error")
	}
}

func TestMeasureInkSynthetic(t *testing.T) {
	const w, h = 400, 600
	page := func(mark func(x, y int) bool) []uint8 {
		pix := make([]uint8, w*h*3)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				v := uint8(235 + (x*7+y*13)%15) // paper with texture
				if mark(x, y) {
					v = 40
				}
				i := (y*w + x) * 3
				pix[i], pix[i+1], pix[i+2] = v, v, v-10
			}
		}
		return pix
	}
	blank := MeasureInk(page(func(x, y int) bool { return false }), w, h)
	if !blank.NearBlank || blank.Coverage != 0 {
		t.Errorf("blank paper: %+v", blank)
	}
	// a black scanner edge is not ink
	edge := MeasureInk(page(func(x, y int) bool { return x < 10 }), w, h)
	if !edge.NearBlank {
		t.Errorf("blank with a dark edge: %+v", edge)
	}
	// text lines: every 20th row band of 3 rows across the middle
	text := MeasureInk(page(func(x, y int) bool { return y%20 < 3 && x > 50 && x < 350 }), w, h)
	if text.NearBlank || math.Abs(text.Coverage-0.12) > 0.03 {
		t.Errorf("text page: %+v, want coverage about 0.12", text)
	}
}

func TestFromOrientation(t *testing.T) {
	for _, tc := range []struct {
		p       [4]float64 // upright, turned 90, 180, 270 clockwise
		angle   int        // the clockwise turn back
		rotated bool
	}{
		{[4]float64{0.9, 0.05, 0.03, 0.02}, 0, false},
		{[4]float64{0.1, 0.8, 0.05, 0.05}, 270, true}, // turned 90: turn back 270
		{[4]float64{0.05, 0.05, 0.05, 0.85}, 90, true},
		{[4]float64{0.1, 0.1, 0.1, 0.7}, 90, false},  // under RotatedConfidence
		{[4]float64{0.3, 0.1, 0.5, 0.1}, 180, false}, // not sure enough
	} {
		r := FromOrientation(tc.p)
		if r.Angle != tc.angle || r.Rotated != tc.rotated {
			t.Errorf("%v: angle %d rotated %v, want %d %v", tc.p, r.Angle, r.Rotated, tc.angle, tc.rotated)
		}
		if r.Confidence[r.Angle/90] != max(tc.p[0], tc.p[1], tc.p[2], tc.p[3]) {
			t.Errorf("%v: confidence %v", tc.p, r.Confidence)
		}
	}
}

// Calibrations of several model sets saved into one folder at once all
// stay in its file; before, each save read the file, added its entry and
// wrote it back, so one saved meanwhile was lost.
func TestConcurrentSavesKeepEverySet(t *testing.T) {
	dir := t.TempDir()
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			set := []Member{{fmt.Sprintf("m%d", i), fmt.Sprintf("sha256:%02x", i)}}
			_, err := Save(dir, Calibration{Models: set, Target: 0.9, Thresholds: Thresholds{MinMargin: 0.1}, Reachable: true})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		if a, note, err := Resolve(dir, []Member{{fmt.Sprintf("m%d", i), fmt.Sprintf("sha256:%02x", i)}}); a == nil || err != nil {
			t.Errorf("set %d lost: %q %v", i, note, err)
		}
	}
}
