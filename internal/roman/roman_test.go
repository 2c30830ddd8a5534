package roman

import (
	"fmt"
	"testing"
)

func TestFormatParse(t *testing.T) {
	for _, c := range []struct {
		v int
		s string
	}{{1, "I"}, {4, "IV"}, {9, "IX"}, {14, "XIV"}, {40, "XL"}, {90, "XC"}, {1994, "MCMXCIV"}, {3999, "MMMCMXCIX"}} {
		if got := Format(c.v); got != c.s {
			t.Errorf("Format(%d) = %q, want %q", c.v, got, c.s)
		}
		if got := Parse(c.s); got != c.v {
			t.Errorf("Parse(%q) = %d, want %d", c.s, got, c.v)
		}
	}
	for _, w := range []string{"", "IIII", "IC", "VX", "xiv", "MMMM", "XIVa", "A"} {
		if got := Parse(w); got != 0 {
			t.Errorf("Parse(%q) = %d, want 0 (not a numeral in its usual form)", w, got)
		}
	}
	if got := Format(0); got != "0" {
		t.Errorf("Format(0) = %q", got)
	}
	if got := Format(1 << 40); len(got) != 64 {
		t.Errorf("Format of a huge number: %d letters, want 64 at most", len(got))
	}
}

func ExampleFormat() {
	fmt.Println(Format(1898), Parse("XLV"))
	// Output: MDCCCXCVIII 45
}
