package xmlsplice

import (
	"fmt"
	"strings"
	"testing"
)

// firstElement parses src and returns its document and the element named
// local (the first one, in document order).
func firstElement(t *testing.T, src, local string) (*Document, *Node) {
	t.Helper()
	doc, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("%q: %v", src, err)
	}
	var found *Node
	doc.Root.Walk(func(n *Node) bool {
		if found == nil && n.Name.Local == local {
			found = n
		}
		return found == nil
	})
	if found == nil {
		t.Fatalf("%q: no <%s>", src, local)
	}
	return doc, found
}

// TestText: Text gives an element's own character data, and says it is
// not plain text (ok false) when the element holds child elements,
// comments or processing instructions; CDATA sections are text. Failing,
// a translator would take a comment's words for the element's text (and
// translate them into it), or replace an element's content that is not
// one text, losing its comments and children.
func TestText(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		text      string
		ok        bool
	}{
		{"text", `<a>x &amp; y</a>`, "x & y", true},
		{"empty-element tag", `<a/>`, "", true},
		{"empty", `<a></a>`, "", true},
		{"CDATA is text", `<a>x<![CDATA[<y>]]>z</a>`, "x<y>z", true},
		{"comment", `<a>x<!--c--></a>`, "x", false},
		{"only a comment", `<a><!--c--></a>`, "", false},
		{"processing instruction", `<a>x<?pi d?></a>`, "x", false},
		{"child element", `<a>x<b>in</b>y</a>`, "xy", false},
		{"empty child element", `<a><b/></a>`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, a := firstElement(t, tc.src, "a")
			if text, ok := a.Text(); text != tc.text || ok != tc.ok {
				t.Errorf("Text() = %q, %v; want %q, %v", text, ok, tc.text, tc.ok)
			}
		})
	}
}

// TestSetTextRefusesMixedContent: SetText on an element that holds more
// than character data (child elements, a comment, a processing
// instruction) fails naming the element and its offset, and leaves the
// document as it was. Failing, replacing the text of such an element
// silently deleted its children, comments or processing instructions.
func TestSetTextRefusesMixedContent(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		keeps     string // what would be lost
	}{
		{"child element between text", `<r><a>x<b/>y</a></r>`, "<b/>"},
		{"only a child element", `<r><a><b>in</b></a></r>`, "<b>in</b>"},
		{"comment", `<r><a>x<!--c--></a></r>`, "<!--c-->"},
		{"processing instruction", `<r><a>x<?pi d?></a></r>`, "<?pi d?>"},
		{"CDATA and a child", `<r><a><![CDATA[x]]><b/></a></r>`, "<b/>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, a := firstElement(t, tc.src, "a")
			ed := NewEditor([]byte(tc.src))
			err := ed.SetText(a, "new")
			if err == nil {
				t.Fatalf("SetText accepted; the edited document would lose %s", tc.keeps)
			}
			if want := fmt.Sprintf("<a> at offset %d has mixed content", a.Start); !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
			if ed.Len() != 0 {
				t.Errorf("a refused SetText left %d edits pending", ed.Len())
			}
			if out, err := ed.Bytes(); err != nil || string(out) != tc.src {
				t.Errorf("document changed: %q (%v), want %q", out, err, tc.src)
			}
		})
	}
}

// TestIsChar: IsChar is the XML 1.0 production Char, at each edge of its
// ranges, and the escapers write U+FFFD for what it refuses. Failing,
// translated text with U+FFFE, U+FFFF, a surrogate or a control character
// was written as it was, and the output was not well-formed XML: no XML
// reader (ours included) would open it.
func TestIsChar(t *testing.T) {
	for _, tc := range []struct {
		r    rune
		want bool
	}{
		{-1, false},
		{0x0, false},
		{0x8, false},
		{0x9, true},
		{0xA, true},
		{0xB, false},
		{0xC, false},
		{0xD, true},
		{0xE, false},
		{0x1F, false},
		{0x20, true},
		{0xD7FF, true},
		{0xD800, false},
		{0xDFFF, false},
		{0xE000, true},
		{0xFFFD, true},
		{0xFFFE, false},
		{0xFFFF, false},
		{0x10000, true},
		{0x10FFFF, true},
		{0x110000, false},
	} {
		if got := IsChar(tc.r); got != tc.want {
			t.Errorf("IsChar(U+%04X) = %v, want %v", tc.r, got, tc.want)
		}
	}
	// Written into a document, each refused character is U+FFFD and the
	// document parses, in text and in attribute values.
	bad := "a\x00b\x08c\x0Bd\x1Fe\uFFFEf\uFFFFg"
	want := "a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFDf\uFFFDg"
	src := `<r><e x="1">old</e></r>`
	_, e := firstElement(t, src, "e")
	ed := NewEditor([]byte(src))
	ed.SetAttr(e.Attrs[0], bad)
	ed.AddAttr(e, "y", bad)
	if err := ed.SetText(e, bad); err != nil {
		t.Fatal(err)
	}
	out, err := ed.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	_, e2 := firstElement(t, string(out), "e")
	text, _ := e2.Text()
	x, _ := e2.Attr("", "x")
	y, _ := e2.Attr("", "y")
	if text != want || x.Value != want || y.Value != want {
		t.Errorf("read back text %q, x %q, y %q; want %q", text, x.Value, y.Value, want)
	}
}

