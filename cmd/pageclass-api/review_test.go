package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/docrecord"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/review"
)

// reviewResponse is the extra review fields of both responses.
type reviewResponse struct {
	Predictions       []prediction    `json:"predictions"`
	Review            *review.Page    `json:"review"`
	ReviewCalibration *review.Applied `json:"review_calibration"`
	Pages             []struct {
		Page        int          `json:"page"`
		Predictions []prediction `json:"predictions"`
		Review      *review.Page `json:"review"`
	} `json:"pages"`
	Record json.RawMessage `json:"document_json"`
}

// Both prediction endpoints carry each page's review beside the spec's
// fields: the ensemble's calibration (written beside the model folders)
// flags pages; a single model without a calibration leaves needs_review
// null and says "uncalibrated". The record carries it as category_review.
func TestPredictReviewFields(t *testing.T) {
	o := testOptions(t)
	members := ensembleMembers(t, o.Models)
	// min margin 0: no page is flagged for doubt
	if _, err := review.Save(o.Models, review.Calibration{Models: members, Target: 0.9, Reachable: true,
		Split: review.Split{Folder: "/tmp/tmp.calibrating/heldout", Pages: 40}}); err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, o, nil, nil)
	name, png := samplePage(t)
	img := upload{Field: "file", Name: name, CType: "image/png", Data: png}

	post := func(parts ...upload) reviewResponse {
		t.Helper()
		status, b := postForm(t, ts.URL+"/predict_image", parts...)
		if status != 200 {
			t.Fatalf("status %d: %s", status, b)
		}
		var r reviewResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		if r.Review == nil {
			t.Fatalf("no review: %s", b)
		}
		return r
	}
	r := post(img, upload{Field: "document_json_out", Data: []byte("true")})
	v := r.Review
	if v.Models != 5 || v.Agreement < 0 || v.Agreement > 5 || v.Top1 != r.Predictions[0].Label || v.Margin < 0 || v.Margin > 1 || v.Entropy < 0 {
		t.Errorf("ensemble review %+v, Top-1 %s", v, r.Predictions[0].Label)
	}
	// The answer names the calibration file and its split's folder by
	// their base names: no path of the server or of the calibrating machine.
	if r.ReviewCalibration == nil || r.ReviewCalibration.File != review.FileName || r.ReviewCalibration.Split.Folder != "heldout" ||
		r.ReviewCalibration.Split.Pages != 40 || v.Calibration != r.ReviewCalibration.ID() || v.NeedsReview == nil || *v.NeedsReview || len(v.Reasons) != 0 {
		t.Errorf("calibrated review %+v, calibration %+v", v, r.ReviewCalibration)
	}
	if v.Ink == nil || v.Ink.NearBlank || v.Ink.Coverage <= 0 {
		t.Errorf("ink of a sample page: %+v", v.Ink)
	}
	rec, err := docrecord.Parse(r.Record)
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := rec.Get("pages")
	entry, _ := pages.([]any)[0].(*docrecord.Object)
	if cr, ok := entry.Get("category_review"); !ok || cr == nil {
		t.Errorf("record page without category_review: %s", r.Record)
	}

	single := post(img, upload{Field: "version", Data: []byte("v2.4")})
	if s := single.Review; s.Models != 1 || s.Agreement != 1 || s.NeedsReview != nil || !slices.Contains(s.Reasons, review.ReasonUncalibrated) ||
		s.Calibration != "none" || single.ReviewCalibration != nil {
		t.Errorf("uncalibrated single model: %+v, calibration %+v", s, single.ReviewCalibration)
	}

	status, b := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "three.pdf", CType: "application/pdf", Data: makePDF(3)})
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	var d reviewResponse
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Pages) != 3 || d.ReviewCalibration == nil {
		t.Fatalf("document response %s", b)
	}
	for _, p := range d.Pages {
		if p.Review == nil || p.Review.Models != 5 || p.Review.Ink == nil || p.Review.NeedsReview == nil {
			t.Errorf("page %d review %+v", p.Page, p.Review)
		}
	}
}

