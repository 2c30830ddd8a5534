package review

import (
	"encoding/json"
	"testing"
)

// TestRecord: the document record's category_review is the rounded review,
// member for member, in the same order.
func TestRecord(t *testing.T) {
	rot := FromOrientation([4]float64{0.05, 0.123456, 0.8, 0.026544})
	ink := Ink{Coverage: 0.0012345678, NearBlank: true}
	for _, tc := range []struct {
		name string
		page Page
	}{
		{"uncalibrated", Assess([][]float64{vec(map[string]float64{"TEXT": 0.7, "PHOTO": 0.3})}, vec(map[string]float64{"TEXT": 0.7, "PHOTO": 0.3}), Condition{}, nil)},
		{"condition", Assess([][]float64{vec(map[string]float64{"TEXT": 0.51234567, "PHOTO": 0.48765433})}, vec(map[string]float64{"TEXT": 0.51234567, "PHOTO": 0.48765433}), Condition{Ink: &ink, Rotation: &rot}, nil)},
		{"checked", Page{Doubt: Doubt{Top1: "TEXT", Agreement: 3, Models: 3, Margin: 0.333333, Entropy: 0.1}, NeedsReview: ptr(false), Reasons: []string{}, Calibration: "abc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.page.Rounded())
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(tc.page.Record())
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("Record:\n got %s\nwant %s", got, want)
			}
		})
	}
	var nilPage *Page
	if nilPage.Record() != nil {
		t.Error("Record of a nil page is not nil")
	}
}
