package xmlsplice

import (
	"archivekit/internal/testenv"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sharedData(t testing.TB, name string) string { return testenv.Path(t, name) }

func realFiles(t *testing.T) []string {
	files := []string{sharedData(t, "alto/MTX201501307_anon.alto.xml")}
	recs, _ := filepath.Glob(filepath.Join(sharedData(t, "records"), "*.xml"))
	if len(recs) != 15 {
		t.Fatalf("want 15 records, found %d", len(recs))
	}
	return append(files, recs...)
}

// decodeAttr decodes a raw attribute value the way an XML parser would.
func decodeAttr(t *testing.T, raw string, q byte) string {
	var v struct {
		A string `xml:"a,attr"`
	}
	if err := xml.Unmarshal([]byte("<x a="+string(q)+raw+string(q)+"/>"), &v); err != nil {
		t.Fatalf("decode %q: %v", raw, err)
	}
	return v.A
}

func TestRealDocumentsOffsets(t *testing.T) {
	for _, f := range realFiles(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// No edits: byte-identical.
		out, err := NewEditor(src).Bytes()
		if err != nil || !bytes.Equal(out, src) {
			t.Fatalf("%s: round trip without edits changed the document", f)
		}
		// Every recorded range points at the right bytes.
		nAttr := 0
		doc.Root.Walk(func(n *Node) bool {
			if src[n.Start] != '<' || src[n.End-1] != '>' {
				t.Fatalf("%s: element %s range [%d,%d) wrong", f, n.QName(), n.Start, n.End)
			}
			if !n.SelfClosing && !bytes.HasPrefix(src[n.EndTagStart:], []byte("</"+n.QName())) {
				t.Fatalf("%s: end tag of %s not at %d", f, n.QName(), n.EndTagStart)
			}
			for _, a := range n.Attrs {
				nAttr++
				if src[a.Start-1] != a.Quote || src[a.End] != a.Quote {
					t.Fatalf("%s: attribute %s quotes not at its range", f, a.Name.Local)
				}
				if got := decodeAttr(t, string(src[a.Start:a.End]), a.Quote); got != a.Value {
					t.Fatalf("%s: attribute %s: range decodes to %q, want %q", f, a.Name.Local, got, a.Value)
				}
			}
			if txt, ok := n.Text(); ok && !n.SelfClosing {
				var v struct {
					S string `xml:",chardata"`
				}
				if err := xml.Unmarshal([]byte("<x>"+string(src[n.StartTagEnd:n.EndTagStart])+"</x>"), &v); err != nil || v.S != txt {
					t.Fatalf("%s: text range of %s decodes to %q, want %q (%v)", f, n.QName(), v.S, txt, err)
				}
			}
			return true
		})
		if nAttr == 0 {
			t.Fatalf("%s: no attributes found", f)
		}
		// Rewriting every attribute and text with its own value re-escaped
		// changes no decoded value and keeps the document parseable.
		ed := NewEditor(src)
		doc.Root.Walk(func(n *Node) bool {
			for _, a := range n.Attrs {
				ed.SetAttr(a, a.Value)
			}
			if txt, ok := n.Text(); ok && !n.SelfClosing && len(n.Children) > 0 {
				if err := ed.SetText(n, txt); err != nil {
					t.Fatal(err)
				}
			}
			return true
		})
		out, err = ed.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		doc2, err := Parse(out)
		if err != nil {
			t.Fatalf("%s: re-escaped document does not parse: %v", f, err)
		}
		var a1, a2 []string
		doc.Root.Walk(func(n *Node) bool {
			for _, a := range n.Attrs {
				a1 = append(a1, a.Value)
			}
			return true
		})
		doc2.Root.Walk(func(n *Node) bool {
			for _, a := range n.Attrs {
				a2 = append(a2, a.Value)
			}
			return true
		})
		if strings.Join(a1, "\x00") != strings.Join(a2, "\x00") {
			t.Fatalf("%s: attribute values changed by re-escaping", f)
		}
	}
}

func TestRefusesDTDAndEntities(t *testing.T) {
	cases := []struct {
		name, src string
		dtd       bool
	}{
		{"doctype", `<?xml version="1.0"?><!DOCTYPE a><a/>`, true},
		{"internal subset", `<!DOCTYPE a [<!ENTITY e "boom">]><a>&e;</a>`, true},
		{"external entity", `<!DOCTYPE a [<!ENTITY x SYSTEM "http://example.invalid/x">]><a>&x;</a>`, true},
		{"undeclared entity", `<a>&nbsp;</a>`, false},
		{"unclosed", `<a><b></a>`, false},
		{"non utf-8", `<?xml version="1.0" encoding="ISO-8859-2"?><a/>`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.src))
			if err == nil {
				t.Fatal("accepted")
			}
			if c.dtd != errors.Is(err, ErrDTD) {
				t.Fatalf("error %v: ErrDTD=%v, want %v", err, errors.Is(err, ErrDTD), c.dtd)
			}
		})
	}
}

