package classify_test

import (
	"math"
	"path/filepath"
	"testing"

	"archivekit/internal/pageclass/classify"
)

func TestParseUpload(t *testing.T) {
	for _, tc := range []struct {
		in     string
		want   classify.Upload
		device string
		on     classify.Upload
	}{
		{"auto", classify.UploadAuto, "cpu", classify.UploadFloat},
		{"auto", classify.UploadAuto, "cuda:0", classify.UploadU8},
		{"float", classify.UploadFloat, "cuda:0", classify.UploadFloat},
		{"u8", classify.UploadU8, "cpu", classify.UploadU8},
	} {
		u, err := classify.ParseUpload(tc.in)
		if err != nil || u != tc.want || u.String() != tc.in {
			t.Errorf("ParseUpload(%q) = %v, %v; want %v", tc.in, u, err, tc.want)
		}
		if got := u.On(tc.device); got != tc.on {
			t.Errorf("%v.On(%q) = %v, want %v", u, tc.device, got, tc.on)
		}
	}
	if _, err := classify.ParseUpload("fp8"); err == nil {
		t.Error("ParseUpload(fp8): no error")
	}
}

// TestUploadU8MatchesFloat runs the shipped demo ensemble with the
// orientation model over sample pages with pages carried as floats and as
// 8-bit pixels normalised on the device (here the CPU, the same code as on
// a GPU: torch.Batch): every member's probabilities, the rotation evidence
// and the ink measure agree.
func TestUploadU8MatchesFloat(t *testing.T) {
	folders, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		t.Skip("no shipped demo ensemble:", err)
	}
	var files []string
	for i, p := range samplePages(t) {
		if i%11 == 0 && len(files) < 12 {
			files = append(files, p)
		}
	}
	ms, err := classify.LoadAll(folders, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer classify.CloseAll(ms)
	e, err := classify.NewEnsemble(ms...)
	if err != nil {
		t.Fatal(err)
	}
	if e.Orientation, err = classify.LoadOrientation(filepath.Join("..", "..", "..", "weights", "rotation"), "cpu"); err != nil {
		t.Fatal(err)
	}
	defer e.Orientation.Close()
	ref := predict(t, e, files, classify.Options{Batch: 5, Upload: classify.UploadFloat})
	got := predict(t, e, files, classify.Options{Batch: 5, Upload: classify.UploadU8})
	if len(ref) != len(files) || len(got) != len(files) {
		t.Fatalf("%d and %d pages for %d files", len(ref), len(got), len(files))
	}
	worst := 0.0
	for i := range ref {
		if ref[i].Err != nil || got[i].Err != nil {
			t.Fatalf("%s: %v / %v", files[i], ref[i].Err, got[i].Err)
		}
		for m := range ref[i].Probs {
			for c, v := range ref[i].Probs[m] {
				worst = max(worst, math.Abs(v-got[i].Probs[m][c]))
			}
		}
		r, g := ref[i].Condition, got[i].Condition
		if r.Ink == nil || g.Ink == nil || *r.Ink != *g.Ink {
			t.Errorf("%s: ink %v, want %v", files[i], g.Ink, r.Ink)
		}
		if r.Rotation == nil || g.Rotation == nil || r.Rotation.Angle != g.Rotation.Angle {
			t.Fatalf("%s: rotation %+v, want %+v", files[i], g.Rotation, r.Rotation)
		}
		for k := range r.Rotation.Confidence {
			worst = max(worst, math.Abs(r.Rotation.Confidence[k]-g.Rotation.Confidence[k]))
		}
	}
	t.Logf("%d pages, %d models: max probability difference %.2g", len(ref), len(ms), worst)
	if worst > 1e-4 {
		t.Errorf("max probability difference %.3g between float and u8 uploads, want <= 1e-4", worst)
	}
}
