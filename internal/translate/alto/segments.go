package alto

import (
	"fmt"

	"archivekit/internal/translate/xmlsplice"
)

// BlockText is the text of one non-empty TextBlock exactly as Translate
// sends it to a backend in pass 1 with the default options (line texts
// joined by spaces, hyphenated words joined).
type BlockText struct {
	// Page is the 1-based page number.
	Page int
	// ID is the block's ID attribute, or "p<page>b<n>" (its position on the
	// page) when it has none.
	ID   string
	Text string
}

// BlockTexts returns the non-empty TextBlocks of an ALTO document in
// document order; a document in another encoding than UTF-8 is decoded
// first, as Translate does.
func BlockTexts(src []byte) ([]BlockText, error) {
	src, _, err := xmlsplice.Decode(src)
	if err != nil {
		return nil, err
	}
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, err
	}
	if !rootIsALTO(doc) {
		return nil, fmt.Errorf("root element is not <alto>")
	}
	var out []BlockText
	page := 0
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local != "Page" {
			return true
		}
		page++
		for i, b := range collectBlocks(n, true) {
			if b.text == "" {
				continue
			}
			id := fmt.Sprintf("p%db%d", page, i+1)
			if a, ok := b.node.Attr("", "ID"); ok && a.Value != "" {
				id = a.Value
			}
			out = append(out, BlockText{Page: page, ID: id, Text: b.text})
		}
		return false
	})
	return out, nil
}
