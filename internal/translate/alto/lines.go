package alto

import (
	"fmt"
	"strconv"
	"strings"

	"archivekit/internal/translate/xmlsplice"
)

// Line is a TextLine's text and box, in the unit of its ALTO document.
type Line struct {
	Text string
	// X, Y, W, H are HPOS, VPOS, WIDTH and HEIGHT; HasBox is false when
	// one of them is missing or not a number.
	X, Y, W, H float64
	HasBox     bool
}

// PageLines is one Page of an ALTO document: its WIDTH and HEIGHT (0 when
// not given) and its lines in document order.
type PageLines struct {
	Width, Height float64
	Lines         []Line
}

// Lines reads the lines of each Page of an ALTO document, for annotations
// that place text on a canvas (internal/bookout). A line's text is, when
// its Strings hold ALTERNATIVEs that Alternative mode wrote into target,
// those joined by spaces (the translation); otherwise its String CONTENT
// values joined (the text of a replace-mode output, or the original).
func Lines(src []byte, target string) ([]PageLines, error) {
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("alto: %w", err)
	}
	if !rootIsALTO(doc) {
		return nil, fmt.Errorf("alto: root element is not <alto>")
	}
	var pages []PageLines
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local != "Page" {
			return true
		}
		p := PageLines{Width: number(n, "WIDTH"), Height: number(n, "HEIGHT")}
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

func readLine(l *xmlsplice.Node, target string) Line {
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
	out := Line{Text: strings.Join(content, " ")}
	if len(translated) > 0 {
		out.Text = strings.Join(translated, " ")
	}
	out.X, out.Y, out.W, out.H = number(l, "HPOS"), number(l, "VPOS"), number(l, "WIDTH"), number(l, "HEIGHT")
	_, okX := l.Attr("", "HPOS")
	_, okY := l.Attr("", "VPOS")
	out.HasBox = okX && okY && out.W > 0 && out.H > 0
	return out
}

// number is the float value of n's attribute name, 0 when absent or not a
// number.
func number(n *xmlsplice.Node, name string) float64 {
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
