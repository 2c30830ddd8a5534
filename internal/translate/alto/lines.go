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
// HEIGHT, each TextLine's box from HPOS, VPOS, WIDTH and HEIGHT (none when
// one is missing or not a positive size) and its text. A line's text is, when
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
	if len(translated) > 0 {
		out.Text = strings.Join(translated, " ")
	}
	box := bookout.Box{X: Number(l, "HPOS"), Y: Number(l, "VPOS"), W: Number(l, "WIDTH"), H: Number(l, "HEIGHT")}
	_, okX := l.Attr("", "HPOS")
	_, okY := l.Attr("", "VPOS")
	if okX && okY && box.W > 0 && box.H > 0 {
		out.Box = &box
	}
	return out
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
