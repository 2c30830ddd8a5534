// Package roman writes and reads Roman numerals in their usual form
// (upper case, subtractive: IV, XC, MCMXCIV), as PDF page labels and
// printed page numbers use them.
package roman

import (
	"strconv"
	"strings"
)

var digits = []struct {
	v int
	s string
}{{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"}, {50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"}}

// Format writes v in upper-case Roman numerals, thousands as repeated M
// (at most 64 letters); a v of 0 or less in decimal digits.
func Format(v int) string {
	if v <= 0 {
		return strconv.Itoa(v)
	}
	var b strings.Builder
	for _, d := range digits {
		for ; v >= d.v && b.Len() < 64; v -= d.v {
			b.WriteString(d.s)
		}
	}
	return b.String()
}

// Parse is the value of w, an upper-case Roman numeral below 4000 in its
// usual (shortest, subtractive) form; 0 for anything else.
func Parse(w string) int {
	n, rest := 0, w
	for _, d := range digits {
		for strings.HasPrefix(rest, d.s) {
			n += d.v
			rest = rest[len(d.s):]
		}
	}
	if rest != "" || n == 0 || n >= 4000 || Format(n) != w {
		return 0
	}
	return n
}
