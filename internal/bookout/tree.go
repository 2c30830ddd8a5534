package bookout

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// elem is an element with its byte offsets in the source: a small tree
// read with encoding/xml's offsets, enough to splice new elements in and
// take them out again.
type elem struct {
	name        xml.Name // as written: Space is the prefix
	attrs       []xml.Attr
	start, end  int // '<' of the start tag, after the end tag's '>'
	startTagEnd int // after the start tag's '>'
	endTagStart int // '<' of the end tag (end for a self-closing tag)
	selfClosing bool
	parent      *elem
	children    []*elem
	// text reports character data (whitespace included), comments or
	// processing instructions between the element's tags.
	text bool
}

// maxDepth bounds the nesting of a METS document read here.
const maxDepth = 256

// parseTree reads src (UTF-8, no DTD) into a tree of elements; the root
// returned is the document element.
func parseTree(src []byte) (*elem, error) {
	d := xml.NewDecoder(bytes.NewReader(src))
	d.Strict = true
	var root, cur *elem
	depth := 0
	for {
		off := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxDepth {
				return nil, fmt.Errorf("XML nested deeper than %d", maxDepth)
			}
			e := &elem{name: t.Name, attrs: t.Attr, start: off, startTagEnd: int(d.InputOffset()), parent: cur}
			if cur == nil {
				if root != nil {
					return nil, errors.New("a second root element")
				}
				root = e
			} else {
				cur.children = append(cur.children, e)
			}
			cur = e
		case xml.EndElement:
			if cur == nil || t.Name != cur.name {
				return nil, fmt.Errorf("end tag </%s> does not match", t.Name.Local)
			}
			depth--
			end := int(d.InputOffset())
			cur.end = end
			if end == cur.startTagEnd {
				cur.selfClosing, cur.endTagStart = true, end
			} else {
				cur.endTagStart = off
			}
			cur = cur.parent
		case xml.Directive:
			return nil, errors.New("a DOCTYPE or other declaration: refused")
		default:
			if cur != nil {
				cur.text = true
			}
		}
	}
	if root == nil {
		return nil, errors.New("no root element")
	}
	if cur != nil {
		return nil, fmt.Errorf("<%s> is not closed", cur.name.Local)
	}
	return root, nil
}

func (e *elem) attr(local string) (string, bool) {
	for _, a := range e.attrs {
		if a.Name.Local == local && (a.Name.Space == "" || a.Name.Space == "xlink") {
			return a.Value, true
		}
	}
	return "", false
}

// attrValue is where an attribute's value is in the source: the bytes
// between its quotes, and the attribute's local name.
type attrValue struct {
	local   string
	at, end int
}

// attrValues returns the values of e's attributes as written in its start
// tag (which the decoder has checked), in order.
func attrValues(src []byte, e *elem) []attrValue {
	var out []attrValue
	i := e.start + 1
	for i < e.startTagEnd && !isSpace(src[i]) && src[i] != '>' && src[i] != '/' {
		i++ // the element's name
	}
	for i < e.startTagEnd {
		for i < e.startTagEnd && isSpace(src[i]) {
			i++
		}
		n := i
		for i < e.startTagEnd && !isSpace(src[i]) && src[i] != '=' && src[i] != '>' && src[i] != '/' {
			i++
		}
		if i == n {
			break // '>' or '/>'
		}
		name := string(src[n:i])
		for i < e.startTagEnd && (isSpace(src[i]) || src[i] == '=') {
			i++
		}
		if i >= e.startTagEnd {
			break
		}
		q := src[i]
		i++
		v := i
		for i < e.startTagEnd && src[i] != q {
			i++
		}
		if c := strings.LastIndexByte(name, ':'); c >= 0 {
			name = name[c+1:]
		}
		out = append(out, attrValue{local: name, at: v, end: i})
		i++
	}
	return out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (e *elem) qname(local string) string {
	if e.name.Space == "" {
		return local
	}
	return e.name.Space + ":" + local
}

// walk calls fn on e and its descendants in document order until fn
// returns false for an element (then its descendants are skipped).
func (e *elem) walk(fn func(*elem) bool) {
	if !fn(e) {
		return
	}
	for _, c := range e.children {
		c.walk(fn)
	}
}

// indent returns the line break and whitespace before e when e starts
// its line ("\n    "), else "".
func indent(src []byte, at int) string {
	i := at
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	if i == 0 || src[i-1] != '\n' {
		return ""
	}
	i--
	if i > 0 && src[i-1] == '\r' {
		i--
	}
	return string(src[i:at])
}

// step is one level of indentation in src: a tab when its indentation
// uses tabs, else two spaces.
func step(src []byte) string {
	if bytes.Contains(src, []byte("\n\t<")) {
		return "\t"
	}
	return "  "
}

// splice applies non-overlapping edits (sorted here) to src.
type splice struct {
	at, end int
	text    string
}

func apply(src []byte, edits []splice) []byte {
	sortSplices(edits)
	var b bytes.Buffer
	last := 0
	for _, e := range edits {
		b.Write(src[last:e.at])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(src[last:])
	return b.Bytes()
}

func sortSplices(s []splice) {
	sort.SliceStable(s, func(i, j int) bool { return s[i].at < s[j].at })
}

// escape writes s as XML character data or a double-quoted attribute value.
func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// unescape decodes raw character data (entity and character references).
func unescape(raw []byte) string {
	d := xml.NewDecoder(bytes.NewReader(append(append([]byte("<x>"), raw...), "</x>"...)))
	var s string
	if err := d.Decode(&s); err != nil {
		return ""
	}
	return s
}
