// Package hocr translates hOCR documents (the HTML OCR output of
// Tesseract, kraken, ocropus and others) into a parallel hOCR document.
//
// The input is tokenised as HTML5 (golang.org/x/net/html), since real hOCR
// is often not well-formed XML, and the output is spliced from the input's
// bytes: it differs only in the text of the translated lines, a lang
// attribute (the language tag of machine translation, internal/translate/
// langtag, e.g. en-t-cs-t0-und) on the page and paragraph elements that
// hold translated lines, and ocrp_lang added to the ocr-capabilities meta
// element. Every tag, attribute, bounding box, comment and byte of
// whitespace is kept.
//
// The unit is the line (ocr_line, and Tesseract's ocr_caption, ocr_header
// and ocr_textfloat): its words (ocrx_word) are translated as one text and
// the translation's tokens go back one a word, the last word taking the
// rest, as ALTO Strings do; a line without words (ocropus) holds its
// translation as it held its text. Text inside other hOCR elements of a
// word (Tesseract's ocrx_cinfo character boxes and ocr_lstm_choices
// alternatives) is left as it is.
package hocr

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"slices"
	"strings"

	nethtml "golang.org/x/net/html"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/batch"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/xmlsplice"
)

// LineClasses are the hOCR classes of the elements translated as lines.
var LineClasses = []string{"ocr_line", "ocr_caption", "ocr_header", "ocr_textfloat"}

// Options configures one document translation.
type Options struct {
	// Backend does the translating.
	Backend backend.Backend
	// Source is an ISO 639-1 code, or "" or "auto" to detect once per
	// paragraph.
	Source string
	// Target is the ISO 639-1 target code (required).
	Target string
	// Detector is required when Source is auto.
	Detector alto.Detector
	// MinConfidence: detections at or below it fall back to
	// alto.FallbackLang. Zero means alto.DefaultMinConfidence. Order, when
	// set, replaces it.
	MinConfidence float64
	// Order is the source-language order of each paragraph (alto.LangOrder:
	// detected, the paragraph's lang or xml:lang or the one its lines
	// share, the document's language, the default); nil means
	// alto.DefaultLangOrder with MinConfidence.
	Order *alto.LangOrder
	// DocumentLang, when not "", is the document's language, given rather
	// than detected (a book's).
	DocumentLang string
	// File is the value of the log's file column.
	File string
	// MaxBatchChars caps a batch in characters (0: one batch a page and
	// language).
	MaxBatchChars int
	// RetryRounds is how many times the lines whose replies the guard
	// rejected are tried again at the end of the document
	// (batch.Batcher.EndRounds); 0 turns the end rounds off.
	RetryRounds int
}

// Stats counts what happened to one document.
type Stats struct {
	// Pages counts the ocr_page elements; Lines the lines sent.
	Pages, Lines int
	// Counts are the backend traffic counts.
	batch.Counts
	// Units counts the lines with text; Translated those written with a
	// translation; InTarget, Unsupported and Untranslated those left.
	Units, Translated, InTarget, Unsupported, Untranslated int
	// Rerun counts the lines an end-of-document round translated (part of
	// Translated).
	Rerun int
}

// Result is a translated document.
type Result struct {
	// Output is the parallel hOCR document.
	Output []byte
	// Tag is the language tag written (with several source languages,
	// that of the most frequent).
	Tag string
	// Log holds one row per line with text, in document order.
	Log []alto.LogRow
	// Stats counts pages, lines and backend traffic.
	Stats Stats
	// Languages maps each source language used to its number of lines.
	Languages map[string]int
	// LangSources counts the lines whose source language each rule of the
	// order chose (a line takes its paragraph's).
	LangSources map[alto.LangSource]int
	// DetectionUsed reports that the Detector ran.
	DetectionUsed bool
	// Warnings are non-fatal problems.
	Warnings []string
}

// ErrNotHOCR is returned (wrapped) for a document without an element of
// hOCR class ocr_page.
var ErrNotHOCR = errors.New("not hOCR: no ocr_page element")

