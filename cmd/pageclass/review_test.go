package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/resources"
)

// --eval --best --calibrate writes a calibration for each model and the
// ensemble beside the model folders; a later classification run of the
// ensemble finds it, flags pages by it, and records which calibration did.
// On the calibration pages the precision of the unflagged pages reaches the
// target when the calibration says it was reachable.
func TestCalibrateThenClassify(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 2)
	write(t, e.cfg, strings.ReplaceAll(readFile(t, e.cfg), filepath.Join(e.root, "eval"), e.in))
	classifytest.Ensemble(t, e.models)

	// Before calibrating: the review table says uncalibrated, needs_review unknown.
	code, log := e.run(t, "-d", e.in, "--best")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if !strings.Contains(log, "no doubt calibration") {
		t.Errorf("uncalibrated run not said in the log:\n%s", log)
	}
	for _, r := range readCSV(t, e.output(t, "_BEST_5_models_AVG_REVIEW.csv"))[1:] {
		if r[7] != "" || r[8] != "uncalibrated" || r[14] != "none" {
			t.Fatalf("uncalibrated row %v: want NEEDS_REVIEW empty, REASONS uncalibrated, CALIBRATION none", r)
		}
	}
	if err := os.RemoveAll(e.results); err != nil {
		t.Fatal(err)
	}

	code, log = e.run(t, "--eval", "--best", "--calibrate", "--review-precision", "0.1")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if !strings.Contains(log, "precision of the pages not flagged") || !strings.Contains(log, "calibrated BEST_5_models_AVG for precision 0.10") {
		t.Errorf("no calibration report:\n%s", log)
	}
	data, err := os.ReadFile(filepath.Join(e.models, review.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var f review.File
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Calibrations) != 6 {
		t.Fatalf("%d calibrations, want 6 (five models and the ensemble)", len(f.Calibrations))
	}
	ens := f.Calibrations[5]
	if len(ens.Models) != 5 || ens.Target != 0.1 || ens.Split.Pages != 22 {
		t.Errorf("ensemble calibration %+v", ens)
	}
	gold := map[string]string{}
	for _, r := range readCSV(t, e.output(t, "_5_BEST_5_models_AVG_EVAL_REVIEW.csv"))[1:] {
		gold[r[0]+"/"+r[1]] = r[15]
	}
	if err := os.RemoveAll(e.results); err != nil {
		t.Fatal(err)
	}

	code, log = e.run(t, "-d", e.in, "--best")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	d := readParadata(t, e)
	cal, _ := d.Review["calibration"].(map[string]any)
	if cal == nil || cal["file"] != filepath.Join(e.models, review.FileName) || !strings.HasPrefix(cal["file_digest"].(string), "sha256:") || cal["target_precision"] != 0.1 {
		t.Fatalf("run metadata review %v", d.Review)
	}
	id := (&review.Applied{Digest: cal["digest"].(string), Target: 0.1}).ID()
	kept, right, flagged := 0, 0, 0
	rows := readCSV(t, e.output(t, "_BEST_5_models_AVG_REVIEW.csv"))[1:]
	for _, r := range rows {
		if r[14] != id {
			t.Fatalf("row %v: CALIBRATION %q, want %q", r, r[14], id)
		}
		switch r[7] {
		case "no":
			kept++
			if gold[r[0]+"/"+r[1]] == r[2] {
				right++
			}
		case "yes":
			flagged++
			if r[8] == "" {
				t.Errorf("flagged row without a reason: %v", r)
			}
		default:
			t.Fatalf("row %v: NEEDS_REVIEW %q, want yes or no", r, r[7])
		}
	}
	if ens.Reachable {
		// the evaluation decodes and resizes pages its own way: a page may
		// differ by a rounding, never by more than one page here
		if kept == 0 || float64(right+1)/float64(kept) < 0.1 || kept < ens.Result.Kept-1 || kept > ens.Result.Kept+1 {
			t.Errorf("kept %d (%d right), calibration said %d kept at precision %v", kept, right, ens.Result.Kept, *ens.Result.Precision)
		}
	} else {
		// not reached within the default review-rate cap (0.3): the
		// thresholds of the highest precision within it, never every page
		// (the cap bounds the doubt flags; a page condition may add more)
		doubt := 0
		for _, r := range rows {
			if strings.Contains(r[8], review.ReasonLowMargin) || strings.Contains(r[8], review.ReasonDisagreement) {
				doubt++
			}
		}
		if doubt > len(rows)*3/10+1 {
			t.Errorf("unreachable target: %d of %d pages flagged for doubt, over the review-rate cap 0.3", doubt, len(rows))
		}
	}
	t.Logf("%d pages: %d kept (%d right), %d flagged; reachable %v", len(rows), kept, right, flagged, ens.Reachable)
}