// With an orientation model every page's review carries its rotation
// evidence; without one (the test options) it has none.
func TestPredictRotation(t *testing.T) {
	o := testOptions(t)
	var err error
	if o.Rotation, err = filepath.Abs(filepath.Join("..", "..", "weights", "rotation")); err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, o, nil, nil)
	name, png := samplePage(t)
	status, b := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: name, CType: "image/png", Data: png})
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	var r reviewResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	rot := r.Review.Rotation
	if rot == nil || rot.Angle%90 != 0 || rot.Angle < 0 || rot.Angle > 270 {
		t.Fatalf("rotation %+v", rot)
	}
	sum := 0.0
	for _, c := range rot.Confidence {
		sum += c
	}
	if sum < 0.998 || sum > 1.002 || rot.Rotated != slices.Contains(r.Review.Reasons, review.ReasonRotated) {
		t.Errorf("rotation %+v, reasons %v", rot, r.Review.Reasons)
	}
}

// The predictions and review fields of both endpoints under a calibration
// and the orientation model are pinned (golden files, taken before the
// handler used internal/pageclass/classify's per-page step instead of its own copy): the
// scores, agreement, margin, entropy, flags, ink and rotation of each page.
func TestPredictReviewGolden(t *testing.T) {
	o := testOptions(t)
	var err error
	if o.Rotation, err = filepath.Abs(filepath.Join("..", "..", "weights", "rotation")); err != nil {
		t.Fatal(err)
	}
	members := ensembleMembers(t, o.Models)
	// thresholds that flag some of the fixture models' pages and not others
	if _, err := review.Save(o.Models, review.Calibration{Models: members, Target: 0.9, Reachable: true,
		Thresholds: review.Thresholds{MinAgreement: 1, MinMargin: 0.003}, Created: "2026-01-01T00:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	_, ts := startServer(t, o, nil, nil)
	// The models' folder is a temporary one, and the fixture models' and
	// so the calibration's digests change with each fixture build.
	digest := regexp.MustCompile(`sha256:[0-9a-f]+`)
	norm := func(b []byte) []byte {
		b = bytes.ReplaceAll(b, []byte(o.Models), []byte("{models}"))
		return digest.ReplaceAll(b, []byte("sha256:{digest}"))
	}
	name, png := samplePage(t)
	status, b := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: name, CType: "image/png", Data: png},
		upload{Field: "topn", Data: []byte("11")})
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	golden(t, "predict_image_review.golden.json", norm(b))
	status, b = postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "three.pdf", CType: "application/pdf", Data: makePDF(3)},
		upload{Field: "topn", Data: []byte("11")})
	if status != 200 {
		t.Fatalf("status %d: %s", status, b)
	}
	golden(t, "predict_document_review.golden.json", norm(b))
}

// A service that did not turn the rotation check off but finds no
// orientation model warns and says where it looked; -rotation-model ""
// turns the check off with an information line only. Before, both were
// the information line, so a service started away from its weights lost
// the rotation check unnoticed.
func TestMissingOrientationModelWarns(t *testing.T) {
	for _, given := range []bool{false, true} {
		o := testOptions(t)
		o.Rotation, o.RotationGiven = "", given
		var log bytes.Buffer
		startServer(t, o, map[string]string{"LOG_LEVEL": "INFO", "LOG_FORMAT": "json"}, &log)
		warned := strings.Contains(log.String(), `"level":"WARN","msg":"pages are not checked for rotation: the shipped orientation model was not found"`)
		said := strings.Contains(log.String(), "pages are not checked for rotation")
		if warned == given || !said {
			t.Errorf("-rotation-model given empty: %v; warned %v:\n%s", given, warned, log.String())
		}
	}
}

// ensembleMembers is the five fixture models in models as a calibration
// names them (name and digest).
func ensembleMembers(t *testing.T, models string) []review.Member {
	t.Helper()
	var members []review.Member
	for _, rev := range registry.Ensemble {
		d, err := modelmeta.Digest(filepath.Join(models, registry.ModelDirName(rev)))
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, review.Member{Name: rev, Digest: d})
	}
	return members
}
