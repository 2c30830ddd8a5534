package xmlsplice

import "testing"

// TestLineBreak: a document's line break is the one it uses most (CRLF,
// CR alone or LF), LF when it has none.
func TestLineBreak(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"<a>\n<b/>\n</a>\n", "\n"},
		{"<a>\r\n<b/>\r\n</a>", "\r\n"},
		{"<a>\r<b/>\r</a>\r", "\r"},
		{"<a/>", "\n"},
		{"<?xml version='1.0'?>\n<a>\r\n<b/>\r\n</a>\r\n", "\r\n"},
		{"<a>\n<b>x\ry</b>\n</a>\n", "\n"},
	} {
		if got := LineBreak([]byte(c.src)); got != c.want {
			t.Errorf("LineBreak(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

// TestEscapeTextLineBreaks: each line break of a text, whatever it is, is
// written as the document's; a carriage return was written &#13;.
func TestEscapeTextLineBreaks(t *testing.T) {
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		if got, want := EscapeTextLines("a\r\nb\rc\nd&", nl), "a"+nl+"b"+nl+"c"+nl+"d&amp;"; got != want {
			t.Errorf("EscapeTextLines in %q: %q, want %q", nl, got, want)
		}
	}
}

// TestIndentCR: Indent takes the line break before a node in a CR-only
// document as in LF and CRLF ones (it found none there, and appended
// elements were glued onto the line).
func TestIndentCR(t *testing.T) {
	for _, nl := range []string{"\n", "\r\n", "\r"} {
		src := []byte("<a>" + nl + "\t<b/>" + nl + "</a>")
		d, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Root.Elements()[0].Elements()[0].Indent(src); got != nl+"\t" {
			t.Errorf("Indent in %q: %q", nl, got)
		}
	}
}
