// Package alto translates ALTO OCR documents in place with the dual-pass
// reconstruction of the translation spec (section 4.4).
//
// Per TextBlock (those inside ComposedBlocks included) the line texts are
// gathered from the String CONTENT values, the block text is translated in
// one piece (pass 1, the text that is written back) and each non-empty line
// separately (pass 2, anchors only). The pass-1 tokens are then split into
// one bucket per line by choosing, in a window of plus or minus 50 % around
// each anchor's word count, the split whose character-level sequence-matcher
// ratio to the anchor is highest; inside a line the tokens go one per String
// and the last String takes the rest. Only CONTENT attribute values change
// in replace mode; every other byte is kept.
package alto

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/batch"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/xmlsplice"
)

// Detector identifies the language of a text: an ISO 639-1 code and a
// confidence in [0, 1].
type Detector interface {
	Detect(text string) (lang string, conf float64)
}

// Mode is the output mode.
type Mode string

// Output modes.
const (
	// Replace overwrites the CONTENT values with the translation.
	Replace Mode = "replace"
	// Append keeps every original block and inserts after it a translated
	// copy labelled with the target language (see Translate).
	Append Mode = "append"
	// Alternative keeps the document as it is and adds to each String of
	// a translated block an ALTERNATIVE holding its share of the
	// translation, with PURPOSE "translation:<tag>" (see PurposePrefix);
	// ALTO 1.1 and later only (see Translate).
	Alternative Mode = "alternative"
)

// Defaults for Options.
const (
	// DefaultMinConfidence: a detection with confidence at or below it falls
	// back to FallbackLang.
	DefaultMinConfidence = 0.2
	// FallbackLang is the language used when detection is not confident.
	FallbackLang = "cs"
)

// DetectLang runs d on text and returns its language, or FallbackLang when
// the confidence is at or below minConf or no language is given.
func DetectLang(d Detector, text string, minConf float64) string {
	lang, conf := d.Detect(text)
	if conf <= minConf || lang == "" {
		return FallbackLang
	}
	return lang
}

// Options configures one document translation.
type Options struct {
	// Backend does the translating; it must be safe for concurrent use when
	// Concurrency > 1.
	Backend backend.Backend
	// Source is an ISO 639-1 code, or "" or "auto" to detect once per block.
	Source string
	// Target is the ISO 639-1 target code (required).
	Target string
	// Detector is required when Source is auto.
	Detector Detector
	// MinConfidence: detections at or below it fall back to Czech. Zero means
	// DefaultMinConfidence. Order, when set, replaces it.
	MinConfidence float64
	// Order is the source-language order of each block (order.go); nil
	// means DefaultLangOrder with MinConfidence.
	Order *LangOrder
	// DocumentLang, when not "", is the document's language, given rather
	// than detected (a book's, detected over all its text files): each
	// page's language is detected with it as prior, and a page without
	// enough text of its own takes it.
	DocumentLang string
	// Mode is Replace (default when empty), Append or Alternative.
	Mode Mode
	// FastAlign skips pass 2 and splits block tokens in proportion to the
	// lines' source word counts.
	FastAlign bool
	// File is the value of the log's file column.
	File string
	// PageDone, when not nil, is called as each page is done, with the
	// pages done so far and the document's pages (a progress line names
	// the page of a long document: it sat on the file until its end). It
	// may be called from several goroutines at once.
	PageDone func(done, total int)
	// Concurrency is how many pages are processed at once (default 1).
	// A Page's first block that may end a word hyphenated on the Page
	// before is written only once that Page's block was (hyphenfile.go).
	Concurrency int
	// KeepHyphens sends hyphenated words as their two parts and leaves
	// SUBS_TYPE/SUBS_CONTENT alone, as the original tool did (its logs are
	// the reference of the alignment tests); by default the parts are
	// joined (see hyphen.go).
	KeepHyphens bool
	// MaxBatchChars caps a batch's joined length in characters (runes); a
	// page's items are then sent in several batches. 0 means no cap: one
	// call for a page's blocks and one for its lines.
	MaxBatchChars int
	// RetryRounds is how many times the blocks whose replies the guard
	// rejected are tried again at the end of the document, after every
	// page, before they are left untranslated (rounds.go); 0 turns the end
	// rounds off.
	RetryRounds int
	// Next is the next text file of a book (its bytes), when it is
	// translated after this document in the same run: a word hyphenated
	// at the end of this document's last page and ended on Next's first
	// page goes to the backend whole from here (hyphenfile.go;
	// Result.Carried). Nil: no join across files.
	Next []byte
	// Prev is what the previous text file of the book carried (its
	// Result.Carried): this document's first String holding that word is
	// emptied rather than translated again.
	Prev *Carried
}