// IsHOCR reports whether src is an HTML document with an ocr_page element
// (it tokenises up to the first one).
func IsHOCR(src []byte) bool {
	z := nethtml.NewTokenizer(bytes.NewReader(src))
	for {
		switch z.Next() {
		case nethtml.ErrorToken:
			return false
		case nethtml.StartTagToken, nethtml.SelfClosingTagToken:
			if slices.Contains(classesOf(z.Token()), "ocr_page") {
				return true
			}
		}
	}
}

// elem is an open element of the token stream.
type elem struct {
	name    string
	classes []string
	start   int    // offset of '<'
	raw     []byte // the start tag as written
	lang    string // its lang (or xml:lang) attribute, as alto.ElementLang reads it
}

// segment is a run of text in a line, at src[start:end] (its whitespace
// trimmed).
type segment struct {
	start, end int
	text       string
}

// slot is what receives one token of the translation: a word, or a run of
// text directly in a line.
type slot struct {
	segs []segment
}

func (s *slot) text() string {
	parts := make([]string, len(s.segs))
	for i, g := range s.segs {
		parts[i] = g.text
	}
	return strings.Join(alto.Fields(strings.Join(parts, "")), " ")
}

// line is one hOCR line with its slots.
type line struct {
	id      string
	page    int
	unit    *elem   // paragraph (or area, or page) used for detection
	marks   []*elem // the page and paragraph elements to label
	slots   []*slot
	text    string
	src     string
	from    alto.LangSource // the rule that chose src
	out     string
	status  backend.Status
	el      *elem // the line element
	pending *slot // the word being read
	wordEl  *elem // its element
}

// doc is the tokenised document.
type doc struct {
	src   []byte
	lines []*line
	pages int
	// pageEls are the ocr_page elements, in order.
	pageEls []*elem
	caps    *elem // the ocr-capabilities meta element
	// pageLang is the document's declared language: the first page's
	// lang. (The html element's is not: Tesseract writes lang="en" there
	// whatever the text's language.)
	pageLang string
}

// Translate translates an hOCR document into a parallel one (see the
// package comment).
func Translate(ctx context.Context, src []byte, opt Options) (*Result, error) {
	auto, err := batch.CheckRequest("hocr", opt.Backend, opt.Source, opt.Target, opt.Detector != nil)
	if err != nil {
		return nil, err
	}
	if opt.MinConfidence == 0 {
		opt.MinConfidence = alto.DefaultMinConfidence
	}
	d, err := read(src)
	if err != nil {
		return nil, fmt.Errorf("hocr: %s: %w", opt.File, err)
	}
	res := &Result{Languages: map[string]int{}, LangSources: map[alto.LangSource]int{}}
	res.Stats.Pages = d.pages
	if err := translateLines(ctx, d, opt, auto, res); err != nil {
		return nil, fmt.Errorf("hocr: %s: %w", opt.File, err)
	}
	out, err := write(d, opt, res)
	if err != nil {
		return nil, fmt.Errorf("hocr: %s: %w", opt.File, err)
	}
	res.Output = out
	return res, nil
}

// reader collects the lines of a document, token by token.
type reader struct {
	d     *doc
	stack []*elem // the open elements
	cur   *line   // the line being read
}

// read tokenises src and collects its lines.
func read(src []byte) (*doc, error) {
	r := &reader{d: &doc{src: src}}
	z := nethtml.NewTokenizer(bytes.NewReader(src))
	pos := 0
	for {
		tt := z.Next()
		raw := z.Raw()
		start := pos
		pos += len(raw)
		switch tt {
		case nethtml.ErrorToken:
			if z.Err() != io.EOF {
				return nil, z.Err()
			}
			if pos != len(src) {
				return nil, fmt.Errorf("tokens cover %d of %d bytes", pos, len(src))
			}
			if r.d.pages == 0 {
				return nil, ErrNotHOCR
			}
			return r.d, nil
		case nethtml.StartTagToken, nethtml.SelfClosingTagToken:
			tok := z.Token()
			// Raw is only valid until the next token: keep the source's bytes.
			e := &elem{name: tok.Data, classes: classesOf(tok), start: start, raw: src[start:pos:pos], lang: langAttr(tok)}
			r.startTag(e, tok, tt == nethtml.SelfClosingTagToken || isVoid(tok.Data))
		case nethtml.EndTagToken:
			name, _ := z.TagName()
			r.endTag(string(name))
		case nethtml.TextToken:
			r.text(raw, start)
		case nethtml.DoctypeToken:
			// A DOCTYPE naming HTML or XHTML (Tesseract writes XHTML
			// 1.0 Transitional's) is taken; an internal subset, which
			// can declare entities that nothing here expands, is
			// refused as in the XML formats.
			if bytes.IndexByte(raw, '[') >= 0 {
				return nil, fmt.Errorf("hOCR: %w", xmlsplice.ErrDTD)
			}
		}
	}
}

