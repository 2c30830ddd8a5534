package metadata

import (
	"strings"

	"archivekit/internal/translate/xmlsplice"
)

// FieldText is the text of one targeted field exactly as Translate sends it
// to a backend.
type FieldText struct {
	// XPath is the field-list expression that matched; N counts its matches
	// from 1 in document order.
	XPath string
	N     int
	Text  string
}

// FieldTexts returns the targeted fields of a metadata document with
// non-empty text, in field-list then document order; an element matched by
// two expressions is returned once and mixed-content elements are left out,
// as Translate does (a document in another encoding than UTF-8 is decoded
// first). ns nil means DefaultNamespaces.
func FieldTexts(src []byte, fields []*XPath, ns Namespaces) ([]FieldText, error) {
	if ns == nil {
		ns = DefaultNamespaces
	}
	src, _, err := xmlsplice.Decode(src)
	if err != nil {
		return nil, err
	}
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, err
	}
	if ns, err = ns.WithDocument(doc, fields); err != nil {
		return nil, err
	}
	var out []FieldText
	done := map[*xmlsplice.Node]bool{}
	for _, f := range fields {
		n := 0
		for _, el := range f.Select(doc, ns) {
			text, ok := el.Text()
			if !ok || strings.TrimSpace(text) == "" || done[el] {
				continue
			}
			done[el] = true
			n++
			out = append(out, FieldText{XPath: f.Expr, N: n, Text: text})
		}
	}
	return out, nil
}