// LogRow is one row of the translation log (spec 2.2).
type LogRow struct {
	File string
	// Page is the 1-based page number.
	Page int
	// Line is the TextLine's ID, or its 1-based position in its block when it
	// has none.
	Line string
	// Source is the line's original text, Target the text written to it.
	Source, Target string
	// Score is the model's score of the block's translation (ct2: the
	// cumulative log-probability), when HasScore.
	Score    float64
	HasScore bool
	// Status is what happened to the line's block (backend.OK, Retried,
	// Untranslated, UnsupportedLang, ...); Target is empty unless it is
	// OK, Retried or Vocabulary.
	Status backend.Status
	// Approx is set when the line's words were given by proportion, not
	// aligned to it (--fast-align, or a line over the alignment limits),
	// or when the line got no word of its block's translation (its text
	// is emptied): unit status approx_alignment (backend.UnitStatus).
	Approx bool
	// Emptied is set when the line got no word of its block's
	// translation: its text is emptied, and its unit status is
	// approx_alignment whatever its block's status (UnitStatus).
	Emptied bool
	// Lang is the unit's source language and LangSource the rule of the
	// source-language order that chose it (order.go).
	Lang       string
	LangSource LangSource
}

// UnitStatus is the row's unit status (backend.UnitStatus; a row without a
// status is ok): approx_alignment for a line emptied, whatever its block's
// status (such lines of a block translated in an end round said rerun,
// while the document's warning said their rows say approx_alignment).
func (r LogRow) UnitStatus() string {
	if r.Emptied {
		return backend.UnitApproxAlignment
	}
	st := r.Status
	if st == "" {
		st = backend.OK
	}
	return backend.UnitStatus(st, r.Approx)
}

// Result is a translated document.
type Result struct {
	// Output is the translated document.
	Output []byte
	// Log holds one row per translated line, in document order.
	Log []LogRow
	// Stats counts pages, blocks, lines and backend traffic.
	Stats Stats
	// Languages maps each source language used to its number of blocks.
	Languages map[string]int
	// LangSources counts the blocks whose source language each rule of
	// the order chose (FromGiven with an explicit source).
	LangSources map[LangSource]int
	// DetectionUsed reports that the Detector ran (for licence derivation).
	DetectionUsed bool
	// Warnings are non-fatal problems (such as an unsupported pair for some
	// blocks, which are then left untouched).
	Warnings []string
	// Carried is, with Options.Next, the word of Next whose whole word
	// this document's translation wrote (nil when none): give it as the
	// next file's Options.Prev.
	Carried *Carried
	// FromPrev is, with Options.Prev, its word when this document's
	// String holding it was emptied ("" when not).
	FromPrev string
}

// IsALTO reports whether the root element of src is an ALTO root (local
// name "alto", any ALTO namespace or none). It reads only up to the root
// start tag and does not validate; any XML that is not ALTO is metadata.
// A document in another encoding than UTF-8 is decoded first
// (xmlsplice.Decode); one that cannot be decoded is not ALTO.
func IsALTO(src []byte) bool {
	if text, _, err := xmlsplice.Decode(src); err == nil {
		src = text
	}
	d := xml.NewDecoder(bytes.NewReader(src))
	for {
		tok, err := d.RawToken()
		if err != nil {
			return false
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local == "alto"
		}
	}
}

// pagesOf returns the document's Page elements, in document order.
func pagesOf(doc *xmlsplice.Document) []*xmlsplice.Node {
	var pages []*xmlsplice.Node
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local == "Page" {
			pages = append(pages, n)
			return false
		}
		return true
	})
	return pages
}

func rootIsALTO(doc *xmlsplice.Document) bool {
	for _, n := range doc.Root.Children {
		if n.Kind == xmlsplice.ElementNode {
			return n.Name.Local == "alto"
		}
	}
	return false
}

