package alto

import (
	"archivekit/internal/translate/xmlsplice"
)

// langOf returns the language attribute of n: its LANG or, on a TextBlock
// without one, its language attribute (ALTO 1.x has only that one, on
// TextBlock; ALTO 2 to 4 keep it there, deprecated).
func langOf(n *xmlsplice.Node) (xmlsplice.Attr, bool) {
	if a, ok := n.Attr("", "LANG"); ok || n.Name.Local != "TextBlock" {
		return a, ok
	}
	return n.Attr("", "language")
}

// blockLangAttr is the attribute that holds a TextBlock's language in the
// ALTO version of doc: LANG from ALTO 2 on; language in ALTO 1.x (no
// namespace, or the CCS namespace), whose TextBlock has no LANG.
func blockLangAttr(doc *xmlsplice.Document) string {
	for _, n := range doc.Root.Children {
		if n.Kind == xmlsplice.ElementNode {
			if uri := n.URI(); uri == "" || uri == ccsNS {
				return "language"
			}
			break
		}
	}
	return "LANG"
}

// pendingAppend drops the blocks an append run must not translate: blocks
// already labelled with the target language (earlier translations, or text
// already in that language) and blocks followed by such a block.
func (t *translator) pendingAppend(blocks []*block) []*block {
	out := blocks[:0:0]
	for _, b := range blocks {
		if a, ok := langOf(b.node); ok && a.Value == t.opt.Target {
			continue
		}
		if next := nextElement(b.node); next != nil && next.Name.Local == "TextBlock" {
			if a, ok := langOf(next); ok && a.Value == t.opt.Target {
				continue
			}
		}
		out = append(out, b)
	}
	return out
}

// nextElement returns the element sibling following n, or nil.
func nextElement(n *xmlsplice.Node) *xmlsplice.Node {
	sib := n.Parent.Children
	for i, c := range sib {
		if c != n {
			continue
		}
		for _, d := range sib[i+1:] {
			if d.Kind == xmlsplice.ElementNode {
				return d
			}
		}
		return nil
	}
	return nil
}

// appendCopy returns the edits of append mode for one block: a translated
// copy inserted after it (with the block's own leading line break and
// indentation), its IDs suffixed "_<target>" and its language attribute
// set to the target (contentEdits set its lines' and Strings' LANG); the
// original gains one naming the source when it has none (LANG, or
// language in ALTO 1.x: blockLangAttr).
func (t *translator) appendCopy(b *block, lang string, contentEdits []edit) ([]edit, error) {
	base := b.node.Start
	sub := xmlsplice.NewEditor(t.src[base:b.node.End])
	for _, e := range contentEdits {
		sub.Replace(e.start-base, e.end-base, e.raw)
	}
	suffix := "_" + t.opt.Target
	b.node.Walk(func(n *xmlsplice.Node) bool {
		if a, ok := n.Attr("", "ID"); ok {
			sub.Replace(a.Start-base, a.End-base, xmlsplice.EscapeAttr(a.Value+suffix, a.Quote))
		}
		return true
	})
	var edits []edit
	if a, ok := langOf(b.node); ok {
		sub.Replace(a.Start-base, a.End-base, xmlsplice.EscapeAttr(t.opt.Target, a.Quote))
	} else {
		at := b.node.AttrInsertPos()
		sub.Insert(at-base, " "+t.langAttr+`="`+xmlsplice.EscapeAttr(t.opt.Target, '"')+`"`)
		edits = append(edits, edit{at, at, " " + t.langAttr + `="` + xmlsplice.EscapeAttr(lang, '"') + `"`})
	}
	cp, err := sub.Bytes()
	if err != nil {
		return nil, err
	}
	return append(edits, edit{b.node.End, b.node.End, b.node.Indent(t.src) + string(cp)}), nil
}
