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
