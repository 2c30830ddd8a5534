// Package langid identifies the language of a text, offline: the models are
// embedded in the binary (github.com/pemistahl/lingua-go, Apache-2.0, in its
// low-accuracy trigram mode) and nothing is downloaded at run time.
//
// Detection covers the twenty languages of spec 10.2 and, so that text in
// another language is reported rather than forced onto the nearest
// supported one, a few more that archives hold and the languages told by
// letters of their own (Unsupported, ForeignByLetters); it answers ISO
// 639-1 codes. As the spec says, the text is lower-cased and only its
// first 2,000 characters are scored. When the models cannot be loaded the
// detector is degraded: every answer is "en" with confidence 0.0 and
// Degraded reports why, for the deep health check.
package langid

import (
	"fmt"
	"strings"
	"sync"
	"unicode"

	lingua "github.com/pemistahl/lingua-go"
	"golang.org/x/text/unicode/norm"
)

// Library facts for the run metadata's licence components.
const (
	LibraryName    = "lingua-go"
	LibraryModule  = "github.com/pemistahl/lingua-go"
	LibraryVersion = "v1.4.0"
	LibraryLicense = "Apache-2.0"
	// ModelID names the model configuration for the paradata's
	// lang_id_model field.
	ModelID = "lingua-go v1.4.0 low-accuracy (trigram), 20 languages + 13 recognised as unsupported + 13 by letters of their own; Latin confirmed against English in high accuracy"
)

// MaxRunes is how many characters of a text are scored.
const MaxRunes = 2000

// Fallback is the answer of a degraded detector, and of any detector for a
// text with nothing to score.
const Fallback = "en"

// iso3to1 maps the spec's ISO 639-3 codes to ISO 639-1, in spec order.
var iso3to1 = [][2]string{
	{"ces", "cs"}, {"eng", "en"}, {"fra", "fr"}, {"deu", "de"}, {"rus", "ru"},
	{"pol", "pl"}, {"ukr", "uk"}, {"slk", "sk"}, {"bul", "bg"}, {"hrv", "hr"},
	{"slv", "sl"}, {"lav", "lv"}, {"lit", "lt"}, {"est", "et"}, {"hun", "hu"},
	{"ron", "ro"}, {"spa", "es"}, {"ita", "it"}, {"nld", "nl"}, {"hin", "hi"},
}

// unsupported are languages recognised only to be reported as outside the
// supported set (ISO 639-3 as lingua names them): Latin, Norwegian (both
// written standards), Danish, Swedish, Portuguese, Finnish, and since
// 2026-11-28 Albanian, Catalan, Basque, Irish, Indonesian and Malay, which
// write no letter of their own and were scored as supported languages
// (Catalan as Spanish, Albanian as French). Each was measured to cost the
// supported languages no paragraph of three sentences (TestUnsupportedMeasure).
// Bosnian (Croatian's sentences lost to it), Afrikaans (Dutch's) and the
// African and Pacific languages lingua knows (Czech's) were measured and
// left out. ModelID counts them.
var unsupported = []string{"lat", "nob", "nno", "dan", "swe", "por", "fin", "sqi", "cat", "eus", "gle", "ind", "msa"}

// Unsupported returns the ISO 639-1 codes of the languages Detect may
// answer although they are not among Languages: those scored with them
// and those told by letters of their own (ForeignByLetters).
func Unsupported() []string {
	var out []string
	for _, c := range unsupported {
		out = append(out, iso1(linguaLang(c)))
	}
	return append(out, ForeignByLetters()...)
}

// Languages returns the ISO 639-1 codes of the supported languages, in
// the order of spec 10.2.
func Languages() []string {
	out := make([]string, len(iso3to1))
	for i, p := range iso3to1 {
		out[i] = p[1]
	}
	return out
}

// ToISO6391 maps an ISO 639-3 code of spec 10.2 (ces, slk, ...) to ISO
// 639-1; a code that is already one of the twenty ISO 639-1 codes is
// returned as is.
func ToISO6391(code string) (string, bool) {
	c := strings.ToLower(strings.TrimSpace(code))
	for _, p := range iso3to1 {
		if c == p[0] || c == p[1] {
			return p[1], true
		}
	}
	return "", false
}

