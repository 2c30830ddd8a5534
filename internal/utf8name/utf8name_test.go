package utf8name

import (
	"fmt"
	"testing"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"zápis.png", "zápis.png"},
		{"z\xe1pis.png", `z\xe1pis.png`},
		{"\xff\xfe", `\xff\xfe`},
		{"ž\xe9", `ž\xe9`},
		{"", ""},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func ExampleEscape() {
	// A Windows-1250 name (0xE1 is "á") read on a UTF-8 system.
	fmt.Println(Escape("z\xe1pis-1.png"))
	// Output: z\xe1pis-1.png
}

// TestUnescape: Unescape gives back the bytes Escape wrote.
func TestUnescape(t *testing.T) {
	for _, in := range []string{"\x8e\xe1dost.alto.xml", "zápis.png", "a\xffb", "plain", "end\\x9"} {
		if got := Unescape(Escape(in)); got != in {
			t.Errorf("Unescape(Escape(%q)) = %q", in, got)
		}
	}
}

func TestIsBidiControl(t *testing.T) {
	for r, want := range map[rune]bool{
		'\u202e': true, '\u202a': true, '\u2066': true, '\u2069': true, '\u200e': true, '\u200f': true, '\u061c': true,
		'a': false, 'ž': false, '\u200d': false /* a joiner: scripts need it */, '\u2070': false, '\u2029': false,
	} {
		if got := IsBidiControl(r); got != want {
			t.Errorf("IsBidiControl(%U) = %v, want %v", r, got, want)
		}
	}
}
