// Package metadata translates the targeted text fields of archival metadata
// XML (bare records or records inside an OAI-PMH envelope), spec 4.5.
//
// The field list's XPaths are evaluated with the prefixes arch: and oai:
// bound to the records-source and OAI-PMH namespace URIs, whatever prefixes
// the file itself uses. Each matching element with non-empty text is one
// unit, translated in one backend call. Replace mode overwrites the element
// text; append mode inserts a labelled sibling. Every other byte of the file
// is kept.
package metadata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/batch"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/xmlsplice"
)

// Detector identifies the language of a text (same contract as alto.Detector).
type Detector = alto.Detector

// Mode is the output mode: alto.Replace, alto.Append or alto.Alternative.
type Mode = alto.Mode

// LogRow is one row of the translation log; for metadata Page is 0 (an empty
// page_num column) and Line is the field's XPath expression.
type LogRow = alto.LogRow

// Options configures one document translation.
type Options struct {
	// Backend does the translating (one call per field).
	Backend backend.Backend
	// Source is an ISO 639-1 code, or "" or "auto" to detect once per field.
	Source string
	// Target is the ISO 639-1 target code (required).
	Target string
	// Detector is required when Source is auto.
	Detector Detector
	// MinConfidence: detections at or below it fall back to Czech. Zero means
	// alto.DefaultMinConfidence (0.2). Order, when set, replaces it.
	MinConfidence float64
	// Order is the source-language order of each field (alto.LangOrder:
	// detected, the field's own xml:lang, the document's language, the
	// default); nil means alto.DefaultLangOrder with MinConfidence.
	Order *alto.LangOrder
	// DocumentLang, when not "", is the document's language, given rather
	// than detected (a book's).
	DocumentLang string
	// Mode is alto.Replace (default when empty), alto.Append or
	// alto.Alternative: as alto.Append, but the sibling's xml:lang is the
	// machine-translation tag (langtag.MT, "en-t-cs-t0-und") and the
	// original is left as it was, so Remove gives the input back.
	Mode Mode
	// Fields are the XPath targets (see LoadFields).
	Fields []*XPath
	// Namespaces binds the XPath prefixes; nil means DefaultNamespaces.
	Namespaces Namespaces
	// File is the value of the log's file column.
	File string
	// RetryRounds is how many times the fields whose replies the guard
	// rejected are tried again at the end of the document, after every
	// other field, before they are left untranslated (rounds.go); 0 turns
	// the end rounds off.
	RetryRounds int
}

// Result is a translated document.
type Result struct {
	// Output is the translated document.
	Output []byte
	// Log holds one row per translated field, in field-list then document order.
	Log []LogRow
	// Units is the number of matching elements with non-empty text.
	Units int
	// Translated counts units translated; Skipped counts units left alone
	// (already done in append mode, already in the target language, or an
	// unsupported detected pair).
	Translated, Skipped int
	// AlreadyDone, InTarget and Unsupported split Skipped: already followed
	// by (or itself) a target-language sibling in append mode, in the
	// target language, or in a detected language the backend does not offer.
	AlreadyDone, InTarget, Unsupported int
	// Untranslated counts units whose replies the degeneracy guard rejected
	// twice; they are left as they were.
	Untranslated int
	// Rerun counts fields the guard had rejected that an end-of-document
	// round translated (Options.RetryRounds; part of Translated).
	Rerun int
	// Mixed counts units left as they were because their text is
	// interleaved with child elements, comments or processing instructions
	// (log status mixed_content); they are also counted in Skipped.
	Mixed int
	// Calls is the number of backend calls made.
	Calls int
	// Languages maps each source language used to its number of fields.
	Languages map[string]int
	// LangSources counts the fields whose source language each rule of
	// the order chose.
	LangSources map[alto.LangSource]int
	// DetectionUsed reports that the Detector ran.
	DetectionUsed bool
	// Warnings are non-fatal problems, each naming the file.
	Warnings []string
}

const xmlLang = "xml:lang"

// MaxFields is the most fields with text one document may have matched by
// the field list; a larger document is refused with a *xmlsplice.LimitError
// before any backend call (a record has tens).
const MaxFields = 5000

