package xmlsplice

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode/utf32"
)

// TestDecodeRefusesUnreadEncodings: documents in EBCDIC and UTF-32 are
// refused naming the encoding, as a declared label this program does not
// know is; before, an EBCDIC document was refused as "not well-formed XML:
// line 1: invalid UTF-8" and a little-endian UTF-32 one read as UTF-16.
func TestDecodeRefusesUnreadEncodings(t *testing.T) {
	doc := func(label string) string {
		return `<?xml version="1.0" encoding="` + label + `"?>` + "\n<a>kostel</a>\n"
	}
	enc := func(e interface{ Bytes([]byte) ([]byte, error) }, s string) []byte {
		b, err := e.Bytes([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		name string
		src  []byte
		says string
	}{
		{"EBCDIC IBM037", enc(charmap.CodePage037.NewEncoder(), doc("IBM037")), "the document is in EBCDIC (its first bytes are <?xml in EBCDIC): an encoding this program does not read"},
		{"EBCDIC IBM1047", enc(charmap.CodePage1047.NewEncoder(), doc("IBM1047")), "EBCDIC"},
		{"UTF-32BE with BOM", enc(utf32.UTF32(utf32.BigEndian, utf32.UseBOM).NewEncoder(), doc("UTF-32")), "UTF-32 (its first bytes are a big-endian UTF-32 byte-order mark)"},
		{"UTF-32LE with BOM", enc(utf32.UTF32(utf32.LittleEndian, utf32.UseBOM).NewEncoder(), doc("UTF-32")), "UTF-32 (its first bytes are a little-endian UTF-32 byte-order mark)"},
		{"UTF-32BE", enc(utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM).NewEncoder(), doc("UTF-32BE")), "UTF-32 (its first bytes are < in big-endian UTF-32)"},
		{"UTF-32LE", enc(utf32.UTF32(utf32.LittleEndian, utf32.IgnoreBOM).NewEncoder(), doc("UTF-32LE")), "UTF-32 (its first bytes are < in little-endian UTF-32)"},
		{"UCS-4 2143", []byte{0x00, 0x00, '<', 0x00}, "UTF-32"},
		{"UCS-4 3412", []byte{0x00, '<', 0x00, 0x00}, "UTF-32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Decode(c.src)
			if !errors.Is(err, ErrEncoding) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("got %v, want an encoding error saying %q", err, c.says)
			}
		})
	}
}