func TestPredefinedEntitiesAndCharRefs(t *testing.T) {
	doc, err := Parse([]byte(`<a x='&apos;&#x41;&quot;'>&lt;&amp;&#269;&gt;</a>`))
	if err != nil {
		t.Fatal(err)
	}
	a := doc.Root.Elements()[0]
	if a.Attrs[0].Value != `'A"` {
		t.Errorf("attr = %q", a.Attrs[0].Value)
	}
	if txt, _ := a.Text(); txt != "<&č>" {
		t.Errorf("text = %q", txt)
	}
}

func TestEdits(t *testing.T) {
	src := "\ufeff<?xml version=\"1.0\" standalone=\"yes\"?>\r\n<!-- c -->\r\n<r a='1'  b=\"2\">\r\n  <e k='v'>old</e>\r\n  <f/>\r\n</r>\r\n"
	doc, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := doc.Root.Elements()[0]
	e, f := r.Elements()[0], r.Elements()[1]
	ed := NewEditor([]byte(src))
	ed.SetAttr(r.Attrs[0], `it's "x"`)
	ed.SetAttr(r.Attrs[1], `it's "x" & <y>`)
	if err := ed.SetText(e, "a<b>&c\r"); err != nil {
		t.Fatal(err)
	}
	ed.AddAttr(e, "xml:lang", "cs")
	ed.AddAttr(f, "n", "1")
	ed.Insert(e.End, e.Indent([]byte(src))+"<e>new</e>")
	if err := ed.SetText(f, "x"); err == nil {
		t.Error("SetText on <f/> accepted")
	}
	out, err := ed.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	// The text's carriage return is a line break, written as the
	// document's (CRLF here).
	want := "\ufeff<?xml version=\"1.0\" standalone=\"yes\"?>\r\n<!-- c -->\r\n<r a='it&apos;s \"x\"'  b=\"it's &quot;x&quot; &amp; &lt;y&gt;\">\r\n  <e k='v' xml:lang=\"cs\">a&lt;b&gt;&amp;c\r\n</e>\r\n  <e>new</e>\r\n  <f n=\"1\"/>\r\n</r>\r\n"
	if string(out) != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
	ed.Replace(e.StartTagEnd+1, e.StartTagEnd+2, "zz")
	if _, err := ed.Bytes(); err == nil {
		t.Error("overlapping edit accepted")
	}
}

