package xmlsplice

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
)

func mustEncode(t *testing.T, enc interface{ Bytes([]byte) ([]byte, error) }, s string) []byte {
	t.Helper()
	b, err := enc.Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeEditEncode: documents declared windows-1252, ISO-8859-2 and
// UTF-16 (both byte orders) decode, take an edit and come back in their
// own encoding with every other byte unchanged; a character the encoding
// lacks becomes a character reference.
func TestDecodeEditEncode(t *testing.T) {
	doc := func(label, word string) string {
		return `<?xml version="1.0" encoding="` + label + `"?>` + "\r\n" + `<alto><String CONTENT="` + word + `" HPOS="1"/><!-- ` + word + ` --></alto>` + "\r\n"
	}
	for _, c := range []struct {
		name, label, word, repl string
		enc                     interface{ Bytes([]byte) ([]byte, error) }
		bom                     string
	}{
		{"windows-1252", "windows-1252", "Kirchenbücher – né", "churches “é” ř", charmap.Windows1252.NewEncoder(), ""},
		{"ISO-8859-2", "ISO-8859-2", "Kostelní kniha žďár", "church book – ž", charmap.ISO8859_2.NewEncoder(), ""},
		{"ISO-8859-1 is Latin-1", "iso-8859-1", "café", "€ coffee", charmap.ISO8859_1.NewEncoder(), ""},
		{"UTF-16LE with BOM", "UTF-16", "kostel žďár", "church ✓", unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewEncoder(), "\ufeff"},
		{"UTF-16BE with BOM", "UTF-16", "kostel", "church", unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewEncoder(), "\ufeff"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := mustEncode(t, c.enc, c.bom+doc(c.label, c.word))
			text, enc, err := Decode(src)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.EqualFold(enc.Name, c.label) || enc.UTF8() {
				t.Fatalf("encoding %q (utf8 %v)", enc.Name, enc.UTF8())
			}
			d, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			var str *Node
			d.Root.Walk(func(n *Node) bool {
				if n.Name.Local == "String" {
					str = n
				}
				return true
			})
			a, _ := str.Attr("", "CONTENT")
			if a.Value != c.word {
				t.Fatalf("CONTENT decoded as %q, want %q", a.Value, c.word)
			}
			// No edit: the same bytes.
			same, err := enc.Encode(text)
			if err != nil || !bytes.Equal(same, src) {
				t.Fatalf("round trip changed the bytes (%v)", err)
			}
			ed := NewEditor(text)
			ed.SetAttr(a, c.repl)
			edited, _ := ed.Bytes()
			out, err := enc.Encode(edited)
			if err != nil {
				t.Fatal(err)
			}
			// Everything but the value is the same, in the same encoding.
			pre, post := mustEncode(t, c.enc, c.bom+strings.SplitAfter(doc(c.label, c.word), `CONTENT="`)[0]), mustEncode(t, c.enc, `" HPOS="1"/><!-- `+c.word+` --></alto>`+"\r\n")
			if !bytes.HasPrefix(out, pre) || !bytes.HasSuffix(out, post) {
				t.Fatalf("bytes outside the value changed: %q", out)
			}
			back, enc2, err := Decode(out)
			if err != nil || enc2.Name != enc.Name {
				t.Fatalf("output does not decode: %v", err)
			}
			d2, err := Parse(back)
			if err != nil {
				t.Fatal(err)
			}
			var got string
			d2.Root.Walk(func(n *Node) bool {
				if v, ok := n.Attr("", "CONTENT"); ok {
					got = v.Value
				}
				return true
			})
			if got != c.repl {
				t.Fatalf("translated value reads %q, want %q", got, c.repl)
			}
		})
	}
}

func TestDecodeRefusesUnknownEncodings(t *testing.T) {
	for _, c := range []struct{ src, says string }{
		{`<?xml version="1.0" encoding="x-klingon"?><a/>`, `"x-klingon"`},
		{`<?xml version="1.0" encoding="UTF-16"?><a/>`, `"UTF-16" declared, but the document has no UTF-16 byte-order mark`},
		// Bytes that contradict the declaration are named as such (they
		// were called an unsupported encoding).
		{"\ufeff<?xml version=\"1.0\" encoding=\"ISO-8859-2\"?><a>ž</a>", `"ISO-8859-2" declared, but the document starts with a UTF-8 byte-order mark`},
		{"<?xml version=\"1.0\" encoding=\"windows-1250\"?><a>\u201eK\u201c</a>", `"windows-1250" declared, but the document's bytes are not windows-1250; they read as UTF-8`},
	} {
		_, _, err := Decode([]byte(c.src))
		if !errors.Is(err, ErrEncoding) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: got %v", c.src, err)
		}
	}
	// UTF-8, declared or not, is passed through as it is.
	for _, s := range []string{`<a/>`, `<?xml version="1.0" encoding="utf-8"?><a/>`, "\ufeff<a>ž</a>"} {
		text, enc, err := Decode([]byte(s))
		if err != nil || string(text) != s || !enc.UTF8() {
			t.Errorf("%q: %q %v", s, text, err)
		}
	}
}