// startTag opens element e (of token tok); a void or self-closing one is
// not pushed.
func (r *reader) startTag(e *elem, tok nethtml.Token, void bool) {
	d := r.d
	if tok.Data == "meta" && attrOf(tok, "name") == "ocr-capabilities" {
		d.caps = e
	}
	if slices.Contains(e.classes, "ocr_page") {
		d.pages++
		d.pageEls = append(d.pageEls, e)
		if d.pageLang == "" {
			d.pageLang = e.lang
		}
	}
	if void {
		return
	}
	r.stack = append(r.stack, e)
	cur := r.cur
	switch {
	case hasAny(e.classes, LineClasses...) && cur == nil:
		cur = &line{id: attrOf(tok, "id"), page: d.pages, el: e}
		for _, a := range r.stack {
			if hasAny(a.classes, "ocr_page", "ocr_par") {
				cur.marks = append(cur.marks, a)
			}
			if hasAny(a.classes, "ocr_page", "ocr_carea", "ocr_par") {
				cur.unit = a
			}
		}
		d.lines = append(d.lines, cur)
		r.cur = cur
	case cur != nil && slices.Contains(e.classes, "ocrx_word") && cur.pending == nil:
		cur.pending, cur.wordEl = &slot{}, e
		cur.slots = append(cur.slots, cur.pending)
	}
}

// endTag closes the innermost open element named name and those inside
// it (HTML's implied end tags); an end tag without a start tag is ignored.
func (r *reader) endTag(name string) {
	i := lastIndex(r.stack, name)
	if i < 0 {
		return
	}
	if cur := r.cur; cur != nil {
		if slices.Contains(r.stack[i:], cur.wordEl) {
			cur.pending, cur.wordEl = nil, nil
		}
		if slices.Contains(r.stack[i:], cur.el) {
			r.cur = nil
		}
	}
	r.stack = r.stack[:i]
}

// text records a text token at src[start:] that belongs to the current
// line's word, or straight to the line.
func (r *reader) text(raw []byte, start int) {
	cur := r.cur
	if cur == nil {
		return
	}
	owner := innermostOCR(r.stack)
	lead := len(raw) - len(bytes.TrimLeft(raw, " \t\r\n\f"))
	trail := len(raw) - len(bytes.TrimRight(raw, " \t\r\n\f"))
	if owner == nil || lead == len(raw) {
		return // whitespace between words stays as it is
	}
	var s *slot
	switch {
	case owner == cur.wordEl:
		s = cur.pending
	case owner == cur.el:
		s = &slot{}
		cur.slots = append(cur.slots, s)
	default:
		return // ocrx_cinfo, ocr_lstm_choices...: left as they are
	}
	s.segs = append(s.segs, segment{start: start + lead, end: start + len(raw) - trail, text: html.UnescapeString(string(raw))})
}

