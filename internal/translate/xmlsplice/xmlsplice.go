// Package xmlsplice edits XML documents without re-serialising them.
//
// Parse reads a UTF-8 document with encoding/xml's raw token stream and records,
// for every element, attribute value and text run, the exact byte range it
// occupies in the source. An Editor then splices new, escaped text into those
// ranges; every other byte (byte-order mark, XML declaration, line endings,
// attribute order and quote style, comments, processing instructions,
// whitespace) is kept as it was.
//
// Parsing is safe for untrusted input: a document with a DOCTYPE (and so with
// a DTD or entity declarations) is refused, only the five predefined entities
// and character references are resolved, and nothing is ever fetched.
package xmlsplice

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Kind tells what a Node is.
type Kind int

// Node kinds.
const (
	// DocumentNode is the root of the tree; its children are the top-level nodes.
	DocumentNode Kind = iota
	// ElementNode is an element with its attributes and children.
	ElementNode
	// TextNode is a run of character data (CDATA sections included).
	TextNode
	// CommentNode is a comment.
	CommentNode
	// ProcInstNode is a processing instruction, the XML declaration included.
	ProcInstNode
)

// ErrDTD is returned (wrapped) by Parse for documents that carry a DOCTYPE.
var ErrDTD = errors.New("document has a DOCTYPE/DTD or entity declarations; refused (no DTD is loaded and no entity is expanded)")

// ErrEncoding is returned (wrapped, with the encoding's name and what is
// wrong) for a document in an encoding that is not supported, whose bytes
// are not in the encoding it declares, or not UTF-8 where UTF-8 is
// required.
var ErrEncoding = errors.New("character encoding")

// Attr is one attribute of a start tag.
type Attr struct {
	// Name is the attribute name as written: Space holds the prefix, not a URI.
	Name xml.Name
	// Value is the decoded value.
	Value string
	// Start and End delimit the raw value in the source, quotes excluded.
	Start, End int
	// Quote is the quote character used in the source: '"' or '\''.
	Quote byte
}

// Node is one node of the parsed tree with its byte positions in the source.
type Node struct {
	// Kind tells what the node is.
	Kind Kind
	// Name is the element name as written: Space holds the prefix, not a URI.
	Name  xml.Name
	Attrs []Attr
	// Start and End delimit the whole node in the source (for an element, from
	// the '<' of its start tag to just after the '>' of its end tag).
	Start, End int
	// StartTagEnd is the offset just after the start tag's '>' (elements only).
	StartTagEnd int
	// EndTagStart is the offset of the end tag's '<'; equal to End for an
	// empty-element tag such as <a/>.
	EndTagStart int
	// SelfClosing reports an empty-element tag (<a/>).
	SelfClosing bool
	// Data is the decoded character data of a TextNode, the text of a
	// CommentNode, or the target and instruction of a ProcInstNode.
	Data string
	// Parent is nil for the document node.
	Parent *Node
	// Children are the child nodes in document order.
	Children []*Node

	// uri is the element's namespace URI, resolved by Parse (uriSet).
	uri    string
	uriSet bool
}

// Document is a parsed document: its source bytes and its tree.
type Document struct {
	// Src is the parsed source; offsets in the tree refer to it.
	Src []byte
	// Root is the document node.
	Root *Node
}

// SyntaxError is a well-formedness error with the 1-based line it was
// found on. Parse returns it (possibly wrapped) for every malformed
// document, so callers can tell bad input from other failures with
// errors.As.
type SyntaxError struct {
	// Line is the 1-based line number in the source.
	Line int
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("not well-formed XML: line %d: %s", e.Line, e.Msg)
}

// LimitError reports a document over one of the work limits of Limits.
// It is the client's document that is too large for the service, not
// malformed XML: the services answer it with 422 naming the limit.
type LimitError struct {
	// Line is the 1-based line where the limit was passed.
	Line int
	// What names the limit, for example "nesting depth".
	What string
	// Limit is the largest value accepted.
	Limit int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("line %d: the document exceeds the %s limit of %d", e.Line, e.What, e.Limit)
}

