// Package pagexml translates PAGE-XML documents (the PRImA page content
// format of Transkribus, eScriptorium, kraken, OCR-D, Aletheia and LAREX,
// namespaces 2013-07-15 to 2019-07-15) by splicing, keeping every byte it
// does not have to change.
//
// The unit is the TextLine: its text is the Unicode of its first TextEquiv
// (the lowest @index when they have one), or, for a line without one, the
// Unicode of its Words joined by spaces. A TextRegion whose lines hold no
// text at all (region-level transcriptions) is one unit itself, read and
// written through its own TextEquivs in the same way. A page's lines go to the backend
// in batches (internal/translate/batch), one line an item.
//
// Append mode, the default, adds to each translated line one TextEquiv
// after its existing ones (after its last Word when it has none), with
// @index one above the highest existing index (1 when none has one) and
// @comments holding the language tag of machine translation
// (internal/translate/langtag, e.g. en-t-cs-t0-und); nothing else changes,
// so deleting those elements (Remove) gives back the input byte for byte.
// A region that has TextEquivs of its own beside its lines' gets one more
// in the same way, holding its lines' translations one a line, when every
// line of it was translated; Words keep the source.
// PAGE 2013 allows a single TextEquiv a line and no @index: the input is
// then left as it is and the translation goes into a sidecar document with
// the same ids, written as in Replace mode.
//
// Replace mode writes the translation into the line's TextEquiv (its
// Unicode, and its PlainText when there is one), spreads it over the
// line's Words (one token a Word, the last taking the rest, as ALTO
// Strings; a Word's PlainText too), and into the region's own TextEquiv
// when all its lines were translated; it marks the line's and the
// region's TextEquiv with @comments (PAGE 2016 and later) or the TextLine
// (2013) when they have none, and the primaryLanguage of
// translated lines and regions and the language of their Words, where
// present, become the target's PAGE name ("English"), as ALTO's LANG
// does. Glyphs are left as they are.
//
// Only attributes and elements the document's schema version allows are
// added, so an input that was invalid gets no new schema errors.
package pagexml

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/batch"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/xmlsplice"
)

// NamespacePrefix starts every PAGE content namespace; the version date
// follows it.
const NamespacePrefix = "http://schema.primaresearch.org/PAGE/gts/pagecontent/"

// Versions are the namespace dates translated, oldest first.
var Versions = []string{"2013-07-15", "2016-07-15", "2017-07-15", "2018-07-15", "2019-07-15"}

// Options configures one document translation.
type Options struct {
	// Backend does the translating.
	Backend backend.Backend
	// Source is an ISO 639-1 code, or "" or "auto" to detect once per
	// region.
	Source string
	// Target is the ISO 639-1 target code (required).
	Target string
	// Detector is required when Source is auto.
	Detector alto.Detector
	// MinConfidence: detections at or below it fall back to
	// alto.FallbackLang. Zero means alto.DefaultMinConfidence. Order, when
	// set, replaces it.
	MinConfidence float64
	// Order is the source-language order of each region (alto.LangOrder:
	// detected, the region's primaryLanguage or the one its lines share,
	// the document's language, the default); nil means
	// alto.DefaultLangOrder with MinConfidence.
	Order *alto.LangOrder
	// DocumentLang, when not "", is the document's language, given rather
	// than detected (a book's).
	DocumentLang string
	// Mode is alto.Append (default when empty) or alto.Replace.
	Mode alto.Mode
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
	// Pages and Regions count the document's pages and the text regions
	// with lines sent; Lines the lines sent.
	Pages, Regions, Lines int
	// Counts are the backend traffic counts.
	batch.Counts
	// Units counts the lines with text; Translated those written with a
	// translation. The others are AlreadyDone (append mode: the line
	// already has a machine translation into the target), InTarget,
	// Unsupported (a detected language the backend does not offer) or
	// Untranslated (the guard rejected the replies twice).
	Units, Translated, AlreadyDone, InTarget, Unsupported, Untranslated int
	// Rerun counts the lines an end-of-document round translated (part of
	// Translated).
	Rerun int
}

