package vocab

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"archivekit/internal/translate/lemmatizer"
)

// FillMaxWords is the longest text Fill answers from the vocabulary.
const FillMaxWords = 2

func wholeKey(s string) string { return fold(strings.Join(strings.Fields(s), " ")) }

// trimPunct removes punctuation and symbols around text ("Hrob." -> "Hrob").
func trimPunct(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsSymbol(r) })
}

// Fill answers a short text (one or two words) from the vocabulary, without
// a translation backend: when the text, without the punctuation around it,
// is an entry's source (case-insensitive), or, with a lemmatiser and a
// lemmatisation model for lang, when the lemmas of its words are, and no
// word is plural (the vocabulary holds singular English terms). The
// punctuation around the text is kept, and a capitalised text gets a
// capitalised target. lemmasUsed reports that the lemmatiser answered (for
// the licence components).
func (v *Vocabulary) Fill(ctx context.Context, text, lang string, lem Lemmatizer) (target string, lemmasUsed, ok bool) {
	if v == nil || len(v.whole) == 0 {
		return "", false, false
	}
	core, n, e := v.fillable(text)
	if n == 0 {
		return "", false, false
	}
	if e == nil && lem != nil {
		if _, has := lemmatizer.ModelFor(lang); has {
			if toks, err := lem.Lemmatize(ctx, core, lang); err == nil {
				lemmasUsed = true
				var lemmas []string
				plural := false
				for _, t := range toks {
					if t.UPOS == "PUNCT" {
						continue
					}
					plural = plural || t.Plural || t.Multiword || t.Lemma == ""
					lemmas = append(lemmas, t.Lemma)
				}
				if !plural && len(lemmas) == n {
					e = v.whole[wholeKey(strings.Join(lemmas, " "))]
				}
			}
		}
	}
	if e == nil || strings.TrimSpace(e.Target) == "" {
		return "", lemmasUsed, false
	}
	tgt := e.Target
	if first, _ := utf8.DecodeRuneInString(core); unicode.IsUpper(first) {
		if t, size := utf8.DecodeRuneInString(tgt); unicode.IsLower(t) {
			tgt = string(unicode.ToUpper(t)) + tgt[size:]
		}
	}
	i := strings.Index(text, core)
	return text[:i] + tgt + text[i+len(core):], lemmasUsed, true
}

// fillable returns what Fill looks up for text: its core (text without
// the punctuation around it), the core's word count (0 when Fill does not
// answer texts of that length) and the entry the core is, if any.
func (v *Vocabulary) fillable(text string) (core string, words int, e *Entry) {
	core = trimPunct(text)
	words = len(strings.Fields(core))
	if words == 0 || words > FillMaxWords {
		return core, 0, nil
	}
	return core, words, v.whole[wholeKey(core)]
}

// LemmaLines returns the distinct lines the lemmatiser is asked about when
// segments (texts in the vocabulary's language) go through Fill (fill)
// and Protect (protect), in order of first use: the cores of the short
// segments that are no entry as they stand, and every line of the
// segments. A lemmatiser that keeps its answers (lemmatizer.Prefetcher)
// can lemmatise them all in one request beforehand.
func (v *Vocabulary) LemmaLines(segments []string, fill, protect bool) []string {
	if v == nil {
		return nil
	}
	fill = fill && len(v.whole) > 0
	protect = protect && len(v.words) > 0
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if strings.TrimSpace(s) != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, seg := range segments {
		if core, n, e := v.fillable(seg); fill && n > 0 && e == nil {
			add(core)
		}
		if protect {
			for _, l := range strings.Split(seg, "\n") {
				add(l)
			}
		}
	}
	return out
}

// TermCheck is the terminology of one text: the vocabulary entries whose
// source occurs in it (whole words, case-insensitive) are expected, and
// each is a hit when its target occurs in the translation.
type TermCheck struct {
	Expected, Hit int
	// Missed lists the "source = target" entries whose target is absent.
	Missed []string
}

// CheckTerms checks the expected target terms of src in out.
func (v *Vocabulary) CheckTerms(src, out string) TermCheck {
	var c TermCheck
	if v == nil || strings.TrimSpace(src) == "" {
		return c
	}
	fo := newFolded(out)
	for _, t := range v.Glossary(src, len(v.Entries)) {
		if strings.TrimSpace(t[1]) == "" {
			continue
		}
		c.Expected++
		if len(fo.find(fold(t[1]))) > 0 {
			c.Hit++
		} else {
			c.Missed = append(c.Missed, t[0]+" = "+t[1])
		}
	}
	return c
}
