package metadata

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"

	"archivekit/internal/regularfile"
	"archivekit/internal/translate/xmlsplice"
)

// Namespaces binds the XPath prefixes of the field list to namespace URIs.
// A binding ending in "/" also matches every URI that starts with it, so
// "arch" matches every version of the records schema.
type Namespaces map[string]string

// DefaultNamespaces binds arch: to the records source's schema namespace (any
// version) and oai: to OAI-PMH 2.0, whatever prefixes a file uses.
var DefaultNamespaces = Namespaces{
	"arch": "https://api.aiscr.cz/schema/amcr/",
	"oai":  "http://www.openarchives.org/OAI/2.0/",
}

// WithDocument returns ns extended with the prefixes the fields use that
// ns does not bind, each bound to the URI the document itself declares for
// it (its first xmlns:prefix declaration in document order), so a field
// list may use dc: or mods: as the documents write them. A prefix neither
// bound nor declared is an error naming it.
func (ns Namespaces) WithDocument(doc *xmlsplice.Document, fields []*XPath) (Namespaces, error) {
	out := ns
	for _, f := range fields {
		for _, p := range f.Prefixes() {
			if _, ok := out[p]; ok {
				continue
			}
			uri := ""
			doc.Root.Walk(func(n *xmlsplice.Node) bool {
				if a, ok := n.Attr("xmlns", p); ok && uri == "" {
					uri = a.Value
				}
				return uri == ""
			})
			if uri == "" {
				return nil, fmt.Errorf("xpath %q uses prefix %q, which is neither built in (arch:, oai:) nor declared by the document", f.Expr, p)
			}
			if len(out) == len(ns) {
				out = make(Namespaces, len(ns)+1)
				for k, v := range ns {
					out[k] = v
				}
			}
			out[p] = uri
		}
	}
	return out, nil
}

func (ns Namespaces) match(prefix, uri string) bool {
	want, ok := ns[prefix]
	if !ok {
		return false
	}
	return uri == want || strings.HasSuffix(want, "/") && strings.HasPrefix(uri, want)
}

// XPath is a compiled field expression. The supported subset is what field
// lists use: an absolute location path of child (/) and descendant (//)
// steps whose node tests are prefix:name, a bare name (no namespace), or *
// (with or without prefix). Predicates, other axes and functions are refused.
type XPath struct {
	Expr  string
	steps []step
}

type step struct {
	descendant    bool
	prefix, local string // local "*" matches any name
}

// Compile parses an XPath expression of the supported subset. The error
// quotes the expression.
func Compile(expr string) (*XPath, error) {
	x, err := compile(expr)
	if err != nil {
		return nil, fmt.Errorf("xpath %q: %w", expr, err)
	}
	return x, nil
}

// compile is Compile with an error that names the problem and the step's
// position but quotes nothing of the expression, for field lists whose
// lines may be anything (a mis-set path pointing at a secret).
func compile(expr string) (*XPath, error) {
	e := strings.TrimSpace(expr)
	if !strings.HasPrefix(e, "/") {
		return nil, errors.New("only absolute paths are supported")
	}
	x := &XPath{Expr: e}
	for n := 1; e != ""; n++ {
		desc := strings.HasPrefix(e, "//")
		if desc {
			e = e[2:]
		} else {
			e = e[1:]
		}
		name := e
		if i := strings.IndexByte(e, '/'); i >= 0 {
			name, e = e[:i], e[i:]
		} else {
			e = ""
		}
		if name == "" || strings.ContainsAny(name, "[]()@=|\"' ") || strings.Contains(name, "::") || name == "." || name == ".." {
			return nil, fmt.Errorf("step %d is not supported (only prefix:name, name and * steps)", n)
		}
		st := step{descendant: desc, local: name}
		if i := strings.IndexByte(name, ':'); i >= 0 {
			st.prefix, st.local = name[:i], name[i+1:]
			if st.prefix == "" || st.local == "" || strings.Contains(st.local, ":") {
				return nil, fmt.Errorf("step %d is not a name (prefix:name)", n)
			}
		}
		x.steps = append(x.steps, st)
	}
	return x, nil
}

