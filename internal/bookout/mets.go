// Package bookout writes what the tools made of a book back where archive
// viewers look for it: a METS file with one more fileGrp for the
// translated text files (AddToMETS, undone byte for byte by
// RemoveFromMETS), and for a IIIF manifest W3C annotation pages per canvas
// (translations as supplementing TextualBody annotations, page classes as
// classifying annotations) with a derived manifest linking them (iiif.go).
// It is shared by both tools and imports neither wing.
package bookout

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"archivekit/internal/book"
)

// METS and XLink namespaces.
const (
	metsNS  = "http://www.loc.gov/METS/"
	xlinkNS = "http://www.w3.org/1999/xlink"
)

// Agent is the software named in the metsHdr agent and annotation
// generators.
type Agent struct {
	// Name is the software's name ("archivekit translate").
	Name string
	// Version is its version ("" when unknown).
	Version string
	// Homepage is a URL naming it, for IIIF generators ("" when none).
	Homepage string
	// With says what the software ran with, in parentheses after its
	// version ("demo models v1.4 …, CC BY-NC 4.0"); "" for nothing.
	With string
}

// String names the agent: "archivekit pageclass 0.1.0 (with …)".
func (a Agent) String() string {
	s := a.Name
	if a.Version != "" {
		s += " " + a.Version
	}
	if a.With != "" {
		s += " (" + a.With + ")"
	}
	return s
}

// METSFile is one file of the added fileGrp.
type METSFile struct {
	// PageID is the ID of the physical div (page) the file belongs to.
	PageID string
	// ID is the new file's ID (an xsd:ID, unique in the document); ""
	// derives it from the group and SourceID (or the page).
	ID string
	// SourceID is the METS file ID of the text it was made from.
	SourceID string
	// Href is the file's location: a path relative to the new METS file
	// (FLocat LOCTYPE OTHER, OTHERLOCTYPE FILE, as OCR-D writes paths), or
	// a URL (LOCTYPE URL).
	Href string
	// MIMEType is the file's type (application/alto+xml,
	// application/vnd.prima.page+xml, text/vnd.hocr+html, ...).
	MIMEType string
}

// METSOptions says what AddToMETS adds.
type METSOptions struct {
	// Group is the USE of the new fileGrp (see GroupName).
	Group string
	// Agent is the software recorded in metsHdr.
	Agent Agent
	// Note is the agent's note (what was done; "machine translation into
	// en (en-t-cs-t0-und)"); RemoveFromMETS finds the agent by the
	// "fileGrp <Group>: " that starts it.
	Note string
}

// GroupName is the USE of a group of text files translated into lang
// (an ISO 639 code), named after the book's own groups: OCR-D's
// convention (OCR-D-MT-EN) when one of uses starts with "OCR-D-", else
// the source group's USE with "_EN" (FULLTEXT_EN; FULLTEXT when source
// is "").
func GroupName(uses []string, source, lang string) string {
	l := strings.ToUpper(lang)
	for _, u := range uses {
		if strings.HasPrefix(u, "OCR-D-") {
			return "OCR-D-MT-" + l
		}
	}
	if source == "" {
		source = "FULLTEXT"
	}
	return source + "_" + l
}

// Uses lists the USE of every fileGrp of a METS document, in order.
func Uses(src []byte) ([]string, error) {
	root, err := parseMETS(src)
	if err != nil {
		return nil, err
	}
	var out []string
	root.walk(func(e *elem) bool {
		if e.name.Local == "fileGrp" {
			if u, ok := e.attr("USE"); ok {
				out = append(out, u)
			}
		}
		return true
	})
	return out, nil
}

// ResolveLinks returns src with every relative location (an xlink:href
// without a URL scheme) of its FLocat, mdRef and mptr elements resolved
// against base, the URL the METS document was read from (RFC 3986,
// url.ResolveReference), and the hrefs it changed (their values, trimmed)
// in document order: a copy of a METS file read from a URL, written
// elsewhere, then leads to the files it read. A file URL the book reader
// takes as relative (file://name/rest) is resolved too. Only those attribute values
// change (each keeps its quotes); empty hrefs are left as they are, and an
// href that is not a URL reference is an error.
func ResolveLinks(src []byte, base *url.URL) ([]byte, []string, error) {
	return RewriteLinks(src, func(h string) (string, bool, error) {
		u, err := url.Parse(h)
		if err != nil {
			return "", false, fmt.Errorf("bookout: METS location %q: %w", h, err)
		}
		r, ok := resolveHref(u, base)
		return r, ok, nil
	})
}