// line is a TextLine with its Strings and text.
type line struct {
	node    *xmlsplice.Node
	id      string
	strings []xmlsplice.Attr  // CONTENT attributes of the line's String elements
	nodes   []*xmlsplice.Node // the String elements of strings
	text    string            // CONTENT values joined by single spaces
	words   int
}

// block is a TextBlock with its lines.
type block struct {
	node    *xmlsplice.Node
	pos     int // its place among its page's TextBlocks, from 1
	lines   []*line
	holders []*line // lines that have Strings and text: they receive tokens
	text    string
	src     string
	from    LangSource // the rule that chose src
	// subs are the block's Strings, whose SUBS_* attributes go when the
	// block is translated; emptied are the CONTENT attributes of second
	// parts of hyphenated words whose whole word went to the line before.
	subs    []*xmlsplice.Node
	emptied []xmlsplice.Attr
	// hyps are the HYP elements of joined pairs, removed when the block
	// is translated.
	hyps []*xmlsplice.Node

	join     bool                     // hyphenated pairs are joined
	lws      []*lineWords             // the lines' Strings and words
	consumed map[*xmlsplice.Node]bool // Strings whose words went to a line before
	// cont is the block's first String when its one word ended a word
	// hyphenated at the end of the block before, contOf (joinAcross); it
	// is emptied only when contOf was translated too.
	cont   *xmlsplice.Node
	contOf *block
	// absorbed is the block after this one whose only word (its cont)
	// ended this block's last word: it has no text of its own and is
	// written with this block (joinAcross).
	absorbed *block
	// accepted: the backend's translation of the block was accepted.
	accepted bool
}

// edit is a byte-range replacement on the source.
type edit struct {
	start, end int
	raw        string
}

// Translate translates an ALTO document. In Replace mode only CONTENT values
// change, and the LANG values of translated blocks and of their lines and
// Strings, which become the target. In Append mode each translated TextBlock is kept and followed by a
// copy of it (same attributes and children, IDs suffixed "_<target>", LANG
// set to the target) holding the translation; the original gets LANG="<src>"
// when it has no LANG; blocks whose LANG already is the target, or that are
// already followed by such a copy, are skipped without a backend call. In
// Alternative mode nothing of the document changes: each String of a
// translated block gets an ALTERNATIVE (PURPOSE "translation:<tag>")
// holding the words the alignment gave it (none for a String given no
// word); blocks that already hold an ALTERNATIVE into the target are
// skipped, and RemoveAlternatives gives the input back. Alternative mode
// refuses (ErrNoAlternative) a document not in an ALTO 2, 3 or 4
// namespace unless it is ALTO 1.x whose schema location names ALTO 1.1 to
// 1.4: ALTO 1.0 has no ALTERNATIVE.
func Translate(ctx context.Context, src []byte, opt Options) (*Result, error) {
	auto, err := batch.CheckRequest("alto", opt.Backend, opt.Source, opt.Target, opt.Detector != nil)
	if err != nil {
		return nil, err
	}
	if opt.Mode == "" {
		opt.Mode = Replace
	}
	if opt.Mode != Replace && opt.Mode != Append && opt.Mode != Alternative {
		return nil, fmt.Errorf("alto: unknown output mode %q", opt.Mode)
	}
	if opt.MinConfidence == 0 {
		opt.MinConfidence = DefaultMinConfidence
	}
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("alto: %s: %w", opt.File, err)
	}
	if !rootIsALTO(doc) {
		return nil, fmt.Errorf("alto: %s: root element is not <alto>", opt.File)
	}
	if opt.Mode == Alternative {
		if err := checkAlternative(doc); err != nil {
			return nil, fmt.Errorf("alto: %s: %w", opt.File, err)
		}
	}
	pages := pagesOf(doc)

	res := &Result{Languages: map[string]int{}, LangSources: map[LangSource]int{}}
	tr := &translator{opt: opt, src: src, auto: auto, supported: map[string]error{}, order: OrderOf(opt.Order, opt.MinConfidence), langAttr: blockLangAttr(doc)}
	if auto {
		tr.pageLang = pageLanguages(opt.Detector, pages, !opt.KeepHyphens, tr.order.MinConfidence, opt.DocumentLang)
	}
	tr.pages = len(pages)
	if !opt.KeepHyphens {
		tr.seams = tr.pageSeams(doc, pages)
		if opt.Next != nil {
			tr.next = tr.readNextSeam(doc, pages, opt.Next)
		}
	}
	results := make([]pageResult, len(pages))
	conc := max(1, opt.Concurrency)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var done atomic.Int64
	sem := make(chan struct{}, conc)
	for i, p := range pages {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int, p *xmlsplice.Node) {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = tr.page(ctx, i+1, p)
			if results[i].err != nil {
				cancel()
			} else if opt.PageDone != nil {
				opt.PageDone(int(done.Add(1)), len(pages))
			}
		}(i, p)
	}
	wg.Wait()

	if i, err := firstError(results); err != nil {
		return nil, fmt.Errorf("alto: %s: page %d: %w", opt.File, i+1, err)
	}
	if err := tr.endRounds(ctx, results); err != nil {
		return nil, fmt.Errorf("alto: %s: %w", opt.File, err)
	}
	ed := xmlsplice.NewEditor(src)
	for _, pr := range results {
		for _, e := range pr.edits {
			ed.Replace(e.start, e.end, e.raw)
		}
		res.Log = append(res.Log, pr.rows...)
		res.Stats.add(pr.stats)
		for l, n := range pr.langs {
			res.Languages[l] += n
		}
		for l, n := range pr.from {
			res.LangSources[l] += n
		}
		res.DetectionUsed = res.DetectionUsed || pr.detected
	}
	res.Stats.Pages = len(pages)
	res.Warnings = tr.warnings
	res.Carried, res.FromPrev = tr.next.carried(), tr.fromPrev()
	if n := res.Stats.OverAlignLimit; n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d lines over the alignment limit (%d words or %d characters) took their proportional share of the translated words instead of the aligned one",
			opt.File, n, MaxAlignWords, MaxAlignRunes))
	}
	if n := res.Stats.LinesEmptied; n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d lines got no word of their block's translation; their text is empty and their log rows say approx_alignment",
			opt.File, n))
	}
	if n := res.Stats.LinesJoined; n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d lines held only the end of a word the ALTO marks as hyphenated at the end of the block (or page) before (SUBS_TYPE HypPart2): the word is translated and written whole there, and these lines are left empty, with no log row of their own",
			opt.File, n))
	}
	if res.Output, err = ed.Bytes(); err != nil {
		return nil, fmt.Errorf("alto: %s: %w", opt.File, err)
	}
	return res, nil
}

