package metadata

import (
	"sort"
	"testing"

	"archivekit/internal/translate/xmlsplice"
)

// naiveSelect is the plain reading of the XPath subset: for every step,
// every context node's children (or all its descendants), matched, without
// duplicates, in document order. Select must agree with it.
func naiveSelect(x *XPath, doc *xmlsplice.Document, ns Namespaces) []*xmlsplice.Node {
	ctx := []*xmlsplice.Node{doc.Root}
	for _, st := range x.steps {
		seen := map[*xmlsplice.Node]bool{}
		var next []*xmlsplice.Node
		var visit func(n *xmlsplice.Node, deep bool)
		visit = func(n *xmlsplice.Node, deep bool) {
			for _, ch := range n.Children {
				if ch.Kind != xmlsplice.ElementNode {
					continue
				}
				if !seen[ch] && st.matches(ch, ns) {
					seen[ch] = true
					next = append(next, ch)
				}
				if deep {
					visit(ch, true)
				}
			}
		}
		for _, c := range ctx {
			visit(c, st.descendant)
		}
		sort.SliceStable(next, func(i, j int) bool { return next[i].Start < next[j].Start })
		ctx = next
	}
	return ctx
}

// FuzzXPath: Compile never panics, and Select (which skips nested context
// nodes and resolves namespaces while parsing) gives exactly the nodes of
// the naive evaluation, in document order.
func FuzzXPath(f *testing.F) {
	rec := `<arch:amcr xmlns:arch="https://api.aiscr.cz/schema/amcr/2.2/"><arch:dokument><arch:popis>a</arch:popis><arch:amcr><arch:dokument><arch:popis>b</arch:popis></arch:dokument></arch:amcr></arch:dokument><popis>c</popis></arch:amcr>`
	for _, s := range []struct{ expr, doc string }{
		{"//arch:amcr/arch:dokument/arch:popis", rec},
		{"//arch:amcr//arch:popis", rec},
		{"//*", rec},
		{"/arch:amcr/*/arch:popis", rec},
		{"//popis", rec},
		{"//oai:record//arch:*", `<r xmlns:oai="http://www.openarchives.org/OAI/2.0/"><oai:record><x:a xmlns:x="https://api.aiscr.cz/schema/amcr/2.2/"/></oai:record></r>`},
		{"//a[1]", "<a/>"},
		{"a/b", "<a><b/></a>"},
	} {
		f.Add(s.expr, []byte(s.doc))
	}
	f.Fuzz(func(t *testing.T, expr string, src []byte) {
		x, err := Compile(expr)
		if err != nil {
			return
		}
		doc, err := xmlsplice.Limits{Depth: 32, Nodes: 2000}.Parse(src)
		if err != nil {
			return
		}
		got := x.Select(doc, DefaultNamespaces)
		want := naiveSelect(x, doc, DefaultNamespaces)
		if len(got) != len(want) {
			t.Fatalf("%s: %d nodes, the naive evaluation %d", expr, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: node %d is <%s> at %d, the naive evaluation has <%s> at %d", expr, i, got[i].QName(), got[i].Start, want[i].QName(), want[i].Start)
			}
		}
	})
}
