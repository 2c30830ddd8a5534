package classify_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify"
)

// TestBF16AgreesWithFP32 runs the shipped demo ensemble over sample pages
// in fp32 and in bf16 on the CPU: the Top-1 of every member and of the
// ensemble mean agree on at least 90% of the pages, no member's
// probability differs by more than 0.2 and no mean's by more than 0.1
// (the figures, logged, are in docs/pageclass.md).
// fp16 on the CPU is refused.
func TestBF16AgreesWithFP32(t *testing.T) {
	if raceDetector {
		// Numerics of ten ensemble runs, no concurrency of their own:
		// minutes under the race detector for nothing it could find.
		t.Skip("arithmetic only: not run under the race detector")
	}
	folders, err := classify.DemoEnsemble("../../../weights/demo")
	if err != nil {
		t.Skip("no shipped demo ensemble:", err)
	}
	if _, err := classify.LoadAllAs(folders[:1], "cpu", torch.FP16); err == nil || !strings.Contains(err.Error(), "CUDA only") {
		t.Errorf("fp16 on the CPU: %v, want an error saying it runs on CUDA only", err)
	}
	var files []string
	for i, p := range samplePages(t) { // categories in turn
		if i%7 == 0 && len(files) < 24 {
			files = append(files, p)
		}
	}
	run := func(p torch.Precision) []classify.Page {
		ms, err := classify.LoadAllAs(folders, "cpu", p)
		if err != nil {
			t.Fatal(err)
		}
		defer classify.CloseAll(ms)
		for _, m := range ms {
			if m.Precision != p {
				t.Fatalf("%s: Precision %v, want %v", m.Name, m.Precision, p)
			}
		}
		e, err := classify.NewEnsemble(ms...)
		if err != nil {
			t.Fatal(err)
		}
		return predict(t, e, files, classify.Options{})
	}
	ref, got := run(torch.FP32), run(torch.BF16)
	members := len(folders)
	same := make([]int, members+1) // per member, then the mean
	worst := make([]float64, members+1)
	for i := range ref {
		if ref[i].Err != nil || got[i].Err != nil {
			t.Fatalf("page %s: %v / %v", ref[i].Name, ref[i].Err, got[i].Err)
		}
		for k := 0; k <= members; k++ {
			a, b := ref[i].Mean, got[i].Mean
			if k < members {
				a, b = ref[i].Probs[k], got[i].Probs[k]
			}
			if slices.Index(a, slices.Max(a)) == slices.Index(b, slices.Max(b)) {
				same[k]++
			}
			for c := range a {
				worst[k] = math.Max(worst[k], math.Abs(a[c]-b[c]))
			}
		}
	}
	t.Logf("bf16 vs fp32 on the CPU, %d pages: Top-1 same per member %v, of the mean %d; max probability difference per member %.4f, of the mean %.4f",
		len(ref), same[:members], same[members], worst[:members], worst[members])
	for k, n := range same {
		if float64(n) < 0.9*float64(len(ref)) {
			t.Errorf("column %d: Top-1 same on %d of %d pages (want >= 90%%)", k, n, len(ref))
		}
	}
	if m := slices.Max(worst[:members]); m > 0.2 || m == 0 {
		t.Errorf("max probability difference of a member %g (want 0 < d <= 0.2)", m)
	}
	if worst[members] > 0.1 {
		t.Errorf("max probability difference of the mean %g (want <= 0.1)", worst[members])
	}
}