// TestEditsAtOneOffsetKeepCallOrder: edits at the same offset come out in
// the order they were made, whatever the order of edits elsewhere.
// Failing, elements appended one after another at the same place came out
// reversed (the last first), and attributes added to one element were
// written in the opposite order.
func TestEditsAtOneOffsetKeepCallOrder(t *testing.T) {
	src := `<r><e/></r>`
	_, e := firstElement(t, src, "e")
	for _, tc := range []struct {
		name string
		edit func(ed *Editor)
		want string
	}{
		{"inserts", func(ed *Editor) {
			ed.Insert(e.End, "<a/>")
			ed.Insert(e.End, "<b/>")
			ed.Insert(e.End, "<c/>")
		}, `<r><e/><a/><b/><c/></r>`},
		{"inserts among others", func(ed *Editor) {
			ed.Insert(e.End, "1")
			ed.Insert(e.Start, "x")
			ed.Insert(e.End, "2")
			ed.Insert(e.Start, "y")
			ed.Insert(e.End, "3")
		}, `<r>xy<e/>123</r>`},
		{"insert, then a replacement from the same offset", func(ed *Editor) {
			ed.Insert(e.Start, "<d/>")
			ed.Replace(e.Start, e.End, "<f/>")
		}, `<r><d/><f/></r>`},
		{"attributes added", func(ed *Editor) {
			ed.AddAttr(e, "a", "1")
			ed.AddAttr(e, "b", "2")
			ed.AddAttr(e, "c", "3")
		}, `<r><e a="1" b="2" c="3"/></r>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ed := NewEditor([]byte(src))
			tc.edit(ed)
			out, err := ed.Bytes()
			if err != nil || string(out) != tc.want {
				t.Errorf("got %q (%v), want %q", out, err, tc.want)
			}
		})
	}
}

// TestAddAttrEscapes: AddAttr writes the value double-quoted and escaped
// (the double quote, &, <, >, and tab, line feed and carriage return as
// character references), and a parser reads back the very value given.
// Failing, a value with a double quote ended the attribute early (the
// document did not parse) or a line break came back as a space.
func TestAddAttrEscapes(t *testing.T) {
	src := "<r><e k='v'/></r>"
	for _, tc := range []struct {
		name, value, raw string
	}{
		{"double quote", `say "hi"`, `say &quot;hi&quot;`},
		{"apostrophe stays", `it's`, `it's`},
		{"markup", `a & <b>`, `a &amp; &lt;b&gt;`},
		{"carriage return", "a\rb", "a&#13;b"},
		{"CRLF", "a\r\nb", "a&#13;&#10;b"},
		{"tab and line feed", "a\tb\nc", "a&#9;b&#10;c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, e := firstElement(t, src, "e")
			ed := NewEditor([]byte(src))
			ed.AddAttr(e, "n", tc.value)
			out, err := ed.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			if want := `<r><e k='v' n="` + tc.raw + `"/></r>`; string(out) != want {
				t.Errorf("got %q, want %q", out, want)
			}
			doc, err := Parse(out)
			if err != nil {
				t.Fatalf("the edited document does not parse: %v\n%s", err, out)
			}
			if a, ok := doc.Root.Elements()[0].Elements()[0].Attr("", "n"); !ok || a.Value != tc.value {
				t.Errorf("read back %q (found %v), want %q", a.Value, ok, tc.value)
			}
		})
	}
}

// TestEscapeCarriageReturn: a carriage return is written &#13;, in
// attribute values of either quote and in element content, so that a
// parser's end-of-line handling does not turn it into a line feed (or, in
// an attribute, a space). Failing, a CR in a value came back changed.
func TestEscapeCarriageReturn(t *testing.T) {
	for _, tc := range []struct {
		quote byte
		want  string
	}{
		{0, "a&#13;b&#13;\nc"},
		{'"', "a&#13;b&#13;&#10;c"},
		{'\'', "a&#13;b&#13;&#10;c"},
	} {
		if got := escape("a\rb\r\nc", tc.quote); got != tc.want {
			t.Errorf("escape(%q, %q) = %q, want %q", "a\rb\r\nc", tc.quote, got, tc.want)
		}
	}
	if got := EscapeText("x\ry"); got != "x&#13;y" {
		t.Errorf("EscapeText: %q", got)
	}
	// Read back, through a single-quoted attribute SetAttr rewrote.
	src := "<r a='1'/>"
	doc, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ed := NewEditor([]byte(src))
	ed.SetAttr(doc.Root.Elements()[0].Attrs[0], "x\ry\r\n")
	out, err := ed.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	doc2, err := Parse(out)
	if err != nil {
		t.Fatalf("%q: %v", out, err)
	}
	if got := doc2.Root.Elements()[0].Attrs[0].Value; got != "x\ry\r\n" {
		t.Errorf("read back %q from %q", got, out)
	}
}
