package book

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const metsNS = "http://www.loc.gov/METS/"

// ImageGroupPreference is the order in which METS fileGrps (USE) are
// tried for a page's image when Options.ImageGroup is empty: the usual
// names of Kitodo, Goobi and the DFG-Viewer (DEFAULT, MAX), OCR-D
// (OCR-D-IMG) and others. Matching is case-insensitive. When none of
// them holds images, the group whose files are images for the most pages
// is taken, thumbnail and download groups last.
var ImageGroupPreference = []string{
	"DEFAULT", "MAX", "OCR-D-IMG", "IMAGE", "IMAGES", "IMG", "PRESENTATION", "MASTER", "ORIGINAL", "LOCAL", "BOOKVIEWER", "VIEWER",
}

// lastResort are groups taken only when no other group holds images.
var lastResort = []string{"THUMBS", "THUMB", "THUMBNAIL", "THUMBNAILS", "MIN", "VIEWER_THUMB", "DOWNLOAD", "TEASER"}

// METS document, as far as it is read. Elements and attributes are
// matched by local name, whatever their prefix.
type metsDoc struct {
	ObjID      string      `xml:"OBJID,attr"`
	Groups     []fileGrp   `xml:"fileSec>fileGrp"`
	StructMaps []structMap `xml:"structMap"`
	Links      []smLink    `xml:"structLink>smLink"`
	// Languages are the MODS language terms of the descriptive metadata
	// written inside the METS file.
	Languages []string `xml:"dmdSec>mdWrap>xmlData>mods>language>languageTerm"`
	// DCLanguages are the Dublin Core languages (dc:language) and MARC
	// the MARCXML records of the descriptive metadata written inside it,
	// read when it has no MODS language.
	DCLanguages []string     `xml:"dmdSec>mdWrap>xmlData>dc>language"`
	MARC        []marcRecord `xml:"dmdSec>mdWrap>xmlData>record"`
	// MDRefs are the descriptive metadata kept in files of their own.
	MDRefs []mdRef `xml:"dmdSec>mdRef"`
}

// marcRecord is what a MARCXML record says of its languages: field 008,
// whose characters 35–37 are the main language's MARC code, and the
// codes of field 041 $a (several may be run together: "gerlat").
type marcRecord struct {
	Control []struct {
		Tag   string `xml:"tag,attr"`
		Value string `xml:",chardata"`
	} `xml:"controlfield"`
	Data []struct {
		Tag  string `xml:"tag,attr"`
		Subs []struct {
			Code  string `xml:"code,attr"`
			Value string `xml:",chardata"`
		} `xml:"subfield"`
	} `xml:"datafield"`
}

// languages are the record's language codes: 008's, then 041 $a's.
func (m marcRecord) languages() []string {
	var out []string
	for _, c := range m.Control {
		if c.Tag == "008" && len(c.Value) >= 38 {
			if code := strings.TrimSpace(c.Value[35:38]); code != "" && code != "|||" {
				out = append(out, code)
			}
		}
	}
	for _, d := range m.Data {
		if d.Tag != "041" {
			continue
		}
		for _, s := range d.Subs {
			v := strings.TrimSpace(s.Value)
			if s.Code != "a" || v == "" {
				continue
			}
			if len(v) > 3 && len(v)%3 == 0 && !strings.ContainsAny(v, " -") {
				for i := 0; i < len(v); i += 3 {
					out = append(out, v[i:i+3])
				}
				continue
			}
			out = append(out, v)
		}
	}
	return out
}

// mdRef is a dmdSec's reference to a metadata file.
type mdRef struct {
	MDType string `xml:"MDTYPE,attr"`
	Href   string `xml:"href,attr"`
}

// modsLanguages are the language terms of a MODS record or collection.
type modsLanguages struct {
	Terms      []string `xml:"language>languageTerm"`
	Collection []struct {
		Terms []string `xml:"language>languageTerm"`
	} `xml:"mods"`
}

type fileGrp struct {
	ID     string     `xml:"ID,attr"`
	Use    string     `xml:"USE,attr"`
	Files  []metsFile `xml:"file"`
	Groups []fileGrp  `xml:"fileGrp"`
}

type metsFile struct {
	ID       string    `xml:"ID,attr"`
	MIMEType string    `xml:"MIMETYPE,attr"`
	Use      string    `xml:"USE,attr"`
	FLocats  []flocat  `xml:"FLocat"`
	FContent *struct{} `xml:"FContent"`
}

type flocat struct {
	Href string `xml:"href,attr"`
}

type structMap struct {
	Type string `xml:"TYPE,attr"`
	Divs []div  `xml:"div"`
}

