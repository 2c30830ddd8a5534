package alto

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"archivekit/internal/roman"
	"archivekit/internal/translate/xmlsplice"
)

// Running heads and feet. A word hyphenated at the foot of a page ends at
// the top of the next one, but between the two parts a printed book has
// its page furniture: the page number, the running head ("KRITIK DER
// REINEN VERNUNFT 45") at the top, sometimes a running foot. The join
// across files (hyphenfile.go) passes over it, by the document's own
// structure and content, conservatively:
//
//   - blocks in TopMargin, BottomMargin, LeftMargin or RightMargin are
//     never the text flow (inMargin);
//   - blocks whose TAGREFS name a tag labelled as page furniture (SegmOnto's
//     RunningTitleZone, NumberingZone, QuireMarksZone, eScriptorium's
//     RunningTitle and Numbering, a header or footer: furnitureLabel);
//   - blocks without a letter (a page number "13", "- 12 -");
//   - and, among the first (last) edgeDepth blocks with letters of the page,
//     a block RunningHead recognises by its content against the same edge
//     of the pages one and two before and after it.
//
// A chapter heading at the top of a page is none of these: it does not
// repeat, and it shows no page number that the pages around confirm.

// edgeDepth is how many blocks with letters at a page's top (bottom) may be
// passed over as running heads (feet).
const edgeDepth = 2

// maxHeadWords is the most words a running head or foot has.
const maxHeadWords = 8

// Edge is what RunningHead knows of one edge (top or bottom) of a page:
// the texts of its blocks with letters from the edge inward (at most
// edgeDepth, margins and tagged furniture left out) and the page numbers
// its edge blocks show (see pageNumber), blocks without letters included.
type Edge struct {
	Texts   []string
	Numbers []int
}

// HeadBlock is a block at the top (bottom) of a page as RunningHead judges
// it: its text, its TextLines with text, and Beside, the page number shown
// by a block without letters of the same edge on the same line (their
// VPOS-HEIGHT extents overlap: "Universität und technische Hochschule."
// beside "13"), 0 when none.
type HeadBlock struct {
	Text   string
	Lines  int
	Beside int
}

// RunningHead reports whether b, a block at the top (or bottom) of a page,
// is a running head (foot). near holds the same edge of the pages around
// it, keyed by their distance (-2, -1, 1, 2: the page before the page
// before, ..., the page after the page after). The block must be one line
// of at most maxHeadWords words whose first word after a page number does
// not begin in lower case (the rest of a hyphenated word does), and either
//
//   - its first or last word, or the block beside it, shows a page number
//     n (digits, or a roman numeral in one case) and the page d away shows
//     n+d at the same edge: the numbering confirms it; or
//   - its letters, case folded, without that number, are those of a block
//     at the same edge of a page one or two away (three letters at least):
//     the same head on every page, or on every other page when verso and
//     recto heads alternate.
func RunningHead(b HeadBlock, near map[int]Edge) bool {
	words := Fields(b.Text)
	if b.Lines != 1 || len(words) == 0 || len(words) > maxHeadWords {
		return false
	}
	n, rest := splitNumber(words)
	if len(rest) > 0 {
		if r, _ := utf8.DecodeRuneInString(rest[0]); unicode.IsLower(r) {
			return false
		}
	}
	own := letters(rest)
	for d, e := range near {
		if confirms(e, n, d) || confirms(e, b.Beside, d) {
			return true
		}
		if utf8.RuneCountInString(own) < 3 {
			continue
		}
		for _, t := range e.Texts {
			if _, r := splitNumber(Fields(t)); letters(r) == own {
				return true
			}
		}
	}
	return false
}

// confirms reports whether e, the edge of the page d pages away, shows
// the page number n+d.
func confirms(e Edge, n, d int) bool {
	return n > 0 && n+d > 0 && slices.Contains(e.Numbers, n+d)
}

// splitNumber returns the page number words show as their last or first
// word (0 when none) and the other words.
func splitNumber(words []string) (int, []string) {
	if len(words) == 0 {
		return 0, words
	}
	if n := pageNumber(words[len(words)-1]); n > 0 {
		return n, words[:len(words)-1]
	}
	if n := pageNumber(words[0]); n > 0 {
		return n, words[1:]
	}
	return 0, words
}