// Limits bound the work and memory of parsing one document.
type Limits struct {
	// Depth is the deepest element nesting accepted (real ALTO and
	// metadata records nest fewer than 20 levels).
	Depth int
	// Nodes is the most nodes (elements, text runs, comments, processing
	// instructions) accepted; the 1.4 MB sample ALTO has 38,000.
	Nodes int
	// Attributes is the most attributes (namespace declarations included)
	// one element may have; real ones have tens. Checked by a linear scan
	// before decoding: the XML decoder's cost grows with the square of an
	// element's attributes (400,000 took 215 s of one request).
	Attributes int
}

// DefaultLimits are the limits of Parse: 256 levels and 1,000,000 nodes
// (an ALTO file of about 37 MB laid out like the sample, some 2,000 pages;
// translating a dense ALTO of 1.2 million nodes peaked at about 900 MB).
var DefaultLimits = Limits{Depth: 256, Nodes: 1_000_000, Attributes: 1000}

// manyAttributes returns the offset of the first tag with more than max
// attributes ('=' outside quoted values; comments, CDATA sections and
// processing instructions passed over), or -1: one linear pass.
func manyAttributes(src []byte, max int) int {
	skip := func(i int, open, end string) (int, bool) {
		if !bytes.HasPrefix(src[i:], []byte(open)) {
			return i, false
		}
		j := bytes.Index(src[i+len(open):], []byte(end))
		if j < 0 {
			return len(src), true
		}
		return i + len(open) + j + len(end) - 1, true
	}
	inTag, count, start := false, 0, 0
	var quote byte
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case inTag:
			switch c {
			case '"', '\'':
				quote = c
			case '=':
				if count++; count > max {
					return start
				}
			case '>':
				inTag = false
			}
		case c == '<':
			var skipped bool
			for _, p := range [][2]string{{"<!--", "-->"}, {"<![CDATA[", "]]>"}, {"<?", "?>"}} {
				if i, skipped = skip(i, p[0], p[1]); skipped {
					break
				}
			}
			if !skipped {
				inTag, count, start = true, 0, i
			}
		}
	}
	return -1
}

// lineAt is the 1-based line number of offset off in src.
func lineAt(src []byte, off int) int {
	off = min(max(off, 0), len(src))
	return 1 + bytes.Count(src[:off], []byte{'\n'})
}

// Parse parses src, which must be UTF-8, and returns its tree. It refuses
// documents with a DOCTYPE, unknown entities and malformed XML, with a
// *SyntaxError naming the line: besides what encoding/xml checks, an end
// tag that does not match its start tag, an XML declaration anywhere but at
// the very start (after an optional byte-order mark; a blank line before it
// is an error, as XML 1.0 section 2.8 requires), a repeated attribute, text
// outside the root element, and a document with no or several root
// elements.
//
// Parse applies DefaultLimits: a document nested deeper or with more nodes
// is refused with a *LimitError. Parsing is linear in the document's size;
// each element's namespace URI is resolved on the way (Node.URI).
func Parse(src []byte) (*Document, error) { return DefaultLimits.Parse(src) }