// Result is a translated document.
type Result struct {
	// Output is the translated document; for PAGE 2013 in append mode it
	// is the input, unchanged.
	Output []byte
	// Sidecar is, for PAGE 2013 in append mode, the document holding the
	// translation (same ids); nil otherwise.
	Sidecar []byte
	// Version is the namespace date of the document ("2019-07-15").
	Version string
	// Tag is the language tag written (en-t-cs-t0-und); with several
	// source languages, that of the most frequent.
	Tag string
	// Log holds one row per line with text, in document order.
	Log []alto.LogRow
	// Stats counts pages, lines and backend traffic.
	Stats Stats
	// Languages maps each source language used to its number of lines.
	Languages map[string]int
	// LangSources counts the lines whose source language each rule of the
	// order chose (a line takes its region's).
	LangSources map[alto.LangSource]int
	// DetectionUsed reports that the Detector ran.
	DetectionUsed bool
	// Warnings are non-fatal problems.
	Warnings []string
}

// IsPAGE reports whether the root element of src is a PAGE PcGts in a
// PAGE content namespace (any version; "https:" as some Transkribus
// exports write it too).
func IsPAGE(src []byte) bool {
	_, ok := sniff(src)
	return ok
}

// Version returns the namespace date of a PAGE document's root, or "".
func Version(src []byte) string {
	v, _ := sniff(src)
	return v
}

// line is one TextLine with text.
type line struct {
	node   *xmlsplice.Node
	region *region
	page   int
	id     string
	text   string
	// equiv is the TextEquiv the text was read from (nil for a line
	// whose text comes from its Words); equivs are all its TextEquivs.
	equiv  *xmlsplice.Node
	equivs []*xmlsplice.Node
	// words are the Unicode elements of its Words, in order.
	words []*xmlsplice.Node

	src, out string
	status   backend.Status
	done     bool // append: already translated into the target
}

// region is a TextRegion with its lines.
type region struct {
	node  *xmlsplice.Node
	lines []*line
	src   string
	from  alto.LangSource // the rule that chose src
	// self: the region's lines hold no text; its one unit is the
	// region's own TextEquiv.
	self bool
}

// Translate translates a PAGE document (see the package comment).
func Translate(ctx context.Context, src []byte, opt Options) (*Result, error) {
	auto, err := batch.CheckRequest("pagexml", opt.Backend, opt.Source, opt.Target, opt.Detector != nil)
	if err != nil {
		return nil, err
	}
	if opt.Mode == "" {
		opt.Mode = alto.Append
	}
	if opt.Mode != alto.Append && opt.Mode != alto.Replace {
		return nil, fmt.Errorf("pagexml: unknown output mode %q", opt.Mode)
	}
	if opt.MinConfidence == 0 {
		opt.MinConfidence = alto.DefaultMinConfidence
	}
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("pagexml: %s: %w", opt.File, err)
	}
	root := rootElement(doc)
	version, ok := versionOf(root)
	if !ok {
		return nil, fmt.Errorf("pagexml: %s: root element is not a PAGE <PcGts>", opt.File)
	}
	if version < Versions[0] {
		return nil, fmt.Errorf("pagexml: %s: PAGE %s is older than %s and not supported", opt.File, version, Versions[0])
	}
	t := &translator{opt: opt, src: src, nl: xmlsplice.LineBreak(src), auto: auto, version: version, res: &Result{Version: version, Languages: map[string]int{}, LangSources: map[alto.LangSource]int{}}}
	regions := t.collect(root)
	if err := t.translate(ctx, regions); err != nil {
		return nil, fmt.Errorf("pagexml: %s: %w", opt.File, err)
	}
	return t.write(regions)
}