// pageNumber returns the number a word shows, its punctuation ("[45]",
// "- 12 -"'s "12", "xii.") trimmed: one to four digits not beginning with
// 0, or a roman numeral written in one case, in its usual form ("xiv",
// "XLV"); 0 when it is neither.
func pageNumber(w string) int {
	w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	if w == "" {
		return 0
	}
	if n, err := strconv.Atoi(w); err == nil {
		if len(w) > 4 || w[0] == '0' || w[0] == '+' || w[0] == '-' {
			return 0
		}
		return n
	}
	if w != strings.ToUpper(w) && w != strings.ToLower(w) {
		return 0
	}
	return roman.Parse(strings.ToUpper(w))
}

// letters returns the letters of words, lower case.
func letters(words []string) string {
	var b strings.Builder
	for _, w := range words {
		for _, r := range w {
			if unicode.IsLetter(r) {
				b.WriteRune(unicode.ToLower(r))
			}
		}
	}
	return b.String()
}

// marginNames are the ALTO Page children outside the PrintSpace.
var marginNames = map[string]bool{"TopMargin": true, "BottomMargin": true, "LeftMargin": true, "RightMargin": true}

// inMargin reports whether n lies in a TopMargin, BottomMargin, LeftMargin
// or RightMargin of its Page: outside the PrintSpace, never the text flow.
func inMargin(n *xmlsplice.Node) bool {
	for p := n.Parent; p != nil && p.Name.Local != "Page"; p = p.Parent {
		if p.Kind == xmlsplice.ElementNode && marginNames[p.Name.Local] {
			return true
		}
	}
	return false
}

// furnitureLabels are the tag labels (letters only, lower case) that mark
// a block as page furniture: SegmOnto's zones and eScriptorium's block
// types for running titles, page numbers and quire marks, and the header
// and footer of other layout vocabularies.
var furnitureLabels = map[string]bool{
	"runningtitle": true, "runningtitlezone": true, "runninghead": true, "runningheader": true,
	"header": true, "pageheader": true, "footer": true, "pagefooter": true, "runningfoot": true,
	"numbering": true, "numberingzone": true, "pagenumber": true,
	"quiremarks": true, "quiremarkszone": true,
}

// furnitureLabel reports whether a tag's LABEL marks page furniture; a
// SegmOnto subtype after ':' or '#' ("NumberingZone:page") is ignored.
func furnitureLabel(label string) bool {
	if i := strings.IndexAny(label, ":#"); i >= 0 {
		label = label[:i]
	}
	return furnitureLabels[letters([]string{label})]
}

// furnitureTags returns the IDs of the document's tags (the children of
// its Tags: OtherTag, LayoutTag, ...) whose LABEL marks page furniture.
func furnitureTags(doc *xmlsplice.Document) map[string]bool {
	ids := map[string]bool{}
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		switch n.Name.Local {
		case "Layout":
			return false
		case "Tags":
			for _, t := range n.Elements() {
				id, _ := t.Attr("", "ID")
				label, _ := t.Attr("", "LABEL")
				if id.Value != "" && furnitureLabel(label.Value) {
					ids[id.Value] = true
				}
			}
			return false
		}
		return true
	})
	return ids
}

// tagged reports whether n's TAGREFS name one of ids.
func tagged(n *xmlsplice.Node, ids map[string]bool) bool {
	refs, _ := n.Attr("", "TAGREFS")
	for _, id := range strings.Fields(refs.Value) {
		if ids[id] {
			return true
		}
	}
	return false
}

// pageEdge is one edge of a page: its blocks with letters, margins and
// tagged furniture left out, from the edge inward, and what RunningHead
// compares of it.
type pageEdge struct {
	flow   []*block
	edge   Edge
	beside map[*block]int // page numbers shown on the line of flow's first blocks
}

// numberBlock is a block of a page's edge without letters that shows a
// page number, and its vertical extent.
type numberBlock struct {
	n          int
	top, end   float64
	hasExtents bool
}

