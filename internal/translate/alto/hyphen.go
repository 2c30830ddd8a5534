package alto

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"archivekit/internal/translate/xmlsplice"
)

// Hyphenated words. A word broken across two lines is two Strings: the
// first part ends its line, marked by SUBS_TYPE="HypPart1", followed by a
// HYP element, or ending in a hyphen itself before a line that begins in
// lower case (softBreak), and the second part is the first String of the
// next line of the same block (SUBS_TYPE="HypPart2" when marked). The translator
// joins the pair for the backend: the first part's last word becomes the
// whole word (its trailing hyphen, soft hyphen or not sign removed, and the
// second part's first word added), and that word leaves the second line.
// When the block is translated, a second part that held only that word is
// emptied (its box keeps its place), and every translated String loses its
// SUBS_TYPE and SUBS_CONTENT attributes, which described the source text's
// hyphenation: viewers that dehyphenate through SUBS_CONTENT would show the
// source word beside the translation. For the same reason the HYP element
// that marked a joined pair is removed: the translation has no hyphenated
// word there, and a viewer would draw the hyphen after a whole word.
// Nothing else changes.
//
// The hyphen may be a String of its own ("Be" "-" / "drükkung", as some
// engines write it): a line's last String holding one of hyphenChars
// alone, right after a String (no SP between), ends a first part under
// the same rules, its word being the String before it; that hyphen String
// is emptied like a second part (a "-" after an SP is a dash and stays).
//
// A word may also be hyphenated across two TextBlocks (a column or region
// break, or an engine writing each line as a block): the last line of one
// block and the first line of the next, under the same rules, when both
// blocks are translated in this run from the same source language and the
// second part is a String of one word, marked HypPart2 or beginning in
// lower case (restOf: "Aus-" before a running foot "Kant's Werke" is no
// pair), neither block in a page margin (joinAcross). The word moves into the
// first block's text; the second part's String is emptied only when the
// first block's translation was accepted (otherwise it keeps its word, so
// no source text is lost).
//
// When that word is the second block's only word, the pair is joined only
// when the ALTO says so: the String is marked SUBS_TYPE="HypPart2" and,
// where either part has SUBS_CONTENT, it is the joined word (markedRest).
// An unmarked lone lower-case word after a hyphen is as often something
// else: a printed book's catchword (custos, the next page's first word at
// the foot of the page), a marginal gloss, a table cell, OCR noise. The second
// block then has no text of its own (absorbed): it is not sent, and is
// written (its String emptied) with the first block, in the end rounds too.
// Not in Alternative mode, where the second block would get no ALTERNATIVE
// and a later run would take it as not yet translated.

// hyphenChars are stripped from the end of a first part when joining.
const hyphenChars = "-\u00ad\u00ac\u2010\u2e17\u2e40="

// subsAttrs are the String attributes describing the source hyphenation.
var subsAttrs = []string{"SUBS_TYPE", "SUBS_CONTENT"}

// lineStrings returns the String elements of a TextLine that carry a
// CONTENT attribute, and the HYP elements after its last String (none when
// the line does not end with a hyphen mark).
func lineStrings(ln *xmlsplice.Node) (strs, hyps []*xmlsplice.Node) {
	for _, s := range ln.Elements() {
		switch s.Name.Local {
		case "String":
			if _, ok := s.Attr("", "CONTENT"); ok {
				strs = append(strs, s)
				hyps = nil
			}
		case "HYP":
			if len(strs) > 0 {
				hyps = append(hyps, s)
			}
		}
	}
	return strs, hyps
}

// lineWords is a TextLine's Strings and their words while hyphenated
// pairs are joined.
type lineWords struct {
	l     *line
	strs  []*xmlsplice.Node
	words [][]string        // per String
	hyps  []*xmlsplice.Node // HYP elements ending the line
	dash  bool              // the last String is a hyphen of its own
}

func readLineWords(l *line) *lineWords {
	lw := &lineWords{l: l}
	lw.strs, lw.hyps = lineStrings(l.node)
	for _, s := range lw.strs {
		lw.words = append(lw.words, Fields(content(s)))
	}
	lw.dash = hyphenString(l.node, lw.strs)
	return lw
}

func content(s *xmlsplice.Node) string {
	a, _ := s.Attr("", "CONTENT")
	return a.Value
}

// hyphenString reports a line whose last String is a hyphen of its own:
// one of hyphenChars alone, right after another String (an SP between
// makes it a dash).
func hyphenString(ln *xmlsplice.Node, strs []*xmlsplice.Node) bool {
	if len(strs) < 2 {
		return false
	}
	last := strs[len(strs)-1]
	v := strings.TrimSpace(content(last))
	if utf8.RuneCountInString(v) != 1 || !strings.Contains(hyphenChars, v) {
		return false
	}
	els := ln.Elements()
	for i, e := range els {
		if e == last {
			return i > 0 && els[i-1] == strs[len(strs)-2]
		}
	}
	return false
}

