package vocab

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/lemmatizer"
)

// Placeholders. Each protected term is replaced by a purely alphabetic,
// upper-case token made of a three-letter prefix and three consonants,
// e.g. QZXBCD. The prefix never occurs in Czech, Slovak, Polish, German or
// English words, and vowel-less capitals read as an abbreviation, which the
// hosted models copy unchanged (in the real hosted-API logs 232 of 243
// vowel-less capital tokens came back unchanged; the exceptions were real
// abbreviations such as SJ and JZ).
var prefixes = []string{"QZX", "XQZ", "ZXQ", "QXZ"}

// codeLetters are the letters after the prefix (consonants, no Q or X).
const codeLetters = "BCDFGHJKLMNPRSTVWZ"

// MaxTerms is how many distinct terms one text can protect.
const MaxTerms = len(codeLetters) * len(codeLetters) * len(codeLetters)

// Lemmatizer is what Protect needs from the lemmatiser client.
type Lemmatizer interface {
	Lemmatize(ctx context.Context, text, lang string) ([]lemmatizer.Token, error)
}

// Protector applies tag-and-protect (spec 4.6, backend mtapi). It is safe
// for concurrent use.
type Protector struct {
	Vocab *Vocabulary
	// Lemmatizer matches single words by lemma; nil protects phrases only.
	Lemmatizer Lemmatizer
	// Warn receives warnings: once per language without a lemmatisation
	// model, and once per failed lemmatiser call. Nil discards them.
	Warn func(msg string)

	warned sync.Map
}

// Protected is a text with its terms replaced by placeholders.
type Protected struct {
	// Text is what goes to the backend.
	Text string
	// Phrases and Words count the occurrences protected by surface match
	// and by lemma.
	Phrases, Words int
	// LemmasUsed is true when the lemmatiser was consulted successfully
	// (the lemmatiser licence components count then).
	LemmasUsed bool

	prefix string
	codes  []placeholder
}

type placeholder struct{ code, target string }

// Count is the number of protected occurrences.
func (p *Protected) Count() int { return p.Phrases + p.Words }

func (pr *Protector) warn(key, msg string) {
	if pr.Warn == nil {
		return
	}
	if _, dup := pr.warned.LoadOrStore(key, true); !dup {
		pr.Warn(msg)
	}
}

// Protect replaces vocabulary terms in text (source language lang, ISO
// 639-1): first multi-word and other surface entries, longest first,
// case-insensitive, whole words, every occurrence; then single words whose
// lemma is an entry, except plural words, which are left to the model.
// Languages without a lemmatisation model skip the second pass with one
// warning. A failing lemmatiser also only skips the second pass (with a
// warning); Protect itself fails only when the text needs more than
// MaxTerms placeholders.
func (pr *Protector) Protect(ctx context.Context, text, lang string) (*Protected, error) {
	out := &Protected{Text: text}
	if pr.Vocab == nil || len(pr.Vocab.Entries) == 0 || strings.TrimSpace(text) == "" {
		return out, nil
	}
	out.prefix = choosePrefix(text)
	if out.prefix == "" {
		pr.warn("prefix", "vocabulary: the text contains every placeholder prefix; terms are not protected")
		return out, nil
	}
	f := newFolded(text)
	spans := pr.Vocab.phraseSpans(f)
	out.Phrases = len(spans)
	if pr.Lemmatizer != nil && len(pr.Vocab.words) > 0 {
		if _, ok := lemmatizer.ModelFor(lang); !ok {
			pr.warn("lang:"+lang, fmt.Sprintf("vocabulary: no lemmatisation model for %q; single-word terms are not protected (phrases are)", lang))
		} else if toks, err := pr.Lemmatizer.Lemmatize(ctx, text, lang); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return nil, err
			}
			pr.warn("err:"+err.Error(), fmt.Sprintf("vocabulary: lemmatiser failed, single-word terms not protected: %v", err))
		} else {
			out.LemmasUsed = true
			for _, t := range toks {
				if t.Multiword || t.Plural || t.Start < 0 || t.UPOS == "PUNCT" {
					continue
				}
				e, ok := pr.Vocab.words[fold(t.Lemma)]
				if !ok || overlaps(spans, t.Start, t.End) || !isSingleWord(t.Form) {
					continue
				}
				spans = append(spans, span{t.Start, t.End, e})
				out.Words++
			}
		}
	}
	if len(spans) == 0 {
		return out, nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	codeOf := map[*Entry]string{}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		code, ok := codeOf[s.entry]
		if !ok {
			if len(out.codes) >= MaxTerms {
				return nil, fmt.Errorf("vocabulary: text needs more than %d placeholders", MaxTerms)
			}
			code = out.prefix + codeSuffix(len(out.codes))
			codeOf[s.entry] = code
			out.codes = append(out.codes, placeholder{code, s.entry.Target})
		}
		b.WriteString(text[last:s.start])
		b.WriteString(code)
		last = s.end
	}
	b.WriteString(text[last:])
	out.Text = b.String()
	return out, nil
}

func choosePrefix(text string) string {
	squeezed := strings.ToUpper(strings.Join(strings.Fields(text), ""))
	for _, p := range prefixes {
		if !strings.Contains(squeezed, p) {
			return p
		}
	}
	return ""
}