// Detector identifies languages. It is safe for concurrent use.
type Detector struct {
	det lingua.LanguageDetector
	// foreign scores, for each supported script, a text with letters no
	// supported language of that script uses (letters.go).
	foreign  map[string]lingua.LanguageDetector
	degraded string // reason; "" when healthy
}

// loader builds the lingua detector; tests replace it to simulate a
// failure to load.
var loader = func() (lingua.LanguageDetector, error) {
	var langs []lingua.Language
	codes := make([]string, 0, len(iso3to1)+len(unsupported))
	for _, p := range iso3to1 {
		codes = append(codes, p[0])
	}
	for _, c := range append(codes, unsupported...) {
		l := lingua.GetLanguageFromIsoCode639_3(lingua.GetIsoCode639_3FromValue(c))
		if l == lingua.Unknown {
			return nil, fmt.Errorf("language %s missing from %s %s", c, LibraryModule, LibraryVersion)
		}
		langs = append(langs, l)
	}
	return lingua.NewLanguageDetectorBuilder().
		FromLanguages(langs...).
		WithLowAccuracyMode().
		WithPreloadedLanguageModels().
		Build(), nil
}

// New loads the embedded models (about 37 MiB of heap, under 0.2 s). A
// failure to load (an error or a panic inside the library) gives a degraded
// detector rather than an error.
func New() *Detector {
	det, foreign, err := safeLoad()
	if err != nil {
		return &Detector{degraded: "language identification model failed to load: " + err.Error()}
	}
	return &Detector{det: det, foreign: foreign}
}

func safeLoad() (det lingua.LanguageDetector, foreign map[string]lingua.LanguageDetector, err error) {
	defer func() {
		if r := recover(); r != nil {
			det, foreign, err = nil, nil, fmt.Errorf("%v", r)
		}
	}()
	if det, err = loader(); err != nil {
		return nil, nil, err
	}
	if foreign, err = buildForeign(); err != nil {
		return nil, nil, err
	}
	return det, foreign, nil
}

var (
	sharedOnce sync.Once
	shared     *Detector
)

// Shared returns one process-wide Detector, loaded on first call, so the
// models are loaded only when detection actually runs.
func Shared() *Detector {
	sharedOnce.Do(func() { shared = New() })
	return shared
}

// Degraded reports whether the models failed to load, and why.
func (d *Detector) Degraded() (bool, string) {
	return d.degraded != "", d.degraded
}

// Detect returns the ISO 639-1 code of text's language and a confidence in
// [0, 1] (lingua's relative confidence of the best language). The text is
// composed (NFC), lower-cased and cut to its first MaxRunes characters
// before scoring. A degraded detector, or a text without letters, gives
// Fallback with confidence 0.
func (d *Detector) Detect(text string) (lang string, confidence float64) {
	sc := d.Scores(text)
	if len(sc) == 0 {
		return Fallback, 0
	}
	return sc[0].Lang, sc[0].Value
}

// Score is one language's confidence for a text.
type Score struct {
	// Lang is an ISO 639-1 code.
	Lang string
	// Value is in [0, 1]; the values of one text add up to 1.
	Value float64
}

// Scores returns the confidence of every language for text, best first
// (nil for a degraded detector or a text without letters). The text is
// composed (Unicode NFC: "č" written as c and a combining caron is
// scored as "č", so a text gets the same answer in either normalisation
// form), lower-cased and cut to its first MaxRunes characters.
func (d *Detector) Scores(text string) []Score {
	if d.det == nil {
		return nil
	}
	text = norm.NFC.String(text)
	if r := []rune(text); len(r) > MaxRunes {
		text = string(r[:MaxRunes])
	}
	text = strings.ToLower(text)
	if script := scriptWithForeignLetters(text); d.foreign[script] != nil {
		if sc := scores(d.foreign[script], text); len(sc) > 0 && !supported(sc[0].Lang) {
			return sc
		}
	}
	sc := scores(d.det, text)
	if len(sc) > 0 && !supported(sc[0].Lang) && supportedLetters(text) {
		return supportedOnly(sc)
	}
	if len(sc) > 0 && sc[0].Lang == "la" && !latinConfirmed(text, sc) {
		return supportedOnly(sc)
	}
	return sc
}