// edgeOf returns the top (bottom: last) edge of a page's blocks.
func edgeOf(blocks []*block, last bool, furn map[string]bool) pageEdge {
	var e pageEdge
	var nums []numberBlock
	for i := range blocks {
		if last {
			i = len(blocks) - 1 - i
		}
		b := blocks[i]
		if inMargin(b.node) {
			continue
		}
		n, _ := splitNumber(Fields(b.text))
		switch {
		case strings.IndexFunc(b.text, unicode.IsLetter) < 0:
			if k := numberOf(b.text); k > 0 && len(e.flow) < edgeDepth {
				top, end, ok := extent(b.node)
				nums = append(nums, numberBlock{k, top, end, ok})
				e.edge.Numbers = append(e.edge.Numbers, k)
			}
		case tagged(b.node, furn):
			if n > 0 && len(e.flow) < edgeDepth {
				e.edge.Numbers = append(e.edge.Numbers, n)
			}
		default:
			if len(e.flow) < edgeDepth {
				e.edge.Texts = append(e.edge.Texts, b.text)
				if n > 0 && len(b.holders) == 1 {
					e.edge.Numbers = append(e.edge.Numbers, n)
				}
			}
			e.flow = append(e.flow, b)
		}
	}
	e.beside = map[*block]int{}
	for _, b := range e.flow[:min(edgeDepth, len(e.flow))] {
		top, end, ok := extent(b.node)
		for _, nb := range nums {
			if ok && nb.hasExtents && top < nb.end && nb.top < end {
				e.beside[b] = nb.n
			}
		}
	}
	return e
}

// extent returns the vertical extent of an element from its VPOS and
// HEIGHT; ok is false when it has none.
func extent(n *xmlsplice.Node) (top, end float64, ok bool) {
	v, okV := n.Attr("", "VPOS")
	h, okH := n.Attr("", "HEIGHT")
	if !okV || !okH {
		return 0, 0, false
	}
	top, errV := strconv.ParseFloat(strings.TrimSpace(v.Value), 64)
	height, errH := strconv.ParseFloat(strings.TrimSpace(h.Value), 64)
	if errV != nil || errH != nil || height <= 0 {
		return 0, 0, false
	}
	return top, top + height, true
}

// numberOf returns the number a block without letters shows ("- 12 -",
// "[45]"): its one word's, or the one between dashes; 0 when none.
func numberOf(text string) int {
	var nums []int
	for _, w := range Fields(text) {
		if n := pageNumber(w); n > 0 {
			nums = append(nums, n)
		} else if strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			return 0
		}
	}
	if len(nums) != 1 {
		return 0
	}
	return nums[0]
}

// edgeSeq is the top and bottom edges of consecutive pages of a book (the
// last pages of one file and the first of the next).
type edgeSeq struct {
	top, bottom []pageEdge
}

// add appends the edges of pages, which belong to a document whose
// furniture tags are furn.
func (s *edgeSeq) add(pages []*xmlsplice.Node, furn map[string]bool) {
	for _, p := range pages {
		var blocks []*block
		for _, b := range collectBlocks(p, true) {
			if b.text != "" {
				blocks = append(blocks, b)
			}
		}
		s.top = append(s.top, edgeOf(blocks, false, furn))
		s.bottom = append(s.bottom, edgeOf(blocks, true, furn))
	}
}

// body returns the first (bottom: last) block of the text flow of page i:
// the first of its edge's blocks that RunningHead does not recognise among
// the first edgeDepth; nil when there is none.
func (s *edgeSeq) body(i int, bottom bool) *block {
	edges := s.top
	if bottom {
		edges = s.bottom
	}
	near := map[int]Edge{}
	for _, d := range []int{-2, -1, 1, 2} {
		if j := i + d; j >= 0 && j < len(edges) {
			near[d] = edges[j].edge
		}
	}
	for k, b := range edges[i].flow {
		if k >= edgeDepth || !RunningHead(HeadBlock{b.text, len(b.holders), edges[i].beside[b]}, near) {
			return b
		}
	}
	return nil
}