// resolveHref is ResolveLinks' rule for one href u: a relative reference
// resolved against base, and so is a file URL the book reader reads as
// relative (file://name/rest: book.FileURLPath), which it resolves against
// a METS URL the same way; other URLs (file:///absolute included) are
// kept (false).
func resolveHref(u, base *url.URL) (string, bool) {
	if u.Scheme == "file" && u.Opaque == "" && u.Host != "" && u.Host != "localhost" {
		u = &url.URL{Path: book.FileURLPath(u)}
	} else if u.Scheme != "" {
		return "", false
	}
	return base.ResolveReference(u).String(), true
}

// RewriteLinks returns src with the xlink:href of its FLocat, mdRef and
// mptr elements (not those inside embedded xmlData or binData records)
// replaced by what to returns for their value (trimmed, decoded; empty
// hrefs are not asked) where it returns true, and the values it replaced
// in document order. Only those attribute values change, each written
// escaped in its own quotes; an error of to ends it.
func RewriteLinks(src []byte, to func(href string) (string, bool, error)) ([]byte, []string, error) {
	root, err := parseMETS(src)
	if err != nil {
		return nil, nil, err
	}
	var edits []splice
	var changed []string
	root.walk(func(e *elem) bool {
		switch e.name.Local {
		case "xmlData", "binData":
			return false // embedded records are not METS locations
		case "FLocat", "mdRef", "mptr":
		default:
			return true
		}
		for _, v := range attrValues(src, e) {
			h := strings.TrimSpace(unescape(src[v.at:v.end]))
			if v.local != "href" || h == "" || err != nil {
				continue
			}
			var repl string
			var ok bool
			if repl, ok, err = to(h); ok && err == nil {
				edits = append(edits, splice{v.at, v.end, escape(repl)})
				changed = append(changed, h)
			}
		}
		return false
	})
	if err != nil {
		return nil, nil, err
	}
	return apply(src, edits), changed, nil
}

func parseMETS(src []byte) (*elem, error) {
	if !utf8.Valid(src) {
		return nil, errors.New("bookout: METS: not UTF-8")
	}
	root, err := parseTree(src)
	if err != nil {
		return nil, fmt.Errorf("bookout: METS: %w", err)
	}
	if root.name.Local != "mets" {
		return nil, fmt.Errorf("bookout: root element <%s> is not METS <mets>", root.name.Local)
	}
	return root, nil
}