// Translate translates the targeted fields of a metadata document.
func Translate(ctx context.Context, src []byte, opt Options) (*Result, error) {
	opt, auto, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("metadata: %s: %w", opt.File, err)
	}
	if opt.Namespaces, err = opt.Namespaces.WithDocument(doc, opt.Fields); err != nil {
		return nil, fmt.Errorf("metadata: %s: %w", opt.File, err)
	}
	// The field count is checked before any backend call.
	if err := checkFieldCount(doc, src, opt); err != nil {
		return nil, err
	}
	t := &translation{src: src, opt: opt, auto: auto, res: &Result{Languages: map[string]int{}, LangSources: map[alto.LangSource]int{}},
		ed: xmlsplice.NewEditor(src), supported: map[string]error{}, done: map[*xmlsplice.Node]bool{},
		langs: map[*xmlsplice.Node]string{}, from: map[*xmlsplice.Node]alto.LangSource{}, order: alto.OrderOf(opt.Order, opt.MinConfidence)}
	// The document's language is the prior of each field's detection, and
	// the language of a field neither detected nor labelled: given, else
	// detected over all the fields, else the root element's xml:lang.
	if auto {
		var texts []string
		for _, f := range opt.Fields {
			for _, el := range f.Select(doc, opt.Namespaces) {
				if text, ok := el.Text(); ok {
					texts = append(texts, text)
				}
			}
		}
		t.docLang = opt.DocumentLang
		if t.docLang == "" {
			t.docLang = alto.DocumentLanguage(opt.Detector, texts, t.order.MinConfidence)
		}
		if t.docLang == "" {
			t.docLang = declaredLang(doc)
		}
		t.res.DetectionUsed = len(texts) > 0
	}
	t.prepare(ctx, doc)
	for _, f := range opt.Fields {
		for _, el := range f.Select(doc, opt.Namespaces) {
			if err := t.field(ctx, f, el); err != nil {
				return nil, err
			}
		}
	}
	if err := t.endRounds(ctx); err != nil {
		return nil, err
	}
	if t.res.Output, err = t.ed.Bytes(); err != nil {
		return nil, fmt.Errorf("metadata: %s: %w", opt.File, err)
	}
	return t.res, nil
}

// withDefaults checks opt and fills its defaults; auto reports a source
// language to detect.
func (opt Options) withDefaults() (_ Options, auto bool, _ error) {
	auto, err := batch.CheckRequest("metadata", opt.Backend, opt.Source, opt.Target, opt.Detector != nil)
	if err != nil {
		return opt, auto, err
	}
	if opt.Mode == "" {
		opt.Mode = alto.Replace
	}
	if opt.Mode != alto.Replace && opt.Mode != alto.Append && opt.Mode != alto.Alternative {
		return opt, auto, fmt.Errorf("metadata: unknown output mode %q", opt.Mode)
	}
	if opt.MinConfidence == 0 {
		opt.MinConfidence = alto.DefaultMinConfidence
	}
	if opt.Namespaces == nil {
		opt.Namespaces = DefaultNamespaces
	}
	if len(opt.Fields) == 0 {
		return opt, auto, errors.New("metadata: no XPath targets")
	}
	return opt, auto, nil
}

// checkFieldCount refuses a document with more than MaxFields targeted
// elements holding text (each counted once).
func checkFieldCount(doc *xmlsplice.Document, src []byte, opt Options) error {
	fields, counted := 0, map[*xmlsplice.Node]bool{}
	for _, f := range opt.Fields {
		for _, el := range f.Select(doc, opt.Namespaces) {
			if counted[el] {
				continue
			}
			counted[el] = true
			if text, _ := el.Text(); strings.TrimSpace(text) != "" {
				if fields++; fields > MaxFields {
					return fmt.Errorf("metadata: %s: %w", opt.File, &xmlsplice.LimitError{
						Line: 1 + bytes.Count(src[:el.Start], []byte{'\n'}), What: "translated field count", Limit: MaxFields})
				}
			}
		}
	}
	return nil
}

