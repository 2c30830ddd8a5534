package classify_test

import (
	"image/png"
	"math"
	"os"
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
		{"auto", classify.UploadAuto, "cuda:0", classify.UploadPage},
		{"float", classify.UploadFloat, "cuda:0", classify.UploadFloat},
		{"u8", classify.UploadU8, "cpu", classify.UploadU8},
		{"page", classify.UploadPage, "cpu", classify.UploadPage},
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
	compareUploads(t, classify.UploadU8, everyEleventh(t), 1e-4, 0)
}

// TestUploadPageMatchesFloat: the same with the decoded pages uploaded and
// resized on the device (UploadPage; on CPU tensors here, the code a GPU
// runs), every page resized there and none on the host. Pages within
// PagePixels(384) (1.33 MP) are resized from the same pixels with the same
// arithmetic; the sample pages over it (one PNG, 1.58 MP) are reduced
// with a linear kernel while decoding first, which moves the probabilities
// by more (measured: 0.0071; 0.0064 through the thumbnail's Lanczos-3)
// and the ink coverage a little (0.0031; under 0.002 through the
// thumbnail); so do two sample pages enlarged to A4 scans at 300 dpi as
// JPEGs, which the JPEG decoder shrinks to a quarter of each side on load
// (measured: 0.0029, ink coverage 0.0034), and the same as uncompressed
// TIFF masters and as PNG masters, which are reduced to 1.33 MP with a
// linear kernel as they are read (measured: 0.0055, ink coverage 0.0011,
// each).
func TestUploadPageMatchesFloat(t *testing.T) {
	compareUploads(t, classify.UploadPage, everyEleventh(t), 1e-4, 0)
	var large []string
	for _, p := range samplePages(t) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		c, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if int64(c.Width)*int64(c.Height) > classify.PagePixels(384) {
			large = append(large, p)
		}
	}
	if len(large) == 0 {
		t.Fatal("no sample page over PagePixels(384)")
	}
	compareUploads(t, classify.UploadPage, large, 0.02, 0.005)
	// A4 scans at 300 dpi as JPEGs, decoded at a quarter of each side by
	// the JPEG decoder (620×877)
	compareUploads(t, classify.UploadPage, scans(t, t.TempDir(), 2), 0.02, 0.01)
	// the same as uncompressed TIFF masters, which no decoder shrinks
	compareUploads(t, classify.UploadPage, scansAs(t, t.TempDir(), 2, "tif"), 0.02, 0.01)
	// and as PNG masters, which no decoder shrinks either
	compareUploads(t, classify.UploadPage, scansAs(t, t.TempDir(), 2, "png"), 0.02, 0.01)
}

// everyEleventh is every eleventh sample page, twelve at most.
func everyEleventh(t *testing.T) []string {
	var files []string
	for i, p := range samplePages(t) {
		if i%11 == 0 && len(files) < 12 {
			files = append(files, p)
		}
	}
	return files
}

// compareUploads runs the shipped demo ensemble with the orientation model
// over files with pages carried as floats and as up: every member's
// probabilities and the rotation confidences agree within tol, the
// rotation angle is the same and the ink coverage within inkTol (exactly
// the same ink for 0; the near-blank verdict the same). With UploadPage,
// every page must have been resized on the device and none on the host.
func compareUploads(t *testing.T, up classify.Upload, files []string, tol, inkTol float64) {
	folders, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		t.Skip("no shipped demo ensemble:", err)
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
	host0, dev0 := classify.Resizes()
	got := predict(t, e, files, classify.Options{Batch: 5, Upload: up})
	host1, dev1 := classify.Resizes()
	if up == classify.UploadPage && (host1 != host0 || dev1-dev0 != int64(len(files))) {
		t.Fatalf("%v: %d pages resized on the host and %d on the device, want 0 and %d", up, host1-host0, dev1-dev0, len(files))
	}
	if len(ref) != len(files) || len(got) != len(files) {
		t.Fatalf("%d and %d pages for %d files", len(ref), len(got), len(files))
	}
	worst, worstInk := 0.0, 0.0
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
		if r.Ink == nil || g.Ink == nil {
			t.Fatalf("%s: ink %v, want %v", files[i], g.Ink, r.Ink)
		}
		if d := math.Abs(r.Ink.Coverage - g.Ink.Coverage); d > inkTol || (inkTol == 0 && *r.Ink != *g.Ink) || r.Ink.NearBlank != g.Ink.NearBlank {
			t.Errorf("%s: ink %v, want %v", files[i], *g.Ink, *r.Ink)
		} else {
			worstInk = max(worstInk, d)
		}
		if r.Rotation == nil || g.Rotation == nil || r.Rotation.Angle != g.Rotation.Angle {
			t.Fatalf("%s: rotation %+v, want %+v", files[i], g.Rotation, r.Rotation)
		}
		for k := range r.Rotation.Confidence {
			worst = max(worst, math.Abs(r.Rotation.Confidence[k]-g.Rotation.Confidence[k]))
		}
	}
	t.Logf("%v: %d pages, %d models: max probability difference %.2g, ink %.2g", up, len(ref), len(ms), worst, worstInk)
	if worst > tol {
		t.Errorf("max probability difference %.3g between float and %v uploads, want <= %g", worst, up, tol)
	}
}