type div struct {
	ID         string `xml:"ID,attr"`
	Type       string `xml:"TYPE,attr"`
	Order      string `xml:"ORDER,attr"`
	OrderLabel string `xml:"ORDERLABEL,attr"`
	Label      string `xml:"LABEL,attr"`
	Fptrs      []fptr `xml:"fptr"`
	Mptrs      []mptr `xml:"mptr"`
	Divs       []div  `xml:"div"`
}

// mptr is a pointer to another METS document: in an anchor file of a
// multi-volume work (Kitodo, Goobi, the DFG-Viewer profile), one to each
// volume's METS, or from a volume back to its anchor.
type mptr struct {
	Href string `xml:"href,attr"`
}

type fptr struct {
	FileID string `xml:"FILEID,attr"`
	Areas  []area `xml:"area"`
	Seq    []area `xml:"seq>area"`
	Par    []area `xml:"par>area"`
	ParSeq []area `xml:"par>seq>area"`
}

type area struct {
	FileID string `xml:"FILEID,attr"`
}

type smLink struct {
	From string `xml:"from,attr"`
	To   string `xml:"to,attr"`
}

func (f fptr) fileIDs() []string {
	var ids []string
	if f.FileID != "" {
		ids = append(ids, f.FileID)
	}
	for _, as := range [][]area{f.Areas, f.Seq, f.Par, f.ParSeq} {
		for _, a := range as {
			if a.FileID != "" {
				ids = append(ids, a.FileID)
			}
		}
	}
	return ids
}

// file is a METS file with its group.
type file struct {
	metsFile
	group string // the fileGrp's USE, else the file's USE, else the group's ID
}

// referencedLanguages reads the languages of the MODS records that the
// METS file at l keeps in files of their own (dmdSec mdRef MDTYPE="MODS",
// as some digitisation workflows write them), the first MaxMODSRefs of
// them, each bounded by MaxBytes, into b.Languages; a record that cannot
// be read is a problem of the book, not an error. Only a reader that
// lists text files reads them: the languages serve translation.
func (r *reader) referencedLanguages(l loc, refs []mdRef, b *Book) {
	n := 0
	for _, ref := range refs {
		if !strings.EqualFold(ref.MDType, "MODS") || strings.TrimSpace(ref.Href) == "" {
			continue
		}
		if n++; n > MaxMODSRefs {
			break
		}
		at, err := r.locate(ref.Href, &l)
		var data []byte
		if err == nil {
			data, err = r.load(at)
		}
		var mods modsLanguages
		if err == nil {
			err = checkDepth(data, r.opts.MaxDepth)
		}
		if err == nil {
			err = xml.Unmarshal(data, &mods)
		}
		if err != nil {
			b.Problems = append(b.Problems, Problem{File: ref.Href, Reason: "its MODS record (dmdSec mdRef) cannot be read for the book's language: " + err.Error()})
			continue
		}
		terms := mods.Terms
		for _, m := range mods.Collection {
			terms = append(terms, m.Terms...)
		}
		for _, t := range terms {
			if t = strings.TrimSpace(t); t != "" && !slices.Contains(b.Languages, t) {
				b.Languages = append(b.Languages, t)
			}
		}
	}
}

// MaxMODSRefs is how many MODS records a METS file's dmdSecs may name
// in files of their own that are read for its language.
const MaxMODSRefs = 4