// Parse is the package's Parse under the limits l (a zero field means the
// default's value).
func (l Limits) Parse(src []byte) (*Document, error) {
	if l.Depth <= 0 {
		l.Depth = DefaultLimits.Depth
	}
	if l.Nodes <= 0 {
		l.Nodes = DefaultLimits.Nodes
	}
	if l.Attributes <= 0 {
		l.Attributes = DefaultLimits.Attributes
	}
	if at := manyAttributes(src, l.Attributes); at >= 0 {
		return nil, &LimitError{Line: lineAt(src, at), What: "attributes per element", Limit: l.Attributes}
	}
	d := xml.NewDecoder(bytes.NewReader(src))
	d.Strict = true
	d.CharsetReader = func(label string, _ io.Reader) (io.Reader, error) {
		return nil, fmt.Errorf("%w: %q (transcode it with Decode first)", ErrEncoding, label)
	}
	p := &parser{src: src, limits: l, root: &Node{Kind: DocumentNode, End: len(src)}}
	p.cur = p.root
	if bytes.HasPrefix(src, []byte("\ufeff")) {
		p.bomLen = 3
	}
	for {
		start := int(d.InputOffset())
		tok, err := d.RawToken()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, p.decodeError(err, start)
		}
		if err := p.token(tok, start, int(d.InputOffset())); err != nil {
			return nil, err
		}
	}
	if p.cur != p.root {
		return nil, p.bad(len(src), "document ends inside <%s> opened on line %d", p.cur.QName(), lineAt(src, p.cur.Start))
	}
	if p.roots == 0 {
		if len(bytes.TrimSpace(src)) == 0 {
			return nil, p.bad(len(src), "the document is empty")
		}
		return nil, p.bad(len(src), "no root element")
	}
	return &Document{Src: src, Root: p.root}, nil
}

// parser builds the tree of one document, token by token.
type parser struct {
	src    []byte
	limits Limits
	root   *Node
	cur    *Node // the element being filled (root outside the root element)
	bomLen int   // 3 after a byte-order mark

	roots, depth, nodes int
	ns                  nsStack
}

// bad is a *SyntaxError at the line of offset off.
func (p *parser) bad(off int, format string, args ...any) error {
	return &SyntaxError{Line: lineAt(p.src, off), Msg: fmt.Sprintf(format, args...)}
}

// decodeError is the error to return for the decoder's err at offset
// start: ErrEncoding as it is, a syntax error naming its line.
func (p *parser) decodeError(err error, start int) error {
	var se *xml.SyntaxError
	if errors.Is(err, ErrEncoding) {
		return err
	}
	if errors.As(err, &se) {
		return &SyntaxError{Line: se.Line, Msg: se.Msg}
	}
	return p.bad(start, "%v", err)
}

// token adds the token tok, found between the offsets start and end, to
// the tree.
func (p *parser) token(tok xml.Token, start, end int) error {
	if _, isEnd := tok.(xml.EndElement); !isEnd {
		if p.nodes++; p.nodes > p.limits.Nodes {
			return &LimitError{Line: lineAt(p.src, start), What: "node count", Limit: p.limits.Nodes}
		}
	}
	cur := p.cur
	switch t := tok.(type) {
	case xml.StartElement:
		return p.startElement(t, start, end)
	case xml.EndElement:
		return p.endElement(t, start, end)
	case xml.CharData:
		if cur == p.root && len(bytes.TrimLeft(bytes.TrimPrefix(t, []byte("\ufeff")), " \t\r\n")) > 0 {
			return p.bad(start, "text outside the root element")
		}
		cur.Children = append(cur.Children, &Node{Kind: TextNode, Start: start, End: end, Data: string(t), Parent: cur})
	case xml.Comment:
		if err := notChars(t); err != nil {
			return p.bad(start, "comment: %v", err)
		}
		cur.Children = append(cur.Children, &Node{Kind: CommentNode, Start: start, End: end, Data: string(t), Parent: cur})
	case xml.ProcInst:
		if strings.EqualFold(t.Target, "xml") && (start != p.bomLen || t.Target != "xml") {
			return p.bad(start, "XML declaration not at the very start of the document (nothing, not even a blank line, may precede it)")
		}
		if t.Target == "xml" && !xmlDecl.Match(t.Inst) {
			return p.bad(start, "XML declaration %q: it holds version, then optionally encoding and standalone (yes or no), each once, in that order", oneLine(t.Inst))
		}
		if err := notChars(t.Inst); err != nil {
			return p.bad(start, "processing instruction <?%s?>: %v", t.Target, err)
		}
		cur.Children = append(cur.Children, &Node{Kind: ProcInstNode, Start: start, End: end, Data: t.Target + " " + string(t.Inst), Parent: cur})
	case xml.Directive:
		return fmt.Errorf("line %d: %w", lineAt(p.src, start), ErrDTD)
	}
	return nil
}

