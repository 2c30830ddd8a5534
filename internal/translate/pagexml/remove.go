package pagexml

import (
	"fmt"

	"archivekit/internal/translate/xmlsplice"
)

// Remove deletes from a PAGE document every TextEquiv whose @comments is
// a machine-translation language tag (what append mode adds), each with
// the line break and indentation before it. Applied to the output of
// append mode on a document that had no such TextEquiv, it gives back the
// input byte for byte.
func Remove(src []byte) ([]byte, error) {
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("pagexml: %w", err)
	}
	ed := xmlsplice.NewEditor(src)
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local == "TextEquiv" && isOurs(n) != "" {
			ed.Replace(n.Start-len(n.Indent(src)), n.End, "")
			return false
		}
		return true
	})
	return ed.Bytes()
}
