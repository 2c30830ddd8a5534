package alto

import (
	"strings"
	"unicode"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
	"golang.org/x/text/unicode/norm"

	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/xmlsplice"
)

// The source-language order (issue 33): each translatable unit (an ALTO
// block, a PAGE-XML line, an hOCR line, a metadata field) takes, with
// source auto,
//
//  1. its detected language, when its text is long enough (LangOrder's
//     MinLength) and the detection's confidence is above MinConfidence;
//  2. else its element's own language attribute (ALTO LANG, PAGE-XML
//     primaryLanguage, hOCR lang or xml:lang, a metadata field's xml:lang),
//     unless LangOrder's Element is ElementIgnore;
//  3. else its document's language: detected over the whole document (an
//     ALTO page's language where the page has enough text of its own; a
//     book's, when the book is translated as one document), or the
//     language the document declares;
//  4. else the configured default (Czech, the spec's fallback).
//
// Every unit records which rule chose it (LangSource).
//
// Before the order, a unit most of whose letters are in a script none of
// the supported languages is written in (langid.ForeignScript: Arabic,
// Hebrew, Han, ...) is in none of them: it takes the tag of an
// undetermined language in that script ("und-Arab", FromScript), which
// no backend is asked about, and is left untranslated with the status
// unsupported_lang and a warning naming the script. Only an element
// language written in that script (LANG="ar" on an Arabic block) is
// taken instead, and then the backend decides as for any language. The
// same holds with an explicit source language (Given): a unit in Arabic
// script is not Czech because the run was told so.
//
// A unit in a script supported languages are written in other than Latin
// (Cyrillic, Devanagari) whose language detection did not choose (too short)
// takes the element's, document's or default language only when that
// language is written in the unit's script; else, and with a given source
// language not written in it, it takes that script's tag ("und-Cyrl",
// FromScript) and is withheld as above: short Cyrillic text in a Czech
// document, or in a run given --source_lang cs, is not sent as Czech.

// LangSource names the rule that chose a unit's source language.
type LangSource string

// The rules of the order, and Given for an explicit source language.
const (
	FromDetected LangSource = "detected"
	FromElement  LangSource = "element"
	FromDocument LangSource = "document"
	FromDefault  LangSource = "default"
	// FromGiven: the source language was given (--source_lang), nothing
	// was chosen.
	FromGiven LangSource = "given"
	// FromScript: the unit's letters are mostly in a script no supported
	// language is written in; its language is that script's undetermined
	// one (langid.ScriptTag), before the order's rules and whatever the
	// given source language.
	FromScript LangSource = "script"
)

// LangSources lists the rules in their order, then FromGiven and
// FromScript.
var LangSources = []LangSource{FromDetected, FromElement, FromDocument, FromDefault, FromGiven, FromScript}

// DefaultMinLength is the letters a unit needs (in words that tell a
// language, see IsShort) to be detected: MinLetters.
const DefaultMinLength = MinLetters

// LangOrder configures the source-language order. Its fields are taken as
// they are: use DefaultLangOrder for the defaults.
type LangOrder struct {
	// MinLength is the fewest letters, in words of two or more letters
	// that are not all capitals and not in URLs, that a unit's text needs
	// to be detected; with MinLength above 0 it also needs MinWords
	// distinct such words (IsShort's rule at the default). 0 detects
	// every unit.
	MinLength int
	// MinConfidence: a detection at or below it does not choose.
	MinConfidence float64
	// Default is the language of a unit no other rule chose.
	Default string
	// Element says whether the element rule is used: ElementUse (or
	// "") uses it, ElementIgnore skips it.
	Element ElementRule
}

// ElementRule says whether the order's element rule is used.
type ElementRule string

// The values of LangOrder's Element.
const (
	// ElementUse: a unit's own language attribute chooses its language
	// when detection did not (the default).
	ElementUse ElementRule = "use"
	// ElementIgnore: the attribute is not read; a unit detection did not
	// choose takes its document's language, else the default. For OCR
	// output whose engine labels blocks with a configured language
	// (a short Czech block labelled sk).
	ElementIgnore ElementRule = "ignore"
)

// ElementRules lists the values of LangOrder's Element, the default first.
var ElementRules = []ElementRule{ElementUse, ElementIgnore}

