package golden

import (
	"strings"
	"testing"
)

const topN = "FILE,PAGE,CLASS-1,SCORE-1,CLASS-2,SCORE-2,CLASS-3,SCORE-3\n" +
	"DRAW/atrium,34,PHOTO,0.1460,LINE_P,0.1013,TEXT_T,0.1012\n"

func TestCompare(t *testing.T) {
	record := `{"category": "PHOTO", "category_confidence": 0.1460474580526352, "page_index": 34}` + "\n"
	cases := []struct {
		name, got, want string
		ok              bool
	}{
		{"identical", topN, topN, true},
		{"last digit flipped", strings.Replace(topN, "0.1460", "0.1461", 1), topN, true},
		{"beyond the tolerance", strings.Replace(topN, "0.1460", "0.1463", 1), topN, false},
		{"tie broken the other way", strings.Replace(topN, "LINE_P,0.1013,TEXT_T,0.1012", "TEXT_T,0.1013,LINE_P,0.1012", 1), topN, true},
		{"swap of classes that are no tie", strings.Replace(topN, "PHOTO,0.1460,LINE_P", "LINE_P,0.1460,PHOTO", 1), topN, false},
		{"other class", strings.Replace(topN, "TEXT_T", "TEXT_P", 1), topN, false},
		{"page number is exact", strings.Replace(topN, ",34,", ",35,", 1), topN, false},
		{"file name is exact", strings.Replace(topN, "atrium", "atrium2", 1), topN, false},
		{"missing row", strings.SplitAfter(topN, "\n")[0], topN, false},
		{"17 digits of a CPU", strings.Replace(record, "0.1460474580526352", "0.14604745805263497", 1), record, true},
		{"17 digits, far", strings.Replace(record, "0.1460474580526352", "0.1490474580526352", 1), record, false},
		{"JSON text", strings.Replace(record, "PHOTO", "DRAW", 1), record, false},
		{"JSON integer", strings.Replace(record, "34", "33", 1), record, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Compare([]byte(c.got), []byte(c.want), Tolerance)
			if (err == nil) != c.ok {
				t.Errorf("Compare = %v, want ok %v", err, c.ok)
			}
		})
	}
}

func TestPerturbStaysWithinTheTolerance(t *testing.T) {
	in := []byte(topN + `{"c": 0.1460474580526352}` + "\n")
	changed := false
	for seed := uint64(0); seed < 50; seed++ {
		p := Perturb(in, Tolerance, seed)
		if err := Compare(p, in, Tolerance); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		changed = changed || string(p) != string(in)
		if !strings.Contains(string(p), "DRAW/atrium,34,PHOTO,0.14") {
			t.Fatalf("seed %d: text or precision changed: %s", seed, p)
		}
	}
	if !changed {
		t.Error("Perturb never changed a digit")
	}
}
