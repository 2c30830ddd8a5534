// Package utf8name writes file names as valid UTF-8, the one form every
// table, log and run metadata of both tools gives a name whose bytes are
// not UTF-8 (a Windows-1250 name unpacked on Linux, "z\xe1pis.png"): CSV
// files and JSON documents are UTF-8, and a stray byte would otherwise be
// written raw in one place and as U+FFFD in another.
package utf8name

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape returns s with each byte that is not part of valid UTF-8 written
// as \xNN (two lower-case hex digits); valid UTF-8 is returned as it is.
// The escape is for reading, not for finding the file again: a name that
// holds the four characters "\xe1" itself reads the same, and the tools
// that key rows by name refuse the second of two such names, naming it.
func Escape(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, "\\x%02x", s[0])
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

// Unescape undoes Escape: each \xNN (two lower-case hex digits) becomes
// the byte NN. A name that held the text "\xe1" itself comes back as the
// byte; a caller looking for a file tries the name as written first.
func Unescape(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && isLowerHex(s[i+2]) && isLowerHex(s[i+3]) {
			b.WriteByte(hexVal(s[i+2])<<4 | hexVal(s[i+3]))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }

func hexVal(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// IsBidiControl reports whether r is a Unicode bidirectional control: the
// marks (U+061C, U+200E, U+200F), embeddings and overrides (U+202A–U+202E)
// and isolates (U+2066–U+2069). In a file name shown or offered for
// saving they reorder what follows them ("report\u202Efdp.exe" reads
// "reportexe.pdf"); they have no glyph, so a name reads as it is without
// them.
func IsBidiControl(r rune) bool {
	switch {
	case r == '\u061c', r == '\u200e', r == '\u200f', r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069':
		return true
	}
	return false
}