// DefaultLangOrder is the order with the spec's values: units of
// DefaultMinLength letters, confidence above DefaultMinConfidence (0.2),
// default Czech (FallbackLang), the element rule used.
func DefaultLangOrder() LangOrder {
	return LangOrder{MinLength: DefaultMinLength, MinConfidence: DefaultMinConfidence, Default: FallbackLang, Element: ElementUse}
}

// Rules names the rules of the order in their order (as the run
// metadata records them): the element rule only when it is used.
func (o LangOrder) Rules() []string {
	if o.Element == ElementIgnore {
		return []string{string(FromDetected), string(FromDocument), string(FromDefault)}
	}
	return []string{string(FromDetected), string(FromElement), string(FromDocument), string(FromDefault)}
}

// OrderOf is the order a format uses: order when it is not nil, else
// DefaultLangOrder with minConf (the formats' MinConfidence option) as its
// confidence when minConf is not 0.
func OrderOf(order *LangOrder, minConf float64) LangOrder {
	if order != nil {
		return *order
	}
	o := DefaultLangOrder()
	if minConf != 0 {
		o.MinConfidence = minConf
	}
	return o
}

// Long reports whether text is long enough to be detected (MinLength).
func (o LangOrder) Long(text string) bool {
	if o.MinLength <= 0 {
		return strings.IndexFunc(text, unicode.IsLetter) >= 0
	}
	words, letters := map[string]bool{}, 0
	for _, w := range wordsOf(text) {
		if !words[w] {
			words[w] = true
			letters += len([]rune(w))
		}
	}
	return len(words) >= MinWords && letters >= o.MinLength
}

// Choose returns the source language of a unit of text whose element
// declares element ("" when it declares none; see ElementLang) in a
// document (or page) whose language is context ("" when unknown), and the
// rule that chose it. A long text is scored with context as prior (its
// confidence weighted by PriorWeight, see DetectWithPrior); the best
// language chooses when its own confidence is above MinConfidence. A
// text mostly in a script no supported language is written in takes that
// script's tag (FromScript) first, unless its element's language is
// written in the script, or is one whose script CLDR does not know
// (langid.KnownScript: LANG="syc" on a Syriac block), taken at its word as
// a given source is. A text detection did not choose, more than half of
// whose letters are in one script (langid.TextScript), takes the element's,
// the document's or the default language only when it is written in that
// script, Latin excepted (fits); when none is, the script's tag (FromScript: a short
// Cyrillic unit in a Czech document is withheld, not sent as Czech).
func (o LangOrder) Choose(d Detector, text, element, context string) (string, LangSource) {
	if script, ok := langid.ForeignScript(text); ok {
		if element != "" && o.Element != ElementIgnore && (langid.WrittenIn(element, script) || !langid.KnownScript(element)) {
			return element, FromElement
		}
		return langid.ScriptTag(script), FromScript
	}
	if d != nil && o.Long(text) {
		if lang, ok := confident(d, withoutURLs(text), context, o.MinConfidence); ok {
			return lang, FromDetected
		}
	}
	script, _ := langid.TextScript(text)
	switch {
	case element != "" && o.Element != ElementIgnore && fits(element, script):
		return element, FromElement
	case context != "" && fits(context, script):
		return context, FromDocument
	case fits(o.Default, script):
		return o.Default, FromDefault
	}
	return langid.ScriptTag(script), FromScript
}

// fits reports whether a unit most of whose letters are in script ("" for
// none) may be in lang, which no detection chose: the script is Latin,
// lang is written in it, or CLDR does not know lang's script (taken at
// its word). Short Cyrillic text is never Czech: it is sent as an
// element's or the document's language written in Cyrillic, else withheld
// (FromScript). Latin letters fit every language: names, places and
// citations in Latin letters stand in text of any script, and a run given
// --source_lang ar sends its German lines as Arabic, as the user said.
func fits(lang, script string) bool {
	return script == "" || script == "Latin" || !langid.KnownScript(lang) || langid.WrittenIn(lang, script)
}

