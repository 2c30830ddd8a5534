package xmlsplice

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParse: Parse never panics; a parsed tree's ranges lie inside the
// source, an editor without edits gives the source back byte for byte, and
// replacing the text of an element keeps the document well-formed with the
// new text in place. Seeds: the corpus in testdata/fuzz/FuzzParse and the
// documents below. `make test` fuzzes it for a few seconds, `make fuzz`
// longer.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0" encoding="UTF-8"?>` + "\n<a x='1' y=\"2\"><b>text &amp; more</b><!-- c --><?pi x?></a>",
		`<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page><PrintSpace><TextBlock ID="b1"><TextLine><String CONTENT="slovo"/><SP/><String CONTENT="dvě"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`,
		`<r xmlns:p="u"><p:a xmlns:p="v"><![CDATA[x<y]]></p:a></r>`,
		"\ufeff<a/>",
		"<a><b></a>",
		"<!DOCTYPE a [<!ENTITY x 'y'>]><a>&x;</a>",
		"<a/><b/>",
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		doc, err := Limits{Depth: 64, Nodes: 10000}.Parse(src)
		if err != nil {
			var se *SyntaxError
			var le *LimitError
			if !errors.As(err, &se) && !errors.As(err, &le) && !errors.Is(err, ErrDTD) && !errors.Is(err, ErrEncoding) {
				t.Fatalf("error of an unexpected kind: %T %v", err, err)
			}
			return
		}
		var textEl *Node
		var check func(n *Node)
		check = func(n *Node) {
			if n.Start < 0 || n.End > len(src) || n.Start > n.End {
				t.Fatalf("node %v range [%d,%d) outside %d bytes", n.Kind, n.Start, n.End, len(src))
			}
			for _, a := range n.Attrs {
				if a.Start < n.Start || a.End > n.StartTagEnd || a.Start > a.End {
					t.Fatalf("attribute %s range [%d,%d) outside its tag [%d,%d)", a.Name.Local, a.Start, a.End, n.Start, n.StartTagEnd)
				}
			}
			if n.Kind == ElementNode && textEl == nil {
				if _, ok := n.Text(); ok && !n.SelfClosing {
					textEl = n
				}
			}
			for _, c := range n.Children {
				check(c)
			}
		}
		check(doc.Root)
		same, err := NewEditor(src).Bytes()
		if err != nil || !bytes.Equal(same, src) {
			t.Fatalf("no edits changed the document: %v", err)
		}
		if textEl == nil {
			return
		}
		ed := NewEditor(src)
		if err := ed.SetText(textEl, "new <text> & more"); err != nil {
			return // a refused edit is an answer
		}
		out, err := ed.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		doc2, err := Parse(out)
		if err != nil {
			t.Fatalf("edited document does not parse: %v\n%s", err, out)
		}
		var found bool
		var walk func(n *Node)
		walk = func(n *Node) {
			if n.Kind == ElementNode && n.Start == textEl.Start {
				txt, _ := n.Text()
				found = txt == "new <text> & more"
			}
			for _, c := range n.Children {
				walk(c)
			}
		}
		walk(doc2.Root)
		if !found {
			t.Fatalf("edited text not found at offset %d:\n%s", textEl.Start, out)
		}
	})
}