// readMETS reads a METS document (the root element, or the first
// mets:mets element inside another document such as an OAI-PMH answer).
func (r *reader) readMETS(l loc, data []byte) (*Book, error) {
	doc, err := r.decodeMETS(l, data)
	if err != nil {
		return nil, err
	}
	b := &Book{Kind: METS, ID: doc.ObjID}
	for _, l := range doc.Languages {
		if l = strings.TrimSpace(l); l != "" {
			b.Languages = append(b.Languages, l)
		}
	}
	if len(b.Languages) == 0 {
		// Dublin Core, then MARC, written inside; then MODS records
		// kept apart.
		other := doc.DCLanguages
		for _, m := range doc.MARC {
			other = append(other, m.languages()...)
		}
		for _, l := range other {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(b.Languages, l) {
				b.Languages = append(b.Languages, l)
			}
		}
	}
	if len(b.Languages) == 0 && r.opts.Text != TextNone {
		r.referencedLanguages(l, doc.MDRefs, b)
	}
	files := map[string]*file{}
	var order []string // group names in document order
	var addGroup func(g fileGrp)
	addGroup = func(g fileGrp) {
		for _, f := range g.Files {
			name := firstNonEmpty(g.Use, f.Use, g.ID, "(no USE)")
			files[f.ID] = &file{metsFile: f, group: name}
			if !containsFold(order, name) {
				order = append(order, name)
			}
		}
		for _, sub := range g.Groups {
			addGroup(sub)
		}
	}
	for _, g := range doc.Groups {
		addGroup(g)
	}
	for _, g := range append([]string{r.opts.ImageGroup}, r.opts.TextGroups...) {
		if g != "" && !containsFold(order, g) {
			return nil, fmt.Errorf("%s: no fileGrp %s (it has %s)", l, g, strings.Join(order, ", "))
		}
	}
	divs, err := physicalPages(l, doc)
	if err != nil {
		return nil, r.locateVolumes(err, l)
	}
	if len(divs) > r.opts.MaxPages {
		return nil, fmt.Errorf("%s: %w: %d pages, the limit is %d", l, ErrLimit, len(divs), r.opts.MaxPages)
	}
	ids := make([]string, len(divs))
	for i, d := range divs {
		ids[i] = d.ID
	}
	keep, err := r.sel.Apply(ids)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l, err)
	}
	skipped := r.skippedByType(doc)
	var chosen []div
	for _, i := range keep {
		if why, ok := skipped[divs[i].ID]; ok {
			b.Problems = append(b.Problems, Problem{Page: divs[i].ID, Reason: why})
			continue
		}
		chosen = append(chosen, divs[i])
	}
	b.ImageGroup = r.imageGroup(chosen, files, order)
	if b.ImageGroup == "" && r.opts.Text == TextNone {
		// Said to a reader for the images only: one for the text files
		// (translate) has all it needs from a METS of text files alone.
		b.Problems = append(b.Problems, Problem{Reason: "no fileGrp holds images"})
	}
	b.Problems = append(b.Problems, r.unlisted(divs, files, order, b.ImageGroup)...)
	b.Files = r.localFiles(l, divs, files)
	stop := r.prefetchTexts(l, b.ImageGroup, chosen, files)
	defer stop()
	for _, d := range chosen {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		b.Pages = append(b.Pages, r.metsPage(l, b, d, files))
	}
	return b, nil
}

// localFiles are the local files the divs point to, in every fileGrp
// (Book.Files), each once, in order.
func (r *reader) localFiles(base loc, divs []div, files map[string]*file) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range divs {
		for _, fp := range d.Fptrs {
			for _, id := range fp.fileIDs() {
				f, ok := files[id]
				if !ok {
					continue
				}
				href, reason := flocatOf(f.metsFile)
				if reason != "" {
					continue
				}
				if l, err := r.locate(href, &base); err == nil && l.url == nil && !seen[l.path] {
					seen[l.path] = true
					out = append(out, l.path)
				}
			}
		}
	}
	return out
}

// unlisted says, one problem a fileGrp, which files of the kind the
// reader takes (images of the image group, or files that may be text in
// the groups text is read from) no page lists: they have no place in the
// book's page order and are not read with the book, so the reader is told
// rather than losing them silently (a folder run may still take such a
// file as a file of its own). A page selection does not make a file unlisted:
// pages are all the physical pages.
func (r *reader) unlisted(pages []div, files map[string]*file, order []string, imageGroup string) []Problem {
	listed := map[string]bool{}
	for _, d := range pages {
		for _, fp := range d.Fptrs {
			for _, id := range fp.fileIDs() {
				listed[id] = true
			}
		}
	}
	type group struct {
		n     int
		first []string
	}
	left := map[string]*group{}
	for id, f := range files {
		if listed[id] || !r.takes(f, imageGroup) {
			continue
		}
		g := left[f.group]
		if g == nil {
			g = &group{}
			left[f.group] = g
		}
		g.n++
		name, _ := flocatOf(f.metsFile)
		g.first = append(g.first, cmp.Or(name, id))
	}
	var out []Problem
	for _, name := range order {
		g := left[name]
		if g == nil {
			continue
		}
		slices.Sort(g.first)
		kind := "file"
		if r.opts.Text == TextNone {
			kind = "image"
		}
		if g.n > 1 {
			kind += "s"
		}
		shown := strings.Join(g.first[:min(3, len(g.first))], ", ")
		if g.n > 3 {
			shown += ", ..."
		}
		out = append(out, Problem{Reason: fmt.Sprintf("fileGrp %s: %d %s listed by no page, not read with the book (%s)", name, g.n, kind, shown)})
	}
	return out
}

// takes says whether the reader takes file f when a page lists it: an
// image of the image group, or, for a reader of text, a file that may be
// text in a group text is read from.
func (r *reader) takes(f *file, imageGroup string) bool {
	if r.opts.Text == TextNone {
		return imageGroup != "" && strings.EqualFold(f.group, imageGroup)
	}
	return !strings.EqualFold(f.group, imageGroup) && maybeText(f.metsFile) &&
		(len(r.opts.TextGroups) == 0 || containsFold(r.opts.TextGroups, f.group))
}

