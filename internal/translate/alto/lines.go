package alto

import (
	"fmt"
	"strconv"
	"strings"

	"archivekit/internal/bookout"
	"archivekit/internal/translate/xmlsplice"
)

// Lines reads the lines of each Page of an ALTO document, for annotations
// that place text on a canvas (internal/bookout): the Page's WIDTH and
// HEIGHT, each TextLine's outline and its text. A TextLine's outline is,
// when it has a Shape/Polygon (ALTO 3.1 and later) of positive size, the
// bounding box of that polygon and the polygon itself when it is not an
// axis-aligned rectangle (bookout.Outline, as pagexml.Lines reads a
// Coords polygon); otherwise its box from HPOS, VPOS, WIDTH and HEIGHT
// (none when one is missing or not a positive size), no polygon. A line's text is, when
// its Strings hold ALTERNATIVEs that Alternative mode wrote into target,
// those joined by spaces (the translation); otherwise its String CONTENT
// values joined (the text of a replace-mode output, or the original).
func Lines(src []byte, target string) ([]bookout.OCRPage, error) {
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("alto: %w", err)
	}
	if !rootIsALTO(doc) {
		return nil, fmt.Errorf("alto: root element is not <alto>")
	}
	var pages []bookout.OCRPage
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local != "Page" {
			return true
		}
		p := bookout.OCRPage{Width: Number(n, "WIDTH"), Height: Number(n, "HEIGHT")}
		n.Walk(func(l *xmlsplice.Node) bool {
			if l.Name.Local != "TextLine" {
				return true
			}
			p.Lines = append(p.Lines, readLine(l, target))
			return false
		})
		pages = append(pages, p)
		return false
	})
	return pages, nil
}

func readLine(l *xmlsplice.Node, target string) bookout.TextLine {
	var content, translated []string
	for _, s := range l.Elements() {
		if s.Name.Local != "String" {
			continue
		}
		if a, ok := s.Attr("", "CONTENT"); ok && a.Value != "" {
			content = append(content, a.Value)
		}
		for _, c := range s.Elements() {
			if ourAlternative(c) == target {
				if t, ok := c.Text(); ok && t != "" {
					translated = append(translated, t)
				}
			}
		}
	}
	out := bookout.TextLine{Text: strings.Join(content, " ")}
	if a, ok := l.Attr("", "ID"); ok {
		out.ID = a.Value // the log's line_num
	}
	if len(translated) > 0 {
		out.Text = strings.Join(translated, " ")
	}
	if box, polygon := shape(l); box != nil {
		out.Box, out.Polygon = box, polygon
		return out
	}
	box := bookout.Box{X: Number(l, "HPOS"), Y: Number(l, "VPOS"), W: Number(l, "WIDTH"), H: Number(l, "HEIGHT")}
	_, okX := l.Attr("", "HPOS")
	_, okY := l.Attr("", "VPOS")
	if okX && okY && box.W > 0 && box.H > 0 {
		out.Box = &box
	}
	return out
}

// shape is the outline of n's Shape/Polygon (bookout.Outline: its
// bounding box, and the polygon when it is not that box); nil, nil when n
// has no Shape, its Shape is not a Polygon (an Ellipse or a Circle), or
// its POINTS are not a polygon of positive size.
func shape(n *xmlsplice.Node) (*bookout.Box, []bookout.Point) {
	for _, s := range n.Elements() {
		if s.Name.Local != "Shape" {
			continue
		}
		for _, p := range s.Elements() {
			if p.Name.Local != "Polygon" {
				continue
			}
			if a, ok := p.Attr("", "POINTS"); ok {
				if pts, ok := bookout.ParsePoints(a.Value); ok {
					return bookout.Outline(pts)
				}
			}
		}
	}
	return nil, nil
}

// Number is the float value of n's attribute name, 0 when absent or not a
// number.
func Number(n *xmlsplice.Node, name string) float64 {
	a, ok := n.Attr("", name)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(a.Value), 64)
	if err != nil {
		return 0
	}
	return f
}
