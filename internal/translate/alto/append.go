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

// pendingAppend drops the blocks an append run must not translate: the
// copies an earlier append run wrote and the blocks they follow
// (copyOf). A block labelled with the target language that is no such
// copy (a document, or a block, written in the target language) is kept:
// its language is chosen as any other's, so it is logged in_target, and a
// document of nothing else is not translated (before 2026-11-28 each such
// block was taken for a copy, and an English document came back unchanged
// as if translated). copies counts the earlier run's copies among blocks.
func (t *translator) pendingAppend(blocks []*block) (pending []*block, copies int) {
	out := blocks[:0:0]
	for _, b := range blocks {
		if prev := siblingElement(b.node, -1); prev != nil && t.copyOf(prev, b.node) {
			copies++
			continue // an earlier run's copy
		}
		if next := siblingElement(b.node, 1); next != nil && t.copyOf(b.node, next) {
			continue // its copy follows
		}
		out = append(out, b)
	}
	return out, copies
}

// copyOf says whether block c is the copy an append run wrote after block
// orig (appendCopy): both TextBlocks, c labelled with the target language
// and orig not, and, when orig has an ID, c's ID is orig's with the suffix
// "_<target>".
func (t *translator) copyOf(orig, c *xmlsplice.Node) bool {
	if orig.Name.Local != "TextBlock" || c.Name.Local != "TextBlock" {
		return false
	}
	if a, ok := langOf(c); !ok || a.Value != t.opt.Target {
		return false
	}
	if a, ok := langOf(orig); ok && a.Value == t.opt.Target {
		return false
	}
	if id, ok := orig.Attr("", "ID"); ok {
		cid, _ := c.Attr("", "ID")
		return cid.Value == id.Value+"_"+t.opt.Target
	}
	return true
}

// siblingElement returns the element sibling following n (dir 1) or
// before it (dir -1), or nil.
func siblingElement(n *xmlsplice.Node, dir int) *xmlsplice.Node {
	sib := n.Parent.Children
	for i, c := range sib {
		if c != n {
			continue
		}
		for j := i + dir; j >= 0 && j < len(sib); j += dir {
			if sib[j].Kind == xmlsplice.ElementNode {
				return sib[j]
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