// translator holds one Translate call.
type translator struct {
	opt     Options
	src     []byte
	nl      string // the document's line break (setText, xmlsplice.LineBreak)
	auto    bool
	version string
	res     *Result
	// declared is the language the first Page declares (primaryLanguage).
	declared string
}

// indexed reports whether the version allows several TextEquivs with an
// @index and @comments (2016-07-15 and later).
func (t *translator) indexed() bool { return t.version >= "2016-07-15" }

// collect gathers the text regions of every page (nested ones and those
// in tables included) with their lines.
func (t *translator) collect(root *xmlsplice.Node) []*region {
	var regions []*region
	page := 0
	root.Walk(func(n *xmlsplice.Node) bool {
		switch n.Name.Local {
		case "Page":
			page++
			t.res.Stats.Pages++
			if a, ok := n.Attr("", "primaryLanguage"); ok && t.declared == "" {
				t.declared = alto.ElementLang(a.Value)
			}
		case "TextRegion":
			r := &region{node: n}
			for _, c := range n.Elements() {
				if c.Name.Local != "TextLine" {
					continue
				}
				if l := t.readLine(c, page); l != nil {
					l.region = r
					r.lines = append(r.lines, l)
				}
			}
			if len(r.lines) == 0 {
				// A region whose lines hold no text (PRImA's example
				// page, region-level ground truth) is translated as one
				// unit from its own TextEquiv.
				if l := t.readLine(n, page); l != nil {
					l.region, r.self = r, true
					r.lines = append(r.lines, l)
				}
			}
			if len(r.lines) > 0 {
				regions = append(regions, r)
			}
		}
		return true
	})
	return regions
}

// readLine returns the line of TextLine n, or nil when it has no text.
func (t *translator) readLine(n *xmlsplice.Node, page int) *line {
	l := &line{node: n, page: page}
	if a, ok := n.Attr("", "id"); ok {
		l.id = a.Value
	}
	best := 0
	for _, c := range n.Elements() {
		switch c.Name.Local {
		case "TextEquiv":
			l.equivs = append(l.equivs, c)
			if lang := isOurs(c); lang != "" {
				l.done = l.done || lang == t.opt.Target
				continue
			}
			text, ok := unicodeText(c)
			if !ok || strings.TrimSpace(text) == "" {
				continue
			}
			// The lowest @index is the main text; unindexed ones rank
			// after indexed ones, in document order.
			idx, hasIdx := index(c)
			if !hasIdx {
				idx = int(^uint(0) >> 1)
			}
			if l.equiv == nil || idx < best {
				l.equiv, l.text, best = c, text, idx
			}
		case "Word":
			if u := firstUnicode(c); u != nil {
				l.words = append(l.words, u)
			}
		}
	}
	if l.equiv == nil {
		var ws []string
		for _, u := range l.words {
			if text, ok := u.Text(); ok {
				ws = append(ws, text)
			}
		}
		l.text = strings.Join(ws, " ")
	}
	l.text = strings.Join(alto.Fields(l.text), " ")
	if l.text == "" {
		return nil
	}
	return l
}