// decodeMETS checks the XML's nesting depth and decodes its METS element.
func (r *reader) decodeMETS(l loc, data []byte) (*metsDoc, error) {
	if err := checkDepth(data, r.opts.MaxDepth); err != nil {
		if errors.Is(err, ErrLimit) {
			return nil, fmt.Errorf("%s: %w", l, err)
		}
		return nil, fmt.Errorf("%s: %w: not well-formed XML: %v", l, ErrNotABook, err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charsetReader
	var root *xml.Name
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w: not well-formed XML: %v", l, ErrNotABook, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == nil {
			root = &se.Name
		}
		if se.Name.Space == metsNS && se.Name.Local == "mets" {
			var doc metsDoc
			if err := d.DecodeElement(&doc, &se); err != nil {
				return nil, fmt.Errorf("%s: %w: not well-formed XML: %v", l, ErrNotABook, err)
			}
			return &doc, nil
		}
	}
	if root == nil {
		return nil, fmt.Errorf("%s: %w: XML without an element", l, ErrNotABook)
	}
	name := root.Local
	if root.Space != "" {
		name = "{" + root.Space + "}" + root.Local
	}
	return nil, fmt.Errorf("%s: %w: its XML root element is %s, and it holds no METS element", l, ErrNotABook, name)
}

// checkDepth reads the raw tokens of an XML document and fails when it is
// nested deeper than max.
func checkDepth(data []byte, max int) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charsetReader
	depth := 0
	for {
		tok, err := d.RawToken()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			if depth++; depth > max {
				return fmt.Errorf("%w: XML nested deeper than %d", ErrLimit, max)
			}
		case xml.EndElement:
			depth--
		}
	}
}

// AnchorError is Read's error for the anchor METS of a multi-volume work
// (Kitodo, the DFG-Viewer profile): it holds no pages, only mets:mptr
// pointers to its volumes' METS files, each a book of its own. It is an
// ErrNoPages; a caller that reads books may read its Volumes instead.
type AnchorError struct {
	// Location is the anchor's; Volumes its volumes' METS files, in
	// order, resolved against it (a URL, or a local path), as written
	// where one cannot be.
	Location string
	Volumes  []string
	hrefs    []string
}

func (e *AnchorError) Error() string {
	shown := e.hrefs
	if len(shown) > 3 {
		shown = append(shown[:3:3], "...")
	}
	return fmt.Sprintf("%s: %v: the METS of a multi-volume work, pointing to %d volume METS files (mets:mptr: %s) and holding no pages itself: give the volumes' METS files (a list file may name them all)",
		e.Location, ErrNoPages, len(e.hrefs), strings.Join(shown, ", "))
}

func (e *AnchorError) Unwrap() error { return ErrNoPages }

// locateVolumes sets the Volumes of an AnchorError err, read at l, where a
// caller reads them: resolved against the anchor, as its files would be.
// Any error is returned as it is.
func (r *reader) locateVolumes(err error, l loc) error {
	var anchor *AnchorError
	if errors.As(err, &anchor) {
		for _, h := range anchor.hrefs {
			v := h
			if vl, lerr := r.locate(h, &l); lerr == nil {
				v = vl.String()
			}
			anchor.Volumes = append(anchor.Volumes, v)
		}
	}
	return err
}

// physicalPages returns the page divs of the PHYSICAL structMap: the divs
// below its root div that point to files, in document order, or in ORDER
// when every page has a numeric one.
func physicalPages(l loc, doc *metsDoc) ([]div, error) {
	var phys *structMap
	for i := range doc.StructMaps {
		if strings.EqualFold(doc.StructMaps[i].Type, "PHYSICAL") {
			phys = &doc.StructMaps[i]
			break
		}
	}
	if phys == nil {
		if vols := volumes(doc); len(vols) > 0 {
			// An anchor file: the volumes are books of their own.
			return nil, &AnchorError{Location: l.String(), hrefs: vols}
		}
		return nil, fmt.Errorf("%s: %w: METS without a PHYSICAL structMap (the structMap TYPE=\"PHYSICAL\" whose divs point to each page's files)", l, ErrNoPages)
	}
	var pages []div
	var walk func(d div)
	walk = func(d div) {
		for _, c := range d.Divs {
			if len(c.Fptrs) > 0 {
				pages = append(pages, c)
			}
			walk(c)
		}
	}
	for _, root := range phys.Divs {
		if len(root.Divs) == 0 && len(root.Fptrs) > 0 {
			pages = append(pages, root) // a single page as the root
		}
		walk(root)
	}
	numeric := true
	for _, p := range pages {
		if _, err := strconv.Atoi(strings.TrimSpace(p.Order)); err != nil {
			numeric = false
			break
		}
	}
	if numeric {
		sort.SliceStable(pages, func(i, j int) bool {
			a, _ := strconv.Atoi(strings.TrimSpace(pages[i].Order))
			b, _ := strconv.Atoi(strings.TrimSpace(pages[j].Order))
			return a < b
		})
	}
	for i := range pages {
		if pages[i].ID == "" {
			pages[i].ID = fmt.Sprintf("#%d", i+1)
		}
	}
	return pages, nil
}