// firstPart returns the index of cur's String whose last word begins a
// word that next's first String ends: cur's last String, or the one before
// it when that is a hyphen of its own.
func firstPart(cur, next *lineWords) (int, bool) {
	k := len(cur.strs) - 1
	if k < 0 || len(next.strs) == 0 || !isSecondPart(next.strs[0]) {
		return 0, false
	}
	mark, hyphen := cur.strs[k], ""
	if cur.dash {
		hyphen = strings.TrimSpace(content(mark))
		k--
	}
	lw, fw := cur.words[k], next.words[0]
	if len(lw) == 0 || len(fw) == 0 {
		return 0, false
	}
	if isFirstPart(cur.strs[k], len(cur.hyps) > 0) || isFirstPart(mark, false) || softBreak(lw[len(lw)-1]+hyphen, fw[0]) {
		return k, true
	}
	return 0, false
}

// joinPair joins the last word of cur's String k and the first word of
// next's first String into the former: cur's HYP elements go with the
// pair when the block is translated, and so does the content of a hyphen
// String of its own. It reports whether next's first String is left
// without words.
func (b *block) joinPair(cur *lineWords, k int, next *lineWords) bool {
	b.hyps = append(b.hyps, cur.hyps...)
	if cur.dash {
		b.consumed[cur.strs[len(cur.strs)-1]] = true
	}
	w := cur.words[k]
	w[len(w)-1] = joinHyphen(w[len(w)-1], next.words[0][0])
	next.words[0] = next.words[0][1:]
	return len(next.words[0]) == 0
}

// joinAcross joins words hyphenated across consecutive blocks of a page
// (blocks, those holding text, in document order) when both are grouped
// for translation from the same language: the word moves into the first
// block's text, and the second block's first String, which held only that
// word, becomes its cont (see the comment at the top of this file). With
// lone, a second block whose only word that is joins when markedRest; it
// becomes the first block's absorbed.
func joinAcross(blocks []*block, grouped map[*block]bool, lone bool) {
	for i := 0; i+1 < len(blocks); i++ {
		a, b := blocks[i], blocks[i+1]
		if !grouped[a] || !grouped[b] || a.src != b.src {
			continue
		}
		cur, next, k, ok := blockPair(a, b, lone)
		if !ok {
			continue
		}
		only := len(Fields(b.text)) < 2
		a.joinPair(cur, k, next)
		b.cont, b.contOf = next.strs[0], a
		if only {
			a.absorbed = b
		}
		a.finish()
		b.finish()
	}
}

// blockPair returns a's last line, b's first line and the String k of the
// former whose last word begins the word the latter's first String ends,
// when b is a block after a: that String holds one word, beginning with a
// letter, that may be the rest of a word (restOf); when it is b's only
// word, only with lone and marked as the rest (markedRest).
func blockPair(a, b *block, lone bool) (cur, next *lineWords, k int, ok bool) {
	if len(a.lws) == 0 || len(b.lws) == 0 {
		return nil, nil, 0, false
	}
	cur, next = a.lws[len(a.lws)-1], b.lws[0]
	k, ok = firstPart(cur, next)
	if !ok || len(next.words[0]) != 1 || !beginsWord(next.words[0][0]) || !restOf(next) {
		return nil, nil, 0, false
	}
	if len(Fields(b.text)) < 2 && (!lone || !markedRest(cur.strs[k], cur.words[k], next.strs[0], next.words[0][0])) {
		return nil, nil, 0, false
	}
	return cur, next, k, true
}

// restOf reports whether next's first String may end a word hyphenated in
// another block: marked HypPart2, or beginning in lower case. An unmarked
// capitalised word after a hyphen in the block before is as often a
// running foot or head ("Kant's Werke IV." after "Aus-") as the rest of a
// word.
func restOf(next *lineWords) bool {
	r, _ := utf8.DecodeRuneInString(next.words[0][0])
	return unicode.IsLower(r) || strings.EqualFold(subsType(next.strs[0]), "HypPart2")
}

// beginsWord reports whether w begins with a letter, as the rest of a
// word does: a page number "- 12 -" in the block after a hyphen does not.
func beginsWord(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsLetter(r)
}

// markedRest reports whether second, a String holding only word, is marked
// as the rest of the word the last of words (first's) begins: SUBS_TYPE
// HypPart2, and the SUBS_CONTENT of either String, where it has one, is
// the joined word.
func markedRest(first *xmlsplice.Node, words []string, second *xmlsplice.Node, word string) bool {
	if !strings.EqualFold(subsType(second), "HypPart2") {
		return false
	}
	whole := joinHyphen(words[len(words)-1], word)
	for _, s := range []*xmlsplice.Node{first, second} {
		if a, ok := s.Attr("", "SUBS_CONTENT"); ok && strings.TrimSpace(a.Value) != whole {
			return false
		}
	}
	return true
}