// translate detects the source languages and translates the lines, page by
// page, grouped by language.
func (t *translator) translate(ctx context.Context, regions []*region) error {
	var texts []string
	for _, r := range regions {
		texts = append(texts, regionText(r))
	}
	order := alto.OrderOf(t.opt.Order, t.opt.MinConfidence)
	docLang := ""
	if t.auto {
		if docLang = t.opt.DocumentLang; docLang == "" {
			docLang = alto.DocumentLanguage(t.opt.Detector, texts, order.MinConfidence)
		}
		if docLang == "" {
			docLang = t.declared
		}
		t.res.DetectionUsed = true
	}
	st := &t.res.Stats
	for i, r := range regions {
		r.src, r.from = alto.Given(texts[i], t.opt.Source)
		if t.auto {
			r.src, r.from = order.Choose(t.opt.Detector, texts[i], regionLang(r), docLang)
		}
		t.res.LangSources[r.from] += len(r.lines)
	}
	var segs []*batch.Segment
	var sent []*line
	for _, r := range regions {
		for _, l := range r.lines {
			st.Units++
			l.src = r.src
			switch {
			case t.opt.Mode == alto.Append && l.done:
				st.AlreadyDone++
				continue
			case l.src == t.opt.Target:
				st.InTarget++
				l.status = backend.InTarget
				continue
			}
			segs = append(segs, &batch.Segment{Page: l.page, Lang: l.src, Text: l.text})
			sent = append(sent, l)
		}
	}
	bt := &batch.Batcher{Backend: t.opt.Backend, Target: t.opt.Target, MaxChars: t.opt.MaxBatchChars, Counts: &st.Counts}
	warnings, err := bt.Run(ctx, segs, t.auto)
	for _, w := range warnings {
		t.res.Warnings = append(t.res.Warnings, t.opt.File+": "+w)
	}
	if err != nil {
		return err
	}
	if st.Rerun, err = bt.EndRounds(ctx, segs, t.opt.RetryRounds); err != nil {
		return err
	}
	o := batch.Tally(segs)
	st.Lines, st.Translated, st.Untranslated, st.Unsupported = o.Sent, o.Translated, o.Untranslated, o.Unsupported
	t.res.Languages = o.Languages
	for i, l := range sent {
		if l.status = segs[i].Status; segs[i].Written() {
			l.out = strings.Join(alto.Fields(segs[i].Out), " ")
		}
	}
	for _, r := range regions {
		for _, l := range r.lines {
			if l.out != "" {
				st.Regions++
				break
			}
		}
	}
	return nil
}

// write turns the translations into the output documents and the log.
func (t *translator) write(regions []*region) (*Result, error) {
	res := t.res
	tags, main, err := langtag.ForSources(t.opt.Target, res.Languages)
	if err != nil {
		return nil, fmt.Errorf("pagexml: %s: %w", t.opt.File, err)
	}
	res.Tag = main
	ed := xmlsplice.NewEditor(t.src)
	sidecar := t.opt.Mode == alto.Append && !t.indexed()
	for _, r := range regions {
		for _, l := range r.lines {
			row := alto.LogRow{File: t.opt.File, Page: l.page, Line: l.id, Source: l.text, Status: l.status, Lang: l.src, LangSource: r.from}
			if l.out != "" {
				row.Target = l.out
				if sc, ok := t.opt.Backend.(backend.Scorer); ok && l.status != backend.Vocabulary {
					row.Score, row.HasScore = sc.Score(l.text)
				}
				if t.opt.Mode == alto.Append && !sidecar {
					t.appendEquiv(ed, l, tags[l.src])
				} else {
					t.replaceLine(ed, l, tags[l.src])
				}
			}
			if l.status != "" || l.out != "" {
				res.Log = append(res.Log, row)
			}
		}
		if t.opt.Mode == alto.Replace || sidecar {
			t.replaceRegion(ed, r, tags, main)
		} else {
			t.appendRegion(ed, r, tags, main)
		}
	}
	out, err := ed.Bytes()
	if err != nil {
		return nil, fmt.Errorf("pagexml: %s: %w", t.opt.File, err)
	}
	res.Output = out
	if sidecar {
		res.Output = t.src
		if ed.Len() > 0 {
			res.Sidecar = out
		}
	}
	return res, nil
}