// volumes are the METS documents the LOGICAL structMaps' divs point to
// (mets:mptr), each once, in order.
func volumes(doc *metsDoc) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(d div)
	walk = func(d div) {
		for _, m := range d.Mptrs {
			if h := strings.TrimSpace(m.Href); h != "" && !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
		for _, c := range d.Divs {
			walk(c)
		}
	}
	for _, sm := range doc.StructMaps {
		for _, d := range sm.Divs {
			walk(d)
		}
	}
	return out
}

// skippedByType maps the physical div IDs linked from a logical div of a
// type in SkipTypes (or inside one) to the reason they are left out.
func (r *reader) skippedByType(doc *metsDoc) map[string]string {
	out := map[string]string{}
	if len(r.opts.SkipTypes) == 0 {
		return out
	}
	skip := map[string]string{} // logical div ID -> why its pages are left out
	var walk func(d div, inherited string)
	walk = func(d div, inherited string) {
		t := inherited
		switch {
		case t == "" && containsFold(r.opts.SkipTypes, d.Type):
			t = d.Type
			skip[d.ID] = fmt.Sprintf("skipped: logical div %s of TYPE %s", d.ID, t)
		case t != "":
			skip[d.ID] = fmt.Sprintf("skipped: logical div %s, inside a div of TYPE %s", d.ID, t)
		}
		for _, c := range d.Divs {
			walk(c, t)
		}
	}
	for _, sm := range doc.StructMaps {
		if strings.EqualFold(sm.Type, "LOGICAL") {
			for _, d := range sm.Divs {
				walk(d, "")
			}
		}
	}
	for _, link := range doc.Links {
		if why, ok := skip[link.From]; ok && link.From != "" {
			if _, done := out[link.To]; !done {
				out[link.To] = why
			}
		}
	}
	return out
}

// imageGroup chooses the fileGrp of the pages' images: the one asked for,
// else the first of ImageGroupPreference holding images, else the group
// with images for the most pages (last-resort groups after the others).
func (r *reader) imageGroup(pages []div, files map[string]*file, order []string) string {
	if r.opts.ImageGroup != "" {
		return canonical(order, r.opts.ImageGroup)
	}
	count := map[string]int{} // group (upper case) -> pages with an image file in it
	for _, d := range pages {
		seen := map[string]bool{}
		for _, fp := range d.Fptrs {
			for _, id := range fp.fileIDs() {
				f, ok := files[id]
				if !ok || !isImage(f.metsFile) {
					continue
				}
				g := strings.ToUpper(f.group)
				if !seen[g] {
					seen[g] = true
					count[g]++
				}
			}
		}
	}
	for _, want := range ImageGroupPreference {
		if count[want] > 0 {
			return canonical(order, want)
		}
	}
	best, bestN := "", 0
	for _, last := range []bool{false, true} {
		for _, g := range order {
			if containsFold(lastResort, g) != last {
				continue
			}
			if n := count[strings.ToUpper(g)]; n > bestN {
				best, bestN = g, n
			}
		}
		if best != "" {
			return best
		}
	}
	return ""
}

// canonical returns the spelling of name used in the document.
func canonical(order []string, name string) string {
	for _, g := range order {
		if strings.EqualFold(g, name) {
			return g
		}
	}
	return name
}

var imageExt = map[string]bool{".jpg": true, ".jpeg": true, ".jp2": true, ".j2k": true, ".j2c": true, ".jpx": true, ".png": true, ".tif": true, ".tiff": true, ".gif": true, ".webp": true, ".bmp": true}

// notText are extensions and MIME types that a text file cannot have.
var notTextExt = map[string]bool{".pdf": true, ".txt": true, ".mp3": true, ".mp4": true, ".wav": true, ".ogg": true, ".epub": true, ".zip": true}