// firstError returns the page error that stopped the translation and its
// page index: the first one that is not the cancellation its own failure
// caused on the pages running beside it (a backend outage on page 3 is
// reported as such, not as page 1's "context canceled"); a cancellation
// only when every error is one (the caller's context ended).
func firstError(results []pageResult) (int, error) {
	at := -1
	for i, pr := range results {
		switch {
		case pr.err == nil:
		case !errors.Is(pr.err, context.Canceled):
			return i, pr.err
		case at < 0:
			at = i
		}
	}
	if at < 0 {
		return 0, nil
	}
	return at, results[at].err
}

type translator struct {
	opt  Options
	src  []byte
	auto bool
	// langAttr is the attribute append mode gives a TextBlock for its
	// language (blockLangAttr).
	langAttr string

	pageLang []string // per page, auto detection only (see detect.go)
	order    LangOrder

	mu        sync.Mutex
	supported map[string]error // pair check per source language
	warnings  []string

	// Words hyphenated across pages (hyphenfile.go): pages is the number
	// of pages; seams[i] is the seam after page i+1 (from 1), next the
	// one after the last, before the next file's first page; prevDone
	// says the String holding the word the previous file carried was
	// emptied.
	pages    int
	seams    []*seam
	next     *seam
	prevDone atomic.Bool
}

type pageResult struct {
	edits    []edit
	rows     []LogRow
	stats    Stats
	langs    map[string]int
	from     map[LangSource]int // blocks per rule of the language order
	detected bool
	err      error
	// failed are the blocks the guard left untranslated, for the end
	// rounds (rounds.go).
	failed []failedBlock
	// prev stands for the block of the page (file) before whose last
	// word this page's first String ends (joinPrev); nil when none.
	// guess is the seam before the page while that join waits for it to
	// be settled (guessPrev).
	prev  *block
	guess *seam
}

