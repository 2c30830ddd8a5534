package book

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// readIIIF reads a manifest or a collection.
func (r *reader) readIIIF(l loc, data []byte) (*Book, error) {
	doc, err := r.decodeJSON(l, data)
	if err != nil {
		return nil, err
	}
	kind, version := iiifKind(doc)
	if kind == "" {
		return nil, fmt.Errorf("%s: %w: JSON without a IIIF Presentation type (type %q, @type %q)", l, ErrNotABook, str(doc, "type"), str(doc, "@type"))
	}
	b := &Book{Kind: kind, Version: version, ID: str(doc, "@id", "id"), Label: label(doc["label"]), Languages: metadataLanguages(doc)}
	w := &walk{r: r, book: b, seen: map[string]bool{}}
	w.seen[l.String()] = true
	if b.ID != "" {
		w.seen[b.ID] = true
	}
	if kind == Collection {
		err = w.collection(l, doc, 1)
	} else {
		err = w.manifest(l, doc, "")
	}
	if err != nil {
		return nil, err
	}
	return b, r.selectIIIF(b)
}

// decodeJSON decodes a JSON object after checking its nesting depth.
func (r *reader) decodeJSON(l loc, data []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w: not well-formed JSON: %v", l, ErrNotABook, err)
		}
		if delim, ok := tok.(json.Delim); ok {
			switch delim {
			case '{', '[':
				depth++
				if depth > r.opts.MaxDepth {
					return nil, fmt.Errorf("%s: %w: JSON nested deeper than %d", l, ErrLimit, r.opts.MaxDepth)
				}
			default:
				depth--
			}
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		if !json.Valid(data) {
			return nil, fmt.Errorf("%s: %w: not well-formed JSON: %v", l, ErrNotABook, err)
		}
		return nil, fmt.Errorf("%s: %w: the JSON is not an object: %v", l, ErrNotABook, err)
	}
	return doc, nil
}

// iiifKind tells a manifest from a collection, and the API version.
func iiifKind(doc map[string]any) (Kind, string) {
	version := "3"
	if ctx := strings.Join(strs(doc["@context"]), " "); strings.Contains(ctx, "/presentation/2") {
		version = "2"
	}
	switch t := str(doc, "@type", "type"); t {
	case "sc:Manifest":
		return Manifest, "2"
	case "sc:Collection":
		return Collection, "2"
	case "Manifest":
		return Manifest, version
	case "Collection":
		return Collection, version
	}
	return "", ""
}

// walk follows a collection's members and reads manifests' canvases.
type walk struct {
	r         *reader
	book      *Book
	seen      map[string]bool
	manifests int
}

// collection reads the members of a collection (v2 collections,
// manifests and members; v3 items), depth first, in order.
func (w *walk) collection(at loc, doc map[string]any, depth int) error {
	if depth > w.r.opts.MaxCollections {
		return fmt.Errorf("%s: %w: collections nested deeper than %d", at, ErrLimit, w.r.opts.MaxCollections)
	}
	type member struct {
		m    map[string]any
		kind Kind
	}
	var members []member
	for _, key := range []string{"collections", "manifests", "members", "items"} {
		for _, m := range objects(doc[key]) {
			kind, _ := iiifKind(m)
			switch {
			case kind != "":
			case key == "collections": // v2 lists may hold bare URIs
				kind = Collection
			case key == "manifests":
				kind = Manifest
			default:
				continue
			}
			members = append(members, member{m, kind})
		}
	}
	for _, mem := range members {
		m, kind := mem.m, mem.kind
		id := str(m, "@id", "id")
		if id != "" && w.seen[id] {
			w.book.Problems = append(w.book.Problems, Problem{File: id, Reason: "collection cycle: already read, skipped"})
			continue
		}
		if id != "" {
			w.seen[id] = true
		}
		if err := w.r.ctx.Err(); err != nil {
			return err
		}
		// an embedded manifest has its canvases; a reference is fetched
		body := m
		where := at
		if !embedded(m, kind) {
			l, err := w.r.locate(id, &at)
			if err != nil {
				w.book.Problems = append(w.book.Problems, Problem{File: id, Reason: err.Error()})
				continue
			}
			if w.seen[l.String()] && l.String() != id {
				w.book.Problems = append(w.book.Problems, Problem{File: id, Reason: "collection cycle: already read, skipped"})
				continue
			}
			w.seen[l.String()] = true
			data, err := w.r.load(l)
			if err == nil {
				body, err = w.r.decodeJSON(l, data)
			}
			if err != nil {
				if errors.Is(err, ErrLimit) {
					return err
				}
				w.book.Problems = append(w.book.Problems, Problem{File: id, Reason: err.Error()})
				continue
			}
			if k, _ := iiifKind(body); k != kind {
				w.book.Problems = append(w.book.Problems, Problem{File: id, Reason: fmt.Sprintf("listed as a %s, is %q", kind, k)})
				continue
			}
			where = l
		}
		if kind == Collection {
			if err := w.collection(where, body, depth+1); err != nil {
				return err
			}
			continue
		}
		if w.manifests++; w.manifests > w.r.opts.MaxManifests {
			return fmt.Errorf("%s: %w: more than %d manifests", at, ErrLimit, w.r.opts.MaxManifests)
		}
		if err := w.manifest(where, body, str(body, "@id", "id")); err != nil {
			return err
		}
	}
	return nil
}