func hrefExt(f metsFile) string {
	if len(f.FLocats) == 0 {
		return ""
	}
	h := f.FLocats[0].Href
	if i := strings.IndexAny(h, "?#"); i >= 0 {
		h = h[:i]
	}
	return strings.ToLower(path.Ext(h))
}

// isImage says whether a file is an image by its MIMETYPE or its name;
// a file with neither an image type nor an image name is not.
func isImage(f metsFile) bool {
	m := strings.ToLower(f.MIMEType)
	return strings.HasPrefix(m, "image/") || (m == "" || m == "application/octet-stream") && imageExt[hrefExt(f)] ||
		m == "application/vnd.netfpx"
}

// notImage says whether a file is typed or named as something other than
// an image (a PDF, a text, XML): one neither typed nor named may be one (a
// IIIF server's URL without an extension).
func notImage(f metsFile) bool {
	if isImage(f) || imageExt[hrefExt(f)] {
		return false
	}
	m := strings.ToLower(f.MIMEType)
	return m != "" && m != "application/octet-stream" || notImageExt[hrefExt(f)]
}

// notImageExt are extensions of files that are no page image.
var notImageExt = map[string]bool{".pdf": true, ".txt": true, ".xml": true, ".html": true, ".htm": true, ".json": true}

// maybeText says whether a file could be ALTO, PAGE or hOCR: not an
// image, and neither typed nor named as PDF, plain text, audio or video.
func maybeText(f metsFile) bool {
	if isImage(f) || imageExt[hrefExt(f)] {
		return false
	}
	m := strings.ToLower(f.MIMEType)
	xmlish := strings.Contains(m, "xml") || strings.Contains(m, "html")
	if !xmlish && (strings.HasPrefix(m, "audio/") || strings.HasPrefix(m, "video/") || m == "text/plain" || m == "application/pdf") {
		return !notTextExt[hrefExt(f)] && hrefExt(f) != "" // a type contradicted by the name is sniffed
	}
	return !notTextExt[hrefExt(f)]
}

// metsPage builds a page from its div: the image in the image group, the
// text files (sniffed or declared) in the others.
func (r *reader) metsPage(base loc, b *Book, d div, files map[string]*file) Page {
	p := Page{ID: d.ID, Order: d.Order, Label: firstNonEmpty(d.OrderLabel, d.Label)}
	imageIsNot := false // the image taken is typed or named as something else (a PDF, a text)
	for _, pf := range r.pageFiles(base, b.ImageGroup, d, files) {
		switch {
		case pf.image && p.Image != nil && imageIsNot && pf.problem == "" && isImage(pf.f.metsFile):
			// The group's first file of the page is no image (a PDF, a
			// text) and this one is: it is the page's image, said (the
			// first was taken and the image dropped without a word).
			b.Problems = append(b.Problems, Problem{Page: p.ID, File: p.Image.FileID,
				Reason: fmt.Sprintf("fileGrp %s: %s is no image: the page's image is %s", b.ImageGroup, cmp.Or(p.Image.MIMEType, "the first file"), pf.f.ID)})
			p.Image = &Image{Location: pf.l.String(), MIMEType: pf.f.MIMEType, FileID: pf.f.ID}
			imageIsNot = false
		case pf.image && p.Image != nil:
			// a second image of the page: the first is used
		case pf.locErr != nil && !pf.image:
			// A text file whose href names nothing here (a Windows
			// path): unread, as one that cannot be read, so that a
			// caller counts it failed (it was left out without a word).
			b.Problems = append(b.Problems, Problem{Page: p.ID, File: pf.id, Reason: pf.problem, Err: pf.locErr})
			decl := strings.TrimSpace(strings.Join(nonEmpty(pf.f.group, pf.f.Use, pf.f.MIMEType), " "))
			p.Unread = append(p.Unread, Unread{Text: Text{Location: pf.href, Format: declaredFormat(pf.f.group, pf.f.Use, pf.f.MIMEType),
				Declared: decl, Group: pf.f.group, FileID: pf.f.ID}, Err: pf.locErr})
		case pf.problem != "":
			b.Problems = append(b.Problems, Problem{Page: p.ID, File: pf.id, Reason: pf.problem})
		case pf.image:
			p.Image = &Image{Location: pf.l.String(), MIMEType: pf.f.MIMEType, FileID: pf.f.ID}
			imageIsNot = notImage(pf.f.metsFile)
		default:
			r.text(b, &p, pf.f, pf.l)
		}
	}
	if p.Image == nil && b.ImageGroup != "" && r.opts.Text == TextNone {
		// Said to a reader for the images only: one for the text files
		// (translate) warned of a page without an image it does not need.
		b.Problems = append(b.Problems, Problem{Page: p.ID, Reason: "no image in fileGrp " + b.ImageGroup})
	}
	return p
}