func codeSuffix(n int) string {
	k := len(codeLetters)
	return string([]byte{codeLetters[n/(k*k)%k], codeLetters[n/k%k], codeLetters[n%k]})
}

// gap is what the space-tolerant pass accepts between two letters of a
// placeholder: spaces, tabs and no-break spaces, never a line break.
const gap = `[ \t\x{00A0}]*`

func spacedPattern(code string) string {
	parts := make([]string, len(code))
	for i, r := range code {
		parts[i] = regexp.QuoteMeta(string(r))
	}
	return strings.Join(parts, gap)
}

// Restore puts the English terms back into a translation of p.Text:
// exact placeholder matches first, then case-insensitive ones, then ones
// the model split with spaces. Whatever is left of a placeholder (a
// truncated or altered code) is removed, without touching line breaks, so
// no placeholder debris reaches the output.
func (p *Protected) Restore(translated string) string {
	if len(p.codes) == 0 {
		return translated
	}
	s := translated
	for _, c := range p.codes {
		s = strings.ReplaceAll(s, c.code, c.target)
	}
	for _, c := range p.codes {
		s = compiled(`(?i)`+regexp.QuoteMeta(c.code)).ReplaceAllLiteralString(s, c.target)
	}
	for _, c := range p.codes {
		s = replaceKeepingEdges(spacedCode(c.code), s, c.target)
	}
	return removeDebris(s, p.prefix)
}

// spacedCode matches placeholder code in any case, possibly split by
// spaces, between non-letters; its first and last groups are those
// boundaries (see replaceKeepingEdges).
func spacedCode(code string) *regexp.Regexp {
	return compiled(`(?i)(^|\P{L})` + spacedPattern(code) + `(\P{L}|$)`)
}

// maxCompiled bounds the cache of compiled placeholder patterns: four
// prefixes and the first few hundred codes of each cover every ordinary
// text; patterns past the bound are compiled per call.
const maxCompiled = 4096

var (
	compiledMu sync.Mutex
	compiledRE = map[string]*regexp.Regexp{}
)

// compiled returns the compiled expr, from the cache when it is there.
// Restore runs once per translated segment, and its patterns depend only
// on the placeholder codes, which repeat from segment to segment.
func compiled(expr string) *regexp.Regexp {
	compiledMu.Lock()
	re, ok := compiledRE[expr]
	compiledMu.Unlock()
	if ok {
		return re
	}
	re = regexp.MustCompile(expr)
	compiledMu.Lock()
	if len(compiledRE) < maxCompiled {
		compiledRE[expr] = re
	}
	compiledMu.Unlock()
	return re
}

// replaceKeepingEdges replaces matches of re (whose first and last groups
// are the boundary characters) with target, keeping the boundaries.
func replaceKeepingEdges(re *regexp.Regexp, s, target string) string {
	for {
		m := re.FindStringSubmatchIndex(s)
		if m == nil {
			return s
		}
		s = s[:m[3]] + target + s[m[4]:]
	}
}

// removeDebris deletes remnants of placeholders with the given prefix: the
// prefix (letters possibly split by spaces), the letters glued to it, and
// a following group of one to three code letters standing alone. One
// adjacent space goes with it, so no double space is left; line breaks are
// never removed.
func removeDebris(s, prefix string) string {
	if prefix == "" {
		return s
	}
	re := compiled(`(?i)` + spacedPattern(prefix) + `[` + codeLetters + `]{0,3}\p{L}*` +
		`(?:[ \t\x{00A0}]+[` + codeLetters + `]{1,3}(\P{L}|$))?`)
	for {
		m := re.FindStringSubmatchIndex(s)
		if m == nil {
			return s
		}
		start, end := m[0], m[1]
		if m[2] >= 0 { // the stand-alone group matched: keep its terminator
			end = m[2]
		}
		before := start > 0 && (s[start-1] == ' ' || s[start-1] == '\t')
		after := end < len(s) && (s[end] == ' ' || s[end] == '\t')
		switch {
		case before && (after || end == len(s) || s[end] == '\n' || s[end] == '\r' || strings.ContainsRune(".,;:!?)", rune(s[end]))):
			start--
		case after && (start == 0 || s[start-1] == '\n'):
			end++
		}
		s = s[:start] + s[end:]
	}
}

// Translate protects text, translates it with b and restores the terms.
// It returns the translation and the number of protected occurrences.
func (pr *Protector) Translate(ctx context.Context, b backend.Backend, text, src, tgt string) (string, int, error) {
	p, err := pr.Protect(ctx, text, src)
	if err != nil {
		return "", 0, err
	}
	out, err := b.Translate(ctx, p.Text, src, tgt)
	if err != nil {
		return "", 0, err
	}
	return p.Restore(out), p.Count(), nil
}

// Lost counts the placeholders of p that a translation no longer holds in
// any form Restore recognises (exact, another case, split by spaces): the
// model did not copy them, so their terms would be lost.
func (p *Protected) Lost(translated string) int {
	n := 0
	for _, c := range p.codes {
		if strings.Contains(translated, c.code) {
			continue
		}
		if !spacedCode(c.code).MatchString(translated) && !strings.Contains(strings.ToUpper(translated), c.code) {
			n++
		}
	}
	return n
}