// supports checks the pair once per source language; an unsupported pair is
// an error when the source was given, and a warning (blocks left untouched)
// when it was detected. The tag of a script no supported language is
// written in (langid.ForeignTag) is not asked about: its blocks are left
// untouched with a warning naming the script, whatever the source.
func (t *translator) supports(ctx context.Context, lang string) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	err, seen := t.supported[lang]
	reason, foreign := langid.ForeignTag(lang)
	switch {
	case !seen && foreign:
		err = errors.New(reason)
		t.supported[lang] = err
		t.warnings = append(t.warnings, fmt.Sprintf("%s: blocks in %q left untouched: %s", t.opt.File, lang, reason))
	case !seen:
		err = t.opt.Backend.Supports(ctx, lang, t.opt.Target)
		t.supported[lang] = err
		if err != nil && t.auto {
			t.warnings = append(t.warnings, fmt.Sprintf("%s: blocks detected as %q left untouched: %v", t.opt.File, lang, err))
		}
	}
	if err != nil && !t.auto && !foreign {
		return false, err
	}
	return err == nil, nil
}

// collectBlocks gathers the TextBlocks of a page (inside ComposedBlocks too),
// empty ones included, joining hyphenated words inside each (see hyphen.go).
func collectBlocks(page *xmlsplice.Node, join bool) []*block {
	var blocks []*block
	page.Walk(func(n *xmlsplice.Node) bool {
		if n.Name.Local != "TextBlock" {
			return true
		}
		b := &block{node: n, pos: len(blocks) + 1, join: join, consumed: map[*xmlsplice.Node]bool{}}
		pos := 0
		for _, ln := range n.Elements() {
			if ln.Name.Local != "TextLine" {
				continue
			}
			pos++
			l := &line{node: ln, id: strconv.Itoa(pos)}
			if a, ok := ln.Attr("", "ID"); ok && a.Value != "" {
				l.id = a.Value
			}
			b.lws = append(b.lws, readLineWords(l))
		}
		// Join hyphenated pairs across consecutive lines.
		for i := 0; join && i+1 < len(b.lws); i++ {
			cur, next := b.lws[i], b.lws[i+1]
			if k, ok := firstPart(cur, next); ok && b.joinPair(cur, k, next) {
				b.consumed[next.strs[0]] = true
			}
		}
		b.finish()
		blocks = append(blocks, b)
		return false
	})
	return blocks
}

// finish computes the block's lines, the lines that receive tokens, its
// text and the Strings its translation empties or strips of SUBS_*, from
// the words of its Strings (after hyphenated pairs were joined).
func (b *block) finish() {
	b.lines, b.holders, b.subs, b.emptied = nil, nil, nil, nil
	var texts []string
	for _, lw := range b.lws {
		l := lw.l
		l.strings, l.nodes = nil, nil
		var words []string
		for k, s := range lw.strs {
			if s == b.cont {
				continue // written as the block before it allows (writeBlock)
			}
			if b.join {
				b.subs = append(b.subs, s)
			}
			a, _ := s.Attr("", "CONTENT")
			if b.consumed[s] {
				b.emptied = append(b.emptied, a)
				continue
			}
			l.strings = append(l.strings, a)
			l.nodes = append(l.nodes, s)
			words = append(words, lw.words[k]...)
		}
		l.text = strings.Join(words, " ")
		l.words = len(words)
		b.lines = append(b.lines, l)
		if len(l.strings) > 0 && l.text != "" {
			b.holders = append(b.holders, l)
			texts = append(texts, l.text)
		}
	}
	b.text = strings.Join(texts, " ")
}

// pageLanguages returns each page's language: its long blocks' text scored
// with the document's language as prior, or the document's language for a
// page without long text ("" when the document has none either). The
// document's language is docLang when given, else detected over the pages.
func pageLanguages(d Detector, pages []*xmlsplice.Node, join bool, minConf float64, docLang string) []string {
	texts := make([]string, len(pages))
	for i, p := range pages {
		var bt []string
		for _, b := range collectBlocks(p, join) {
			bt = append(bt, b.text)
		}
		texts[i] = longText(bt)
	}
	doc := docLang
	if doc == "" {
		doc = DocumentLanguage(d, texts, minConf)
	}
	out := make([]string, len(pages))
	for i, t := range texts {
		out[i] = doc
		if letterCount(t) >= MinPageLetters {
			out[i] = DetectWithPrior(d, t, doc, minConf)
		}
	}
	return out
}