// pageFile is a file a page's div points to that Read looks at: its image
// (image) or a file that may be text; or why it cannot be (problem).
type pageFile struct {
	id      string
	f       *file
	l       loc
	image   bool
	problem string
	// locErr is why the file's href names no location (problem says
	// it too), href the href as written; nil when it does.
	locErr error
	href   string
}

// pageFiles lists the files of div d that Read looks at, in order: those
// of the image group and those that may be text (maybeText, in
// TextGroups), located against base.
func (r *reader) pageFiles(base loc, imageGroup string, d div, files map[string]*file) []pageFile {
	var out []pageFile
	for _, fp := range d.Fptrs {
		for _, id := range fp.fileIDs() {
			f, ok := files[id]
			if !ok {
				out = append(out, pageFile{id: id, problem: "fptr to a file the fileSec does not hold"})
				continue
			}
			inImages := strings.EqualFold(f.group, imageGroup)
			if !inImages && r.opts.Text != TextNone && !maybeText(f.metsFile) && !isImage(f.metsFile) && !imageExt[hrefExt(f.metsFile)] &&
				(containsFold(r.opts.TextGroups, f.group) || len(r.opts.TextGroups) == 0 && looksFulltext(f.group)) {
				// A text group's file that cannot be ALTO, PAGE-XML or
				// hOCR (Kitodo's plain-text FULLTEXT): named, as the page
				// is then left without text (it was left out without a
				// word).
				what := cmp.Or(f.MIMEType, hrefExt(f.metsFile))
				out = append(out, pageFile{id: id, problem: fmt.Sprintf("fileGrp %s: %s, not ALTO, PAGE-XML or hOCR: not read", f.group, what)})
				continue
			}
			if !inImages && (r.opts.Text == TextNone || !maybeText(f.metsFile) ||
				len(r.opts.TextGroups) > 0 && !containsFold(r.opts.TextGroups, f.group)) {
				continue
			}
			href, reason := flocatOf(f.metsFile)
			if reason != "" {
				out = append(out, pageFile{id: id, image: inImages, problem: reason})
				continue
			}
			l, err := r.locate(href, &base)
			if err != nil {
				out = append(out, pageFile{id: id, f: f, image: inImages, problem: err.Error(), locErr: err, href: href})
				continue
			}
			out = append(out, pageFile{id: id, f: f, l: l, image: inImages})
		}
	}
	return out
}

// flocatOf returns a file's first FLocat href, or why there is none.
func flocatOf(f metsFile) (string, string) {
	for _, fl := range f.FLocats {
		if strings.TrimSpace(fl.Href) != "" {
			return fl.Href, ""
		}
	}
	if f.FContent != nil {
		return "", "skipped: content embedded (FContent), no FLocat"
	}
	if len(f.FLocats) > 0 {
		return "", "skipped: FLocat without an href"
	}
	return "", "skipped: no FLocat"
}

// text adds a text file to the page p when it is one: identified by its
// root element (TextSniff), or by what the METS declares (TextDeclared,
// and a remote file with FetchLater, listed without a format when the METS
// declares none). Mismatches are recorded; a file that cannot be read is
// added to p.Unread.
func (r *reader) text(b *Book, p *Page, f *file, l loc) {
	if t, ok := r.identify(b, p, f, l); ok {
		p.Texts = append(p.Texts, t)
	}
}

// identify is text's work: the text file, or false when it is left out.
func (r *reader) identify(b *Book, p *Page, f *file, l loc) (Text, bool) {
	page := p.ID
	declared := declaredFormat(f.group, f.Use, f.MIMEType)
	decl := strings.TrimSpace(strings.Join(nonEmpty(f.group, f.Use, f.MIMEType), " "))
	t := Text{Location: l.String(), Declared: decl, Group: f.group, FileID: f.ID, declared: declared, mime: f.MIMEType}
	if r.opts.Text == TextDeclared || r.opts.FetchLater && l.url != nil {
		taken := declared
		if taken == "" && looksFulltext(f.group) {
			taken = ALTO // FULLTEXT groups hold ALTO by the DFG-Viewer's convention
		}
		if taken != "" {
			t.Format = taken
			return t, true
		}
		// TextDeclared leaves out a file the METS says nothing of;
		// FetchLater lists it without a format, for the caller to tell
		// by its content when it fetches it.
		return t, r.opts.Text != TextDeclared
	}
	data, err := r.prefix(l)
	if err != nil {
		b.Problems = append(b.Problems, Problem{Page: page, File: f.ID, Reason: "cannot read: " + err.Error(), Err: err})
		t.Format = declared
		p.Unread = append(p.Unread, Unread{Text: t, Err: err})
		return t, false
	}
	var reason string
	var keep bool
	if l.url != nil {
		t, reason, keep, err = t.IdentifyFetched(data)
	} else {
		t, reason, keep = t.Identify(data)
	}
	if err != nil {
		b.Problems = append(b.Problems, Problem{Page: page, File: f.ID, Reason: reason, Err: err})
		p.Unread = append(p.Unread, Unread{Text: t, Err: err})
		return t, false
	}
	if reason != "" {
		b.Problems = append(b.Problems, Problem{Page: page, File: f.ID, Reason: reason})
	}
	return t, keep
}