// translation is one document's translation in progress.
type translation struct {
	src       []byte
	opt       Options
	auto      bool
	docLang   string // the document's detected language (auto)
	res       *Result
	ed        *xmlsplice.Editor
	supported map[string]error           // Supports' answer per source language
	done      map[*xmlsplice.Node]bool   // an element matched by two fields is translated once
	langs     map[*xmlsplice.Node]string // detected source language per field (auto)
	from      map[*xmlsplice.Node]alto.LangSource
	order     alto.LangOrder
	failed    []failedField // fields the guard left untranslated, for the end rounds
}

// prepare announces the document's fields with text to a
// backend.Preparer, grouped by source language (detected as field does),
// in document order; fields in a script no supported language is written
// in are not announced.
func (t *translation) prepare(ctx context.Context, doc *xmlsplice.Document) {
	p, ok := t.opt.Backend.(backend.Preparer)
	if !ok {
		return
	}
	var order []string
	byLang := map[string][]string{}
	seen := map[*xmlsplice.Node]bool{}
	for _, f := range t.opt.Fields {
		for _, el := range f.Select(doc, t.opt.Namespaces) {
			text, ok := el.Text()
			if !ok || strings.TrimSpace(text) == "" || seen[el] ||
				t.opt.Mode != alto.Replace && alreadyAppended(el, t.opt.Target) {
				continue
			}
			seen[el] = true
			lang := t.lang(el, text)
			if _, foreign := langid.ForeignTag(lang); lang != t.opt.Target && !foreign {
				if _, ok := byLang[lang]; !ok {
					order = append(order, lang)
				}
				byLang[lang] = append(byLang[lang], text)
			}
		}
	}
	for _, lang := range order {
		p.Prepare(ctx, byLang[lang], lang, t.opt.Target)
	}
}

// lang is the source language of the field el holding text: the given
// source (unless the field is in a script no supported language is
// written in, alto.Given), or the one the order chooses (once per field;
// t.from records the rule).
func (t *translation) lang(el *xmlsplice.Node, text string) string {
	if !t.auto {
		l, from := alto.Given(text, t.opt.Source)
		t.from[el] = from
		return l
	}
	t.res.DetectionUsed = true
	if l, ok := t.langs[el]; ok {
		return l
	}
	own := ""
	if a, ok := el.Attr("xml", "lang"); ok {
		own = alto.ElementLang(a.Value)
	}
	l, from := t.order.Choose(t.opt.Detector, text, own, t.docLang)
	t.langs[el], t.from[el] = l, from
	return l
}

// declaredLang is the language the document's root element declares in
// xml:lang ("" when none).
func declaredLang(doc *xmlsplice.Document) string {
	for _, n := range doc.Root.Children {
		if n.Kind == xmlsplice.ElementNode {
			if a, ok := n.Attr("xml", "lang"); ok {
				return alto.ElementLang(a.Value)
			}
			return ""
		}
	}
	return ""
}

