package guard_test

import (
	"testing"

	"archivekit/internal/translate/guard"
)

// If broken: a reply at a limit of the guard (a source of exactly
// CopyMinWords words copied back; a reply exactly a quarter or four times
// as long as its source) is judged on the wrong side of it: the copy kept
// as a translation, or a fair reply untranslated.
func TestCheckBoundaries(t *testing.T) {
	for _, c := range []struct {
		name, src, out string
		want           guard.Reason // "" means accepted
	}{
		{"copy of CopyMinWords words", "hrob jáma sonda kůl", "hrob jáma sonda kůl", guard.Copy},
		{"copy of one word fewer", "hrob jáma sonda", "hrob jáma sonda", ""},
		{"a quarter as long", "abcdefgh", "ab", ""},
		{"under a quarter", "abcdefghijklmnopqrstuvwxyzabcdefghijklmn", "abcdefghi", guard.TooShort},
		{"four times as long", "abc", "hrob-sonda-x", ""},
		{"over four times", "abc", "hrob-sonda-xy", guard.TooLong},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := guard.Default.Check(c.src, c.out, "cs", "en")
			switch {
			case c.want == "" && r != nil:
				t.Errorf("rejected: %v", r)
			case c.want != "" && r == nil:
				t.Errorf("accepted, want %s", c.want)
			case r != nil && r.Reason != c.want:
				t.Errorf("reason %s (%v), want %s", r.Reason, r, c.want)
			}
		})
	}
}

// If broken: a reply repeating one word in a row, capitalised differently
// ("Graves graves GRAVES graves"), is accepted as a translation.
func TestCheckRepetitionIgnoresCase(t *testing.T) {
	long := "Záchranný archeologický výzkum odkryl dva hroby a jámu z doby bronzové u obce."
	r := guard.Default.Check(long, "The rescue excavation uncovered Graves graves GRAVES graves near the village.", "cs", "en")
	if r == nil || r.Reason != guard.Repetition {
		t.Errorf("got %v, want a repetition", r)
	}
}
