package xmlsplice

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// Encoding is the character encoding of a document as Decode found it;
// Encode writes an edited document back in it.
type Encoding struct {
	// Name is the encoding's label as the document declares it ("UTF-8"
	// when it declares none).
	Name string

	enc encoding.Encoding // nil: UTF-8, no transcoding
	// labelAt is the offset, in the decoded text, of the declaration's
	// encoding value, which Decode replaced by "UTF-8"; -1 when none.
	labelAt int
	label   string
}

// UTF8 reports whether the document is UTF-8 (no transcoding).
func (e *Encoding) UTF8() bool { return e.enc == nil }

var (
	utf16BE = unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	utf16LE = unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	// declEncRE finds the encoding pseudo-attribute of an XML declaration
	// at the start of a document (after an optional BOM).
	declEncRE = regexp.MustCompile(`^(?:\x{FEFF})?<\?xml\s[^?>]*?\bencoding\s*=\s*(?:"([^"]*)"|'([^']*)')`)
)

// lookup finds the encoding of a declared label: IANA names first (so that
// ISO-8859-1 is Latin-1, not windows-1252 as in HTML), then the WHATWG
// labels.
func lookup(label string) (encoding.Encoding, error) {
	if e, err := ianaindex.IANA.Encoding(label); err == nil && e != nil {
		return e, nil
	}
	if e, err := htmlindex.Get(label); err == nil && e != nil {
		return e, nil
	}
	return nil, fmt.Errorf("%w: %q is not one this program reads", ErrEncoding, label)
}

// Decode returns src as UTF-8 text for Parse, and its Encoding. A UTF-16
// document is recognised by its byte-order mark or its first characters, a
// UTF-32 or EBCDIC one (refused) by its first bytes;
// any other by the encoding its XML declaration names (UTF-8 when it names
// none). The decoded text's declaration reads encoding="UTF-8", so Parse
// accepts it; Encode puts the declared label back. A document whose bytes
// do not survive decoding and re-encoding unchanged, or whose encoding is
// unknown, is an error wrapping ErrEncoding that names the encoding.
func Decode(src []byte) ([]byte, *Encoding, error) {
	if err := unread(src); err != nil {
		return nil, nil, err
	}
	var enc encoding.Encoding
	switch {
	case bytes.HasPrefix(src, []byte{0xFE, 0xFF}), bytes.HasPrefix(src, []byte{0x00, '<', 0x00, '?'}):
		enc = utf16BE
	case bytes.HasPrefix(src, []byte{0xFF, 0xFE}), bytes.HasPrefix(src, []byte{'<', 0x00, '?', 0x00}):
		enc = utf16LE
	}
	text := src
	if enc != nil {
		var err error
		if text, err = enc.NewDecoder().Bytes(src); err != nil {
			return nil, nil, fmt.Errorf("%w: UTF-16: %v", ErrEncoding, err)
		}
	}
	e := &Encoding{Name: "UTF-8", labelAt: -1, enc: enc}
	if enc != nil {
		e.Name = "UTF-16"
	}
	m := declEncRE.FindSubmatchIndex(text)
	if m == nil {
		if enc == nil {
			return src, e, nil
		}
		return roundTrip(src, text, e)
	}
	start, end := m[2], m[3]
	if start < 0 {
		start, end = m[4], m[5]
	}
	e.Name, e.label, e.labelAt = string(text[start:end]), string(text[start:end]), start
	switch low := strings.ToLower(e.Name); {
	case enc != nil:
		if !strings.HasPrefix(low, "utf-16") && low != "utf16" {
			return nil, nil, fmt.Errorf("%w: %q declared in a UTF-16 document", ErrEncoding, e.Name)
		}
	case low == "utf-8":
		return src, &Encoding{Name: e.Name, labelAt: -1}, nil
	case low == "utf8":
		// A common spelling that encoding/xml refuses: the text is UTF-8
		// already; only the label is swapped for Parse and put back.
	case strings.HasPrefix(low, "utf-16"):
		return nil, nil, fmt.Errorf("%w: %q declared, but the document has no UTF-16 byte-order mark and is not UTF-16", ErrEncoding, e.Name)
	case bytes.HasPrefix(src, utf8BOM):
		return nil, nil, fmt.Errorf("%w: %q declared, but the document starts with a UTF-8 byte-order mark: its bytes are UTF-8 (correct the declaration to UTF-8)", ErrEncoding, e.Name)
	default:
		var err error
		if enc, err = lookup(e.Name); err != nil {
			return nil, nil, err
		}
		if _, single := enc.(*charmap.Charmap); single && looksUTF8(src) {
			// Every byte decodes in a one-byte encoding, so UTF-8 text
			// declared as one would be read as other letters ("„" as
			// "â€ž") and written back so, silently.
			return nil, nil, fmt.Errorf("%w: %q declared, but the document's bytes are not %s; they read as UTF-8 (correct the declaration to UTF-8?)", ErrEncoding, e.Name, e.Name)
		}
		if text, err = enc.NewDecoder().Bytes(src); err != nil {
			return nil, nil, fmt.Errorf("%w: %q: %v", ErrEncoding, e.Name, err)
		}
		e.enc = enc
		// The label is ASCII, so its offset is the same in the decoded text.
	}
	out := make([]byte, 0, len(text))
	out = append(out, text[:e.labelAt]...)
	out = append(out, "UTF-8"...)
	out = append(out, text[end:]...)
	return roundTrip(src, out, e)
}

