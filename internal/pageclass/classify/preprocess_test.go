package classify_test

import (
	"path/filepath"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio"
)

// TestPreprocessEachMatches: the ensemble's shared preprocessing (one resize
// per input size, then each model's normalisation) gives every demo model
// exactly the input its own Preprocess gives, on real sample pages.
func TestPreprocessEachMatches(t *testing.T) {
	demo, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		t.Skipf("no demo ensemble: %v", err)
	}
	ms, err := classify.LoadAll(demo, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer classify.CloseAll(ms)
	sizes := map[int]int{}
	for _, m := range ms {
		sizes[m.Size()]++
	}
	shared := false
	for _, n := range sizes {
		shared = shared || n > 1
	}
	if !shared {
		t.Fatalf("the demo ensemble has no two models of one size (%v): the shared resize is not exercised", sizes)
	}
	for _, p := range classifytest.Pages(t, 1) {
		doc, err := imageio.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, err := doc.Page(0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := classify.PreprocessEach(img, ms)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range ms {
			want, err := m.Preprocess(img)
			if err != nil {
				t.Fatal(err)
			}
			if len(got[i]) != len(want) {
				t.Fatalf("%s, %s: %d values, want %d", filepath.Base(p), m.Name, len(got[i]), len(want))
			}
			for k := range want {
				if got[i][k] != want[k] {
					t.Errorf("%s, %s: value %d is %v, want %v", filepath.Base(p), m.Name, k, got[i][k], want[k])
					break
				}
			}
		}
	}
}