// translateLines detects the lines' languages and translates them.
func translateLines(ctx context.Context, d *doc, opt Options, auto bool, res *Result) error {
	st := &res.Stats
	units, unitOrder := unitsOf(d)
	for _, u := range unitOrder {
		st.Units += len(units[u])
	}
	langs := map[*elem]string{}
	from := map[*elem]alto.LangSource{}
	texts := make([]string, len(unitOrder))
	for i, u := range unitOrder {
		texts[i] = joinLines(units[u])
		// A given source language, unless the unit is in a script no
		// supported language is written in (alto.Given).
		langs[u], from[u] = alto.Given(texts[i], opt.Source)
	}
	if auto {
		res.DetectionUsed = true
		order := alto.OrderOf(opt.Order, opt.MinConfidence)
		docLang := opt.DocumentLang
		for _, l := range []string{alto.DocumentLanguage(opt.Detector, texts, order.MinConfidence), d.pageLang} {
			if docLang == "" {
				docLang = l
			}
		}
		for i, u := range unitOrder {
			langs[u], from[u] = order.Choose(opt.Detector, texts[i], unitLang(u, units[u]), docLang)
		}
	}
	var segs []*batch.Segment
	var sent []*line
	for _, l := range d.lines {
		if l.text == "" {
			continue
		}
		l.src, l.from = langs[l.unit], from[l.unit]
		res.LangSources[l.from]++
		if l.src == opt.Target {
			st.InTarget++
			l.status = backend.InTarget
			continue
		}
		segs = append(segs, &batch.Segment{Page: l.page, Lang: l.src, Text: l.text})
		sent = append(sent, l)
	}
	bt := &batch.Batcher{Backend: opt.Backend, Target: opt.Target, MaxChars: opt.MaxBatchChars, Counts: &st.Counts}
	warnings, err := bt.Run(ctx, segs, auto)
	for _, w := range warnings {
		res.Warnings = append(res.Warnings, opt.File+": "+w)
	}
	if err != nil {
		return err
	}
	if st.Rerun, err = bt.EndRounds(ctx, segs, opt.RetryRounds); err != nil {
		return err
	}
	o := batch.Tally(segs)
	st.Lines, st.Translated, st.Untranslated, st.Unsupported = o.Sent, o.Translated, o.Untranslated, o.Unsupported
	res.Languages = o.Languages
	for i, l := range sent {
		if l.status = segs[i].Status; segs[i].Written() {
			l.out = strings.Join(alto.Fields(segs[i].Out), " ")
		}
	}
	return nil
}

// write splices the translations, the lang attributes and the capability
// into the source.
func write(d *doc, opt Options, res *Result) ([]byte, error) {
	tags, main, err := langtag.ForSources(opt.Target, res.Languages)
	if err != nil {
		return nil, err
	}
	res.Tag = main
	ed := xmlsplice.NewEditor(d.src)
	labels := map[*elem]string{}
	var labelOrder []*elem
	for _, l := range d.lines {
		if l.text == "" {
			continue
		}
		row := alto.LogRow{File: opt.File, Page: l.page, Line: l.id, Source: l.text, Status: l.status, Lang: l.src, LangSource: l.from}
		if l.out != "" {
			row.Target = l.out
			if sc, ok := opt.Backend.(backend.Scorer); ok && l.status != backend.Vocabulary {
				row.Score, row.HasScore = sc.Score(l.text)
			}
			// Words without text of their own (all in ocrx_cinfo) take
			// no token, so none is lost.
			var slots []*slot
			for _, sl := range l.slots {
				if sl.text() != "" {
					slots = append(slots, sl)
				}
			}
			for i, v := range alto.Place(alto.Fields(l.out), len(slots)) {
				for k, g := range slots[i].segs {
					if k > 0 {
						v = ""
					}
					// As the XML formats escape it: a character
					// that XML does not allow (nor HTML) becomes U+FFFD,
					// so that XHTML hOCR stays well-formed.
					ed.Replace(g.start, g.end, ed.EscapeText(v))
				}
			}
			for _, m := range l.marks {
				if _, ok := labels[m]; !ok {
					labelOrder = append(labelOrder, m)
				}
				if labels[m] == "" || tags[l.src] == main {
					labels[m] = tags[l.src]
				}
			}
		}
		if l.status != "" {
			res.Log = append(res.Log, row)
		}
	}
	for _, m := range labelOrder {
		setAttr(ed, m, "lang", labels[m])
	}
	if d.caps != nil && len(labelOrder) > 0 {
		if a, ok := findAttr(d.caps.raw, "content"); ok && !slices.Contains(strings.Fields(a.value), "ocrp_lang") {
			replaceValue(ed, d.caps, a, strings.TrimRight(a.value, " \t\r\n\f")+" ocrp_lang")
		}
	}
	return ed.Bytes()
}