// idChars are the characters kept in a derived ID.
var idChars = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// AddToMETS returns src with, and nothing else changed: one fileGrp (USE
// opt.Group) after the last fileGrp of fileSec holding files, one fptr per
// file after the last fptr of its page's physical div, and one agent
// (TYPE OTHER, OTHERTYPE SOFTWARE, ROLE OTHER, OTHERROLE TRANSLATOR, its
// name opt.Agent and note "fileGrp <Group>: <Note>") after the metsHdr's
// agents (a metsHdr is added first in the document when there is none).
// New lines take the indentation of their neighbours. The group must
// not exist yet, every PageID must be a physical div, every ID new.
func AddToMETS(src []byte, files []METSFile, opt METSOptions) ([]byte, error) {
	root, err := parseMETS(src)
	if err != nil {
		return nil, err
	}
	if opt.Group == "" {
		return nil, errors.New("bookout: no fileGrp USE given")
	}
	s := &metsState{src: src, root: root, step: step(src), ids: map[string]bool{}, divs: map[string]*elem{}}
	if err := s.index(opt.Group); err != nil {
		return nil, err
	}
	if s.fileSec == nil {
		return nil, errors.New("bookout: METS without fileSec")
	}
	ids := make([]string, len(files))
	for i, f := range files {
		if s.divs[f.PageID] == nil {
			return nil, fmt.Errorf("bookout: no physical div with ID %q", f.PageID)
		}
		ids[i] = f.ID
		if ids[i] == "" {
			ids[i] = idChars.ReplaceAllString(opt.Group+"_"+firstOf(f.SourceID, f.PageID), "_")
		}
		if s.ids[ids[i]] {
			return nil, fmt.Errorf("bookout: ID %q already in the document", ids[i])
		}
		s.ids[ids[i]] = true
	}
	var edits []splice
	edits = append(edits, s.fileGrp(files, ids, opt.Group))
	byDiv := map[*elem][]string{}
	var order []*elem
	for i, f := range files {
		d := s.divs[f.PageID]
		if byDiv[d] == nil {
			order = append(order, d)
		}
		byDiv[d] = append(byDiv[d], ids[i])
	}
	for _, d := range order {
		edits = append(edits, s.fptrs(d, byDiv[d]))
	}
	edits = append(edits, s.agent(opt))
	return apply(src, edits), nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

type metsState struct {
	src      []byte
	root     *elem
	step     string
	fileSec  *elem
	metsHdr  *elem
	ids      map[string]bool
	divs     map[string]*elem // physical divs by ID
	xlinkPfx string           // the root's prefix for XLink ("" when not bound there)
}

// index finds fileSec, metsHdr, IDs and physical divs, and checks that
// group is new.
func (s *metsState) index(group string) error {
	for _, a := range s.root.attrs {
		if a.Name.Space == "xmlns" && a.Value == xlinkNS {
			s.xlinkPfx = a.Name.Local
		}
	}
	var dup error
	s.root.walk(func(e *elem) bool {
		if id, ok := e.attr("ID"); ok {
			s.ids[id] = true
		}
		switch e.name.Local {
		case "metsHdr":
			if e.parent == s.root {
				s.metsHdr = e
			}
		case "fileSec":
			s.fileSec = e
		case "fileGrp":
			if u, _ := e.attr("USE"); u == group {
				dup = fmt.Errorf("bookout: the METS has a fileGrp USE=%q already", group)
			}
		case "structMap":
			if t, _ := e.attr("TYPE"); !strings.EqualFold(t, "PHYSICAL") {
				return false
			}
		case "div":
			if id, ok := e.attr("ID"); ok {
				s.divs[id] = e
			}
		}
		return true
	})
	return dup
}

// after returns where and with what indentation a new child of parent
// goes: after its last child named one of names (else after its start
// tag, one step in from parent; inline in a self-closing parent).
func (s *metsState) after(parent *elem, names ...string) (at int, ind string) {
	var last *elem
	for _, c := range parent.children {
		for _, n := range names {
			if c.name.Local == n {
				last = c
			}
		}
	}
	if parent.selfClosing {
		return parent.startTagEnd, "" // inline, so the tag can be restored
	}
	if last != nil {
		return last.end, indent(s.src, last.start)
	}
	ind = indent(s.src, parent.start)
	if ind == "" {
		return parent.startTagEnd, ""
	}
	return parent.startTagEnd, ind + s.step
}

// insert returns the edit putting text (one element) as parent's new
// child at (at, ind); a self-closing parent gets an end tag, with the
// text right after its start tag (RemoveFromMETS restores it when
// nothing else is inside).
func (s *metsState) insert(parent *elem, at int, ind, text string) splice {
	if parent.selfClosing {
		return splice{parent.startTagEnd - 2, parent.startTagEnd, ">" + text + "</" + parent.qname(parent.name.Local) + ">"}
	}
	if ind == "" && parent.startTagEnd == parent.endTagStart && at == parent.startTagEnd {
		ind = "\n" // <div></div>: told apart from <div/> by the line break
	}
	return splice{at, at, ind + text}
}

func (s *metsState) fileGrp(files []METSFile, ids []string, group string) splice {
	fs := s.fileSec
	at, ind := s.after(fs, "fileGrp")
	q := fs.qname
	href := "xlink:href"
	decl := ""
	if s.xlinkPfx != "" {
		href = s.xlinkPfx + ":href"
	} else {
		decl = ` xmlns:xlink="` + xlinkNS + `"`
	}
	nl, in1, st := lines(ind, s.step)
	var b strings.Builder
	b.WriteString("<" + q("fileGrp") + ` USE="` + escape(group) + `">`)
	for i, f := range files {
		mime := ""
		if f.MIMEType != "" {
			mime = ` MIMETYPE="` + escape(f.MIMEType) + `"`
		}
		b.WriteString(nl + in1 + st + "<" + q("file") + ` ID="` + escape(ids[i]) + `"` + mime + ">")
		loc := `LOCTYPE="URL"`
		if !strings.Contains(f.Href, "://") {
			loc = `LOCTYPE="OTHER" OTHERLOCTYPE="FILE"` // a path, as OCR-D writes them
		}
		b.WriteString(nl + in1 + st + st + "<" + q("FLocat") + decl + " " + loc + " " + href + `="` + escape(f.Href) + `"/>`)
		b.WriteString(nl + in1 + st + "</" + q("file") + ">")
	}
	b.WriteString(nl + in1 + "</" + q("fileGrp") + ">")
	return s.insert(fs, at, ind, b.String())
}

func (s *metsState) fptrs(div *elem, ids []string) splice {
	at, ind := s.after(div, "mptr", "fptr")
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteString(ind)
		}
		b.WriteString("<" + div.qname("fptr") + ` FILEID="` + escape(id) + `"/>`)
	}
	return s.insert(div, at, ind, b.String())
}

// agentRole marks the agent AddToMETS writes.
const agentRole = "TRANSLATOR"