func (t *translator) page(ctx context.Context, pageNum int, page *xmlsplice.Node) pageResult {
	// A page that fails or ends without settling its seam leaves nothing
	// carried over it, and the next page stops waiting.
	defer t.seamAfter(pageNum).settle()
	pr := pageResult{langs: map[string]int{}, from: map[LangSource]int{}}
	var blocks []*block
	for _, b := range collectBlocks(page, !t.opt.KeepHyphens) {
		if b.text != "" {
			blocks = append(blocks, b)
		}
	}
	withText := blocks
	pr.stats.Units = len(blocks)
	switch t.opt.Mode {
	case Append:
		// An earlier run's copies are not units of the document: the
		// originals they follow are, counted already done.
		var copies int
		blocks, copies = t.pendingAppend(blocks)
		pr.stats.Units -= copies
	case Alternative:
		blocks = t.pendingAlternative(blocks)
	}
	pr.stats.AlreadyDone = pr.stats.Units - len(blocks)
	pr.stats.Blocks = len(blocks)
	// Detect once per block; group blocks by source language, keeping order.
	var order []string
	groups := map[string][]*block{}
	grouped := map[*block]bool{}
	for _, b := range blocks {
		b.src, b.from = Given(b.text, t.opt.Source)
		if t.auto {
			pr.detected = true
			b.src, b.from = t.order.Choose(t.opt.Detector, b.text, blockLang(b), t.pageLang[pageNum-1])
		}
		pr.from[b.from]++
		if b.src == t.opt.Target {
			pr.stats.InTarget++
			t.untouched(b, pageNum, backend.InTarget, &pr)
			continue // already in the target language
		}
		if _, ok := groups[b.src]; !ok {
			order = append(order, b.src)
		}
		groups[b.src] = append(groups[b.src], b)
		grouped[b] = true
	}
	var top *block // this page's first block, whose first word the Page before may carry
	if !t.opt.KeepHyphens {
		if pageNum == 1 {
			pr.prev = t.joinPrev(withText, grouped, t.opt.Prev)
		}
		top = t.topOf(pageNum, withText, grouped)
		joinAcross(flowFrom(textFlow(withText), top), grouped, t.opt.Mode != Alternative)
		if s := t.seamAfter(pageNum); s != nil {
			t.joinNext(s, withText, grouped)
		}
	}
	bt := &batch.Batcher{Backend: t.opt.Backend, Target: t.opt.Target, MaxChars: t.opt.MaxBatchChars, Counts: &pr.stats.Counts}
	for _, lang := range order {
		if top != nil && top.src == lang {
			if pr.prev, pr.err = t.guessPrev(ctx, t.seamBefore(pageNum), withText, grouped, &pr); pr.err != nil {
				return pr
			}
		}
		ok, err := t.supports(ctx, lang)
		if err != nil {
			pr.err = err
			return pr
		}
		if !ok {
			if _, pr.err = t.confirmPrev(ctx, &pr, groups[lang]); pr.err != nil {
				return pr
			}
			pr.stats.Unsupported += len(groups[lang])
			for _, b := range groups[lang] {
				t.untouched(b, pageNum, backend.UnsupportedLang, &pr)
			}
			t.settled(pageNum, groups[lang])
			continue
		}
		if err := t.translateGroup(ctx, bt, pageNum, lang, groups[lang], &pr); err != nil {
			pr.err = err
			return pr
		}
	}
	return pr
}