// setAttr sets attribute name of e, adding it at the end of its start tag
// when it has none. e is an element the tokeniser opened (never a
// self-closing tag), so the new attribute goes just before the final '>':
// before a "/" there, it would end an unquoted value (<p title=x/>).
func setAttr(ed *xmlsplice.Editor, e *elem, name, value string) {
	if a, ok := findAttr(e.raw, name); ok {
		if a.bare || a.value != value {
			replaceValue(ed, e, a, value)
		}
		return
	}
	if !bytes.HasSuffix(e.raw, []byte(">")) {
		return // a start tag cut short by the end of the document
	}
	// Before the closing ">", unless the tag ends in a dangling "name=":
	// there the new attribute would become that one's value (<a b=> reads
	// <a b= lang="x"> as b="lang=..."), so it goes right after the tag
	// name instead.
	end := len(e.raw) - 1
	if t := bytes.TrimRight(e.raw[:end], " \t\n\r\f"); bytes.HasSuffix(t, []byte("=")) {
		end = 1 + bytes.IndexFunc(e.raw[1:], func(r rune) bool {
			return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '/' || r == '>'
		})
	}
	ed.Insert(e.start+end, " "+name+`="`+escapeAttr(value, '"')+`"`)
}

// replaceValue writes value as the value of attribute a of e: in a's
// quotes, in double quotes for an unquoted value, after "=" for an
// attribute written without one.
func replaceValue(ed *xmlsplice.Editor, e *elem, a rawAttr, value string) {
	if a.bare {
		ed.Insert(e.start+a.end, "="+escapeAttr(value, 0))
		return
	}
	v := escapeAttr(value, a.quote)
	if a.quote == 0 && a.end > a.start && e.raw[a.end-1] == '/' && a.end < len(e.raw) && e.raw[a.end] == '>' {
		// An unquoted value ending in "/" before ">" also made the tag
		// self-closing (<meta content=x/>): quoted, it keeps the "/".
		v += "/"
	}
	ed.Replace(e.start+a.start, e.start+a.end, v)
}

func joinSlots(slots []*slot) string {
	var parts []string
	for _, s := range slots {
		if t := s.text(); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}

func joinLines(lines []*line) string {
	parts := make([]string, len(lines))
	for i, l := range lines {
		parts[i] = l.text
	}
	return strings.Join(parts, " ")
}

// innermostOCR returns the innermost open element with an hOCR class
// (ocr_*, ocrx_*, ocrp_*).
func innermostOCR(stack []*elem) *elem {
	for i := len(stack) - 1; i >= 0; i-- {
		for _, c := range stack[i].classes {
			if strings.HasPrefix(c, "ocr") {
				return stack[i]
			}
		}
	}
	return nil
}

func lastIndex(stack []*elem, name string) int {
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].name == name {
			return i
		}
	}
	return -1
}

func hasAny(classes []string, want ...string) bool {
	for _, w := range want {
		if slices.Contains(classes, w) {
			return true
		}
	}
	return false
}

func classesOf(tok nethtml.Token) []string { return strings.Fields(attrOf(tok, "class")) }

func attrOf(tok nethtml.Token, name string) string {
	for _, a := range tok.Attr {
		if a.Namespace == "" && a.Key == name {
			return a.Val
		}
	}
	return ""
}

// isVoid reports the HTML elements that have no end tag.
func isVoid(name string) bool {
	switch name {
	case "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr":
		return true
	}
	return false
}

// escapeAttr escapes an attribute value for its quote character; an
// unquoted value (quote 0) is written in double quotes.
func escapeAttr(s string, quote byte) string {
	r := []string{"&", "&amp;", "<", "&lt;"}
	if quote == '\'' {
		return strings.NewReplacer(append(r, "'", "&#39;")...).Replace(s)
	}
	v := strings.NewReplacer(append(r, `"`, "&quot;")...).Replace(s)
	if quote == 0 {
		return `"` + v + `"`
	}
	return v
}