// appendEquiv adds the translated TextEquiv of line l after its last
// TextEquiv (or its last Word), on a line of its own when that element is.
func (t *translator) appendEquiv(ed *xmlsplice.Editor, l *line, tag string) {
	var anchor *xmlsplice.Node
	next := 0
	for _, c := range l.node.Elements() {
		switch c.Name.Local {
		case "TextEquiv":
			anchor = c
			if i, ok := index(c); ok && i >= next {
				next = i + 1
			}
		case "Word":
			if len(l.equivs) == 0 {
				anchor = c
			}
		}
	}
	if next == 0 {
		next = 1
	}
	p := prefix(l.node)
	el := fmt.Sprintf(`<%sTextEquiv index="%d" comments="%s"><%sUnicode>%s</%sUnicode></%sTextEquiv>`,
		p, next, xmlsplice.EscapeAttr(tag, '"'), p, t.escapeText(l.out), p, p)
	ed.Insert(anchor.End, anchor.Indent(t.src)+el)
}

// replaceLine writes the translation of line l into its TextEquiv and
// Words, and marks it with the tag where the schema allows.
func (t *translator) replaceLine(ed *xmlsplice.Editor, l *line, tag string) {
	if l.equiv != nil {
		for _, c := range l.equiv.Elements() {
			if c.Name.Local == "Unicode" || c.Name.Local == "PlainText" {
				t.setText(ed, c, l.out)
			}
		}
	}
	if len(l.words) > 0 {
		for i, v := range alto.Place(alto.Fields(l.out), len(l.words)) {
			t.setText(ed, l.words[i], v)
			// The Word's PlainText beside its Unicode says the same.
			for _, c := range l.words[i].Parent.Elements() {
				if c.Name.Local == "PlainText" {
					t.setText(ed, c, v)
				}
			}
		}
	}
	// The text is now in the target language: so are the line (or
	// region) and its words where they say which language they are in.
	setLanguage(ed, l.node, "primaryLanguage", t.opt.Target)
	for _, u := range l.words {
		if w := u.Parent.Parent; w != nil && w.Name.Local == "Word" {
			setLanguage(ed, w, "language", t.opt.Target)
		}
	}
	switch {
	case t.indexed() && l.equiv != nil:
		if _, ok := l.equiv.Attr("", "comments"); !ok {
			ed.AddAttr(l.equiv, "comments", tag)
		}
	case !t.indexed() || l.equiv == nil:
		// PAGE 2013 has no TextEquiv/@comments; and a line whose text
		// came from its Words has no TextEquiv of its own.
		if _, ok := l.node.Attr("", "comments"); !ok {
			ed.AddAttr(l.node, "comments", tag)
		}
	}
}

// regionOut returns a region's translation when every line of it was
// translated in this run: the lines' translations, one a line, and the tag
// of its lines' language (tags; main when they are in several). A region
// that is its own unit has none (it was written as a line).
func regionOut(r *region, tags map[string]string, main string) (text, tag string, ok bool) {
	if r.self {
		return "", "", false
	}
	var outs []string
	for i, l := range r.lines {
		if l.out == "" {
			return "", "", false
		}
		outs = append(outs, l.out)
		switch {
		case i == 0:
			tag = tags[l.src]
		case tags[l.src] != tag:
			tag = main
		}
	}
	return strings.Join(outs, "\n"), tag, len(outs) > 0
}

// appendRegion adds to a region that has TextEquivs of its own (a
// transcription of the whole region beside its lines') one more, after
// them, holding its lines' translations (regionOut), as appendEquiv does
// for a line; a region without its own TextEquiv, or already holding one
// in the target, is left alone.
func (t *translator) appendRegion(ed *xmlsplice.Editor, r *region, tags map[string]string, main string) {
	text, tag, ok := regionOut(r, tags, main)
	if !ok {
		return
	}
	var anchor *xmlsplice.Node
	next := 1
	for _, c := range r.node.Elements() {
		if c.Name.Local != "TextEquiv" {
			continue
		}
		if isOurs(c) == t.opt.Target {
			return
		}
		anchor = c
		if i, ok := index(c); ok && i >= next {
			next = i + 1
		}
	}
	if anchor == nil {
		return
	}
	p := prefix(r.node)
	el := fmt.Sprintf(`<%sTextEquiv index="%d" comments="%s"><%sUnicode>%s</%sUnicode></%sTextEquiv>`,
		p, next, xmlsplice.EscapeAttr(tag, '"'), p, t.escapeText(text), p, p)
	ed.Insert(anchor.End, anchor.Indent(t.src)+el)
}