// AsWritten is x with the prefixes el's document writes for the namespaces
// x's prefixes are bound to in ns (el an element x selected, or one of its
// ancestors naming them): the field list's //arch:amcr/arch:popis for a
// record that writes amcr: is //amcr:amcr/amcr:popis, as the original tool's
// logs name the field. A prefix the document does not write (a default
// namespace) is kept.
func (x *XPath) AsWritten(el *xmlsplice.Node, ns Namespaces) string {
	var b strings.Builder
	for _, st := range x.steps {
		b.WriteString(map[bool]string{true: "//", false: "/"}[st.descendant])
		if p := st.prefix; p != "" {
			for n := el; n != nil && n.Kind == xmlsplice.ElementNode; n = n.Parent {
				if n.Name.Space != "" && ns.match(st.prefix, n.URI()) {
					p = n.Name.Space
					break
				}
			}
			b.WriteString(p + ":")
		}
		b.WriteString(st.local)
	}
	return b.String()
}

// Prefixes returns the namespace prefixes the expression uses.
func (x *XPath) Prefixes() []string {
	var out []string
	for _, s := range x.steps {
		if s.prefix != "" {
			out = append(out, s.prefix)
		}
	}
	return out
}

// Select returns the elements of doc matched by x under the bindings ns,
// in document order and without duplicates.
func (x *XPath) Select(doc *xmlsplice.Document, ns Namespaces) []*xmlsplice.Node {
	ctx := []*xmlsplice.Node{doc.Root}
	for _, st := range x.steps {
		seen := map[*xmlsplice.Node]bool{}
		var next []*xmlsplice.Node
		add := func(n *xmlsplice.Node) {
			if !seen[n] && st.matches(n, ns) {
				seen[n] = true
				next = append(next, n)
			}
		}
		walked := -1 // end offset of the last subtree walked
		for _, c := range ctx {
			if st.descendant {
				// ctx is in document order: a node inside the subtree
				// walked last has all its descendants visited already, so
				// nested matches cost one walk, not one per level.
				if c.Kind != xmlsplice.DocumentNode && c.Start < walked {
					continue
				}
				walked = c.End
			}
			for _, ch := range c.Children {
				if ch.Kind != xmlsplice.ElementNode {
					continue
				}
				if st.descendant {
					ch.Walk(func(n *xmlsplice.Node) bool { add(n); return true })
				} else {
					add(ch)
				}
			}
		}
		ctx = sortByPosition(next)
	}
	return ctx
}

func (st step) matches(n *xmlsplice.Node, ns Namespaces) bool {
	if st.local != "*" && n.Name.Local != st.local {
		return false
	}
	uri := n.URI()
	if st.prefix == "" {
		return st.local == "*" || uri == ""
	}
	return ns.match(st.prefix, uri)
}

// sortByPosition orders nodes by their start offset (document order).
func sortByPosition(ns []*xmlsplice.Node) []*xmlsplice.Node {
	sort.SliceStable(ns, func(i, j int) bool { return ns[i].Start < ns[j].Start })
	return ns
}

// ParseFields compiles a field list: one XPath per line; blank lines and
// lines starting with # are ignored. name is used in error messages.
func ParseFields(name string, data []byte) ([]*XPath, error) {
	var out []*XPath
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		x, err := compile(line)
		if err != nil {
			// The line is not quoted: the file may not be a field list at all.
			return nil, fmt.Errorf("%s:%d: not an XPath target: %w", name, n, err)
		}
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no XPath targets", name)
	}
	return out, nil
}

// LoadFields reads and compiles the field-list file at path.
func LoadFields(path string) ([]*XPath, error) {
	data, err := regularfile.Read(path)
	if err != nil {
		return nil, err
	}
	return ParseFields(path, data)
}