// embedded says whether a collection member carries its content.
func embedded(m map[string]any, kind Kind) bool {
	if kind == Manifest {
		return m["sequences"] != nil || m["items"] != nil
	}
	return m["manifests"] != nil || m["collections"] != nil || m["members"] != nil || m["items"] != nil
}

// manifest appends a manifest's canvases (v2: the first sequence; v3:
// items) as pages; at is where the manifest was read, against which the
// relative locations of its images and text files are resolved (within).
func (w *walk) manifest(at loc, doc map[string]any, manifestID string) error {
	var canvases []map[string]any
	if seqs := objects(doc["sequences"]); len(seqs) > 0 {
		canvases = objects(seqs[0]["canvases"])
		if len(seqs) > 1 {
			w.book.Problems = append(w.book.Problems, Problem{File: str(doc, "@id", "id"), Reason: fmt.Sprintf("%d sequences: only the first is read", len(seqs))})
		}
	} else {
		canvases = objects(doc["items"])
	}
	for _, c := range canvases {
		if t := str(c, "@type", "type"); t != "sc:Canvas" && t != "Canvas" {
			continue
		}
		if len(w.book.Pages) >= w.r.opts.MaxPages {
			return fmt.Errorf("%s: %w: more than %d pages", w.book.ID, ErrLimit, w.r.opts.MaxPages)
		}
		p := Page{ID: str(c, "@id", "id"), Label: label(c["label"]), Manifest: manifestID}
		var painted int
		p.Image, painted = canvasImage(c)
		if p.Image == nil {
			w.book.Problems = append(w.book.Problems, Problem{Page: p.ID, Reason: "no image"})
		} else {
			if painted > 1 {
				// A page made of parts (two halves, a fold-out): what is
				// classified is the first part, said.
				w.book.Problems = append(w.book.Problems, Problem{Page: p.ID, Reason: fmt.Sprintf("painted by %d images: only the first is read (%s)", painted, p.Image.Location)})
			}
			p.Image.Location = w.within(at, p.Image.Location)
		}
		p.Texts = canvasTexts(c)
		for i := range p.Texts {
			p.Texts[i].Location = w.within(at, p.Texts[i].Location)
		}
		w.book.Pages = append(w.book.Pages, p)
	}
	return nil
}

// within resolves a manifest's location ref against at, where the
// manifest was read, when it is relative (ocr/0001.xml) or a file URL: a
// local manifest's relative ids were taken relative to the working
// folder, and a remote one's named local files. An http(s) URL is kept as
// written; a location that cannot be resolved too (its fetch says why).
func (w *walk) within(at loc, ref string) string {
	if ref == "" || IsURL(ref) {
		return ref
	}
	l, err := w.r.locate(ref, &at)
	if err != nil {
		return ref
	}
	return l.String()
}