// TestUTF8Spellings: a document declaring encoding="UTF8" (no hyphen, a
// common spelling and a WHATWG label) parses, and an edited copy keeps its
// declaration byte for byte; before, it was refused as an unsupported
// encoding.
func TestUTF8Spellings(t *testing.T) {
	for _, label := range []string{"UTF8", "utf8", "UTF-8", "utf-8"} {
		src := []byte(`<?xml version="1.0" encoding="` + label + `"?><alto><String CONTENT="žďár"/></alto>`)
		text, enc, err := Decode(src)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if !enc.UTF8() || enc.Name != label {
			t.Errorf("%s: encoding %q (utf8 %v)", label, enc.Name, enc.UTF8())
		}
		d, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		var a Attr
		d.Root.Walk(func(n *Node) bool {
			if v, ok := n.Attr("", "CONTENT"); ok {
				a = v
			}
			return true
		})
		ed := NewEditor(text)
		ed.SetAttr(a, "Žďár")
		edited, _ := ed.Bytes()
		out, err := enc.Encode(edited)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		if want := strings.Replace(string(src), "žďár", "Žďár", 1); string(out) != want {
			t.Errorf("%s: got %s, want %s", label, out, want)
		}
	}
}

// TestDecodeUTF16DeclaringAnother: a UTF-16 document (byte-order mark or
// first characters say so) whose declaration names an encoding other than
// UTF-16 is refused naming the label, as the bytes contradict it; one that
// names UTF-16, in any of its spellings, is read. Failing, such a document
// was read as UTF-16 and written back with a declaration that any other
// reader follows, reading the translation as garbage.
func TestDecodeUTF16DeclaringAnother(t *testing.T) {
	le := unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewEncoder()
	be := unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewEncoder()
	doc := func(label string) string {
		return `<?xml version="1.0" encoding="` + label + `"?>` + "\n<a>kostel</a>\n"
	}
	for _, c := range []struct {
		name, label, bom string
		enc              interface{ Bytes([]byte) ([]byte, error) }
		refused          bool
	}{
		{"LE with BOM, ISO-8859-1", "ISO-8859-1", "\ufeff", le, true},
		{"BE with BOM, windows-1250", "windows-1250", "\ufeff", be, true},
		{"LE with BOM, UTF-8", "UTF-8", "\ufeff", le, true},
		{"BE with BOM, utf8", "utf8", "\ufeff", be, true},
		{"LE without BOM, ISO-8859-2", "ISO-8859-2", "", le, true},
		{"BE without BOM, US-ASCII", "US-ASCII", "", be, true},
		{"LE with BOM, UTF-16", "UTF-16", "\ufeff", le, false},
		{"BE with BOM, utf-16", "utf-16", "\ufeff", be, false},
		{"LE without BOM, UTF-16LE", "UTF-16LE", "", le, false},
		{"BE without BOM, UTF-16BE", "UTF-16BE", "", be, false},
		{"LE with BOM, utf16", "utf16", "\ufeff", le, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := mustEncode(t, c.enc, c.bom+doc(c.label))
			text, enc, err := Decode(src)
			if c.refused {
				if want := `"` + c.label + `" declared in a UTF-16 document`; !errors.Is(err, ErrEncoding) || !strings.Contains(err.Error(), want) {
					t.Errorf("got %v (encoding %v), want an encoding error saying %q", err, enc, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if enc.Name != c.label || enc.UTF8() {
				t.Errorf("encoding %q (utf8 %v), want %q", enc.Name, enc.UTF8(), c.label)
			}
			d, err := Parse(text)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := d.Root.Elements()[0].Text(); got != "kostel" {
				t.Errorf("text %q", got)
			}
			if back, err := enc.Encode(text); err != nil || !bytes.Equal(back, src) {
				t.Errorf("round trip changed the bytes (%v)", err)
			}
		})
	}
}
