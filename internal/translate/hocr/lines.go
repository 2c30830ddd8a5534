package hocr

import (
	"strconv"
	"strings"

	"archivekit/internal/bookout"
)

// Lines reads the lines of each ocr_page of an hOCR document, for
// annotations that place text on a canvas (internal/bookout): the page's
// size from the bbox in its title ("bbox 0 0 w h"), and each line with
// text (LineClasses), in document order, with the bbox in its title (none
// when it has none of positive size). Translate writes a parallel
// document, so a translated document's text is the translation; target is
// not read (it is there so that every format's Lines reads alike).
func Lines(src []byte, target string) ([]bookout.OCRPage, error) {
	d, err := read(src)
	if err != nil {
		return nil, err
	}
	pages := make([]bookout.OCRPage, len(d.pageEls))
	for i, e := range d.pageEls {
		if b := bboxOf(e); b != nil {
			pages[i].Width, pages[i].Height = b.X+b.W, b.Y+b.H
		}
	}
	for _, l := range d.lines {
		text := joinSlots(l.slots)
		if text == "" || l.page < 1 || l.page > len(pages) {
			continue
		}
		pg := &pages[l.page-1]
		pg.Lines = append(pg.Lines, bookout.TextLine{Text: text, ID: l.id, Box: bboxOf(l.el)})
	}
	return pages, nil
}

// bboxOf is the box of the "bbox x0 y0 x1 y1" property in e's title, nil
// when there is none of positive width and height.
func bboxOf(e *elem) *bookout.Box {
	a, ok := findAttr(e.raw, "title")
	if !ok {
		return nil
	}
	for _, prop := range strings.Split(a.value, ";") {
		f := strings.Fields(prop)
		if len(f) != 5 || f[0] != "bbox" {
			continue
		}
		var v [4]float64
		for i := range v {
			n, err := strconv.ParseFloat(f[i+1], 64)
			if err != nil {
				return nil
			}
			v[i] = n
		}
		if v[2] <= v[0] || v[3] <= v[1] {
			return nil
		}
		return &bookout.Box{X: v[0], Y: v[1], W: v[2] - v[0], H: v[3] - v[1]}
	}
	return nil
}