func (t *translator) translateGroup(ctx context.Context, bt *batch.Batcher, pageNum int, lang string, group []*block, pr *pageResult) error {
	// A block absorbed by the one before it is written with that block
	// (or, absorbed by the page before's, alone: writeFromPrev).
	blocks := slices.DeleteFunc(slices.Clone(group), func(b *block) bool { return b.contOf != nil && b.contOf.absorbed == b })
	items := make([]string, len(blocks))
	for i, b := range blocks {
		items[i] = b.text
	}
	t.prepare(ctx, items, blocks, lang)
	pass1, status, err := bt.Translate(ctx, items, lang, true)
	if err != nil {
		return err
	}
	for i, b := range blocks {
		b.accepted = status[i] != backend.Untranslated
	}
	if pr.guess == nil {
		t.settled(pageNum, blocks)
	}
	anchors, err := t.anchors(ctx, bt, lang, blocks, status)
	if err != nil {
		return err
	}
	// A join made before the page before knew its block's fate holds
	// only when that block was accepted; otherwise the group goes again
	// with the word back in its place. The seam after this page is
	// settled only then: its block's text is final.
	if undone, err := t.confirmPrev(ctx, pr, group); err != nil || undone {
		if err != nil {
			return err
		}
		return t.translateGroup(ctx, bt, pageNum, lang, group, pr)
	}
	t.settled(pageNum, blocks)
	if err := t.writeFromPrev(group, lang, pageNum, pr); err != nil {
		return err
	}
	for i, b := range blocks {
		if status[i] == backend.Untranslated {
			pr.stats.Untranslated++
			if b.absorbed != nil {
				pr.stats.Untranslated++ // it keeps its word
			}
			pr.failed = append(pr.failed, failedBlock{b: b, lang: lang, page: pageNum, row: len(pr.rows)})
			t.untouched(b, pageNum, backend.Untranslated, pr)
			continue
		}
		var err error
		if anchors, err = t.writeTranslated(b, lang, pass1[i], anchors, pageNum, status[i], pr); err != nil {
			return err
		}
	}
	return nil
}

// anchors translates the lines of the blocks whose translation was
// accepted (status), one by one, as the alignment's anchors (none with
// FastAlign). A block whose translation the guard rejected twice stays as
// it was; its lines are logged as untranslated and get no anchors.
func (t *translator) anchors(ctx context.Context, bt *batch.Batcher, lang string, blocks []*block, status []backend.Status) ([]string, error) {
	if t.opt.FastAlign {
		return nil, nil
	}
	var lines []string
	for i, b := range blocks {
		if status[i] == backend.Untranslated {
			continue
		}
		for _, l := range b.holders {
			lines = append(lines, l.text)
		}
	}
	// A rejected anchor is empty, not retried: alignment then leans on
	// its neighbours; anchors are never written.
	anchors, _, err := bt.Translate(ctx, lines, lang, false)
	return anchors, err
}

// writeTranslated aligns a block's translation text to its lines (with
// anchors, the lines' own translations, unless FastAlign) and writes it;
// it returns the anchors left for the blocks after it.
func (t *translator) writeTranslated(b *block, lang, text string, anchors []string, pageNum int, st backend.Status, pr *pageResult) ([]string, error) {
	tokens := Fields(text)
	var counts []int
	// approx: the block's words were placed by proportion (all of its
	// lines with --fast-align; with a line over the alignment limits,
	// the others' places depend on it too).
	approx := t.opt.FastAlign
	if t.opt.FastAlign {
		words := make([]int, len(b.holders))
		for j, l := range b.holders {
			words[j] = l.words
		}
		counts = proportional(len(tokens), words)
	} else {
		var over int
		counts, over = alignByAnchors(tokens, anchors[:len(b.holders)])
		pr.stats.OverAlignLimit += over
		approx = over > 0
		anchors = anchors[len(b.holders):]
	}
	if fillEmpty(counts, func(j int) bool { return strings.TrimSpace(b.holders[j].text) != "" }) {
		approx = true
	}
	pr.langs[lang]++
	pr.stats.Translated++
	pr.stats.Lines += len(b.holders)
	first := len(pr.rows)
	if err := t.writeBlock(b, lang, tokens, counts, pageNum, st, pr); err != nil {
		return nil, err
	}
	if c := b.absorbed; c != nil {
		// Its only word went out with b: its String is emptied, it has
		// no line to log.
		if err := t.writeBlock(c, lang, nil, nil, pageNum, st, pr); err != nil {
			return nil, err
		}
		pr.langs[lang]++
		pr.stats.Translated++
		pr.stats.LinesJoined++
	}
	for r := first; r < len(pr.rows); r++ {
		row := &pr.rows[r]
		row.Approx = approx
		if row.Target == "" && len(tokens) > 0 && strings.TrimSpace(row.Source) != "" {
			// The alignment gave the line no word of its block's
			// translation: its CONTENT is emptied, and its row says
			// the placement is approximate.
			row.Approx, row.Emptied = true, true
			pr.stats.LinesEmptied++
		}
	}
	return anchors, nil
}

