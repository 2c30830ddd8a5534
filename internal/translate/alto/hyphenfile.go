package alto

import (
	"context"
	"slices"
	"strings"
	"sync"
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
//
// Two Pages of one file (a book in one ALTO file) are joined the same way,
// with a seam between each two consecutive Pages (pageSeams) in place of
// Next, the Carried handed over inside Translate. The Pages are translated
// concurrently. The next Page does not wait for the first Page's block to
// be translated before sending its own: it joins (empties from its text)
// the word as soon as the Page before decided to carry it (guessPrev:
// seam.decided, before any backend call), sends its group, and before
// writing waits for the seam to be settled (confirmPrev: seam.done): the
// joined block's translation accepted (the word carried), or rejected, or
// the Page ended without it (failed, left untouched, already translated).
// When nothing was carried after all, the join is undone and the group
// sent again with the word in its place, so the output is the one the
// next file's would be. Only the group of that block waits, a Page never
// waits for the one after it, so the waits form no cycle; the seam after
// a Page whose join waits is settled only once its own text is final.
// Unlike the next file, the next Page does not wait for the end rounds: a
// first block the guard accepts only there leaves the second part
// translated on the next Page too (the meaning twice, no text lost).

// Carried is a word hyphenated across two pages (two files, or two Pages
// of one file) whose whole word the first page's translation wrote: Word
// is the second part (the next page's first word), Lang the source
// language it was translated from.
type Carried struct {
	Word string `json:"word"`
	Lang string `json:"lang"`
	// Block is the place, from 1 among the TextBlocks of the next Page
	// (the next file's first), of the block whose first String is Word (the first block
	// of the text flow, running heads passed over). 0, as in ledger
	// entries written before it was recorded: the first block with a
	// letter.
	Block int `json:"block,omitempty"`
}

// nextHead is the first block with text of the next page's text flow,
// with the language and state its own translation will give it.
type nextHead struct {
	b       *block
	src     string
	grouped bool // translated: pending, not in the target language
}

// seam is where one page's text flow ends and the next one's begins: two
// Pages of this document, or this document's last Page and the next
// file's first (Options.Next). The first page joins a word hyphenated
// there (joinNext) and carries it over the seam (carried); the next page
// empties its part (joinPrev): the next file when given the Carried as
// Options.Prev, the next Page of this document through guessPrev and
// confirmPrev.
type seam struct {
	head *nextHead       // the next page's first block of its text flow; nil: none
	last *xmlsplice.Node // this page's last block of its text flow; nil: none
	// pair: the two blocks' words form a pair (blockPair) and head is
	// translated; only then may the word be carried, and only then does
	// the next Page of this document look at the seam (topOf).
	pair  bool
	carry *block // the last block, its last word joined with head's first
	word  string // the word it took from head
	// decided is closed once the page before chose whether to join (carry
	// is then final), done once it settled the seam: it did not join, or
	// the joined block's translation was accepted or rejected, or the
	// page ended (failed, nothing translated).
	decided, done        chan struct{}
	decideOnce, doneOnce sync.Once
}

// readNextSeam reads the next file's first block of its text flow and
// returns the seam between this document's last Page and next's first
// (nil when next cannot be read: no join). Running heads and feet are
// passed over (runninghead.go), judged against the last pages of this
// document and the first of next.
func (t *translator) readNextSeam(doc *xmlsplice.Document, pages []*xmlsplice.Node, src []byte) *seam {
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
	return t.seamAt(&seq, len(tail)-1, func() string {
		return pageLanguages(t.opt.Detector, npages, true, t.order.MinConfidence, t.opt.DocumentLang)[0]
	})
}

// pageSeams returns the seams between the document's consecutive Pages:
// seams[i] is the one after pages[i].
func (t *translator) pageSeams(doc *xmlsplice.Document, pages []*xmlsplice.Node) []*seam {
	if len(pages) < 2 {
		return nil
	}
	var seq edgeSeq
	seq.add(pages, furnitureTags(doc))
	seams := make([]*seam, len(pages)-1)
	for i := range seams {
		seams[i] = t.seamAt(&seq, i, func() string { return t.pageLang[i+1] })
	}
	return seams
}

// seamAt returns the seam after page i of seq; lang gives the next page's
// language (auto detection only).
func (t *translator) seamAt(seq *edgeSeq, i int, lang func() string) *seam {
	s := &seam{decided: make(chan struct{}), done: make(chan struct{})}
	a := seq.body(i, true)
	if a != nil {
		s.last = a.node
	}
	first := seq.body(i+1, false)
	if first == nil {
		return s
	}
	h := &nextHead{b: first}
	h.src, _ = Given(first.text, t.opt.Source)
	switch t.opt.Mode {
	case Append:
		pending, _ := t.pendingAppend([]*block{first})
		h.grouped = len(pending) == 1
	case Alternative:
		h.grouped = len(t.pendingAlternative([]*block{first})) == 1
	default:
		h.grouped = true
	}
	if t.auto {
		h.src, _ = t.order.Choose(t.opt.Detector, first.text, blockLang(first), lang())
	}
	h.grouped = h.grouped && h.src != t.opt.Target
	s.head = h
	if a != nil && h.grouped {
		_, _, _, s.pair = blockPair(a, first, t.opt.Mode != Alternative)
	}
	return s
}

// seamAfter returns the seam at the foot of page pageNum (from 1): the one
// before the next Page, or on the last Page the one before the next
// file's (nil when none).
func (t *translator) seamAfter(pageNum int) *seam {
	switch {
	case pageNum <= len(t.seams):
		return t.seams[pageNum-1]
	case pageNum == t.pages:
		return t.next
	}
	return nil
}

// seamBefore returns the seam between page pageNum and the Page before it
// in this document (nil when none).
func (t *translator) seamBefore(pageNum int) *seam {
	if pageNum >= 2 && pageNum-2 < len(t.seams) {
		return t.seams[pageNum-2]
	}
	return nil
}

// topOf returns the block of page pageNum (among blocks, those with text)
// into which the Page before may carry a word: the head of the seam
// before it, when the seam holds a pair and the block is translated; nil
// when none.
func (t *translator) topOf(pageNum int, blocks []*block, grouped map[*block]bool) *block {
	s := t.seamBefore(pageNum)
	if s == nil || !s.pair {
		return nil
	}
	for _, b := range blocks {
		if b.pos == s.head.b.pos && grouped[b] {
			return b
		}
	}
	return nil
}

// flowFrom returns the text flow from top on (all of it when top is nil
// or not in it): the page furniture above top joins no word with top's
// first, which the Page before may take.
func flowFrom(flow []*block, top *block) []*block {
	if i := slices.Index(flow, top); i > 0 {
		return flow[i:]
	}
	return flow
}

// decide closes s.decided once: the next page may read s.carry.
func (s *seam) decide() {
	if s != nil {
		s.decideOnce.Do(func() { close(s.decided) })
	}
}

// settle closes s.decided and s.done once: the next page may read what s
// carries.
func (s *seam) settle() {
	if s != nil {
		s.decide()
		s.doneOnce.Do(func() { close(s.done) })
	}
}

// settled settles the seam after page pageNum when blocks, whose
// translation was just accepted or rejected (or left untouched), hold the
// block it carries from.
func (t *translator) settled(pageNum int, blocks []*block) {
	if s := t.seamAfter(pageNum); s != nil && s.carry != nil && slices.Contains(blocks, s.carry) {
		s.settle()
	}
}

// joinNext joins the last word of this page's last block of its text flow
// (among blocks, those with text) with the next page's first word across
// the seam s (see the comment at the top of this file); s.carry is then
// that block. The seam is decided then, and settled at once when it did
// not join.
func (t *translator) joinNext(s *seam, blocks []*block, grouped map[*block]bool) {
	defer func() {
		s.decide()
		if s.carry == nil {
			s.settle()
		}
	}()
	a := blockOf(blocks, s.last)
	if !s.pair || a == nil || !grouped[a] || a.src != s.head.src || len(Fields(a.text)) == 0 || joinedBefore(a, blocks) {
		return
	}
	cur, next, k, ok := blockPair(a, s.head.b, t.opt.Mode != Alternative)
	if !ok {
		return
	}
	word := next.words[0][0]
	a.joinPair(cur, k, next)
	a.finish()
	s.carry, s.word = a, word
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

// carried is what the page before s carried over it: nil unless the
// joined block's translation was accepted.
func (s *seam) carried() *Carried {
	if s == nil || s.carry == nil || !s.carry.accepted {
		return nil
	}
	return &Carried{Word: s.word, Lang: s.carry.src, Block: s.head.b.pos}
}

// guessPrev joins into this page's first block the word the Page before
// joins across the seam s, as soon as that Page decided to, before its
// block's translation is known (the page's group is sent meanwhile); the
// join is kept or undone once s is settled (confirmPrev). It returns the
// stand-in joinPrev returns (nil when nothing joined) and records s as
// the page's guess.
func (t *translator) guessPrev(ctx context.Context, s *seam, blocks []*block, grouped map[*block]bool, pr *pageResult) (*block, error) {
	select {
	case <-s.decided:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.carry == nil {
		return nil, nil
	}
	prev := t.joinPrev(blocks, grouped, &Carried{Word: s.word, Lang: s.carry.src, Block: s.head.b.pos})
	if prev != nil {
		pr.guess = s
	}
	return prev, nil
}

// confirmPrev waits until the Page before settled the seam of the page's
// guess (guessPrev; none: nothing to wait for) and undoes the join among
// blocks when the word was not carried after all (the block's translation
// rejected, the Page failed): the String keeps its word, which goes to
// the backend with its block again. It reports whether it undid the join.
// The Page before never waits for this one, so the wait ends.
func (t *translator) confirmPrev(ctx context.Context, pr *pageResult, blocks []*block) (bool, error) {
	s := pr.guess
	if s == nil {
		return false, nil
	}
	select {
	case <-s.done:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	pr.guess = nil
	if s.carried() != nil {
		return false, nil
	}
	for _, b := range blocks {
		if b.cont != nil && b.contOf == pr.prev {
			b.lws[0].words[0] = Fields(content(b.cont))
			b.cont, b.contOf = nil, nil
			b.finish()
		}
	}
	pr.prev = nil
	return true, nil
}

// joinPrev makes the first String of the first block of the page's text
// flow (among blocks, those with text; c.Block names it) the cont of the
// word c, which the page before carried (nil: none), when it holds just
// that word and the block is translated from the language the word was.
// It returns the block standing for the one that wrote the whole word
// (nil when none joined): its absorbed is the block whose only word that
// was.
func (t *translator) joinPrev(blocks []*block, grouped map[*block]bool, c *Carried) *block {
	if c == nil {
		return nil
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
		return nil
	}
	if !grouped[b] || b.src != c.Lang || len(b.lws) == 0 || b.cont != nil {
		return nil
	}
	next := b.lws[0]
	if len(next.strs) == 0 || !isSecondPart(next.strs[0]) || len(next.words[0]) != 1 || next.words[0][0] != c.Word {
		return nil
	}
	only := len(Fields(b.text)) < 2
	if only && t.opt.Mode == Alternative {
		return nil
	}
	next.words[0] = nil
	prev := &block{accepted: true}
	b.cont, b.contOf = next.strs[0], prev
	if only {
		prev.absorbed = b
	}
	b.finish()
	return prev
}

// writeFromPrev writes the blocks of a group whose only word the page
// before carried (pr.prev's absorbed): their String emptied, counted
// translated, no log row.
func (t *translator) writeFromPrev(blocks []*block, lang string, pageNum int, pr *pageResult) error {
	for _, b := range blocks {
		if pr.prev == nil || pr.prev.absorbed != b {
			continue
		}
		if err := t.writeBlock(b, lang, nil, nil, pageNum, backend.OK, pr); err != nil {
			return err
		}
		pr.langs[lang]++
		pr.stats.Translated++
		pr.stats.LinesJoined++
	}
	return nil
}

// fromPrev reports the word the document's translation emptied because
// the previous file carried it ("" when none).
func (t *translator) fromPrev() string {
	if !t.prevDone.Load() {
		return ""
	}
	return t.opt.Prev.Word
}
