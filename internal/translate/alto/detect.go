package alto

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"archivekit/internal/translate/langid"
)

// Language identification on archive text. Per-block detection alone goes
// wrong on the short, number-heavy and abbreviated blocks of scanned pages
// (Czech blocks went to Slovak, Romanian, Hungarian, ...), so detection
// works at three levels:
//
//   - the document's language: the letter-weighted majority of its pages'
//     languages (each page scored on its long blocks' text);
//   - a page's language: its long blocks' text, scored with the document's
//     language as prior; a page with less than MinPageLetters letters of
//     long text takes the document's;
//   - a block: a short one (fewer than MinWords distinct words of two or
//     more letters, not all capitals, or fewer than MinLetters letters in
//     them: numbers, codes, captions, headings; see IsShort)
//     takes its page's language without being scored; a long one is scored
//     with the page's language as prior: that language's confidence is
//     multiplied by PriorWeight before the best is chosen, so a Czech
//     paragraph that looks a little Slovak stays Czech, while a German or
//     Latin one, whose own language wins by far, is recognised.
//
// A language outside the supported set (langid.Unsupported: Latin,
// Norwegian, ...) is answered as it is, never mapped to a supported one;
// the pipelines then leave the text untouched with a warning and the log
// status unsupported_lang.

// Thresholds of the prior-aware detection.
const (
	MinWords    = 5
	MinLetters  = 20
	PriorWeight = 3.0
	// MinPageLetters: a page with fewer letters of long text than this
	// takes the document's language.
	MinPageLetters = 150
)

// Scorer is implemented by detectors that give every language's confidence
// (langid.Detector); with a plain Detector the prior is not applied.
type Scorer interface {
	Scores(text string) []langid.Score
}

// IsShort reports a text too short to identify: fewer than MinWords
// distinct words of two or more letters, or fewer than MinLetters letters
// in them. Words written all in capitals (codes, abbreviations, headings)
// and URLs do not count.
func IsShort(text string) bool {
	words, letters := map[string]bool{}, 0
	for _, w := range wordsOf(text) {
		if !words[w] {
			words[w] = true
			letters += len([]rune(w))
		}
	}
	return len(words) < MinWords || letters < MinLetters
}

// wordsOf returns the words of text that tell its language: runs of two or
// more letters, not all capitals, outside URLs. The text is composed
// first (NFC), so that a combining accent ("c" and U+030C for "č") neither
// splits a word nor goes uncounted.
func wordsOf(text string) []string {
	var out []string
	for _, tok := range strings.Fields(norm.NFC.String(text)) {
		if strings.Contains(tok, "://") || strings.HasPrefix(strings.ToLower(tok), "www.") {
			continue
		}
		for _, w := range strings.FieldsFunc(tok, func(r rune) bool { return !unicode.IsLetter(r) }) {
			if len([]rune(w)) >= 2 && strings.ToUpper(w) != w {
				out = append(out, w)
			}
		}
	}
	return out
}

// DetectWithPrior returns text's language: prior for a short text,
// otherwise (and for any text when there is no prior, "") the
// best-scoring language with prior's confidence weighted by PriorWeight. A best
// language whose own confidence is at or below minConf gives prior (or
// FallbackLang).
func DetectWithPrior(d Detector, text, prior string, minConf float64) string {
	orFallback := func() string {
		if prior != "" {
			return prior
		}
		return FallbackLang
	}
	if IsShort(text) && prior != "" {
		return prior
	}
	if lang, ok := confident(d, withoutURLs(text), prior, minConf); ok {
		return lang
	}
	return orFallback()
}

// DocumentLanguage returns the letter-weighted majority of the languages
// of texts (each detected on its own, short ones left out); without long
// texts, the language of all texts together when that is long enough;
// otherwise "". Texts mostly in a script no supported language is written
// in (langid.ForeignScript) are left out: they cannot tell the language of
// the rest.
func DocumentLanguage(d Detector, texts []string, minConf float64) string {
	weight := map[string]int{}
	texts = withoutForeign(texts)
	for _, t := range texts {
		if IsShort(t) {
			continue
		}
		lang, conf := d.Detect(withoutURLs(t))
		if conf <= minConf || lang == "" {
			continue
		}
		weight[lang] += letterCount(t)
	}
	if len(weight) == 0 {
		// No long text: the texts together, when they are long enough.
		if all := strings.Join(texts, " "); !IsShort(all) {
			if lang, conf := d.Detect(withoutURLs(all)); conf > minConf && lang != "" {
				return lang
			}
		}
		return ""
	}
	best, n := "", 0
	for l, w := range weight {
		if w > n || (w == n && l < best) {
			best, n = l, w
		}
	}
	return best
}

// withoutForeign is texts without those mostly in a script no supported
// language is written in (langid.ForeignScript).
func withoutForeign(texts []string) []string {
	var out []string
	for _, t := range texts {
		if _, foreign := langid.ForeignScript(t); !foreign {
			out = append(out, t)
		}
	}
	return out
}

func letterCount(s string) int {
	n := 0
	for _, w := range wordsOf(s) {
		n += len([]rune(w))
	}
	return n
}

// withoutURLs drops the URLs of text, whose words are no language.
func withoutURLs(text string) string {
	if !strings.Contains(text, "://") && !strings.Contains(strings.ToLower(text), "www.") {
		return text
	}
	var keep []string
	for _, tok := range strings.Fields(text) {
		if !strings.Contains(tok, "://") && !strings.HasPrefix(strings.ToLower(tok), "www.") {
			keep = append(keep, tok)
		}
	}
	return strings.Join(keep, " ")
}

// longText joins the texts that are not short and not mostly in a foreign
// script (langid.ForeignScript), up to langid.MaxRunes characters.
func longText(texts []string) string {
	var b strings.Builder
	n := 0
	for _, t := range texts {
		if _, foreign := langid.ForeignScript(t); foreign || IsShort(t) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
		if n += len([]rune(t)); n >= langid.MaxRunes {
			break
		}
	}
	return b.String()
}