func subsType(s *xmlsplice.Node) string {
	a, _ := s.Attr("", "SUBS_TYPE")
	return a.Value
}

// isFirstPart reports a line's last String that begins a hyphenated word.
func isFirstPart(last *xmlsplice.Node, endsWithHyp bool) bool {
	return endsWithHyp || strings.EqualFold(subsType(last), "HypPart1")
}

// isSecondPart reports whether s can end the word begun on the line before:
// unmarked, or marked HypPart2.
func isSecondPart(s *xmlsplice.Node) bool {
	t := subsType(s)
	return t == "" || strings.EqualFold(t, "HypPart2")
}

// softBreak reports an unmarked hyphenation: a line's last word ending in
// a hyphen (or not sign, soft hyphen, double oblique hyphen) after at least
// two letters (combining marks not counted), and a next line beginning with a lower-case letter, as in
// "Despo-" / "tism" (OCR-D ground truth and many exports write no HYP).
func softBreak(last, next string) bool {
	stem := strings.TrimRight(last, hyphenChars)
	if stem == last || len(last)-len(stem) > len("\u2e17") {
		return false
	}
	// Combining marks belong to the letter before them ("Unmuͤn-", with
	// U+0364 above the u, as Fraktur transcriptions write it).
	r := []rune(strings.Map(func(c rune) rune {
		if unicode.Is(unicode.Mn, c) {
			return -1
		}
		return c
	}, stem))
	if len(r) < 2 || !unicode.IsLetter(r[len(r)-1]) || !unicode.IsLetter(r[len(r)-2]) {
		return false
	}
	first := []rune(next)
	return len(first) > 0 && unicode.IsLower(first[0])
}

// joinHyphen returns the first part's last word joined to the second
// part's first word.
func joinHyphen(first, second string) string {
	return strings.TrimRight(first, hyphenChars) + second
}

// removeAttrEdit returns the edit deleting attribute a (with the blank
// before its name) from a start tag in src.
func removeAttrEdit(src []byte, a xmlsplice.Attr) edit {
	i := a.Start - 2 // the byte before the opening quote
	for i > 0 && isSpace(src[i]) {
		i--
	}
	// src[i] is '='
	i--
	for i > 0 && isSpace(src[i]) {
		i--
	}
	for i > 0 && !isSpace(src[i]) {
		i--
	}
	// src[i] is the blank before the name; take all blanks before it.
	for i > 0 && isSpace(src[i-1]) {
		i--
	}
	return edit{i, a.End + 1, ""}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// subsEdits removes the hyphenation attributes of String s.
func subsEdits(src []byte, s *xmlsplice.Node) []edit {
	var out []edit
	for _, name := range subsAttrs {
		if a, ok := s.Attr("", name); ok {
			out = append(out, removeAttrEdit(src, a))
		}
	}
	return out
}

// sourceOCREdits removes from the Strings of a translated block what
// describes the source's characters rather than the String's text: the
// ALTERNATIVE readings and Glyph elements inside a String, and its CC
// (per-character confidence) attribute. Left in, a full-text index that
// reads ALTERNATIVE (as OCR highlighting plugins do) would find the source
// words on the translated page, and Glyph boxes would spell the source word.
func sourceOCREdits(src []byte, block *xmlsplice.Node) []edit {
	var out []edit
	block.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local != "String" {
			return true
		}
		if a, ok := n.Attr("", "CC"); ok {
			out = append(out, removeAttrEdit(src, a))
		}
		for _, c := range n.Elements() {
			if c.Name.Local == "ALTERNATIVE" || c.Name.Local == "Glyph" {
				out = append(out, edit{c.Start, c.End, ""})
			}
		}
		return false
	})
	return out
}

var (
	maskContentRE = regexp.MustCompile(`(\s(?:CONTENT|LANG|language)=)("[^"]*"|'[^']*')`)
	maskSubsRE    = regexp.MustCompile(`\s+(?:SUBS_TYPE|SUBS_CONTENT|CC)=("[^"]*"|'[^']*')|<(?:[\w.-]+:)?HYP\b[^>]*?(?:/>|>[^<]*</(?:[\w.-]+:)?HYP\s*>)|(?s)<((?:[\w.-]+:)?(?:ALTERNATIVE|Glyph))\b[^>]*?(?:/>|>.*?</(?:[\w.-]+:)?(?:ALTERNATIVE|Glyph)\s*>)`)
)

// MaskTranslatable returns doc with what a Replace-mode translation may
// change masked out: every CONTENT, LANG and language (ALTO 1.x's
// TextBlock attribute) value emptied and every
// SUBS_TYPE, SUBS_CONTENT and CC attribute and HYP, ALTERNATIVE and Glyph
// element removed. A translation is byte-faithful when the
// masks of input and output are equal; the tests of this module and its
// users check it that way.
func MaskTranslatable(doc []byte) []byte {
	return maskContentRE.ReplaceAll(maskSubsRE.ReplaceAll(doc, nil), []byte(`${1}""`))
}