// unreadSignatures are the first bytes of documents in encodings this
// program does not read (XML 1.0, appendix F): UTF-32 in its four byte
// orders, with a byte-order mark or starting "<", and EBCDIC starting
// "<?xm". Without them such a document was taken for UTF-8 and refused as
// not well-formed ("invalid UTF-8"), or a UTF-32LE one for UTF-16LE.
var unreadSignatures = []struct {
	prefix []byte
	what   string
}{
	{[]byte{0x00, 0x00, 0xFE, 0xFF}, "UTF-32 (its first bytes are a big-endian UTF-32 byte-order mark)"},
	{[]byte{0xFF, 0xFE, 0x00, 0x00}, "UTF-32 (its first bytes are a little-endian UTF-32 byte-order mark)"},
	{[]byte{0x00, 0x00, 0xFF, 0xFE}, "UTF-32 (its first bytes are a UTF-32 byte-order mark in the unusual order 2143)"},
	{[]byte{0xFE, 0xFF, 0x00, 0x00}, "UTF-32 (its first bytes are a UTF-32 byte-order mark in the unusual order 3412)"},
	{[]byte{0x00, 0x00, 0x00, '<'}, "UTF-32 (its first bytes are < in big-endian UTF-32)"},
	{[]byte{'<', 0x00, 0x00, 0x00}, "UTF-32 (its first bytes are < in little-endian UTF-32)"},
	{[]byte{0x00, 0x00, '<', 0x00}, "UTF-32 (its first bytes are < in UTF-32 of the unusual order 2143)"},
	{[]byte{0x00, '<', 0x00, 0x00}, "UTF-32 (its first bytes are < in UTF-32 of the unusual order 3412)"},
	{[]byte{0x4C, 0x6F, 0xA7, 0x94}, "EBCDIC (its first bytes are <?xml in EBCDIC)"},
}

// unread returns an error wrapping ErrEncoding, naming the encoding, when
// src starts with the signature of an encoding this program does not read.
func unread(src []byte) error {
	for _, s := range unreadSignatures {
		if bytes.HasPrefix(src, s.prefix) {
			return fmt.Errorf("%w: the document is in %s: an encoding this program does not read", ErrEncoding, s.what)
		}
	}
	return nil
}

// looksUTF8 says whether src is valid UTF-8 with at least one character
// beyond ASCII: text in a one-byte encoding with letters beyond ASCII is
// almost never that (its accented letters would each have to be followed
// by the right continuation bytes).
func looksUTF8(src []byte) bool {
	for _, c := range src {
		if c >= 0x80 {
			return utf8.Valid(src)
		}
	}
	return false
}

// utf8BOM is UTF-8's byte-order mark.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// roundTrip checks that text encodes back to src exactly.
func roundTrip(src, text []byte, e *Encoding) ([]byte, *Encoding, error) {
	if !utf8.Valid(text) {
		return nil, nil, fmt.Errorf("%w: %q: the document does not decode to valid text", ErrEncoding, e.Name)
	}
	back, err := e.Encode(text)
	if err != nil || !bytes.Equal(back, src) {
		return nil, nil, fmt.Errorf("%w: %q: the document's bytes do not survive decoding and re-encoding unchanged", ErrEncoding, e.Name)
	}
	return text, e, nil
}

// Encode returns the decoded (and edited) text doc in the document's
// encoding, with its declared label restored. Characters the encoding
// cannot represent (only edits can bring them) are written as character
// references, which is valid in the attribute values and text that
// editors change.
func (e *Encoding) Encode(doc []byte) ([]byte, error) {
	if e.labelAt >= 0 {
		if !bytes.HasPrefix(doc[e.labelAt:], []byte("UTF-8")) {
			return nil, errors.New("xmlsplice: the XML declaration was edited; cannot restore its encoding")
		}
		fixed := make([]byte, 0, len(doc))
		fixed = append(fixed, doc[:e.labelAt]...)
		fixed = append(fixed, e.label...)
		doc = append(fixed, doc[e.labelAt+len("UTF-8"):]...)
	}
	if e.enc == nil {
		return doc, nil
	}
	out, err := encoding.HTMLEscapeUnsupported(e.enc.NewEncoder()).Bytes(doc)
	if err != nil {
		return nil, fmt.Errorf("xmlsplice: encoding to %s: %w", e.Name, err)
	}
	return out, nil
}