// IdentifyFetched is Identify for a text file fetched from a server: a
// file the METS declares text whose answer looks like a server's error page
// (errorPage: HTML, JSON, nothing) in its place is a *ServedNotText error,
// to fetch again, not a file of the book to leave out. The reader and a
// caller that fetched a file listed without its content both tell it so.
func (t Text) IdentifyFetched(data []byte) (Text, string, bool, error) {
	told, reason, keep := t.Identify(data)
	if !keep && t.DeclaredText() && errorPage(data) {
		// A server's error page answered with 200: no text to leave out,
		// a file to read again.
		return told, reason, false, &ServedNotText{Reason: reason}
	}
	return told, reason, keep, nil
}

// errorPage says whether data, answered for a text file, looks like what a
// server answers in its place (an HTML page, JSON, nothing, no XML at all),
// not a text file of another format (an ABBYY or TEI file, well-formed XML
// with a root of its own), which is the book's own and left out for good.
func errorPage(data []byte) bool {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] == '{' || trimmed[0] == '[' {
		return true
	}
	root, err := rootElement(fromUTF16(data))
	return err != nil || strings.EqualFold(root.Local, "html")
}

// DeclaredText says whether the METS declares t a text file: by its
// format (MIME type, USE) or a full-text file group.
func (t Text) DeclaredText() bool { return t.declared != "" || looksFulltext(t.Group) }

// ServedNotText is the error of a remote file the METS declares a text
// file whose answer is no ALTO, PAGE or hOCR (an HTML or JSON error page
// answered 200, an empty body): the server's fault, not the book's, so a
// passing one (Transient): the file stays to do and --resume fetches it
// again. It was left out with a warning, the run said complete.
type ServedNotText struct{ Reason string }

func (e *ServedNotText) Error() string {
	return "the server's answer is no text file: " + e.Reason
}

// Transient reports true: see ServedNotText.
func (e *ServedNotText) Transient() bool { return true }

// Identify tells a METS text file by its content (data: its start from
// SniffHead, or the whole file; up to SniffMax bytes are read), as reading
// the book with TextSniff does: it returns the text with the format its
// root element gives (Sniffed), or false when the content
// is none of ALTO, PAGE and hOCR (the file is left out). reason says why a
// file is left out, or that its content differs from what the METS
// declares (such a file is kept, with the format of its content); "" when
// there is nothing to say. It is for a text listed without its content
// (Options.FetchLater), once its caller has fetched it.
func (t Text) Identify(data []byte) (Text, string, bool) {
	format, err := Sniff(data)
	if err != nil {
		if t.declared != "" || looksFulltext(t.Group) {
			return t, fmt.Sprintf("declared %s, is not ALTO, PAGE or hOCR (%v)", firstNonEmpty(string(t.declared), t.Group), err), false
		}
		return t, fmt.Sprintf("not ALTO, PAGE or hOCR (%v): left out", err), false
	}
	reason := ""
	switch m := strings.ToLower(t.mime); {
	case t.declared != "" && t.declared != format:
		reason = fmt.Sprintf("declared %s, is %s", t.declared, format)
	case m != "" && !strings.Contains(m, "xml") && !strings.Contains(m, "html"):
		reason = fmt.Sprintf("declared %s, is %s", t.mime, format)
	}
	t.Format, t.Sniffed = format, true
	return t, reason, true
}

// prefix reads the start of a file: of a local one, what tells its format
// (SniffHead: 64 KiB, or up to SniffMax when its root element lies
// further), the whole of a remote one (which stays in the Fetcher's cache).
func (r *reader) prefix(l loc) ([]byte, error) {
	if l.url != nil {
		return r.get(l)
	}
	return SniffHead(l.path, nil)
}

func looksFulltext(group string) bool {
	g := strings.ToUpper(group)
	return strings.Contains(g, "FULLTEXT") || strings.Contains(g, "OCR") || g == "TEXT" || strings.Contains(g, "ALTO")
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}
