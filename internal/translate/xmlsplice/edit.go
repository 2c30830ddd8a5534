package xmlsplice

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Editor collects byte-range edits on a source document and applies them all
// at once; offsets always refer to the original source.
type Editor struct {
	src   []byte
	edits []edit
	nl    string // src's line break (EscapeText)
}

type edit struct {
	start, end int
	text       string
	seq        int
}

// NewEditor returns an Editor over src. src is not modified.
func NewEditor(src []byte) *Editor { return &Editor{src: src, nl: LineBreak(src)} }

// LineBreak returns the line break src uses: "\r\n", "\r" or "\n", the
// most frequent of the three where it mixes them (ties go in that order),
// and "\n" when it has none. A parser reads each as one line feed, so text
// written into src writes its line breaks so too, not mixing others in
// (EscapeTextLines).
func LineBreak(src []byte) string {
	var crlf, cr, lf int
	for i := 0; i < len(src); i++ {
		switch {
		case src[i] == '\n':
			lf++
		case src[i] == '\r' && i+1 < len(src) && src[i+1] == '\n':
			crlf++
			i++
		case src[i] == '\r':
			cr++
		}
	}
	switch {
	case crlf > 0 && crlf >= lf && crlf >= cr:
		return "\r\n"
	case cr > lf:
		return "\r"
	}
	return "\n"
}

// EscapeText escapes s for element content of the editor's document,
// writing its line breaks as the document does (EscapeTextLines).
func (e *Editor) EscapeText(s string) string { return EscapeTextLines(s, e.nl) }

// Replace replaces src[start:end] with raw, which must already be escaped.
func (e *Editor) Replace(start, end int, raw string) {
	e.edits = append(e.edits, edit{start: start, end: end, text: raw, seq: len(e.edits)})
}

// Insert inserts raw at offset at. Several inserts at one offset keep the
// order in which they were made.
func (e *Editor) Insert(at int, raw string) { e.Replace(at, at, raw) }

// SetAttr replaces the value of a, escaped for a's quote character.
func (e *Editor) SetAttr(a Attr, value string) {
	e.Replace(a.Start, a.End, EscapeAttr(value, a.Quote))
}

// AddAttr adds the attribute name="value" to element n's start tag, after its
// last attribute.
func (e *Editor) AddAttr(n *Node, name, value string) {
	e.Insert(n.AttrInsertPos(), " "+name+`="`+EscapeAttr(value, '"')+`"`)
}

// SetText replaces the character content of element n with value. It fails
// when n holds anything other than character data, and on an empty-element tag.
func (e *Editor) SetText(n *Node, value string) error {
	if _, ok := n.Text(); !ok {
		return fmt.Errorf("element <%s> at offset %d has mixed content; its text cannot be replaced", n.QName(), n.Start)
	}
	if n.SelfClosing {
		return fmt.Errorf("element <%s> at offset %d is an empty-element tag", n.QName(), n.Start)
	}
	e.Replace(n.StartTagEnd, n.EndTagStart, e.EscapeText(value))
	return nil
}

// Len reports how many edits are pending.
func (e *Editor) Len() int { return len(e.edits) }

// Bytes applies the edits and returns the new document. Overlapping edits are
// an error.
func (e *Editor) Bytes() ([]byte, error) {
	eds := append([]edit(nil), e.edits...)
	sort.SliceStable(eds, func(i, j int) bool {
		if eds[i].start != eds[j].start {
			return eds[i].start < eds[j].start
		}
		return eds[i].seq < eds[j].seq
	})
	size := len(e.src)
	for _, ed := range eds {
		size += len(ed.text) - (ed.end - ed.start)
	}
	out := make([]byte, 0, size)
	pos := 0
	for _, ed := range eds {
		if ed.start < pos || ed.end < ed.start || ed.end > len(e.src) {
			return nil, fmt.Errorf("xmlsplice: overlapping or invalid edit [%d,%d)", ed.start, ed.end)
		}
		out = append(out, e.src[pos:ed.start]...)
		out = append(out, ed.text...)
		pos = ed.end
	}
	return append(out, e.src[pos:]...), nil
}

// EscapeText escapes s for use as element content: &, < and > become entity
// references, a carriage return becomes &#13; (so it survives end-of-line
// normalisation), and characters not allowed in XML become U+FFFD.
func EscapeText(s string) string { return escape(s, 0) }

// lineBreaks turns each line break of a text ("\r\n", "\r" or "\n") into
// a line feed.
var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// EscapeTextLines is EscapeText for text written into a document whose
// line break is nl (LineBreak): each line break of s, whether "\r\n", "\r"
// or "\n", is written as nl, so that a reader gets the line feed a line
// break of the document gives, and the file does not mix line ends.
func EscapeTextLines(s, nl string) string {
	raw := escape(lineBreaks.Replace(s), 0)
	if nl != "\n" {
		raw = strings.ReplaceAll(raw, "\n", nl)
	}
	return raw
}

// EscapeAttr escapes s for use inside an attribute value delimited by quote
// ('"' or '\”): &, <, > and the quote character become references, and tab,
// newline and carriage return become character references so that attribute
// value normalisation does not turn them into spaces.
func EscapeAttr(s string, quote byte) string { return escape(s, quote) }

func escape(s string, quote byte) string {
	var sb strings.Builder
	sb.Grow(len(s) + 8)
	for _, r := range s {
		switch {
		case r == '&':
			sb.WriteString("&amp;")
		case r == '<':
			sb.WriteString("&lt;")
		case r == '>':
			// In attributes too, as producers write it (ALTO's CONTENT="&gt;0"):
			// allowed bare, but line- and regex-based tools trip on it.
			sb.WriteString("&gt;")
		case r == '"' && quote == '"':
			sb.WriteString("&quot;")
		case r == '\'' && quote == '\'':
			sb.WriteString("&apos;")
		case r == '\r':
			sb.WriteString("&#13;")
		case (r == '\n' || r == '\t') && quote != 0:
			if r == '\n' {
				sb.WriteString("&#10;")
			} else {
				sb.WriteString("&#9;")
			}
		case !IsChar(r):
			sb.WriteRune(utf8.RuneError)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// IsChar reports whether XML 1.0 allows the character r (its production
// Char): the escapers write U+FFFD for one it does not, and the
// translator counts those of a translation (translator.Output.Warnings).
func IsChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// RemoveElements parses src and deletes every element for which match is
// true (not looking inside it), each with the line break and indentation
// before it (Node.Indent). The translators' removers use it to undo what
// their append modes insert.
func RemoveElements(src []byte, match func(*Node) bool) ([]byte, error) {
	doc, err := Parse(src)
	if err != nil {
		return nil, err
	}
	ed := NewEditor(src)
	doc.Root.Walk(func(n *Node) bool {
		if n.Kind == ElementNode && match(n) {
			ed.Replace(n.Start-len(n.Indent(src)), n.End, "")
			return false
		}
		return true
	})
	return ed.Bytes()
}
