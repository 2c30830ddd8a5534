package review

import (
	"strings"
	"testing"
)

// TestShortfall: what a run says of a calibration whose target was not
// reached matches what it does: with a cap on the review rate the closest
// thresholds flag pages as usual (not every page); without one every page
// is flagged; a reached target says nothing.
func TestShortfall(t *testing.T) {
	prec, capped, none := 0.43, 0.3, 1.0
	for _, c := range []struct {
		name string
		a    Applied
		want []string // substrings; nil: ""
		not  string
	}{
		{"reached", Applied{Target: 0.9, Reachable: true, MaxReviewRate: &capped}, nil, ""},
		{"capped", Applied{Target: 0.9, MaxReviewRate: &capped, Result: Point{Pages: 20, Precision: &prec}},
			[]string{"target precision 0.90", "at most 30% of pages", "right 0.43 of the time, 20 pages", "less reliable", "pageclass --eval --calibrate -m MODELS"}, "every page"},
		{"no cap", Applied{Target: 0.9, MaxReviewRate: &none}, []string{"every page is flagged", "pageclass --eval --calibrate"}, "at most"},
		{"no cap recorded", Applied{Target: 0.9}, []string{"every page is flagged"}, "at most"},
	} {
		got := c.a.Shortfall()
		if c.want == nil && got != "" {
			t.Errorf("%s: %q, want nothing", c.name, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		if c.not != "" && strings.Contains(got, c.not) {
			t.Errorf("%s: %q says %q", c.name, got, c.not)
		}
	}
}