// A blank page is classified like any page, kept in every table, and
// flagged near-blank in the review table (also without a calibration).
func TestBlankPageFlaggedAndKept(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	write(t, filepath.Join(e.in, "blank", "empty-1.png"), blankPage(t))
	e.model(t, "v4.4")
	code, log := e.run(t, "-d", e.in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	top := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
	rows := readCSV(t, e.output(t, "_v4.4_REVIEW.csv"))
	if len(rows) != len(top) || len(rows) != 13 {
		t.Fatalf("%d review rows, %d TOP-3 rows, want 13 each (12 pages and the header)", len(rows), len(top))
	}
	for _, r := range rows[1:] {
		blank := r[0] == "blank/empty-1"
		if got := r[10] == "yes"; got != blank {
			t.Errorf("%s: NEAR_BLANK %q (INK %s)", r[0], r[10], r[9])
		}
		if blank && (r[7] != "yes" || r[8] != "near_blank;uncalibrated") {
			t.Errorf("blank page: NEEDS_REVIEW %q REASONS %q, want yes and near_blank;uncalibrated: %v", r[7], r[8], r)
		}
	}
}

// blankPage is a PNG of an empty page: paper with a little texture.
func blankPage(t *testing.T) string {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 300, 420))
	for i := range img.Pix {
		img.Pix[i] = uint8(238 + i%7)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// turnedCopies writes each page turned clockwise by a quarter into dir,
// under its category folder, and returns how many.
func turnedCopies(t *testing.T, pages []string, dir string) int {
	t.Helper()
	for _, p := range pages {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		out := image.NewRGBA(image.Rect(0, 0, b.Dy(), b.Dx()))
		for y := 0; y < b.Dy(); y++ {
			for x := 0; x < b.Dx(); x++ {
				out.Set(b.Dy()-1-y, x, img.At(b.Min.X+x, b.Min.Y+y))
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, out); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, filepath.Base(filepath.Dir(p)), filepath.Base(p)), buf.String())
	}
	return len(pages)
}

// The orientation model fills the rotation columns of every page; pages
// turned by a quarter look less upright to it than the pages themselves;
// a page flagged rotated needs review; the model is in the run metadata.
// Without an orientation model the columns stay empty and the run says so.
// An orientation model is never run as a classifier.
func TestRotationFlags(t *testing.T) {
	rotation, err := filepath.Abs(filepath.Join("..", "..", "weights", "rotation"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	n := turnedCopies(t, pages, filepath.Join(e.in, "turned"))
	e.model(t, "v4.4")
	code, log := e.run(t, "-d", e.in, "--rotation-model", rotation)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	rows := readCSV(t, e.output(t, "_v4.4_REVIEW.csv"))[1:]
	if len(rows) != 2*n {
		t.Fatalf("%d rows, want %d", len(rows), 2*n)
	}
	var upright, turned float64
	for _, r := range rows {
		parts := strings.Split(r[12], "/")
		if r[11] == "" || len(parts) != 4 || (r[13] != "yes" && r[13] != "no") {
			t.Fatalf("row %v: rotation columns not filled", r)
		}
		sum := 0.0
		for _, p := range parts {
			sum += cell(t, p)
		}
		if sum < 0.998 || sum > 1.002 {
			t.Errorf("row %v: rotation confidences sum to %v", r, sum)
		}
		if r[13] == "yes" && (r[7] != "yes" || !strings.Contains(r[8], "rotated")) {
			t.Errorf("row %v: rotated but not flagged for review", r)
		}
		if strings.HasPrefix(r[0], "turned/") {
			turned += cell(t, parts[0]) / float64(n)
		} else {
			upright += cell(t, parts[0]) / float64(n)
		}
	}
	if upright <= turned {
		t.Errorf("mean probability of upright: %.3f for upright pages, %.3f for turned ones", upright, turned)
	}
	t.Logf("mean probability of upright: upright pages %.3f, turned a quarter %.3f", upright, turned)
	d := readParadata(t, e)
	if rm, _ := d.Review["rotation_model"].(map[string]any); rm == nil || rm["path"] != rotation || !strings.HasPrefix(rm["digest"].(string), "sha256:") {
		t.Errorf("run metadata rotation_model %v", d.Review["rotation_model"])
	}
	if err := os.RemoveAll(e.results); err != nil {
		t.Fatal(err)
	}

	code, log = e.run(t, "-d", e.in, "--rotation-model", "")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	for _, r := range readCSV(t, e.output(t, "_v4.4_REVIEW.csv"))[1:] {
		if r[11] != "" || r[12] != "" || r[13] != "" || strings.Contains(r[8], "rotated") {
			t.Fatalf("row %v: rotation columns filled without an orientation model", r)
		}
	}
	if d := readParadata(t, e); d.Review["rotation_model"] != nil || !strings.Contains(log, "not checked for rotation") {
		t.Errorf("no orientation model not said: %v", d.Review)
	}

	code, log = e.run(t, "-d", e.in, "--fastcls", "--fastcls_base", rotation)
	if code != exitFailure || !strings.Contains(log, "page-orientation model, not a page classifier") {
		t.Errorf("orientation model run as a classifier: exit %d: %s", code, log)
	}
}

// A run that did not turn the rotation check off but finds no orientation
// model (a binary run away from its weights, ARCHIVEKIT_ROTATION_MODEL not
// set) warns and says where it looked; --rotation-model "" turns the check
// off quietly. Before, both were the same information line, so a run from
// another folder lost the rotation check without a warning.
func TestMissingOrientationModelWarns(t *testing.T) {
	t.Setenv(resources.RotationModel.Env, "")
	if dir := classify.OrientationDir(); dir != "" {
		t.Skipf("an orientation model is found from the test's folder: %s", dir)
	}
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	code, log := e.run(t, "-d", e.in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if !strings.Contains(log, `"level":"WARN","msg":"pages are not checked for rotation: the shipped orientation model was not found"`) ||
		!strings.Contains(log, resources.RotationModel.Env) {
		t.Errorf("missing orientation model not warned about:\n%s", log)
	}
	if err := os.RemoveAll(e.results); err != nil {
		t.Fatal(err)
	}
	code, log = e.run(t, "-d", e.in, "--rotation-model", "")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if strings.Contains(log, "was not found") || !strings.Contains(log, "not checked for rotation") {
		t.Errorf("--rotation-model \"\": want the information line only:\n%s", log)
	}
}