// Given returns the source language of a unit of text when the run's
// source language was given: source (FromGiven), unless most of text's
// letters are in a script other than Latin that source is not written in
// (a script no supported language is written in, or Cyrillic text given
// as Czech); then the
// script's tag (FromScript). A
// source whose script CLDR does not know (langid.KnownScript: "syc") is
// taken at its word: the backend decides, as for any language.
func Given(text, source string) (string, LangSource) {
	script, ok := langid.ForeignScript(text)
	if !ok {
		script, ok = langid.TextScript(text)
	}
	if ok && !fits(source, script) {
		return langid.ScriptTag(script), FromScript
	}
	return source, FromGiven
}

// confident is text's best language (prior weighted by PriorWeight) and
// whether its own confidence is above minConf.
func confident(d Detector, text, prior string, minConf float64) (string, bool) {
	s, ok := d.(Scorer)
	if !ok {
		lang, conf := d.Detect(text)
		return lang, lang != "" && conf > minConf
	}
	best, bestW, bestV := "", -1.0, 0.0
	for _, sc := range s.Scores(text) {
		w := sc.Value
		if sc.Lang == prior {
			w *= PriorWeight
		}
		if w > bestW {
			best, bestW, bestV = sc.Lang, w, sc.Value
		}
	}
	return best, best != "" && bestV > minConf
}

// languageNames maps English language names, lower-cased and without
// accents (nameKey), to their codes: every name PAGE-XML's schema allows
// for primaryLanguage ("Czech", "Greek", "Māori": pageLanguageNames) and
// CLDR's names of the languages the detector knows.
var languageNames = func() map[string]string {
	m := map[string]string{}
	for _, c := range append(langid.Languages(), langid.Unsupported()...) {
		if b, err := language.ParseBase(c); err == nil {
			m[nameKey(display.English.Languages().Name(b))] = c
		}
	}
	for name, c := range pageLanguageNames {
		m[nameKey(name)] = c
	}
	return m
}()

// nameKey is a language name as languageNames holds it: lower case,
// without accents ("Māori", "maori" and "MAORI" are one).
func nameKey(name string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(name)) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ElementLang is the ISO 639-1 code (ISO 639-3 where a language has no
// two-letter code) of a language attribute's value: a BCP 47 tag
// ("en-US"), an ISO 639-2/3 code ("ces", "cze", "ger") or, as PAGE-XML
// writes them, an English language name ("Czech"); "" for no language
// ("und", "zxx", "mul", "mis") or a value it does not know.
func ElementLang(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if c, ok := languageNames[nameKey(v)]; ok {
		return c
	}
	t, err := language.Parse(v)
	if err != nil {
		return ""
	}
	b, conf := t.Base()
	if conf != language.Exact {
		return "" // und, and tags whose language x/text only guesses
	}
	switch s := b.String(); s {
	case "und", "zxx", "mul", "mis":
		return ""
	default:
		if two := langtag.Base(s); two != "" {
			return two
		}
		return s
	}
}

// blockLang is the language a TextBlock declares (ElementLang): its own
// LANG, else the LANG its text lines all share, else the LANG all their
// Strings share; "" when it declares none.
func blockLang(b *block) string {
	if a, ok := langOf(b.node); ok {
		return ElementLang(a.Value)
	}
	var lines, strs []*xmlsplice.Node
	for _, l := range b.holders {
		lines = append(lines, l.node)
		strs = append(strs, l.nodes...)
	}
	if l := SharedLang(lines, "", "LANG"); l != "" {
		return l
	}
	return SharedLang(strs, "", "LANG")
}

// SharedLang is the language (ElementLang) every node of nodes declares in
// its attribute space:name, or "" when one declares none or another.
func SharedLang(nodes []*xmlsplice.Node, space, name string) string {
	lang := ""
	for i, n := range nodes {
		a, ok := n.Attr(space, name)
		if !ok {
			return ""
		}
		l := ElementLang(a.Value)
		if l == "" || i > 0 && l != lang {
			return ""
		}
		lang = l
	}
	return lang
}

// UnitTexts returns the texts of an ALTO document's units (its TextBlocks
// with text, hyphenated words joined), in document order: what the
// document's language is detected over, for instance when the document is
// one of a book's text files (translator.BookLanguage).
func UnitTexts(src []byte) ([]string, error) {
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, err
	}
	var texts []string
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local != "Page" {
			return true
		}
		for _, b := range collectBlocks(n, true) {
			if b.text != "" {
				texts = append(texts, b.text)
			}
		}
		return false
	})
	return texts, nil
}
