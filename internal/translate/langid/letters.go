package langid

import (
	"fmt"
	"strings"

	lingua "github.com/pemistahl/lingua-go"
)

// Letters no supported language uses. Text in a supported script may
// still be in a language outside the supported set; the trigram models
// of the supported languages would score it as one of them (Turkish as
// Estonian, Serbian as Russian, Marathi as Hindi). Many of those
// languages write letters that none of the supported languages of the
// same script writes: Serbian ђ ћ џ љ њ ј, Macedonian ѓ ќ ѕ, Belarusian
// ў, Kazakh and Mongolian ә ғ қ ң ө ұ ү һ; Turkish and Azerbaijani ı ğ
// ə, Icelandic þ ð, Welsh ŵ ŷ, Esperanto ĉ ĝ ĥ ĵ ŝ ŭ, Vietnamese ơ ư and
// its stacked tone marks, Yoruba ẹ ọ ṣ; Marathi ळ. A text in which at
// least one letter in 200 of its script (and at least one) is such a
// letter is scored a second time, among the languages written in that
// script that lingua knows (Foreign): when that names a language outside
// the supported set, it is the answer. Otherwise, and for every other
// text, the first scoring stands.
//
// Measured on lingua-rs' test sentences (1,000 a language, each alone;
// TestForeignLettersMeasure, docs/translate.md): no sentence of the 20 supported
// languages is changed; of the languages named this way, 79 % (be) to
// 99 % (kk, az, vi) of the sentences are told apart, Welsh 3 %, Yoruba 26 %,
// Marathi 27 %, Esperanto 64 %: a sentence without such a letter is still
// scored as before. Languages without letters of their own (Afrikaans,
// Albanian, Indonesian, Swahili, Catalan, Basque, ...) are not told
// apart. Adding those languages to the first scoring instead would have
// cost the supported ones (Croatian lost 12 % of its sentences to
// Bosnian, Hindi 32 % to Marathi and Ukrainian 4 % to Kazakh, whose
// letters lingua's rule filter misreads).

// foreignLetters are, for each supported script, the lower-case letters
// that none of the supported languages written in it uses.
var foreignLetters = map[string]string{
	"Cyrillic": "ђћџљњјѓќѕўәғқңөұүһ",
	"Latin": "ığəþðŵŷĉĝĥĵŝŭơư" +
		"ạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ" + "ṣ",
	"Devanagari": "ळ",
}

// foreignLangs are, for each supported script, the languages outside the
// supported set that foreignLetters tell (ISO 639-3 as lingua names them).
var foreignLangs = map[string][]string{
	"Cyrillic":   {"bel", "kaz", "mkd", "mon", "srp"},
	"Latin":      {"tur", "aze", "isl", "cym", "epo", "vie", "yor"},
	"Devanagari": {"mar"},
}

// ForeignByLetters returns the ISO 639-1 codes of the languages Detect
// names only by the letters of their own (see foreignLetters).
func ForeignByLetters() []string {
	var out []string
	for _, script := range SupportedScripts {
		for _, c := range foreignLangs[script] {
			out = append(out, iso1(linguaLang(c)))
		}
	}
	return out
}

// foreignShare is the share of a script's letters that must be foreign
// letters: one in 200 (a name with a Turkish ı in a Czech paragraph does
// not count).
const foreignShare = 1.0 / 200

// scriptWithForeignLetters returns the supported script most of text's
// letters are in when enough of them are letters none of the supported
// languages of that script uses; "" otherwise. text is lower case.
func scriptWithForeignLetters(text string) string {
	count := map[string]int{}
	foreign := map[string]int{}
	for _, r := range text {
		s := ScriptOf(r)
		if !supportedScript(s) {
			continue
		}
		count[s]++
		if strings.ContainsRune(foreignLetters[s], r) {
			foreign[s]++
		}
	}
	best := ""
	for _, s := range SupportedScripts {
		if count[s] > count[best] {
			best = s
		}
	}
	if best == "" || foreign[best] == 0 || float64(foreign[best]) < foreignShare*float64(count[best]) {
		return ""
	}
	return best
}

// scriptLanguages are the ISO 639-3 codes of the languages lingua scores
// for a text with foreign letters in script: the supported and scored
// ones written in it and the script's foreignLangs.
func scriptLanguages(script string) []string {
	var out []string
	var codes []string
	for _, p := range iso3to1 {
		codes = append(codes, p[0])
	}
	for _, c := range append(codes, unsupported...) {
		l := linguaLang(c)
		if l != lingua.Unknown && writtenInScript(l, script) {
			out = append(out, c)
		}
	}
	return append(out, foreignLangs[script]...)
}

// writtenInScript reports whether lingua's language l is written in the
// Unicode script named script (by its CLDR likely script).
func writtenInScript(l lingua.Language, script string) bool {
	return WrittenIn(iso1(l), script)
}

// buildForeign builds, for each supported script, the detector over
// scriptLanguages.
func buildForeign() (map[string]lingua.LanguageDetector, error) {
	out := map[string]lingua.LanguageDetector{}
	for _, script := range SupportedScripts {
		var langs []lingua.Language
		for _, c := range scriptLanguages(script) {
			l := linguaLang(c)
			if l == lingua.Unknown {
				return nil, fmt.Errorf("language %s missing from %s %s", c, LibraryModule, LibraryVersion)
			}
			langs = append(langs, l)
		}
		out[script] = lingua.NewLanguageDetectorBuilder().
			FromLanguages(langs...).
			WithLowAccuracyMode().
			WithPreloadedLanguageModels().
			Build()
	}
	return out, nil
}

// linguaLang is lingua's language of an ISO 639-3 code, or lingua.Unknown.
func linguaLang(code string) lingua.Language {
	return lingua.GetLanguageFromIsoCode639_3(lingua.GetIsoCode639_3FromValue(code))
}

// iso1 is the lower-case ISO 639-1 code of lingua's language l.
func iso1(l lingua.Language) string { return strings.ToLower(l.IsoCode639_1().String()) }