// startElement opens the element of start tag t.
func (p *parser) startElement(t xml.StartElement, start, end int) error {
	src := p.src
	if p.depth++; p.depth > p.limits.Depth {
		return &LimitError{Line: lineAt(src, start), What: "nesting depth", Limit: p.limits.Depth}
	}
	if p.cur == p.root {
		if p.roots++; p.roots > 1 {
			return p.bad(start, "a second root element <%s> (a document has exactly one)", qname(t.Name))
		}
	}
	n := &Node{Kind: ElementNode, Name: t.Name, Start: start, StartTagEnd: end, Parent: p.cur}
	attrs, err := scanAttrs(src[start:end], start, t.Attr)
	if err != nil {
		return p.bad(start, "%v", err)
	}
	for i, a := range t.Attr {
		for _, b := range t.Attr[:i] {
			if a.Name == b.Name {
				return p.bad(start, "attribute %s repeated in <%s>", qname(a.Name), qname(t.Name))
			}
		}
	}
	n.Attrs = attrs
	n.SelfClosing = bytes.HasSuffix(src[start:end], []byte("/>"))
	p.ns.push(attrs)
	if err := p.ns.check(t); err != nil {
		return p.bad(start, "<%s>: %v", qname(t.Name), err)
	}
	n.uri, n.uriSet = p.ns.lookup(t.Name.Space), true
	p.cur.Children = append(p.cur.Children, n)
	p.cur = n
	return nil
}

// endElement closes the element being filled with end tag t.
func (p *parser) endElement(t xml.EndElement, start, end int) error {
	cur := p.cur
	if cur.Kind != ElementNode {
		return p.bad(start, "end tag </%s> without a start tag", qname(t.Name))
	}
	if t.Name != cur.Name {
		return p.bad(start, "end tag </%s> does not match start tag <%s> of line %d", qname(t.Name), cur.QName(), lineAt(p.src, cur.Start))
	}
	cur.EndTagStart, cur.End = start, end
	p.ns.pop()
	p.depth--
	p.cur = cur.Parent
	return nil
}

func qname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return n.Space + ":" + n.Local
}

// scanAttrs locates the raw value of each attribute inside the start tag raw.
// The decoder has already checked the tag's syntax, so a simple scan suffices.
func scanAttrs(raw []byte, base int, decoded []xml.Attr) ([]Attr, error) {
	if len(decoded) == 0 {
		return nil, nil
	}
	out := make([]Attr, 0, len(decoded))
	i := 1 // skip '<'
	for i < len(raw) && !isXMLSpace(raw[i]) && raw[i] != '>' && raw[i] != '/' {
		i++
	}
	for _, a := range decoded {
		// Skip to '=' after the name, then to the opening quote.
		eq := bytes.IndexByte(raw[i:], '=')
		if eq < 0 {
			return nil, fmt.Errorf("attribute %q: no '='", a.Name.Local)
		}
		i += eq + 1
		for i < len(raw) && isXMLSpace(raw[i]) {
			i++
		}
		if i >= len(raw) || (raw[i] != '"' && raw[i] != '\'') {
			return nil, fmt.Errorf("attribute %q: unquoted value", a.Name.Local)
		}
		q := raw[i]
		closeAt := bytes.IndexByte(raw[i+1:], q)
		if closeAt < 0 {
			return nil, fmt.Errorf("attribute %q: unterminated value", a.Name.Local)
		}
		out = append(out, Attr{Name: a.Name, Value: a.Value, Start: base + i + 1, End: base + i + 1 + closeAt, Quote: q})
		i += closeAt + 2
		// White space must part one attribute from the next (encoding/xml
		// reads a="1"b="2" without a word).
		if i < len(raw) && !isXMLSpace(raw[i]) && raw[i] != '/' && raw[i] != '>' {
			return nil, fmt.Errorf("attribute %q: no white space before the next attribute", a.Name.Local)
		}
	}
	return out, nil
}

