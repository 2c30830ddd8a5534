package train

import (
	"math"
	"strings"
	"testing"
)

// TestPerClassF1: F1 is computed from the counts, so that an exact value
// prints rounded as scikit-learn's does (TP 30, FP 1, FN 3: 60/64 =
// 0.9375, printed 0.938; it was 0.937); a category never predicted nor
// present has 0.
func TestPerClassF1(t *testing.T) {
	conf := make([][]int, 11)
	for i := range conf {
		conf[i] = make([]int, 11)
	}
	conf[0][0], conf[0][1] = 30, 3 // category 0: TP 30, FN 3
	conf[1][0], conf[1][1] = 1, 5  // category 0: FP 1
	got := perClass(conf)
	for _, tc := range []struct {
		c                     int
		precision, recall, f1 float64
	}{
		{0, 30.0 / 31, 30.0 / 33, 0.9375},
		{1, 5.0 / 8, 5.0 / 6, 10.0 / 14},
		{2, 0, 0, 0},
	} {
		s := got[tc.c]
		if math.Abs(s.Precision-tc.precision) > 1e-12 || math.Abs(s.Recall-tc.recall) > 1e-12 || math.Abs(s.F1-tc.f1) > 1e-12 {
			t.Errorf("category %d: %+v, want P %.4f R %.4f F1 %.4f", tc.c, s, tc.precision, tc.recall, tc.f1)
		}
	}
	r := &EvalResult{Revision: "v1.4", Pages: 39, PerClass: got}
	if line := strings.Fields(strings.Split(r.Report(), "\n")[2]); line[3] != "0.938" {
		t.Errorf("F1 of 0.9375 printed %s, want 0.938", line[3])
	}
}
