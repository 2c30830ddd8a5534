package difflib

import (
	"encoding/json"
	"os"
	"testing"
)

type vectors struct {
	Strings []struct {
		A, B     string
		Ratio    float64
		RatioRev float64 `json:"ratio_rev"`
	}
	Tokens []struct {
		A, B     []string
		Ratio    float64
		RatioRev float64 `json:"ratio_rev"`
	}
}

func load(t *testing.T) vectors {
	raw, err := os.ReadFile("testdata/ratio_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Strings) < 40 || len(v.Tokens) < 20 {
		t.Fatalf("too few vectors: %d strings, %d token lists", len(v.Strings), len(v.Tokens))
	}
	return v
}

// TestPythonParity compares with values computed by Python's difflib
// (test/gen_difflib_vectors.py); equality is exact.
func TestPythonParity(t *testing.T) {
	v := load(t)
	for i, c := range v.Strings {
		if got := StringRatio(c.A, c.B); got != c.Ratio {
			t.Errorf("strings[%d] ratio(%.30q..., %.30q...) = %v, want %v", i, c.A, c.B, got, c.Ratio)
		}
		if got := StringRatio(c.B, c.A); got != c.RatioRev {
			t.Errorf("strings[%d] reversed = %v, want %v", i, got, c.RatioRev)
		}
	}
	for i, c := range v.Tokens {
		if got := Ratio(c.A, c.B); got != c.Ratio {
			t.Errorf("tokens[%d] = %v, want %v", i, got, c.Ratio)
		}
		if got := Ratio(c.B, c.A); got != c.RatioRev {
			t.Errorf("tokens[%d] reversed = %v, want %v", i, got, c.RatioRev)
		}
	}
}

// TestAutojunk shows the heuristic at work: the 300 'a's are popular in b
// (300 > 1+303/100), so no match can start on them; only "xyz" matches.
func TestAutojunk(t *testing.T) {
	a := make([]byte, 0, 310)
	for i := 0; i < 300; i++ {
		a = append(a, 'a')
	}
	// Python: SequenceMatcher(None, "xyz"+"a"*300, "a"*300+"xyz").ratio() == 6/606
	b := string(a) + "xyz"
	a2 := "xyz" + string(a)
	if got, want := StringRatio(a2, b), 2.0*3/606; got != want {
		t.Errorf("autojunk ratio = %v, want %v", got, want)
	}
	// Below 200 elements the heuristic is off: 150 'a's match.
	short := string(a[:150])
	if got, want := StringRatio("xx"+short, short+"xx"), 2.0*150/304; got != want {
		t.Errorf("short ratio = %v, want %v", got, want)
	}
}

func TestMatchingBlocks(t *testing.T) {
	// Python: SequenceMatcher(None, "abxcd", "abcd").get_matching_blocks()
	// == [Match(a=0, b=0, size=2), Match(a=3, b=2, size=2), Match(a=5, b=4, size=0)]
	got := NewMatcher([]rune("abxcd"), []rune("abcd")).MatchingBlocks()
	want := []Match{{0, 0, 2}, {3, 2, 2}}
	if len(got) != len(want) {
		t.Fatalf("blocks = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("blocks = %v, want %v", got, want)
		}
	}
}

func BenchmarkStringRatio(b *testing.B) {
	x := "The submitted work was created by the creative processing of the results"
	y := "The submitted work was created by the creative processing"
	for i := 0; i < b.N; i++ {
		StringRatio(x, y)
	}
}

// TestSetA: re-using b's index for another a gives the same ratios.
func TestSetA(t *testing.T) {
	v := load(t)
	for i, c := range v.Strings {
		m := NewMatcher([]rune("unrelated first sequence"), []rune(c.B))
		m.Ratio()
		m.SetA([]rune(c.A))
		if got := m.Ratio(); got != c.Ratio {
			t.Errorf("strings[%d] after SetA = %v, want %v", i, got, c.Ratio)
		}
	}
}