// prepare announces the segments of a page's group to a backend.Preparer:
// the blocks' texts (pass 1) and, unless FastAlign, their lines (pass 2).
func (t *translator) prepare(ctx context.Context, items []string, blocks []*block, lang string) {
	p, ok := t.opt.Backend.(backend.Preparer)
	if !ok {
		return
	}
	segs := append([]string(nil), items...)
	if !t.opt.FastAlign {
		for _, b := range blocks {
			for _, l := range b.holders {
				segs = append(segs, l.text)
			}
		}
	}
	p.Prepare(ctx, segs, lang, t.opt.Target)
}

// untouched logs the lines of a block left as it was, with the reason.
func (t *translator) untouched(b *block, pageNum int, st backend.Status, pr *pageResult) {
	for _, l := range b.holders {
		pr.rows = append(pr.rows, LogRow{File: t.opt.File, Page: pageNum, Line: l.id, Source: l.text, Status: st, Lang: b.src, LangSource: b.from})
	}
}

// writeBlock turns a block's aligned tokens into edits and log rows.
func (t *translator) writeBlock(b *block, lang string, tokens []string, counts []int, pageNum int, st backend.Status, pr *pageResult) error {
	var contentEdits, altEdits []edit
	if pageNum == 1 && b.cont != nil && b.contOf == pr.prev {
		t.prevDone.Store(true) // the previous file's word is written there
	}
	tag := ""
	if t.opt.Mode == Alternative {
		var err error
		if tag, err = langtag.MT(t.opt.Target, lang); err != nil {
			return err
		}
	}
	pos := 0
	for j, l := range b.holders {
		mine := tokens[pos : pos+counts[j]]
		pos += counts[j]
		for k, v := range Place(mine, len(l.strings)) {
			a := l.strings[k]
			contentEdits = append(contentEdits, edit{a.Start, a.End, xmlsplice.EscapeAttr(v, a.Quote)})
			if tag != "" && v != "" {
				altEdits = append(altEdits, alternativeEdit(t.src, l.nodes[k], tag, v))
			}
		}
		row := LogRow{File: t.opt.File, Page: pageNum, Line: l.id, Source: l.text, Target: strings.Join(mine, " "), Status: st, Lang: b.src, LangSource: b.from}
		if sc, ok := t.opt.Backend.(backend.Scorer); ok && st != backend.Vocabulary {
			row.Score, row.HasScore = sc.Score(b.text)
		}
		pr.rows = append(pr.rows, row)
	}
	if t.opt.Mode == Alternative {
		pr.edits = append(pr.edits, altEdits...)
		return nil
	}
	for _, a := range b.emptied {
		contentEdits = append(contentEdits, edit{a.Start, a.End, ""})
	}
	for _, s := range b.subs {
		contentEdits = append(contentEdits, subsEdits(t.src, s)...)
	}
	if b.cont != nil && b.contOf.accepted {
		a, _ := b.cont.Attr("", "CONTENT")
		contentEdits = append(contentEdits, edit{a.Start, a.End, ""})
		contentEdits = append(contentEdits, subsEdits(t.src, b.cont)...)
	}
	for _, h := range b.hyps {
		contentEdits = append(contentEdits, edit{h.Start, h.End, ""})
	}
	contentEdits = append(contentEdits, sourceOCREdits(t.src, b.node)...)
	// The block's text is now in the target language, so every LANG inside
	// it (its lines' and Strings') says so; the block's own LANG too in
	// Replace mode (appendCopy sets the copy's). No LANG is added.
	b.node.Walk(func(n *xmlsplice.Node) bool {
		if a, ok := langOf(n); ok && a.Value != t.opt.Target && (n != b.node || t.opt.Mode == Replace) {
			contentEdits = append(contentEdits, edit{a.Start, a.End, xmlsplice.EscapeAttr(t.opt.Target, a.Quote)})
		}
		return true
	})
	if t.opt.Mode == Replace {
		pr.edits = append(pr.edits, contentEdits...)
		return nil
	}
	edits, err := t.appendCopy(b, lang, contentEdits)
	if err != nil {
		return fmt.Errorf("block %s: append copy: %w", b.node.QName(), err)
	}
	pr.edits = append(pr.edits, edits...)
	return nil
}
