package alto

import (
	"context"
	"strings"
	"testing"

	"archivekit/internal/translate/xmlsplice"
)

// FuzzTranslate runs the ALTO reader and writer on arbitrary documents with
// a backend that answers in upper case: it never panics, and a document it
// translates comes out well-formed with as many elements as it went in
// (replace mode changes CONTENT values only).
func FuzzTranslate(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob a"/><SP/><String CONTENT="sídliště"/><HYP CONTENT="-"/></TextLine><TextLine ID="l2"><String CONTENT="dvě slova"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`,
		`<alto><Layout><Page><PrintSpace><TextBlock><TextLine><String CONTENT='x &amp; "y"'/></TextLine><TextLine/></TextBlock></PrintSpace></Page><Page/></Layout></alto>`,
		`<alto><Layout><Page><TextBlock><TextLine><String/></TextLine></TextBlock></Page></Layout></alto>`,
		`<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob" CC="0 1 0 2"><ALTERNATIVE>hrab</ALTERNATIVE><Glyph CONTENT="h"><Variant CONTENT="b"/></Glyph></String></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`,
		`<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page><PrintSpace><TextBlock><TextLine><String CONTENT="die"/><SP/><String CONTENT="Be"/><String CONTENT="-"/></TextLine><TextLine><String CONTENT="drükkung"/><SP/><String CONTENT="kam"/></TextLine></TextBlock><TextBlock><TextLine><String CONTENT="das"/><SP/><String CONTENT="ver" SUBS_TYPE="HypPart1"/><HYP/></TextLine></TextBlock><TextBlock><TextLine><String CONTENT="ſprochene" SUBS_TYPE="HypPart2"/><SP/><String CONTENT="Buch"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`,
		`<a/>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		in, err := xmlsplice.Limits{Depth: 32, Nodes: 5000}.Parse(src)
		if err != nil {
			return
		}
		be := &fake{answer: strings.ToUpper}
		res, err := Translate(context.Background(), src, Options{Backend: be, Source: "cs", Target: "en", File: "fuzz.alto.xml"})
		if err != nil {
			return
		}
		out, err := xmlsplice.Parse(res.Output)
		if err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, res.Output)
		}
		// Every element stays, except the HYP marks of joined hyphenations
		// and the ALTERNATIVE and Glyph elements of translated Strings.
		if a, b := countElements(in.Root, false), countElements(out.Root, false); a != b {
			t.Fatalf("%d elements other than HYP, ALTERNATIVE and Glyph in, %d out", a, b)
		}
		if a, b := countElements(in.Root, true), countElements(out.Root, true); b > a {
			t.Fatalf("%d HYP, ALTERNATIVE and Glyph elements in, %d out", a, b)
		}
	})
}

// removable reports the elements a translation may remove.
func removable(n *xmlsplice.Node) bool {
	switch n.Name.Local {
	case "HYP", "ALTERNATIVE", "Glyph":
		return true
	}
	return false
}

// countElements counts the removable elements below n (rm), or the others
// outside them.
func countElements(n *xmlsplice.Node, rm bool) int {
	c := 0
	if n.Kind == xmlsplice.ElementNode {
		if removable(n) {
			if rm {
				return 1
			}
			return 0
		}
		if !rm {
			c = 1
		}
	}
	for _, ch := range n.Children {
		c += countElements(ch, rm)
	}
	return c
}
