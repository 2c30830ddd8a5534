package pagexml

import (
	"strings"

	"archivekit/internal/bookout"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/xmlsplice"
)

// Lines reads the lines of each Page of a PAGE document, for annotations
// that place text on a canvas (internal/bookout): the Page's imageWidth
// and imageHeight, and each TextLine with text, in document order, with
// the bounding box of its Coords@points (none when it has no polygon of
// positive width and height) and the polygon when it is not an
// axis-aligned rectangle (bookout.Outline). A TextRegion whose lines hold no text is one
// line itself, as Translate reads it. A line's text is the translation
// into target that append mode added (the TextEquiv whose @comments is a
// machine-translation tag into target; replace mode marks the TextEquiv
// it wrote the same way), else the line's text as Translate reads it (a
// replace-mode output unmarked, a PAGE 2013 sidecar, or the original).
func Lines(src []byte, target string) ([]bookout.OCRPage, error) {
	root, err := pageRoot(src)
	if err != nil {
		return nil, err
	}
	t := &translator{opt: Options{Target: target}, res: &Result{}}
	var pages []bookout.OCRPage
	root.Walk(func(n *xmlsplice.Node) bool {
		switch n.Name.Local {
		case "Page":
			pages = append(pages, bookout.OCRPage{Width: alto.Number(n, "imageWidth"), Height: alto.Number(n, "imageHeight")})
		case "TextRegion":
			if len(pages) == 0 {
				return true
			}
			pg := &pages[len(pages)-1]
			before := len(pg.Lines)
			for _, c := range n.Elements() {
				if c.Name.Local == "TextLine" {
					pg.Lines = appendLine(pg.Lines, t, c)
				}
			}
			if len(pg.Lines) == before {
				pg.Lines = appendLine(pg.Lines, t, n)
			}
		}
		return true
	})
	return pages, nil
}

// appendLine appends the line of TextLine (or text-only TextRegion) n
// when it has text.
func appendLine(lines []bookout.TextLine, t *translator, n *xmlsplice.Node) []bookout.TextLine {
	text := ""
	for _, c := range n.Elements() {
		if c.Name.Local == "TextEquiv" && isOurs(c) == t.opt.Target {
			if u, ok := unicodeText(c); ok && strings.TrimSpace(u) != "" {
				text = strings.Join(alto.Fields(u), " ")
				break
			}
		}
	}
	if text == "" {
		if l := t.readLine(n, 0); l != nil {
			text = l.text
		}
	}
	if text == "" {
		return lines
	}
	box, polygon := outline(n)
	id := ""
	if a, ok := n.Attr("", "id"); ok {
		id = a.Value // the log's line_num
	}
	return append(lines, bookout.TextLine{Text: text, ID: id, Box: box, Polygon: polygon})
}

// outline is the bounding box of the polygon of n's Coords@points
// ("x1,y1 x2,y2 ...") and the polygon when it is not that box
// (bookout.Outline); nil, nil when there is none of positive size.
func outline(n *xmlsplice.Node) (*bookout.Box, []bookout.Point) {
	for _, c := range n.Elements() {
		if c.Name.Local != "Coords" {
			continue
		}
		a, ok := c.Attr("", "points")
		if !ok {
			return nil, nil
		}
		pts, ok := bookout.ParsePoints(a.Value)
		if !ok {
			return nil, nil
		}
		return bookout.Outline(pts)
	}
	return nil, nil
}