// replaceRegion writes the region's own TextEquiv when every line of the
// region was translated (regionOut; setText writes the line breaks as the
// document does), and marks it, as replaceLine marks a line's.
func (t *translator) replaceRegion(ed *xmlsplice.Editor, r *region, tags map[string]string, main string) {
	text, tag, ok := regionOut(r, tags, main)
	if !ok {
		return
	}
	setLanguage(ed, r.node, "primaryLanguage", t.opt.Target)
	for _, c := range r.node.Elements() {
		if c.Name.Local != "TextEquiv" {
			continue
		}
		for _, u := range c.Elements() {
			if u.Name.Local == "Unicode" || u.Name.Local == "PlainText" {
				t.setText(ed, u, text)
			}
		}
		if _, ok := c.Attr("", "comments"); !ok && t.indexed() && tag != "" {
			ed.AddAttr(c, "comments", tag)
		}
		return
	}
}

// setText replaces the text of element n; an empty-element tag <Unicode/>
// becomes a start and an end tag (its start tag kept as written); an
// element with child elements or comments is left alone. A line break in
// text is written as the document writes its line ends: CRLF in a
// document that has one (as written, not as &#13;: a parser reads both as
// one line feed), else LF.
func (t *translator) setText(ed *xmlsplice.Editor, n *xmlsplice.Node, text string) {
	if _, ok := n.Text(); !ok {
		return
	}
	raw := t.escapeText(text)
	if n.SelfClosing {
		start := strings.TrimSuffix(string(t.src[n.Start:n.StartTagEnd]), "/>")
		ed.Replace(n.Start, n.End, start+">"+raw+"</"+n.QName()+">")
		return
	}
	ed.Replace(n.StartTagEnd, n.EndTagStart, raw)
}

// escapeText escapes text for an element's content, writing its line
// breaks as the document does.
func (t *translator) escapeText(text string) string {
	return xmlsplice.EscapeTextLines(text, t.nl)
}

// isOurs returns the language of a TextEquiv whose @comments is a
// machine-translation tag (an ISO 639-1 code when it has one), or "".
func isOurs(n *xmlsplice.Node) string {
	a, ok := n.Attr("", "comments")
	if !ok {
		return ""
	}
	return langtag.Target(a.Value)
}

// index returns the integer @index of a TextEquiv.
func index(n *xmlsplice.Node) (int, bool) {
	a, ok := n.Attr("", "index")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(strings.TrimSpace(a.Value))
	return i, err == nil
}

// unicodeText returns the text of a TextEquiv's Unicode child.
func unicodeText(equiv *xmlsplice.Node) (string, bool) {
	for _, c := range equiv.Elements() {
		if c.Name.Local == "Unicode" {
			return c.Text()
		}
	}
	return "", false
}

// firstUnicode returns the Unicode element of an element's first
// TextEquiv (lowest @index when they have one).
func firstUnicode(n *xmlsplice.Node) *xmlsplice.Node {
	var pick *xmlsplice.Node
	best := 0
	for _, c := range n.Elements() {
		if c.Name.Local != "TextEquiv" || isOurs(c) != "" {
			continue
		}
		i, has := index(c)
		if pick == nil || (has && i < best) {
			for _, u := range c.Elements() {
				if u.Name.Local == "Unicode" {
					pick, best = u, i
				}
			}
		}
	}
	return pick
}

func regionText(r *region) string {
	texts := make([]string, len(r.lines))
	for i, l := range r.lines {
		texts[i] = l.text
	}
	return strings.Join(texts, " ")
}