func TestEscape(t *testing.T) {
	cases := []struct {
		in    string
		quote byte
		want  string
	}{
		{"a&b<c>d", 0, "a&amp;b&lt;c&gt;d"},
		{`"'`, 0, `"'`},
		{`"'>`, '"', `&quot;'&gt;`},
		{`"'`, '\'', `"&apos;`},
		{"a\tb\nc", '"', "a&#9;b&#10;c"},
		{"a\tb\nc", 0, "a\tb\nc"},
		{"bad\x01\x00", 0, "bad\ufffd\ufffd"},
		{"Záchranný 𝄞", '"', "Záchranný 𝄞"},
	}
	for _, c := range cases {
		if got := escape(c.in, c.quote); got != c.want {
			t.Errorf("escape(%q, %q) = %q, want %q", c.in, c.quote, got, c.want)
		}
	}
	// Text written into a CRLF document ends its lines so too.
	if got := EscapeTextLines("a\nb<", "\r\n"); got != "a\r\nb&lt;" {
		t.Errorf("EscapeTextLines CRLF: %q", got)
	}
	crlf := []byte("<r>\r\n<e>x</e>\r\n</r>\r\n")
	doc, err := Parse(crlf)
	if err != nil {
		t.Fatal(err)
	}
	var e *Node
	doc.Root.Walk(func(n *Node) bool {
		if n.Kind == ElementNode && n.Name.Local == "e" {
			e = n
		}
		return true
	})
	ed := NewEditor(crlf)
	if err := ed.SetText(e, "one\ntwo"); err != nil {
		t.Fatal(err)
	}
	if out, _ := ed.Bytes(); string(out) != "<r>\r\n<e>one\r\ntwo</e>\r\n</r>\r\n" {
		t.Errorf("SetText in a CRLF document: %q", out)
	}
}

func TestNamespaces(t *testing.T) {
	doc, err := Parse([]byte(`<o xmlns="urn:o"><m xmlns:p="urn:p"><p:x/><y/></m></o>`))
	if err != nil {
		t.Fatal(err)
	}
	m := doc.Root.Elements()[0].Elements()[0]
	if got := m.Elements()[0].URI(); got != "urn:p" {
		t.Errorf("p:x uri %q", got)
	}
	if got := m.Elements()[1].URI(); got != "urn:o" {
		t.Errorf("y uri %q", got)
	}
}

func TestRefusesMalformedNamingTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		says      string
	}{
		{"mismatched end tag", "<?xml version=\"1.0\"?>\n<alto>\n<Layout>\n</Page>\n</alto>\n", 4, "</Page> does not match start tag <Layout> of line 3"},
		{"blank line before declaration", "\n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<PcGts/>\n", 2, "XML declaration not at the very start"},
		{"second root", "<a/>\n<b/>\n", 2, "second root element <b>"},
		{"text after root", "<a/>\nx\n", 1, "text outside the root element"},
		{"repeated attribute", "<a>\n<b x=\"1\" x=\"2\"/></a>", 2, "attribute x repeated"},
		{"unclosed", "<a>\n<b>\n", 3, "document ends inside <b> opened on line 2"},
		{"empty", "  \n", 2, "the document is empty"},
		{"only a declaration", "<?xml version=\"1.0\"?>\n", 2, "no root element"},
		{"bad token", "<a>\n<b x=1/></a>", 2, "unquoted"},
		// encoding/xml reads each of these without a word; a
		// namespace-aware reader (lxml, Saxon) refuses them, and the
		// document was written back as it came.
		{"declaration with another pseudo-attribute", "<?xml version=\"1.0\" foo=\"bar\"?>\n<a/>", 1, "XML declaration"},
		{"declaration out of order", "<?xml encoding=\"UTF-8\" version=\"1.0\"?>\n<a/>", 1, "XML declaration"},
		{"control character in a processing instruction", "<?xml version=\"1.0\"?>\n<?x a\x01?>\n<a/>", 2, "U+0001"},
		{"control character in a comment", "<a>\n<!-- \x1b -->\n</a>", 2, "comment: character U+001B"},
		{"attributes not parted", "<a>\n<b x=\"1\"y=\"2\"/></a>", 2, "no white space before the next attribute"},
		{"namespace declarations not parted", "<a xmlns=\"urn:a\"xmlns:x=\"urn:y\"/>", 1, "no white space"},
		{"undeclared element prefix", "<a>\n<q:b/></a>", 2, "the prefix q is not declared"},
		{"undeclared attribute prefix", "<a>\n<b q:c=\"1\"/></a>", 2, "attribute q:c: the prefix q is not declared"},
		{"prefix out of scope", "<a><b xmlns:q=\"urn:q\"/>\n<q:c/></a>", 2, "the prefix q is not declared"},
		{"prefix declared empty", "<a xmlns:x=\"\"/>", 1, "empty namespace name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("want a *SyntaxError, got %v", err)
			}
			if se.Line != tc.line || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "line ") {
				t.Fatalf("got %q (line %d), want line %d and %q", err, se.Line, tc.line, tc.says)
			}
		})
	}
	// A byte-order mark before the declaration is fine, and so are the
	// declarations, prefixes and characters the rules allow.
	for _, ok := range []string{
		"\ufeff<?xml version=\"1.0\"?>\r\n<a/>\r\n",
		"<?xml version='1.0' encoding='utf-8' standalone='no' ?><a/>",
		"<?xml\tversion = \"1.0\"\n encoding=\"UTF-8\"?><a/>",
		"<x:a xmlns:x=\"urn:x\" xmlns=\"\" x:b=\"1\" xml:lang=\"cs\"><x:c xmlns:x=\"urn:other\"/><d\txmlns:y='urn:y'\ny:e='2'/></x:a>",
		"<a><!-- tab\tand é and \U0001F600 --><?pi data?></a>",
		"<a b=\"1\"/>", "<a b=\"1\" />", "<a b='1'></a>",
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func TestLimits(t *testing.T) {
	l := Limits{Depth: 3, Nodes: 8}
	for _, tc := range []struct {
		src, what string // what: the limit passed, "" when accepted
		line      int
	}{
		{"<a><b><c/></b></a>", "", 0},
		{"<a><b><c>\n<d/></c></b></a>", "nesting depth", 2},
		{"<a><b/><b/><b/><b/><b/><b/><b/></a>", "", 0}, // 8 elements
		{"<a><b/><b/><b/><b/><b/><b/><b/><b/></a>", "node count", 1},
	} {
		_, err := l.Parse([]byte(tc.src))
		var le *LimitError
		switch {
		case tc.what == "" && err != nil:
			t.Errorf("%s: %v", tc.src, err)
		case tc.what != "" && (!errors.As(err, &le) || le.What != tc.what || le.Line != tc.line):
			t.Errorf("%s: %v, want the %s limit on line %d", tc.src, err, tc.what, tc.line)
		}
	}
	if _, err := Parse([]byte(strings.Repeat("<a>", 300) + strings.Repeat("</a>", 300))); !strings.Contains(fmt.Sprint(err), "nesting depth limit of 256") {
		t.Errorf("default depth limit: %v", err)
	}
}

// TestURIResolvedWhileParsing: each element's namespace URI follows the
// declarations in scope, redefinitions and their end included.
func TestURIResolvedWhileParsing(t *testing.T) {
	doc, err := Parse([]byte(`<r xmlns="d" xmlns:p="one"><p:a xmlns:p="two"><p:b/></p:a><p:c/><e xmlns=""/><xml:f/></r>`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	doc.Root.Children[0].Walk(func(n *Node) bool {
		got = append(got, n.QName()+"="+n.URI())
		if n.URI() != n.NamespaceURI(n.Name.Space) {
			t.Errorf("%s: URI %q, lookup %q", n.QName(), n.URI(), n.NamespaceURI(n.Name.Space))
		}
		return true
	})
	want := "[r=d p:a=two p:b=two p:c=one e= xml:f=http://www.w3.org/XML/1998/namespace]"
	if fmt.Sprint(got) != want {
		t.Errorf("URIs %v, want %s", got, want)
	}
}

// TestRemoveElements: matched elements go with the line break and
// indentation before them, and nothing inside them is visited.
func TestRemoveElements(t *testing.T) {
	src := "<r>\n  <a/>\n  <b><a/></b><b/>\n</r>"
	out, err := RemoveElements([]byte(src), func(n *Node) bool { return n.Name.Local == "b" })
	if err != nil || string(out) != "<r>\n  <a/>\n</r>" {
		t.Errorf("got %q, %v", out, err)
	}
	if _, err := RemoveElements([]byte("<r>"), func(*Node) bool { return true }); err == nil {
		t.Error("malformed input: no error")
	}
}