// canvasImage reads the first painting image of a canvas (v2 images, v3
// items); a choice gives its default or first item. painted counts the
// canvas's painting images, each image once (a choice counts once; one
// image painted twice, as some published manifests do, once).
func canvasImage(c map[string]any) (first *Image, painted int) {
	seen := map[string]bool{}
	var bodies []map[string]any
	for _, a := range objects(c["images"]) {
		bodies = append(bodies, objects(a["resource"])...)
	}
	for _, page := range objects(c["items"]) {
		for _, a := range objects(page["items"]) {
			if m := str(a, "motivation"); m != "" && m != "painting" && m != "sc:painting" {
				continue
			}
			bodies = append(bodies, objects(a["body"])...)
		}
	}
	for _, b := range bodies {
		if t := str(b, "@type", "type"); t == "oa:Choice" || t == "Choice" {
			choices := append(objects(b["default"]), objects(b["item"])...)
			choices = append(choices, objects(b["items"])...)
			if len(choices) == 0 {
				continue
			}
			b = choices[0]
		}
		img := &Image{
			Location: str(b, "@id", "id"),
			MIMEType: str(b, "format"),
			Width:    num(b["width"]),
			Height:   num(b["height"]),
			Service:  imageService(b["service"]),
		}
		if img.Width == 0 {
			img.Width, img.Height = num(c["width"]), num(c["height"])
		}
		if img.Service != nil && img.Service.Width == 0 {
			img.Service.Width, img.Service.Height = img.Width, img.Height
		}
		if img.Location == "" && img.Service == nil {
			continue
		}
		key := img.Location
		if img.Service != nil {
			key = img.Service.ID
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if painted++; first == nil {
			first = img
		}
	}
	return first, painted
}

// canvasTexts finds a canvas's text files in seeAlso, rendering, v2
// otherContent and v3 supplementing annotations, by format or profile.
func canvasTexts(c map[string]any) []Text {
	var cands []map[string]any
	for _, key := range []string{"seeAlso", "rendering", "otherContent"} {
		cands = append(cands, objects(c[key])...)
	}
	for _, page := range objects(c["annotations"]) {
		for _, a := range objects(page["items"]) {
			cands = append(cands, objects(a["body"])...)
		}
	}
	var out []Text
	seen := map[string]bool{}
	for _, o := range cands {
		id := str(o, "@id", "id")
		f, declared := textFormat(o)
		if f == "" || id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, Text{Location: id, Format: f, Declared: declared})
	}
	return out
}

// textFormat classifies a linked resource by its format and profile:
// ALTO (application/xml+alto, application/alto+xml, a profile under
// http(s)://www.loc.gov/standards/alto with or without a trailing slash or
// a version), hOCR (text/vnd.hocr+html, a profile naming hocr) or PAGE.
func textFormat(o map[string]any) (Format, string) {
	format := str(o, "format")
	profiles := strs(o["profile"])
	declared := strings.TrimSpace(strings.Join(append([]string{format}, profiles...), " "))
	for _, p := range profiles {
		lp := strings.ToLower(p)
		switch {
		case strings.Contains(lp, "loc.gov/standards/alto"):
			return ALTO, declared
		case strings.Contains(lp, "hocr"):
			return HOCR, declared
		case strings.Contains(lp, "primaresearch.org/page"):
			return PAGE, declared
		}
	}
	lf := strings.ToLower(format)
	switch {
	case strings.Contains(lf, "alto"):
		return ALTO, declared
	case strings.Contains(lf, "hocr"):
		return HOCR, declared
	case strings.Contains(lf, "prima.page"):
		return PAGE, declared
	}
	return "", declared
}

// selectIIIF applies the page selection to canvas ids.
func (r *reader) selectIIIF(b *Book) error {
	ids := make([]string, len(b.Pages))
	for i, p := range b.Pages {
		ids[i] = p.ID
	}
	keep, err := r.sel.Apply(ids)
	if err != nil {
		return fmt.Errorf("%s: %w", b.ID, err)
	}
	pages := make([]Page, 0, len(keep))
	for _, i := range keep {
		pages = append(pages, b.Pages[i])
	}
	b.Pages = pages
	return nil
}

