package alto

import (
	"strings"
	"unicode"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/xmlsplice"
)

// Words hyphenated across two files of a book. A book's pages are one ALTO
// file each, so a word hyphenated at the foot of a page ("Aus-" on page
// 12) ends in the next file ("grabung" on page 13). Translate joins such a
// pair when its caller, translating the book's files in page order, gives
// the next file (Options.Next) to the first and what the first wrote
// (Result.Carried, given as Options.Prev) to the second:
//
//   - the first file: the last TextBlock of the text flow of its last
//     Page and the first of Next's first Page (page furniture passed over:
//     margins, blocks without a letter, tagged running titles and page
//     numbers, running heads and feet: see runninghead.go) are joined
//     under the rules of two blocks of a page
//     (joinAcross): both translated in this run (neither in the target
//     language, already done in Append or Alternative mode), from the
//     same source language (chosen for Next's block as Next's own
//     translation will choose it), the second part a String of one word
//     beginning in lower case or marked HypPart2 (across pages an
//     unmarked capitalised word after a hyphen is as often a running head
//     as the rest of a word), and, when that word is its block's only word, marked (HypPart2,
//     SUBS_CONTENT the joined word where written: see markedRest) and not
//     in Alternative mode. The whole word goes to the backend in the first
//     block and its translation is written where the first part was.
//     Result.Carried names the second part when the block's translation
//     was accepted (in the end rounds too).
//   - the second file: given Prev, the first String of the block the
//     first file chose (Carried.Block), when it holds exactly that word and the block is
//     translated from Prev's language, is the block's cont: the word is
//     not sent again, and the String is emptied when the block is written
//     (in Alternative mode it gets no ALTERNATIVE; a block that then holds
//     no word is written without a backend call). Result.FromPrev says
//     so. A block the guard rejects keeps its word.
//
// No source text is lost: the second file empties the String only after
// the first file wrote the whole word. The first file may carry the word
// while the second is never translated (the run stops, the second fails):
// its caller then gives Prev to the second file's later translation.

// Carried is a word hyphenated across two files whose whole word the first
// file's translation wrote: Word is the second part (the next file's first
// word), Lang the source language it was translated from.
type Carried struct {
	Word string `json:"word"`
	Lang string `json:"lang"`
	// Block is the place, from 1 among the TextBlocks of the next file's
	// first Page, of the block whose first String is Word (the first block
	// of the text flow, running heads passed over). 0, as in ledger
	// entries written before it was recorded: the first block with a
	// letter.
	Block int `json:"block,omitempty"`
}

// nextHead is the first block with text of the next file's first Page,
// with the language and state its own translation will give it.
type nextHead struct {
	b       *block
	src     string
	grouped bool // translated: pending, not in the target language
}

// readNextHead reads the next file's first block of its text flow (nil
// when it has none or cannot be read: no join), and finds this document's
// last one (t.lastBody): the blocks at the foot of this document's last
// Page and at the top of next's first, running heads and feet passed over
// (runninghead.go), judged against the last pages of this document and the
// first of next.
func (t *translator) readNextHead(doc *xmlsplice.Document, pages []*xmlsplice.Node, src []byte) *nextHead {
	text, _, err := xmlsplice.Decode(src)
	if err != nil || len(pages) == 0 {
		return nil
	}
	ndoc, err := xmlsplice.Parse(text)
	if err != nil || !rootIsALTO(ndoc) {
		return nil
	}
	npages := pagesOf(ndoc)
	if len(npages) == 0 {
		return nil
	}
	tail := pages[max(0, len(pages)-3):]
	var seq edgeSeq
	seq.add(tail, furnitureTags(doc))
	seq.add(npages[:min(3, len(npages))], furnitureTags(ndoc))
	if a := seq.body(len(tail)-1, true); a != nil {
		t.lastBody = a.node
	}
	first := seq.body(len(tail), false)
	if first == nil {
		return nil
	}
	h := &nextHead{b: first, src: t.opt.Source}
	switch t.opt.Mode {
	case Append:
		h.grouped = len(t.pendingAppend([]*block{first})) == 1
	case Alternative:
		h.grouped = len(t.pendingAlternative([]*block{first})) == 1
	default:
		h.grouped = true
	}
	if t.auto {
		langs := pageLanguages(t.opt.Detector, npages, true, t.order.MinConfidence, t.opt.DocumentLang)
		h.src, _ = t.order.Choose(t.opt.Detector, first.text, blockLang(first), langs[0])
	}
	h.grouped = h.grouped && h.src != t.opt.Target
	return h
}