// xmlDecl is the content of a well-formed XML declaration (XML 1.0,
// production 23): version, then optionally encoding and standalone.
var xmlDecl = regexp.MustCompile(`^[ \t\r\n]*version[ \t\r\n]*=[ \t\r\n]*("1\.[0-9]+"|'1\.[0-9]+')` +
	`([ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*("[A-Za-z][A-Za-z0-9._-]*"|'[A-Za-z][A-Za-z0-9._-]*'))?` +
	`([ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*("(yes|no)"|'(yes|no)'))?[ \t\r\n]*$`)

// notChars says which character of b, if any, XML does not allow (XML
// 1.0, production 2: no control character but tab, line feed and carriage
// return, no U+FFFE or U+FFFF, UTF-8 only); encoding/xml checks text and
// attribute values, not comments and processing instructions.
func notChars(b []byte) error {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return errors.New("invalid UTF-8")
		}
		if !(r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF || r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF) {
			return fmt.Errorf("character U+%04X is not allowed in XML", r)
		}
		i += size
	}
	return nil
}

// oneLine is b quoted on one line, at most 60 bytes of it.
func oneLine(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}

func isXMLSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// Elements returns the element children of n in document order.
func (n *Node) Elements() []*Node {
	var out []*Node
	for _, c := range n.Children {
		if c.Kind == ElementNode {
			out = append(out, c)
		}
	}
	return out
}

// Walk calls fn for n and every element below it in document order; when fn
// returns false the element's descendants are skipped.
func (n *Node) Walk(fn func(*Node) bool) {
	if n.Kind == ElementNode && !fn(n) {
		return
	}
	for _, c := range n.Children {
		if c.Kind == ElementNode {
			c.Walk(fn)
		}
	}
}

// Attr returns the attribute written with the given prefix and local name.
func (n *Node) Attr(prefix, local string) (Attr, bool) {
	for _, a := range n.Attrs {
		if a.Name.Space == prefix && a.Name.Local == local {
			return a, true
		}
	}
	return Attr{}, false
}

// Text returns the decoded text of an element whose content is only
// character data (an empty element gives ""). ok is false when the element
// holds child elements, comments or processing instructions, so that its
// content cannot be replaced as one text; text is then its own character
// data (not that of its child elements), so that a caller can tell such an
// element with text from an empty one.
func (n *Node) Text() (text string, ok bool) {
	var sb strings.Builder
	ok = true
	for _, c := range n.Children {
		if c.Kind != TextNode {
			ok = false
			continue
		}
		sb.WriteString(c.Data)
	}
	return sb.String(), ok
}

// NamespaceURI resolves prefix ("" for the default namespace) through the
// xmlns declarations of n and its ancestors. The xml prefix is built in.
func (n *Node) NamespaceURI(prefix string) string {
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace"
	}
	for e := n; e != nil; e = e.Parent {
		for _, a := range e.Attrs {
			if (prefix == "" && a.Name.Space == "" && a.Name.Local == "xmlns") ||
				(prefix != "" && a.Name.Space == "xmlns" && a.Name.Local == prefix) {
				return a.Value
			}
		}
	}
	return ""
}

// URI returns the namespace URI of element n (resolved once by Parse).
func (n *Node) URI() string {
	if n.uriSet {
		return n.uri
	}
	return n.NamespaceURI(n.Name.Space)
}

// nsStack holds the namespace bindings in scope while parsing: for each
// prefix ("" for the default namespace) the stack of URIs bound to it, and
// for each open element the prefixes it bound, so that every lookup, push
// and pop costs O(1) per attribute whatever the depth.
type nsStack struct {
	bound  map[string][]string
	frames [][]string
}