// JSON helpers: IIIF values are a string, an object or a list of them.

// objects returns v as a list of objects (a string becomes {"id": s}).
func objects(v any) []map[string]any {
	switch t := v.(type) {
	case map[string]any:
		return []map[string]any{t}
	case []any:
		var out []map[string]any
		for _, e := range t {
			out = append(out, objects(e)...)
		}
		return out
	case string:
		return []map[string]any{{"id": t}}
	}
	return nil
}

// strs returns the strings of v (a string, or the strings of a list).
func strs(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// str returns the first of the keys of o that holds a string.
func str(o map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := o[k].(string); ok {
			return s
		}
	}
	return ""
}

// num returns a JSON number (or numeric string) as an int, 0 otherwise.
func num(v any) int {
	switch t := v.(type) {
	case float64:
		return int(t)
	case string:
		var n int
		if _, err := fmt.Sscan(t, &n); err == nil {
			return n
		}
	}
	return 0
}

// label reads a v2 label (a string, a {@value} object or a list of them)
// or a v3 language map (the "none" or "en" values first, else the first
// language in key order).
func label(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, e := range t {
			if s := label(e); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			return parts[0]
		}
	case map[string]any:
		if s, ok := t["@value"].(string); ok {
			return s
		}
		for _, k := range languageKeys(t) {
			if vs := strs(t[k]); len(vs) > 0 {
				return strings.Join(vs, " ")
			}
		}
	}
	return ""
}

// languageKeys are the languages of a v3 language map in the order its
// values are read: "none", "en", then the others in key order.
func languageKeys(m map[string]any) []string {
	rank := func(k string) int {
		switch k {
		case "none":
			return 0
		case "en":
			return 1
		}
		return 2
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if ri, rj := rank(keys[i]), rank(keys[j]); ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}

// languageLabels are the words of a metadata label that says it gives the
// languages of the book (in the languages of the manifests of the
// libraries that publish them).
var languageLabels = map[string]bool{
	"language": true, "languages": true, "sprache": true, "sprachen": true, "langue": true, "langues": true,
	"lingua": true, "lingue": true, "idioma": true, "idiomas": true, "jazyk": true, "taal": true, "talen": true,
	"język": true, "språk": true, "sprog": true, "kieli": true, "nyelv": true, "limba": true, "jezik": true,
}

// metadataLanguages are the values of a manifest's or collection's
// metadata entries whose label names the language ("Language", "Text
// Language", "Sprache"; not a label about cataloguing), as written: each
// value of every language of the entry's value, split at commas and
// semicolons ("Arabic, French"). A v3 value map gives its "none" values
// first, then "en", then the others.
func metadataLanguages(doc map[string]any) []string {
	var out []string
	for _, m := range objects(doc["metadata"]) {
		if !languageLabel(allValues(m["label"])) {
			continue
		}
		for _, v := range allValues(m["value"]) {
			for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' }) {
				if part = strings.TrimSpace(part); part != "" && !slices.Contains(out, part) {
					out = append(out, part)
				}
			}
		}
	}
	return out
}

// languageLabel reports whether one of a label's values has a word of
// languageLabels and none about cataloguing (MARC's language of
// cataloguing is the record's, not the book's).
func languageLabel(values []string) bool {
	for _, v := range values {
		words := strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return !unicode.IsLetter(r) })
		lang, catalog := false, false
		for _, w := range words {
			lang = lang || languageLabels[w]
			catalog = catalog || strings.HasPrefix(w, "catalog") || strings.HasPrefix(w, "katalog")
		}
		if lang && !catalog {
			return true
		}
	}
	return false
}

// allValues returns every string of a v2 value (a string, a {@value}
// object or a list of them) or a v3 language map ("none", then "en", then
// the other languages in key order).
func allValues(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, e := range t {
			out = append(out, allValues(e)...)
		}
		return out
	case map[string]any:
		if s, ok := t["@value"].(string); ok {
			return []string{s}
		}
		var out []string
		for _, k := range languageKeys(t) {
			out = append(out, strs(t[k])...)
		}
		return out
	}
	return nil
}