// LatinConfirm is the confidence of Latin, against English, that the
// high-accuracy check (latinConfirmed) requires.
const LatinConfirm = 0.75

// latinOrEnglish is a high-accuracy lingua detector of Latin and English,
// built when first needed; its models (about 35 MiB) load on first use.
var latinOrEnglish = sync.OnceValue(func() lingua.LanguageDetector {
	return lingua.NewLanguageDetectorBuilder().FromLanguages(lingua.Latin, lingua.English).Build()
})

// latinConfirmed says whether text, which the trigram models score as
// Latin first (sc, best first), is Latin rather than English, the
// supported language scored next: lingua's high-accuracy models (unigrams
// to fivegrams) of the two give Latin at least LatinConfirm. Short English
// bibliographic lines (names, initials, a title, "Antiquity 72, 123-145")
// score as Latin with the trigram models alone. When the supported
// language scored next is another, the text stays Latin: a pair for each
// of the 16 supported languages written in Latin letters would hold about
// 300 MiB, where English alone costs 35 (lingua-rs' test sentences of the
// other languages lose 0 to 11 of 1,000 to Latin, no paragraph of three
// but one Dutch one).
func latinConfirmed(text string, sc []Score) bool {
	for _, s := range sc[1:] {
		if supported(s.Lang) {
			if s.Lang != "en" {
				return true
			}
			break
		}
	}
	return latinOrEnglish().ComputeLanguageConfidence(text, lingua.Latin) >= LatinConfirm
}

// ownLetters are letters that supported languages write and none of the
// unsupported languages scored with them does (Czech č ř ě ů, Polish ą ł,
// Hungarian ő ű, Romanian ș ț, the Baltic ā ė ų, ...).
const ownLetters = "čřěůďťňľĺŕąęłśźżńőűșțăşţžšėįųūāēīģķļņ"

// supportedLetters reports whether at least one letter in 50 of text is
// one of ownLetters: such a text is in a supported language even where
// the models name an unsupported one (a short Czech line named Malay).
// Measured on lingua-rs' test sentences (TestUnsupportedMeasure), this
// keeps 65 of the 206 sentences of supported languages named unsupported
// (Czech 8 of 22, Croatian 12 of 13, Romanian 12 of 30), and takes 7 of
// 13,000 sentences of the unsupported ones for supported (a Latin
// sentence naming Dvořák); one such letter among more than 50 (a name in
// a long text) does not count.
func supportedLetters(text string) bool {
	n, letters := 0, 0
	for _, r := range text {
		if unicode.IsLetter(r) {
			letters++
			if strings.ContainsRune(ownLetters, r) {
				n++
			}
		}
	}
	return n > 0 && n*50 >= letters
}

// supportedOnly is sc without the unsupported languages, their values
// scaled to add up to 1 again (nil when none is left).
func supportedOnly(sc []Score) []Score {
	var out []Score
	sum := 0.0
	for _, s := range sc {
		if supported(s.Lang) {
			out = append(out, s)
			sum += s.Value
		}
	}
	if sum <= 0 {
		return nil
	}
	for i := range out {
		out[i].Value /= sum
	}
	return out
}

// scores are det's confidence values for text, best first, or nil.
func scores(det lingua.LanguageDetector, text string) []Score {
	values := det.ComputeLanguageConfidenceValues(text)
	if len(values) == 0 || values[0].Value() <= 0 {
		return nil
	}
	out := make([]Score, len(values))
	for i, v := range values {
		out[i] = Score{Lang: iso1(v.Language()), Value: min(v.Value(), 1)}
	}
	return out
}

// supported reports whether code (ISO 639-1) is one of Languages.
func supported(code string) bool {
	for _, p := range iso3to1 {
		if p[1] == code {
			return true
		}
	}
	return false
}