func (s *nsStack) push(attrs []Attr) {
	var mine []string
	for _, a := range attrs {
		var prefix string
		switch {
		case a.Name.Space == "" && a.Name.Local == "xmlns":
		case a.Name.Space == "xmlns":
			prefix = a.Name.Local
		default:
			continue
		}
		if s.bound == nil {
			s.bound = map[string][]string{}
		}
		s.bound[prefix] = append(s.bound[prefix], a.Value)
		mine = append(mine, prefix)
	}
	s.frames = append(s.frames, mine)
}

func (s *nsStack) pop() {
	top := s.frames[len(s.frames)-1]
	s.frames = s.frames[:len(s.frames)-1]
	for _, p := range top {
		b := s.bound[p]
		s.bound[p] = b[:len(b)-1]
	}
}

// check says what breaks the rules of XML namespaces in start tag t
// (whose declarations are pushed): a prefix of the element or of an
// attribute that is not declared, a prefix declared with an empty name
// (xmlns:p=""), or the reserved prefixes xml and xmlns bound otherwise
// than they are. encoding/xml reads each of them without a word, and the
// document written back is not one a namespace-aware reader takes.
func (s *nsStack) check(t xml.StartElement) error {
	for _, a := range t.Attr {
		if a.Name.Space != "xmlns" {
			continue
		}
		switch {
		case a.Name.Local == "xmlns":
			return errors.New("the prefix xmlns cannot be declared")
		case a.Name.Local == "xml" && a.Value != "http://www.w3.org/XML/1998/namespace":
			return errors.New("the prefix xml cannot be bound to another namespace")
		case a.Value == "":
			return fmt.Errorf("xmlns:%s=\"\": a prefix cannot be declared with an empty namespace name (XML 1.0 namespaces)", a.Name.Local)
		}
	}
	declared := func(prefix string) bool {
		return prefix == "" || prefix == "xml" || prefix == "xmlns" || len(s.bound[prefix]) > 0
	}
	if !declared(t.Name.Space) {
		return fmt.Errorf("the prefix %s is not declared (no xmlns:%s in scope)", t.Name.Space, t.Name.Space)
	}
	for _, a := range t.Attr {
		if !declared(a.Name.Space) {
			return fmt.Errorf("attribute %s:%s: the prefix %s is not declared (no xmlns:%s in scope)", a.Name.Space, a.Name.Local, a.Name.Space, a.Name.Space)
		}
	}
	return nil
}

func (s *nsStack) lookup(prefix string) string {
	if prefix == "xml" {
		return "http://www.w3.org/XML/1998/namespace"
	}
	if b := s.bound[prefix]; len(b) > 0 {
		return b[len(b)-1]
	}
	return ""
}

// QName returns the element name as written, prefix:local or local.
func (n *Node) QName() string {
	if n.Name.Space == "" {
		return n.Name.Local
	}
	return n.Name.Space + ":" + n.Name.Local
}

// AttrInsertPos returns the offset inside n's start tag where a new attribute
// can be inserted: just after the last attribute, or after the element name.
func (n *Node) AttrInsertPos() int {
	if len(n.Attrs) > 0 {
		return n.Attrs[len(n.Attrs)-1].End + 1
	}
	return n.Start + 1 + len(n.QName())
}

// Indent returns the whitespace between the previous line break and the
// node's start, including that line break ("\n  ", "\r\n\t" or "\r  "),
// when the node is preceded on its line only by whitespace; otherwise "".
func (n *Node) Indent(src []byte) string {
	i := n.Start
	for i > 0 && (src[i-1] == ' ' || src[i-1] == '\t') {
		i--
	}
	switch {
	case i > 1 && src[i-2] == '\r' && src[i-1] == '\n':
		i -= 2
	case i > 0 && (src[i-1] == '\n' || src[i-1] == '\r'):
		i--
	default:
		return ""
	}
	return string(src[i:n.Start])
}
