package alto

import (
	"fmt"
	"regexp"
	"strings"

	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/xmlsplice"
)

// PurposePrefix starts the PURPOSE of the ALTERNATIVE elements that
// Alternative mode writes: "translation:" and the machine-translation tag
// of the text (RFC 6497, as langtag.MT writes it), such as
// "translation:en-t-cs-t0-und".
const PurposePrefix = "translation:"

// ALTO namespaces in which String may hold ALTERNATIVE elements with a
// PURPOSE (ALTO 2.0 to 4.4; the element came with ALTO 1.1).
var alternativeNS = map[string]bool{
	"http://www.loc.gov/standards/alto/ns-v2#": true,
	"http://www.loc.gov/standards/alto/ns-v3#": true,
	"http://www.loc.gov/standards/alto/ns-v4#": true,
}

// ccsNS is the namespace CCS docWorks (METAe) and the Library of
// Congress's NDNP put ALTO 1.x in.
const ccsNS = "http://schema.ccs-gmbh.com/ALTO"

// alto1Schema matches the schema location of ALTO 1.1 to 1.4: the
// released files are alto-1-1.xsd to alto-1-4.xsd, and the Library of
// Congress's NDNP (Chronicling America) names its ALTO 1.1 in the CCS
// namespace alto_1-1-041.xsd.
var alto1Schema = regexp.MustCompile(`alto[-_]?1[-.][1-4](?:-\d+)?\.xsd`)

// ErrNoAlternative is returned (wrapped) by Translate in Alternative mode
// for an ALTO document whose version has no ALTERNATIVE element, or whose
// version cannot be told.
var ErrNoAlternative = fmt.Errorf("ALTO version without ALTERNATIVE (it came with ALTO 1.1): use output mode append or replace")

// checkAlternative refuses, for Alternative mode, a document whose root is
// not in an ALTO 2, 3 or 4 namespace, unless it is ALTO 1.x (no
// namespace) whose schema location names ALTO 1.1 to 1.4: ALTO 1.0 has no
// ALTERNATIVE, and a 1.x document without a schema location cannot be
// told from it.
func checkAlternative(doc *xmlsplice.Document) error {
	for _, n := range doc.Root.Children {
		if n.Kind != xmlsplice.ElementNode {
			continue
		}
		uri := n.URI()
		if alternativeNS[uri] {
			return nil
		}
		if uri == "" || uri == ccsNS {
			for _, a := range n.Attrs {
				if (a.Name.Local == "schemaLocation" || a.Name.Local == "noNamespaceSchemaLocation") && alto1Schema.MatchString(a.Value) {
					return nil
				}
			}
			return fmt.Errorf("%w (ALTO 1.x without a schema location naming 1.1 to 1.4)", ErrNoAlternative)
		}
		return fmt.Errorf("%w (namespace %q)", ErrNoAlternative, uri)
	}
	return ErrNoAlternative
}

// ourAlternative returns the language of an ALTERNATIVE that Alternative
// mode wrote (PURPOSE "translation:" and a machine-translation tag): the
// tag's ISO 639-1 code where it has one, else its language; "" when n is
// not one.
func ourAlternative(n *xmlsplice.Node) string {
	if n.Name.Local != "ALTERNATIVE" {
		return ""
	}
	a, ok := n.Attr("", "PURPOSE")
	if !ok || !strings.HasPrefix(a.Value, PurposePrefix) {
		return ""
	}
	return langtag.Target(strings.TrimPrefix(a.Value, PurposePrefix))
}

// pendingAlternative drops the blocks that already hold a translation into
// the target (a String with such an ALTERNATIVE).
func (t *translator) pendingAlternative(blocks []*block) []*block {
	out := blocks[:0:0]
	for _, b := range blocks {
		done := false
		b.node.Walk(func(n *xmlsplice.Node) bool {
			if ourAlternative(n) == t.opt.Target {
				done = true
			}
			return !done
		})
		if !done {
			out = append(out, b)
		}
	}
	return out
}

// alternativeEdit returns the edit that adds to String s an ALTERNATIVE
// with PURPOSE "translation:<tag>" holding text, after its Shape and
// ALTERNATIVE children (before any Glyph, as ALTO 3 and 4 order them).
// A self-closing String gets an end tag; an empty String written with an
// end tag gets a line break before the ALTERNATIVE, so RemoveAlternatives
// can tell the two apart; after an indented child the ALTERNATIVE takes
// the same indentation.
func alternativeEdit(src []byte, s *xmlsplice.Node, tag, text string) edit {
	name := "ALTERNATIVE"
	if s.Name.Space != "" {
		name = s.Name.Space + ":" + name
	}
	alt := "<" + name + ` PURPOSE="` + xmlsplice.EscapeAttr(PurposePrefix+tag, '"') + `">` + xmlsplice.EscapeText(text) + "</" + name + ">"
	if s.SelfClosing {
		return edit{s.StartTagEnd - 2, s.StartTagEnd, ">" + alt + "</" + s.QName() + ">"}
	}
	if s.StartTagEnd == s.EndTagStart {
		return edit{s.StartTagEnd, s.StartTagEnd, xmlsplice.LineBreak(src) + alt}
	}
	at, indent := s.StartTagEnd, ""
	for _, c := range s.Elements() {
		if c.Name.Local == "Shape" || c.Name.Local == "ALTERNATIVE" {
			at, indent = c.End, c.Indent(src)
		}
	}
	return edit{at, at, indent + alt}
}

// RemoveAlternatives deletes from an ALTO document every ALTERNATIVE that
// Alternative mode wrote (PURPOSE "translation:" and a
// machine-translation tag), with the line break and indentation it was
// written with, and gives a String left with no content back its
// self-closing tag when that is how it was written. Applied to the output
// of Alternative mode on a document that had no such ALTERNATIVE, it
// gives back the input byte for byte.
func RemoveAlternatives(src []byte) ([]byte, error) {
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("alto: %w", err)
	}
	ed := xmlsplice.NewEditor(src)
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local != "String" {
			return true
		}
		var ours []*xmlsplice.Node
		for _, c := range n.Children {
			if ourAlternative(c) != "" {
				ours = append(ours, c)
			}
		}
		if len(ours) == 0 {
			return false
		}
		if len(ours) == len(n.Children) {
			// Nothing but ours, not even a line break: the String was
			// self-closing.
			ed.Replace(n.StartTagEnd-1, n.End, "/>")
			return false
		}
		for _, c := range ours {
			ed.Replace(c.Start-len(c.Indent(src)), c.End, "")
		}
		return false
	})
	return ed.Bytes()
}
