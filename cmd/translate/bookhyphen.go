package main

import (
	"strconv"
	"strings"

	"archivekit/internal/book"
	"archivekit/internal/ledger"
	"archivekit/internal/translate/alto"
)

// Words hyphenated across two text files of a book ("Aus-" at the foot of
// page 12's ALTO file, "grabung" on page 13's first line). The run
// translates a book's files one at a time, in page order, so the first
// file is translated knowing the second (alto.Options.Next: the whole word
// goes to the backend from there) and the second knowing what the first
// wrote (alto.Options.Prev: its String is emptied). The two are partners
// (partners) only when they are the ALTO files of two consecutive pages
// of one book in one file group, each its page's only one; with a
// --pages selection, which may leave a page out between them, only when
// their METS ORDERs are consecutive numbers.
//
// The join never loses text: the second file's String is emptied only
// after the first file wrote the whole word, in this run or, by --resume,
// in an earlier one (the ledger entry records it: itemData.HyphenNext).
// The first file joins only when its partner is translated after it in
// this run: not when the partner is another shard's, failed before, or
// kept from the ledger. The reverse case, a partner kept from the ledger
// whose String an earlier join emptied (itemData.HyphenPrev) while the
// first file is translated again, is handled by translating the partner
// again too (keepPartner). A partner that then fails, or a run stopped
// between the two files, leaves the whole word in the first file and the
// second part in the second: the meaning twice, no text lost.

// hyphenLink is what an ALTO file of a book is translated with: its
// partner's bytes (next) and what the file before it carried (prev).
type hyphenLink struct {
	next []byte
	prev *alto.Carried
}

// soleInGroup reports whether t is the only text file of its group on p.
func soleInGroup(p book.Page, t book.Text) bool {
	n := 0
	for _, u := range p.Texts {
		if u.Group == t.Group {
			n++
		}
	}
	return n == 1
}

// partners reports whether b is the text file that continues a's page in
// the book (see the comment at the top of this file).
func (r *runner) partners(a, b input) bool {
	return a.BookOf != nil && a.BookOf == b.BookOf && a.Book != nil && b.Book != nil &&
		a.Book.Format == book.ALTO && b.Book.Format == book.ALTO && a.Book.Group == b.Book.Group &&
		a.Sole && b.Sole && b.PageIdx == a.PageIdx+1 && a.Err == nil && b.Err == nil &&
		(r.s.Pages == "" || nextOrder(a.PageOrder, b.PageOrder))
}

// nextOrder reports whether METS ORDER b is the number after a: with
// --pages, the pages read may have left one out between two (IIIF
// canvases have no ORDER: not joined then).
func nextOrder(a, b string) bool {
	x, errA := strconv.Atoi(strings.TrimSpace(a))
	y, errB := strconv.Atoi(strings.TrimSpace(b))
	return errA == nil && errB == nil && y == x+1
}

// link returns what inputs[i] is translated with: its partner's bytes
// when the partner is translated after it in this run, and what the
// partner before it carried.
func (r *runner) link(p *pass, inputs []input, i int) hyphenLink {
	var h hyphenLink
	if i > 0 && p.carryAt == i-1 && p.carry != nil && r.partners(inputs[i-1], inputs[i]) {
		h.prev = p.carry
	}
	if i+1 < len(inputs) && r.partners(inputs[i], inputs[i+1]) {
		h.next = r.willTranslate(p, inputs[i+1])
	}
	return h
}

// willTranslate returns the bytes of in when the run will translate it
// (not kept from the ledger, not a failure kept), predicting fromLedger
// for an input whose partner before it is translated in this run; nil
// otherwise.
func (r *runner) willTranslate(p *pass, in input) []byte {
	rd := readInput(in)
	if rd.err != nil {
		return nil
	}
	if !r.s.Resume {
		return rd.src
	}
	e, ok := p.led.Lookup(r.itemName(in), rd.digest)
	switch {
	case !ok || e.State == ledger.Failed && r.s.RetryFailed:
		return rd.src
	case e.State == ledger.Failed:
		return nil
	}
	_, changed, _, d, kept := r.kept(e)
	if kept && d.HyphenPrev == "" || !kept && len(changed) > 0 {
		return nil
	}
	return rd.src
}

// keepPartner reports whether inputs[i], recorded done with data d and
// its outputs as written, may be kept from the ledger: not when an
// earlier join emptied its first String and the file before it, which
// wrote the whole word, is translated again in this run (it is then
// translated again too). An output edited since is never overwritten
// (fromLedger): the file before it then joins as if it were translated,
// so its new translation holds the whole word unless the guard rejects it.
func (r *runner) keepPartner(p *pass, inputs []input, i int, d itemData) bool {
	if d.HyphenPrev == "" || i == 0 || !r.partners(inputs[i-1], inputs[i]) {
		return true
	}
	if p.keptAt[i-1] {
		return true
	}
	r.log.Info("translating again: its first word was joined with the page before, which this run translates again",
		"file", inputs[i].Origin, "word", d.HyphenPrev)
	return false
}

// carried notes what inputs[i] carried to its partner: out's (translated)
// or its ledger data's (kept).
func (p *pass) carried(i int, c *alto.Carried) {
	if c != nil {
		p.carry, p.carryAt = c, i
	}
}