// field translates the element el selected by f, or counts and logs why
// it is left as it is.
func (t *translation) field(ctx context.Context, f *XPath, el *xmlsplice.Node) error {
	opt, res := t.opt, t.res
	text, ok := el.Text()
	if strings.TrimSpace(text) == "" || t.done[el] {
		return nil
	}
	t.done[el] = true
	res.Units++
	if !ok {
		// Text between child elements, comments or processing
		// instructions: one translation cannot be split between the
		// pieces, so the field stays as it was, counted and logged.
		res.Skipped++
		res.Mixed++
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s at line %d: <%s> holds child elements, comments or processing instructions between its text; left untranslated (log status mixed_content)",
			opt.File, f.AsWritten(el, opt.Namespaces), 1+bytes.Count(t.src[:el.Start], []byte{'\n'}), el.QName()))
		res.Log = append(res.Log, LogRow{File: opt.File, Line: f.AsWritten(el, opt.Namespaces), Source: text, Status: backend.MixedContent})
		return nil
	}
	if opt.Mode != alto.Replace && alreadyAppended(el, opt.Target) {
		res.Skipped++
		res.AlreadyDone++
		return nil
	}
	if opt.Mode != alto.Replace && el.Parent.Kind == xmlsplice.DocumentNode {
		// A sibling of the root element would be a second root.
		res.Skipped++
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s: the root element <%s> left untranslated: %s mode adds a sibling, and a document has one root", opt.File, f.AsWritten(el, opt.Namespaces), el.QName(), opt.Mode))
		return nil
	}
	lang := t.lang(el, text)
	res.LangSources[t.from[el]]++
	if lang == opt.Target {
		res.Skipped++
		res.InTarget++
		res.Log = append(res.Log, LogRow{File: opt.File, Line: f.AsWritten(el, opt.Namespaces), Source: text, Status: backend.InTarget, Lang: lang, LangSource: t.from[el]})
		return nil
	}
	if ok, err := t.supports(ctx, f, el, text, lang); !ok {
		return err
	}
	seg, err := t.translate(ctx, text, lang)
	if err != nil {
		return fmt.Errorf("metadata: %s: %s: backend %s (%s->%s): %w", opt.File, f.AsWritten(el, opt.Namespaces), opt.Backend.Name(), lang, opt.Target, err)
	}
	if seg.Status == backend.Untranslated {
		// Both replies rejected by the guard: the field stays as it
		// was and nothing is written as its translation.
		// The end rounds (rounds.go) may still translate it.
		res.Untranslated++
		t.failed = append(t.failed, failedField{f: f, el: el, text: text, lang: lang, row: len(res.Log), rej: seg.Rejection})
		res.Log = append(res.Log, LogRow{File: opt.File, Line: f.AsWritten(el, opt.Namespaces), Source: text, Status: backend.Untranslated, Lang: lang, LangSource: t.from[el]})
		return nil
	}
	return t.write(f, el, text, lang, seg)
}

// supports reports whether the backend offers lang into the target (asked
// once per language). An unsupported language is an error with an explicit
// source; with detection the field is skipped and logged, and ok is false
// with a nil error. The tag of a script no supported language is written
// in ("und-Arab", langid.ForeignTag) is not asked about: its fields are
// skipped and logged with a warning naming the script, whatever the
// source.
func (t *translation) supports(ctx context.Context, f *XPath, el *xmlsplice.Node, text, lang string) (ok bool, _ error) {
	opt, res := t.opt, t.res
	err, seen := t.supported[lang]
	reason, foreign := langid.ForeignTag(lang)
	switch {
	case !seen && foreign:
		err = errors.New(reason)
		t.supported[lang] = err
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: fields in %q left untouched: %s", opt.File, lang, reason))
	case !seen:
		err = opt.Backend.Supports(ctx, lang, opt.Target)
		t.supported[lang] = err
		if err != nil && t.auto {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: fields detected as %q left untouched: %v", opt.File, lang, err))
		}
	}
	if err == nil {
		return true, nil
	}
	if !t.auto && !foreign {
		return false, fmt.Errorf("metadata: %s: %w", opt.File, err)
	}
	res.Skipped++
	res.Unsupported++
	res.Log = append(res.Log, LogRow{File: opt.File, Line: f.AsWritten(el, opt.Namespaces), Source: text, Status: backend.UnsupportedLang, Lang: lang, LangSource: t.from[el]})
	return false, nil
}

// translate is text's translation: filled from the vocabulary when the
// backend can (backend.Filler), else through the degeneracy guard.
func (t *translation) translate(ctx context.Context, text, lang string) (guard.Segment, error) {
	opt := t.opt
	if fl, ok := opt.Backend.(backend.Filler); ok {
		if out, ok := fl.Fill(ctx, text, lang, opt.Target); ok {
			return guard.Segment{Text: out, Status: backend.Vocabulary}, nil
		}
	}
	seg, err := guard.Translate(ctx, opt.Backend, text, lang, opt.Target)
	t.res.Calls += seg.Calls
	return seg, err
}

