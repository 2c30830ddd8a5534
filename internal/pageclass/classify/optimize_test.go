package classify_test

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio"
)

// optimizeTolerance is the largest difference allowed between a
// probability of the frozen / inference-optimised module and the plain one
// (float32 rounding of folded batch norms and reordered kernels).
const optimizeTolerance = 1e-3

// TestOptimizedMatchesPlain: on real sample pages, each demo model as Load
// gives it (the optimisation chosen for its family), frozen, frozen +
// optimize_for_inference, and channels-last + frozen gives the same Top-1
// as the plain module and probabilities within optimizeTolerance.
func TestOptimizedMatchesPlain(t *testing.T) {
	demo, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		t.Skipf("no demo ensemble: %v", err)
	}
	if fc := filepath.Join("../../../weights/demo", "fastcls_small"); classify.IsModelDir(fc) {
		demo = append(demo, classify.Folder{Dir: fc})
	}
	pages := classifytest.Pages(t, 2) // two pages of each category
	for _, f := range demo {
		plain, err := classify.LoadPlain(f.Dir, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		defer plain.Close()
		var batch []float32
		for _, p := range pages {
			doc, err := imageio.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			img, err := doc.Page(0)
			if err != nil {
				t.Fatal(err)
			}
			in, err := plain.Preprocess(img)
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, in...)
		}
		s := plain.Size()
		want, err := plain.Probabilities(batch, len(pages), 3, s, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, level := range []torch.Optimization{0, torch.Freeze, torch.FreezeOptimize, torch.ChannelsLast | torch.Freeze} {
			name := fmt.Sprintf("%s/level%d", filepath.Base(f.Dir), level)
			if level == 0 {
				name = filepath.Base(f.Dir) + "/default"
			}
			t.Run(name, func(t *testing.T) {
				var m *classify.Model
				if level == 0 {
					// As classify.Load gives it: the family's choice.
					if m, err = classify.Load(f.Dir, "cpu"); err != nil {
						t.Fatal(err)
					}
					if want := classify.InferenceOptimization(m.Meta.Base, "cpu"); m.Optimized != want {
						t.Fatalf("Load applied optimisation %d, InferenceOptimization says %d", m.Optimized, want)
					}
				} else {
					if m, err = classify.LoadPlain(f.Dir, "cpu"); err != nil {
						t.Fatal(err)
					}
					if err := m.Module.Optimize(level); err != nil {
						t.Fatal(err)
					}
				}
				defer m.Close()
				got, err := m.Probabilities(batch, len(pages), 3, s, s)
				if err != nil {
					t.Fatal(err)
				}
				worst := 0.0
				for i := range want {
					if a, b := argmax(want[i]), argmax(got[i]); a != b {
						t.Errorf("%s: Top-1 %d optimised, %d plain", filepath.Base(pages[i]), b, a)
					}
					for c := range want[i] {
						worst = math.Max(worst, math.Abs(float64(got[i][c]-want[i][c])))
					}
				}
				if worst > optimizeTolerance {
					t.Errorf("probabilities differ by up to %.2g, tolerance %.0g", worst, optimizeTolerance)
				}
				t.Logf("%d pages, largest probability difference %.2g", len(pages), worst)
				if m.Optimized == 0 && level == 0 {
					return // a family left plain
				}
				// Inference only: training and saving refuse clearly.
				if err := m.Module.SetTrain(true); err == nil {
					t.Error("a frozen module switched to training")
				}
				if err := m.Module.Save(filepath.Join(t.TempDir(), "m.pt")); err == nil {
					t.Error("a frozen module was saved")
				}
			})
		}
	}
}

func argmax(r []float32) int {
	return slices.Index(r, slices.Max(r))
}
