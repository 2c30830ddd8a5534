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
	out, err := xmlsplice.RemoveElements(src, func(n *xmlsplice.Node) bool {
		return n.Name.Local == "TextEquiv" && isOurs(n) != ""
	})
	if err != nil {
		return nil, fmt.Errorf("pagexml: %w", err)
	}
	return out, nil
}
