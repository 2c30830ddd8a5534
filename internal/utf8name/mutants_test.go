package utf8name

import "testing"

// Without this, a real U+FFFD in a name would be written as \xef\xbf\xbd
// beside a stray byte, and names not escaped by Escape (a backslash, an
// x and anything but two lower-case hex digits; an escape at the very
// end) would not come back as written.
func TestEscapeUnescapeEdges(t *testing.T) {
	if got, want := Escape("a\xff\uFFFDb"), `a\xff`+"\uFFFD"+"b"; got != want {
		t.Errorf("Escape = %q, want %q", got, want)
	}
	for _, c := range []struct{ in, want string }{
		{`z\xe1`, "z\xe1"},
		{`\x99`, "\x99"},
		{`\x9f\xa0`, "\x9f\xa0"},
		{`\xg1`, `\xg1`},
		{`\x1g`, `\x1g`},
		{`\xE1`, `\xE1`},
		{`\Xe1\xe1`, `\Xe1` + "\xe1"},
		{`\ye1\xe1`, `\ye1` + "\xe1"},
		{`\x`, `\x`},
	} {
		if got := Unescape(c.in); got != c.want {
			t.Errorf("Unescape(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Without this, characters just past the bidi ranges (U+202F, a narrow
// no-break space in French names; U+206A) would be dropped from names.
func TestIsBidiControlEdges(t *testing.T) {
	for _, r := range []rune{'\u202f', '\u206a', '\u2065', '\u2029', '\u061b', '\u200d'} {
		if IsBidiControl(r) {
			t.Errorf("IsBidiControl(%U) = true", r)
		}
	}
}