// rawAttr is an attribute of a start tag as written: the value at
// raw[start:end] (quotes excluded), its quote character (0 when unquoted)
// and its decoded value.
type rawAttr struct {
	start, end int
	quote      byte
	value      string
	bare       bool // written without a value (<p lang>)
}

// findAttr finds attribute name (ASCII case-insensitive) in the start tag
// raw, scanning it as the HTML tokeniser does.
func findAttr(raw []byte, name string) (rawAttr, bool) {
	i := 1
	for i < len(raw) && !isSpace(raw[i]) && raw[i] != '>' && raw[i] != '/' {
		i++
	}
	for i < len(raw) {
		for i < len(raw) && (isSpace(raw[i]) || raw[i] == '/') {
			i++
		}
		if i >= len(raw) || raw[i] == '>' {
			break
		}
		var key string
		key, i = attrName(raw, i)
		a, next := attrValue(raw, i)
		if key == name {
			return a, true
		}
		i = next
	}
	return rawAttr{}, false
}

// attrName reads the attribute name starting at raw[i], lower-cased, and
// returns it with the offset after it and the spaces that follow.
func attrName(raw []byte, i int) (string, int) {
	ns := i
	// A name may start with "=" (HTML5: <a = b> has an attribute "=").
	for i < len(raw) && !isSpace(raw[i]) && (raw[i] != '=' || i == ns) && raw[i] != '>' && (raw[i] != '/' || i == ns) {
		i++
	}
	key := strings.ToLower(string(raw[ns:i]))
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	return key, i
}

// attrValue reads the "=value" at raw[i], if any, and returns the value
// and the offset after it.
func attrValue(raw []byte, i int) (rawAttr, int) {
	if i >= len(raw) || raw[i] != '=' {
		return rawAttr{start: i, end: i, bare: true}, i
	}
	i++
	for i < len(raw) && isSpace(raw[i]) {
		i++
	}
	a := rawAttr{}
	if i < len(raw) && (raw[i] == '"' || raw[i] == '\'') {
		a.quote = raw[i]
		a.start = i + 1
		e := bytes.IndexByte(raw[a.start:], a.quote)
		if e < 0 {
			e = len(raw) - a.start
		}
		a.end = a.start + e
		i = a.end + 1
	} else {
		a.start = i
		for i < len(raw) && !isSpace(raw[i]) && raw[i] != '>' {
			i++
		}
		a.end = i
	}
	a.value = html.UnescapeString(string(raw[a.start:a.end]))
	return a, i
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' }

// langAttr is the language of an element's lang attribute, else of its
// xml:lang (alto.ElementLang; "" when it has none).
func langAttr(tok nethtml.Token) string {
	if v := attrOf(tok, "lang"); v != "" {
		return alto.ElementLang(v)
	}
	return alto.ElementLang(attrOf(tok, "xml:lang"))
}

// unitLang is the language a detection unit (paragraph, area or page)
// declares: its own, else the one all its lines declare ("" when none).
func unitLang(u *elem, lines []*line) string {
	if u != nil && u.lang != "" {
		return u.lang
	}
	lang := ""
	for i, l := range lines {
		if l.el.lang == "" || i > 0 && l.el.lang != lang {
			return ""
		}
		lang = l.el.lang
	}
	return lang
}

// UnitTexts returns the texts of an hOCR document's detection units (its
// paragraphs, each its lines joined), in document order: what the
// document's language is detected over (translator.BookLanguage).
func UnitTexts(src []byte) ([]string, error) {
	d, err := read(src)
	if err != nil {
		return nil, err
	}
	units, order := unitsOf(d)
	texts := make([]string, len(order))
	for i, u := range order {
		texts[i] = joinLines(units[u])
	}
	return texts, nil
}

// unitsOf sets each line's text and groups the lines with text by their
// detection unit, units in document order.
func unitsOf(d *doc) (map[*elem][]*line, []*elem) {
	units := map[*elem][]*line{}
	var order []*elem
	for _, l := range d.lines {
		if l.text = joinSlots(l.slots); l.text == "" {
			continue
		}
		if _, ok := units[l.unit]; !ok {
			order = append(order, l.unit)
		}
		units[l.unit] = append(units[l.unit], l)
	}
	return units, order
}