// joinNext joins the last word of the last page's last block (the last of
// blocks, those with text) with the next file's first word (see the
// comment at the top of this file); t.carry is then that block.
func (t *translator) joinNext(blocks []*block, grouped map[*block]bool) {
	h, a := t.next, blockOf(blocks, t.lastBody)
	if h == nil || !h.grouped || a == nil {
		return
	}
	if !grouped[a] || a.src != h.src || len(a.lws) == 0 || len(Fields(a.text)) == 0 || len(h.b.lws) == 0 {
		return
	}
	cur, next := a.lws[len(a.lws)-1], h.b.lws[0]
	k, ok := firstPart(cur, next)
	if !ok || len(next.words[0]) != 1 || !beginsWord(next.words[0][0]) || joinedBefore(a, blocks) {
		return
	}
	word := next.words[0][0]
	if !restOf(next) {
		return // a heading ("Zweites Kapitel") is not the rest of the word
	}
	if len(Fields(h.b.text)) < 2 && (t.opt.Mode == Alternative || !markedRest(cur.strs[k], cur.words[k], next.strs[0], word)) {
		return
	}
	a.joinPair(cur, k, next)
	a.finish()
	t.carry, t.carryWord = a, word
}

// joinedBefore reports whether a's last word already joined a block after
// it on its page.
func joinedBefore(a *block, blocks []*block) bool {
	for _, b := range blocks {
		if b.contOf == a {
			return true
		}
	}
	return false
}

// blockOf returns the block of blocks whose TextBlock is n (nil when none).
func blockOf(blocks []*block, n *xmlsplice.Node) *block {
	for _, b := range blocks {
		if n != nil && b.node == n {
			return b
		}
	}
	return nil
}

// firstWithLetter returns the first of blocks with a letter in its text;
// nil when there is none. It finds the block a ledger entry written
// before Carried.Block named.
func firstWithLetter(blocks []*block) *block {
	for _, b := range blocks {
		if strings.IndexFunc(b.text, unicode.IsLetter) >= 0 {
			return b
		}
	}
	return nil
}

// textFlow returns blocks without those in the page's margins.
func textFlow(blocks []*block) []*block {
	var out []*block
	for _, b := range blocks {
		if !inMargin(b.node) {
			out = append(out, b)
		}
	}
	return out
}

// carried is what the document carried to the next file: nil unless the
// joined block's translation was accepted.
func (t *translator) carried() *Carried {
	if t.carry == nil || !t.carry.accepted {
		return nil
	}
	return &Carried{Word: t.carryWord, Lang: t.carry.src, Block: t.next.b.pos}
}

// joinPrev makes the first String of the first page's first block (the
// first of blocks, those with text) the cont of the word the previous
// file carried, when it holds just that word and the block is translated
// from the language the word was.
func (t *translator) joinPrev(blocks []*block, grouped map[*block]bool) {
	c := t.opt.Prev
	if c == nil {
		return
	}
	b := firstWithLetter(blocks)
	if c.Block > 0 {
		b = nil
		for _, x := range blocks {
			if x.pos == c.Block {
				b = x
			}
		}
	}
	if b == nil {
		return
	}
	if !grouped[b] || b.src != c.Lang || len(b.lws) == 0 || b.cont != nil {
		return
	}
	next := b.lws[0]
	if len(next.strs) == 0 || !isSecondPart(next.strs[0]) || len(next.words[0]) != 1 || next.words[0][0] != c.Word {
		return
	}
	only := len(Fields(b.text)) < 2
	if only && t.opt.Mode == Alternative {
		return
	}
	next.words[0] = nil
	t.prev = &block{accepted: true}
	b.cont, b.contOf = next.strs[0], t.prev
	if only {
		t.prev.absorbed = b
	}
	b.finish()
}

// writeFromPrev writes the blocks of a group whose only word the previous
// file carried: their String emptied, counted translated, no log row.
func (t *translator) writeFromPrev(blocks []*block, lang string, pageNum int, pr *pageResult) error {
	for _, b := range blocks {
		if t.prev == nil || t.prev.absorbed != b {
			continue
		}
		if err := t.writeBlock(b, lang, nil, nil, pageNum, backend.OK, pr); err != nil {
			return err
		}
		pr.langs[lang]++
		pr.stats.Translated++
	}
	return nil
}

// fromPrev reports the word the document's translation emptied because
// the previous file carried it ("" when none).
func (t *translator) fromPrev() string {
	if t.prev == nil || !t.prevDone.Load() {
		return ""
	}
	return t.opt.Prev.Word
}