func (s *metsState) agent(opt METSOptions) splice {
	q := s.root.qname
	agent := func(ind string) string {
		nl, in1, st := lines(ind, s.step)
		return "<" + q("agent") + ` ROLE="OTHER" OTHERROLE="` + agentRole + `" TYPE="OTHER" OTHERTYPE="SOFTWARE">` +
			nl + in1 + st + "<" + q("name") + ">" + escape(opt.Agent.String()) + "</" + q("name") + ">" +
			nl + in1 + st + "<" + q("note") + ">" + escape("fileGrp "+opt.Group+": "+opt.Note) + "</" + q("note") + ">" +
			nl + in1 + "</" + q("agent") + ">"
	}
	if h := s.metsHdr; h != nil {
		at, ind := s.after(h, "agent")
		return s.insert(h, at, ind, agent(ind))
	}
	// No metsHdr: one goes first in mets, holding the agent.
	at, ind := s.root.startTagEnd, ""
	if len(s.root.children) > 0 {
		ind = indent(s.src, s.root.children[0].start)
	}
	in1 := ind + s.step
	if ind == "" {
		in1 = ""
	}
	return splice{at, at, ind + "<" + q("metsHdr") + ` ID="` + escape(hdrID(opt.Group)) + `">` + in1 + agent(in1) + ind + "</" + q("metsHdr") + ">"}
}

// hdrID is the ID of the metsHdr AddToMETS writes where there was none.
func hdrID(group string) string { return idChars.ReplaceAllString("HDR_"+group, "_") }

// lines returns, for an element written at indentation ind, the line
// break, the indentation and the step of its children's lines: none of
// them when it is written inline (ind "").
func lines(ind, step string) (nl, in1, st string) {
	if ind == "" {
		return "", "", ""
	}
	return "\n", strings.TrimPrefix(ind, "\n"), step
}

// RemoveFromMETS undoes AddToMETS(src, files, opt) with opt.Group ==
// group: it deletes the fileGrp of that USE, the fptrs to its files and
// the agent whose note starts "fileGrp <group>: " (with its metsHdr when
// that holds nothing else), each with the indentation it was written
// with, giving back AddToMETS's input byte for byte.
func RemoveFromMETS(src []byte, group string) ([]byte, error) {
	root, err := parseMETS(src)
	if err != nil {
		return nil, err
	}
	var grp *elem
	ours := map[string]bool{}
	var agents []*elem
	root.walk(func(e *elem) bool {
		switch e.name.Local {
		case "fileGrp":
			if u, _ := e.attr("USE"); u == group && grp == nil {
				grp = e
				e.walk(func(f *elem) bool {
					if id, ok := f.attr("ID"); ok && f.name.Local == "file" {
						ours[id] = true
					}
					return true
				})
				return false
			}
		case "agent":
			if r, _ := e.attr("OTHERROLE"); r == agentRole && noteStarts(src, e, "fileGrp "+group+": ") {
				agents = append(agents, e)
			}
			return false
		}
		return true
	})
	if grp == nil {
		return nil, fmt.Errorf("bookout: no fileGrp USE=%q", group)
	}
	var edits []splice
	edits = append(edits, removeChildren(src, grp.parent, []*elem{grp})...)
	root.walk(func(e *elem) bool {
		if e.name.Local != "div" {
			return true
		}
		var mine []*elem
		for _, c := range e.children {
			if id, _ := c.attr("FILEID"); c.name.Local == "fptr" && ours[id] {
				mine = append(mine, c)
			}
		}
		edits = append(edits, removeChildren(src, e, mine)...)
		return true
	})
	for _, a := range agents {
		h := a.parent
		if id, _ := h.attr("ID"); id == hdrID(group) && len(h.children) == 1 {
			edits = append(edits, removal(src, h)) // the metsHdr AddToMETS wrote
			continue
		}
		edits = append(edits, removeChildren(src, h, []*elem{a})...)
	}
	return apply(src, edits), nil
}

// removal deletes e with its indentation.
func removal(src []byte, e *elem) splice {
	return splice{e.start - len(indent(src, e.start)), e.end, ""}
}

// removeChildren deletes mine (children of parent) with their
// indentation; when they are all parent holds, with nothing between its
// tags but them, parent gets back its self-closing tag.
func removeChildren(src []byte, parent *elem, mine []*elem) []splice {
	if len(mine) == 0 {
		return nil
	}
	if len(mine) == len(parent.children) && !parent.text {
		return []splice{{parent.startTagEnd - 1, parent.end, "/>"}}
	}
	var out []splice
	for _, c := range mine {
		out = append(out, removal(src, c))
	}
	return out
}

// noteStarts reports whether one of e's note children starts with prefix.
func noteStarts(src []byte, e *elem, prefix string) bool {
	for _, c := range e.children {
		if c.name.Local == "note" && !c.selfClosing {
			if strings.HasPrefix(unescape(src[c.startTagEnd:c.endTagStart]), prefix) {
				return true
			}
		}
	}
	return false
}
