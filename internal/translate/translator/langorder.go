package translator

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/text/language"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/hocr"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/pagexml"
	"archivekit/internal/translate/xmlsplice"
)

// The settings of the source-language order (alto.LangOrder), as
// environment variables; cmd/translate also takes them as flags and
// configuration keys (lang_min_length, lang_min_confidence,
// default_source_lang, element_lang), which come first; translate-api
// takes element_lang as a form field too.
const (
	EnvLangMinLength     = "TRANSLATE_LANG_MIN_LENGTH"
	EnvLangMinConfidence = "TRANSLATE_LANG_MIN_CONFIDENCE"
	EnvDefaultSourceLang = "TRANSLATE_DEFAULT_SOURCE_LANG"
	EnvElementLang       = "TRANSLATE_ELEMENT_LANG"
)

// MaxLangMinLength bounds the minimum length: a longer one would leave
// nearly every unit undetected.
const MaxLangMinLength = 10000

// LangOrderFromEnv reads the source-language order from the environment
// (getenv nil: the process environment); unset variables keep
// alto.DefaultLangOrder's values. A bad value is the error.
func LangOrderFromEnv(getenv func(string) string) (alto.LangOrder, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	return ParseLangOrder(alto.DefaultLangOrder(), LangOrderValues{
		MinLength:     Setting{Value: getenv(EnvLangMinLength), From: EnvLangMinLength},
		MinConfidence: Setting{Value: getenv(EnvLangMinConfidence), From: EnvLangMinConfidence},
		Default:       Setting{Value: getenv(EnvDefaultSourceLang), From: EnvDefaultSourceLang},
		Element:       Setting{Value: getenv(EnvElementLang), From: EnvElementLang},
	})
}

// Setting is a setting's text and where it came from (for messages).
type Setting struct {
	Value, From string
}

// LangOrderValues are the order's four settings as written; an empty
// Value keeps the base order's.
type LangOrderValues struct {
	MinLength, MinConfidence, Default, Element Setting
}

// ParseLangOrder sets the values given in v on base: MinLength a whole
// number from 0 to MaxLangMinLength, MinConfidence a number from 0 up to
// (not including) 1, Default a language code (ISO 639-1, or one of the
// spec's ISO 639-3 codes, which are mapped), Element one of
// alto.ElementRules (ParseElementRule).
func ParseLangOrder(base alto.LangOrder, v LangOrderValues) (alto.LangOrder, error) {
	o := base
	if s := strings.TrimSpace(v.MinLength.Value); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > MaxLangMinLength {
			return base, fmt.Errorf("%s=%q: want a whole number of letters from 0 to %d", v.MinLength.From, s, MaxLangMinLength)
		}
		o.MinLength = n
	}
	if s := strings.TrimSpace(v.MinConfidence.Value); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 0 || f >= 1 {
			return base, fmt.Errorf("%s=%q: want a confidence from 0 up to 1 (exclusive)", v.MinConfidence.From, s)
		}
		o.MinConfidence = f
	}
	if s := strings.TrimSpace(v.Default.Value); s != "" {
		l := NormalizeLang(s)
		if !ValidLang(l, false) || !knownLang(l) {
			return base, fmt.Errorf("%s=%q: want an ISO 639-1 language code", v.Default.From, s)
		}
		o.Default = l
	}
	if s := strings.TrimSpace(v.Element.Value); s != "" {
		e, err := ParseElementRule(v.Element.From, s)
		if err != nil {
			return base, err
		}
		o.Element = e
	}
	return o, nil
}

// ParseElementRule reads the element rule's setting: "use" or "ignore"
// (alto.ElementRules), in any case; the error names from, where the value
// came from.
func ParseElementRule(from, v string) (alto.ElementRule, error) {
	for _, e := range alto.ElementRules {
		if strings.EqualFold(strings.TrimSpace(v), string(e)) {
			return e, nil
		}
	}
	return "", fmt.Errorf("%s=%q: want %q (the element's LANG/xml:lang/primaryLanguage chooses a unit's language when detection did not) or %q (it is not read)",
		from, v, alto.ElementUse, alto.ElementIgnore)
}

// UnitTexts returns the texts of the translation units of a book's text
// file (ALTO blocks, PAGE-XML regions, hOCR paragraphs), in document
// order; nil for a file of another kind or one that is not well-formed.
func UnitTexts(src []byte) []string {
	in, _, err := xmlsplice.Decode(src)
	if err != nil {
		return nil
	}
	var texts []string
	switch DetectKind(in) {
	case KindALTO:
		texts, err = alto.UnitTexts(in)
	case KindPAGE:
		texts, err = pagexml.UnitTexts(in)
	case KindHOCR:
		texts, err = hocr.UnitTexts(in)
	}
	if err != nil {
		return nil
	}
	return texts
}

// BookLanguage is the language of a book's text files taken as one
// document: texts are their units' texts in page order (UnitTexts of each
// file), and the language is the letter-weighted majority of the languages
// of the long ones, else the language of all of them together when that
// is long enough (alto.DocumentLanguage, with order's MinConfidence); ""
// when none can be told. Detection is recorded in usage (nil: not
// recorded); det nil means langid.Shared(). Given as Options.DocumentLang
// to each file, it is the document rule of the source-language order for
// the whole book, so short pages that could not be told on their own take
// the book's language.
func BookLanguage(texts []string, det alto.Detector, order alto.LangOrder, usage *Usage) string {
	if len(texts) == 0 {
		return ""
	}
	if det == nil {
		det = langid.Shared()
	}
	usage.Add(ComponentLangID)
	return alto.DocumentLanguage(det, texts, order.MinConfidence)
}

// DeclaredLanguage is the first of a document's declared languages, as
// written ("ger", "German", "fr": a book's MODS languageTerms), that
// alto.ElementLang reads; "" when none.
func DeclaredLanguage(values []string) string {
	for _, v := range values {
		if l := alto.ElementLang(v); l != "" {
			return l
		}
	}
	return ""
}

// knownLang reports whether the code l names a language of ISO 639 ("xx"
// and "zz" are well-formed but none: as a default source language they
// were recorded and sent to the backend as the source of every unit whose
// language nothing else told).
func knownLang(l string) bool {
	_, err := language.ParseBase(l)
	return err == nil
}