// prefix is the namespace prefix of n's name with its colon ("pc:"), or "".
func prefix(n *xmlsplice.Node) string {
	if n.Name.Space == "" {
		return ""
	}
	return n.Name.Space + ":"
}

func rootElement(doc *xmlsplice.Document) *xmlsplice.Node {
	for _, n := range doc.Root.Children {
		if n.Kind == xmlsplice.ElementNode {
			return n
		}
	}
	return nil
}

// versionOf returns the namespace date of a PcGts root.
func versionOf(root *xmlsplice.Node) (string, bool) {
	if root == nil || root.Name.Local != "PcGts" {
		return "", false
	}
	return versionOfURI(root.URI())
}

// sniff reads src up to its root start tag and returns the PAGE version of
// a PcGts root. A document in another encoding than UTF-8 is decoded first.
func sniff(src []byte) (string, bool) {
	if text, _, err := xmlsplice.Decode(src); err == nil {
		src = text
	}
	d := xml.NewDecoder(bytes.NewReader(src))
	for {
		tok, err := d.Token()
		if err != nil {
			return "", false
		}
		if se, ok := tok.(xml.StartElement); ok {
			if se.Name.Local != "PcGts" {
				return "", false
			}
			return versionOfURI(se.Name.Space)
		}
	}
}

// versionOfURI returns the date of a PAGE content namespace URI.
func versionOfURI(uri string) (string, bool) {
	uri = strings.Replace(uri, "https://", "http://", 1)
	v, ok := strings.CutPrefix(uri, NamespacePrefix)
	if !ok || len(v) != len("2019-07-15") {
		return "", false
	}
	return v, true
}

// languageNames are PAGE's names (LanguageSimpleType, 2013-07-15 to
// 2019-07-15) of the target languages the translator offers.
var languageNames = map[string]string{
	"bg": "Bulgarian", "cs": "Czech", "de": "German", "en": "English", "es": "Spanish", "et": "Estonian",
	"fr": "French", "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "it": "Italian", "lt": "Lithuanian",
	"lv": "Latvian", "nl": "Dutch", "pl": "Polish", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
	"sl": "Slovene", "uk": "Ukrainian",
}

// setLanguage sets n's language attribute (primaryLanguage, or a Word's
// language) to PAGE's name of code, when n has that attribute and PAGE
// names code; no attribute is added.
func setLanguage(ed *xmlsplice.Editor, n *xmlsplice.Node, attr, code string) {
	name, known := languageNames[code]
	if a, ok := n.Attr("", attr); ok && known && a.Value != name {
		ed.SetAttr(a, name)
	}
}

// regionLang is the language a region declares: its primaryLanguage, else
// the primaryLanguage all its lines share ("" when none).
func regionLang(r *region) string {
	if a, ok := r.node.Attr("", "primaryLanguage"); ok {
		return alto.ElementLang(a.Value)
	}
	nodes := make([]*xmlsplice.Node, len(r.lines))
	for i, l := range r.lines {
		nodes[i] = l.node
	}
	return alto.SharedLang(nodes, "", "primaryLanguage")
}

// UnitTexts returns the texts of a PAGE document's units (its text
// regions, each its lines joined), in document order: what the document's
// language is detected over (translator.BookLanguage).
func UnitTexts(src []byte) ([]string, error) {
	root, err := pageRoot(src)
	if err != nil {
		return nil, err
	}
	t := &translator{res: &Result{}}
	var texts []string
	for _, r := range t.collect(root) {
		texts = append(texts, regionText(r))
	}
	return texts, nil
}

// pageRoot parses src and returns its PcGts root element.
func pageRoot(src []byte) (*xmlsplice.Node, error) {
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, err
	}
	root := rootElement(doc)
	if _, ok := versionOf(root); !ok {
		return nil, errors.New("pagexml: root element is not a PAGE <PcGts>")
	}
	return root, nil
}