// write puts the translation of el into the document (replacing its text,
// or in a sibling labelled with the target language) and logs it.
func (t *translation) write(f *XPath, el *xmlsplice.Node, text, lang string, seg guard.Segment) error {
	opt, res := t.opt, t.res
	out := seg.Text
	if opt.Mode == alto.Replace {
		if err := t.ed.SetText(el, out); err != nil {
			return fmt.Errorf("metadata: %s: %w", opt.File, err)
		}
		// A label the field already had now names the target
		// language; none is added.
		if a, ok := el.Attr("xml", "lang"); ok && a.Value != opt.Target {
			t.ed.SetAttr(a, opt.Target)
		}
	} else if opt.Mode == alto.Append {
		appendSibling(t.ed, t.src, el, lang, opt.Target, out)
	} else {
		tag, err := langtag.MT(opt.Target, lang)
		if err != nil {
			return fmt.Errorf("metadata: %s: %w", opt.File, err)
		}
		insertSibling(t.ed, t.src, el, tag, out)
	}
	res.Translated++
	res.Languages[lang]++
	row := LogRow{File: opt.File, Line: f.AsWritten(el, opt.Namespaces), Source: text, Target: out, Status: seg.Status, Lang: lang, LangSource: t.from[el]}
	if sc, ok := opt.Backend.(backend.Scorer); ok && seg.Status != backend.Vocabulary {
		row.Score, row.HasScore = sc.Score(text)
	}
	res.Log = append(res.Log, row)
	return nil
}

// alreadyAppended reports a field that is itself a translation into target,
// or that is followed by a sibling of the same name labelled target (its
// xml:lang the target, or a machine-translation tag into it).
func alreadyAppended(el *xmlsplice.Node, target string) bool {
	if labelled(el, target) {
		return true
	}
	sib := el.Parent.Children
	for i, c := range sib {
		if c != el {
			continue
		}
		for _, d := range sib[i+1:] {
			if d.Kind != xmlsplice.ElementNode {
				continue
			}
			return d.QName() == el.QName() && labelled(d, target)
		}
	}
	return false
}

// labelled reports an element whose xml:lang is target or a
// machine-translation tag into target.
func labelled(el *xmlsplice.Node, target string) bool {
	a, ok := el.Attr("xml", "lang")
	return ok && (a.Value == target || langtag.Target(a.Value) == target)
}

// appendSibling inserts after el a copy of its start tag labelled
// xml:lang=target holding text, preceded by el's own line break and
// indentation, and labels el with src when it has no xml:lang.
func appendSibling(ed *xmlsplice.Editor, src []byte, el *xmlsplice.Node, lang, target, text string) {
	if _, ok := el.Attr("xml", "lang"); !ok {
		ed.AddAttr(el, xmlLang, lang)
	}
	insertSibling(ed, src, el, target, text)
}

// insertSibling inserts after el a copy of its start tag with xml:lang
// set to label (replaced where el has one, else added last) holding
// text, preceded by el's own line break and indentation. el is not
// changed.
func insertSibling(ed *xmlsplice.Editor, src []byte, el *xmlsplice.Node, label, text string) {
	tag := xmlsplice.NewEditor(src[el.Start:el.StartTagEnd])
	if a, ok := el.Attr("xml", "lang"); ok {
		tag.SetAttr(xmlsplice.Attr{Start: a.Start - el.Start, End: a.End - el.Start, Quote: a.Quote}, label)
	} else {
		at := el.AttrInsertPos() - el.Start
		tag.Insert(at, ` `+xmlLang+`="`+xmlsplice.EscapeAttr(label, '"')+`"`)
	}
	start, _ := tag.Bytes() // one edit inside the tag: cannot overlap
	ed.Insert(el.End, el.Indent(src)+string(start)+ed.EscapeText(text)+"</"+el.QName()+">")
}

// Remove deletes from a metadata document every element whose xml:lang
// is a machine-translation tag (what alto.Alternative mode adds), each
// with the line break and indentation before it. Applied to the output
// of that mode on a document that had no such element, it gives back the
// input byte for byte.
func Remove(src []byte) ([]byte, error) {
	out, err := xmlsplice.RemoveElements(src, func(n *xmlsplice.Node) bool {
		a, ok := n.Attr("xml", "lang")
		return ok && langtag.Target(a.Value) != ""
	})
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	return out, nil
}
