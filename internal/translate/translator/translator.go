// Package translator translates one XML document, ALTO or metadata, the way
// both the batch command (cmd/translate) and the HTTP service do: it decides
// the document kind, runs internal/translate/alto or internal/translate/metadata, applies the vocabulary
// (tag-and-protect for mtapi, a glossary for backends that accept one),
// records the licence components as they are used, and returns the output
// bytes with their file name, the log rows and the statistics.
package translator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/text/language"

	"archivekit/internal/filekind"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/hocr"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/pagexml"
	"archivekit/internal/translate/transport"
	"archivekit/internal/translate/vocab"
	"archivekit/internal/translate/xmlsplice"
)

// Kind is the kind of a document.
type Kind string

// Document kinds.
const (
	// KindAuto sniffs the root element (DetectKind).
	KindAuto Kind = ""
	// KindALTO is an ALTO OCR document.
	KindALTO Kind = "alto"
	// KindPAGE is a PAGE-XML document (internal/translate/pagexml).
	KindPAGE Kind = "page"
	// KindHOCR is an hOCR document (internal/translate/hocr).
	KindHOCR Kind = "hocr"
	// KindMetadata is archival metadata XML (any XML that is none of the
	// above).
	KindMetadata Kind = "metadata"
)

// OutputType is the kind of file a translation of k is, as the run
// metadata's output_counts_by_type counts it: "html" for hOCR, "xml" for
// the others (and for KindAuto, a kind not yet known).
func (k Kind) OutputType() string {
	if k == KindHOCR {
		return "html"
	}
	return "xml"
}

// DetectKind returns the kind of src by its root element, whatever its
// name: KindALTO for <alto>, KindPAGE for a PAGE <PcGts>, KindHOCR for
// HTML with an ocr_page element, otherwise KindMetadata. A document in
// another encoding than UTF-8 is decoded first (xmlsplice.Decode); one
// that cannot be decoded is KindMetadata.
func DetectKind(src []byte) Kind {
	switch {
	case alto.IsALTO(src):
		return KindALTO
	case pagexml.IsPAGE(src):
		return KindPAGE
	case hocr.IsHOCR(src):
		return KindHOCR
	}
	return KindMetadata
}

// DefaultConcurrency is how many ALTO pages are translated at once when the
// backend has no minimum request spacing.
const DefaultConcurrency = 4

// PageConcurrency is the bound on pages processed at once for backend b.
// Request spacing is enforced by the backend's shared transport across all
// pages, so concurrency never breaks it; when a spacing is configured
// (backend.Spaced), more than two pages in flight only queue for their
// slot, so the bound is 2.
func PageConcurrency(b backend.Backend) int {
	if m, ok := b.(backend.Spaced); ok && m.MinInterval() > 0 {
		return 2
	}
	return DefaultConcurrency
}

// Options configures Translate.
type Options struct {
	// Backend does the translating (required).
	Backend backend.Backend
	// Source is an ISO 639-1 code, or "" or "auto" to detect (ALTO once per
	// block, metadata once per field).
	Source string
	// Target is the ISO 639-1 target language; "" means "en".
	Target string
	// Mode is alto.Replace, alto.Append or alto.Alternative; "" means
	// alto.Replace, and alto.Append for PAGE-XML (which keeps the original
	// TextEquivs). alto.Alternative (ALTO: an ALTERNATIVE per String, see
	// alto.Translate) is append mode for PAGE-XML and metadata, whose
	// append modes keep the original too.
	Mode alto.Mode
	// FastAlign skips pass 2 for ALTO (one backend call per page).
	FastAlign bool
	// Kind forces the document kind; KindAuto sniffs it. Forcing KindALTO
	// on a document that is not ALTO is an error.
	Kind Kind
	// Fields are the XPath targets for metadata documents (see
	// metadata.LoadFields); a metadata document without them is an error.
	Fields []*metadata.XPath
	// Vocabulary is applied when not nil: tag-and-protect for backends
	// taking placeholders (backend.Placeholders: mtapi, ct2 nmt families),
	// a glossary for backends implementing backend.Glossary; other
	// backends translate without vocabulary control.
	Vocabulary *vocab.Vocabulary
	// Lemmatizer matches single vocabulary words by lemma (backends whose
	// backend.Protection asks for lemmas: mtapi); nil protects multi-word
	// and surface entries only.
	Lemmatizer vocab.Lemmatizer
	// GlossaryTerms caps the glossary (LLM_MAX_GLOSSARY_TERMS); 0 means
	// vocab.DefaultGlossaryTerms.
	GlossaryTerms int
	// Detector identifies languages; nil means langid.Shared(), loaded on
	// first use only.
	Detector alto.Detector
	// MinConfidence: detections at or below it fall back to Czech; 0 means
	// alto.DefaultMinConfidence (0.2). Order, when set, replaces it.
	MinConfidence float64
	// Order is the source-language order of each unit (alto.LangOrder:
	// detected above a minimum length and confidence, else the element's
	// language attribute, else the document's language, else a default);
	// nil means alto.DefaultLangOrder with MinConfidence.
	// session.Options fills it from the environment (LangOrderFromEnv).
	Order *alto.LangOrder
	// DocumentLang, when not "", is the document's language, given rather
	// than detected: a book's, detected over all its text files in page
	// order (DocumentLanguage), when the book is translated as one
	// document.
	DocumentLang string
	// RetryRounds is how many times the ALTO blocks, metadata fields and
	// PAGE-XML and hOCR lines whose replies the degeneracy guard rejected are tried again at the
	// end of the document before they are left untranslated (one
	// guard.Retry each a round; status retried, unit status rerun, when
	// one passes); 0 turns the end rounds off. session.Options fills it
	// from TRANSLATE_RETRY_ROUNDS (guard.RoundsFromEnv, default 1).
	RetryRounds int
	// Concurrency bounds the ALTO pages translated at once; 0 means
	// PageConcurrency(Backend).
	Concurrency int
	// Usage, when not nil, receives the licence components as they are
	// used, also when Translate then fails.
	Usage *Usage
	// Warn, when not nil, receives each warning as it happens (warnings are
	// also returned in Output.Warnings).
	Warn func(msg string)
	// PageDone, when not nil, is told of each ALTO page done: the pages
	// done and the document's (alto.Options.PageDone).
	PageDone func(done, total int)
	// Next and Prev join a word hyphenated across two ALTO files of a
	// book translated in page order (alto.Options.Next, .Prev; the
	// result in Output.Carried and Output.FromPrev). Other formats
	// ignore them.
	Next []byte
	Prev *alto.Carried
}

// Stats counts what happened to one document.
type Stats struct {
	// Pages, Blocks and Lines: ALTO pages, blocks and lines sent.
	Pages, Blocks, Lines int
	// Units: ALTO blocks, or metadata fields with text. Translated and
	// Skipped split them; AlreadyDone (append mode: the unit already has
	// its target-language copy), InTarget (already in the target language)
	// and Unsupported (a detected language the backend does not offer)
	// split Skipped.
	Units, Translated, Skipped         int
	AlreadyDone, InTarget, Unsupported int
	// Untranslated counts units whose replies the degeneracy guard rejected
	// twice (left as they were; internal/translate/guard).
	Untranslated int
	// Rerun counts units the guard had rejected that an end-of-document
	// round translated (Options.RetryRounds; part of Translated).
	Rerun int
	// Mixed counts metadata fields left as they were because their text is
	// interleaved with child elements, comments or processing instructions
	// (part of Skipped; log status mixed_content).
	Mixed int
	// Calls is the number of backend translate calls.
	Calls int
	// CleanBatches, LineCountMismatches: ALTO batching outcomes.
	CleanBatches, LineCountMismatches int
	// TransportErrors counts backend calls that failed after all retries.
	TransportErrors int
	// ProtectedTerms counts vocabulary occurrences protected (mtapi) or
	// glossary terms sent (LLM backends).
	ProtectedTerms int
	// PlaceholderCalls counts calls of a ct2 nmt family sent with
	// placeholders; PlaceholderFallbacks those whose reply lost one and
	// were translated again without protection.
	PlaceholderCalls, PlaceholderFallbacks int
}

// NeedsAttention reports whether the document's summary counts something a
// person should look at: line-count mismatches, backend calls that failed
// after their retries, or units left untranslated by the degeneracy guard.
func (s Stats) NeedsAttention() bool {
	return s.LineCountMismatches > 0 || s.TransportErrors > 0 || s.Untranslated > 0
}

// Output is one translated document.
type Output struct {
	// Kind is the document kind that was handled.
	Kind Kind
	// Data is the translated document.
	Data []byte
	// Name is the output file name (OutputName).
	Name string
	// Stem is the input name without its format suffix; it fills the log's
	// file column and names the log file (LogName).
	Stem string
	// Log holds the log rows, in document order.
	Log []alto.LogRow
	// Summary is the summary line that ends the document's log (logged as
	// a warning when Stats.NeedsAttention).
	Summary string
	// Stats counts pages, units and backend traffic.
	Stats Stats
	// SourceLang is the explicit source language, or the most frequent
	// detected one ("auto" when nothing was translated).
	SourceLang string
	// Languages maps each source language used to its number of units.
	Languages map[string]int
	// LangSources counts the units whose source language each rule of the
	// order chose (alto.LangSource: detected, element, document, default;
	// given with an explicit source language; script for a unit in a
	// script no supported language is written in).
	LangSources map[string]int
	// Warnings are the non-fatal problems, each naming the file.
	Warnings []string
	// Components are the licence components that counted for this document.
	Components []string
	// Terms is the document's terminology check: the vocabulary entries
	// found in the source of each written unit (metadata field, ALTO page)
	// and how many of their targets the written text holds. Zero without a
	// vocabulary or for a target other than English.
	Terms vocab.TermCheck
	// TermsChecked is true when the terminology was checked.
	TermsChecked bool
	// Encoding is the document's character encoding, in which Data is
	// written too ("UTF-8", "windows-1252", "UTF-16", ...).
	Encoding string
	// Tag is the BCP 47 tag of the output's machine translation
	// (internal/translate/langtag, RFC 6497: "en-t-cs-t0-und"), from the
	// most frequent source language; "" when nothing was translated. PAGE
	// and hOCR write it into the document; for the run metadata and the
	// document record of every kind.
	Tag string
	// Mode is the output mode used: Options.Mode, or DefaultMode of the
	// document's kind.
	Mode alto.Mode
	// Sidecar reports a PAGE 2013 document in append mode: PAGE 2013 has
	// room for one TextEquiv a line, so Data is a copy with the same ids
	// holding the translation (written as replace mode writes), and the
	// input stays the original.
	Sidecar bool
	// Statuses counts the log rows (ALTO lines, metadata fields) per status
	// (backend.Status: ok, retried, untranslated, unsupported_lang,
	// vocabulary, mixed_content).
	Statuses map[string]int
	// Carried is, with Options.Next, the next file's word whose whole
	// word this ALTO document's translation wrote (nil when none);
	// FromPrev is, with Options.Prev, its word when this document's
	// String holding it was emptied.
	Carried  *alto.Carried
	FromPrev string
	// NoText reports a page document (ALTO, PAGE, hOCR) without a unit of
	// text, a blank page: Data is the input as it was, byte for byte, so
	// that a book's translated pages stay complete. It is not a failure of
	// the document; a run in which every document was blank translated
	// nothing (spec 4.1: exit 3).
	NoText bool
}

// Translate translates one document named name (its file name, used for the
// output name, the log and messages). On error no output is returned, but
// the components used so far are in opt.Usage.
func Translate(ctx context.Context, in []byte, name string, opt Options) (*Output, error) {
	opt, err := opt.withDefaults(name)
	if err != nil {
		return nil, err
	}
	if k := filekind.Of(in); k != "" {
		return nil, &NotXMLError{Name: name, Type: k}
	}
	// Documents in another encoding are translated as UTF-8 text and
	// written back in their own encoding.
	orig := in
	in, enc, err := xmlsplice.Decode(in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	kind, err := documentKind(in, name, opt)
	if err != nil {
		return nil, err
	}
	if opt.Mode == "" {
		opt.Mode = DefaultMode(kind)
	}
	d := newDocument(name, opt)
	out := &Output{Kind: kind, Name: OutputName(name, opt.Target), Stem: d.stem, SourceLang: opt.Source, Mode: opt.Mode}
	switch kind {
	case KindALTO:
		err = d.alto(ctx, in, out)
	case KindPAGE:
		err = d.page(ctx, in, out)
	case KindHOCR:
		err = d.hocr(ctx, in, out)
	case KindMetadata:
		err = d.metadata(ctx, in, out)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d.finish(out)
	out.Encoding = enc.Name
	if out.Stats.Units == 0 && kind != KindMetadata {
		// A blank page: nothing to translate, nothing changed. (A record
		// none of whose fields matched stays a failure: its field list is
		// likely not for its format.)
		out.NoText, out.Data = true, orig
		out.Summary = name + ": no text to translate (a page without text): written as it was"
		return out, nil
	}
	if out.Stats.Translated == 0 && out.Stats.AlreadyDone == 0 {
		return nil, &NothingTranslatedError{Name: name, Stats: out.Stats, Target: opt.Target, Warnings: out.Warnings, Withheld: out.LangSources[string(alto.FromScript)], Scripts: scriptTags(out.Log)}
	}
	if out.Data, err = enc.Encode(out.Data); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// DefaultMode is the output mode a document of kind gets when none is
// asked for: alto.Append for PAGE-XML (a TextEquiv added after the
// original's), alto.Replace for the others. hOCR is always written as a
// parallel document, whatever the mode.
func DefaultMode(kind Kind) alto.Mode {
	if kind == KindPAGE {
		return alto.Append
	}
	return alto.Replace
}

// ModeChoices names the output modes, for messages.
const ModeChoices = "replace, append or alternative"

// ValidMode reports whether m names an output mode: replace, append or
// alternative (the command line's --output-mode, translate-api's
// output_mode, OUTPUT_MODE of both).
func ValidMode(m string) bool {
	switch alto.Mode(m) {
	case alto.Replace, alto.Append, alto.Alternative:
		return true
	}
	return false
}

// ModeByFormat is the output mode each document kind gets when m is asked
// for ("" : none, each kind its DefaultMode), keyed by kind, for the run
// metadata (output_mode_by_format): alternative is ALTO's and metadata's
// own (metadata's sibling labelled with the machine-translation tag, the
// original untouched), PAGE-XML's append (keeping), hOCR is always a
// parallel document.
func ModeByFormat(m alto.Mode) map[string]string {
	out := map[string]string{}
	for _, k := range []Kind{KindALTO, KindPAGE, KindMetadata} {
		km := m
		switch {
		case m == "":
			km = DefaultMode(k)
		case k == KindPAGE:
			km = keeping(m)
		}
		out[string(k)] = string(km)
	}
	out[string(KindHOCR)] = "parallel"
	return out
}

// withDefaults checks opt and fills its defaults (target en; the mode's
// depends on the document kind, see Translate).
func (opt Options) withDefaults(name string) (Options, error) {
	if opt.Backend == nil {
		return opt, fmt.Errorf("%s: no translation backend", name)
	}
	if opt.Target == "" {
		opt.Target = "en"
	}
	if opt.Mode != "" && !ValidMode(string(opt.Mode)) {
		return opt, fmt.Errorf("%s: unknown output mode %q (want %s)", name, opt.Mode, ModeChoices)
	}
	return opt, nil
}

// documentKind is the kind of the decoded document in: opt.Kind, sniffed
// when KindAuto. A metadata document without XPath targets is an error
// (its well-formedness error first, when it has one).
func documentKind(in []byte, name string, opt Options) (Kind, error) {
	kind := opt.Kind
	switch kind {
	case KindAuto:
		kind = DetectKind(in)
	case KindALTO:
		if !alto.IsALTO(in) {
			return kind, fmt.Errorf("%s: not an ALTO document (root element is not <alto>)", name)
		}
	case KindPAGE:
		if !pagexml.IsPAGE(in) {
			return kind, fmt.Errorf("%s: not a PAGE-XML document (root element is not a PAGE <PcGts>)", name)
		}
	case KindHOCR:
		if !hocr.IsHOCR(in) {
			return kind, fmt.Errorf("%s: not an hOCR document (no ocr_page element)", name)
		}
	case KindMetadata:
	default:
		return kind, fmt.Errorf("%s: unknown document kind %q", name, kind)
	}
	if kind == KindMetadata && len(opt.Fields) == 0 {
		if err := CheckWellFormed(in); err != nil {
			return kind, fmt.Errorf("%s: %w", name, err)
		}
		return kind, fmt.Errorf("%s: metadata document but no XPath targets (field list)", name)
	}
	return kind, nil
}

// document is one Translate call in progress: the backend as the
// pipelines see it, the detector, and the components and warnings
// collected.
type document struct {
	name, stem string
	opt        Options
	be         *wrapped
	det        alto.Detector
	used       *Usage

	wmu      sync.Mutex
	warnings []string
	// rejected is the guard's reason for the first unit left
	// untranslated (batch.Counts.Rejected), for the warning that counts them.
	rejected string
}

// newDocument sets up the translation of the document name: the licence
// components of the vocabulary, the wrapped backend with its vocabulary
// handling, and the language detector when the source is detected.
func newDocument(name string, opt Options) *document {
	d := &document{name: name, stem: Stem(name), opt: opt, used: &Usage{}}
	d.record(VocabularyComponents(opt.Vocabulary)...)
	d.be = &wrapped{inner: opt.Backend, record: d.record, vocab: opt.Vocabulary, warn: d.warnf}
	d.applyVocabulary()
	if opt.Source == "" || opt.Source == "auto" {
		det := opt.Detector
		if det == nil {
			det = langid.Shared()
		}
		d.det = detector{d: det, record: d.record}
	}
	return d
}

// record records licence components, in the document's and in opt.Usage.
func (d *document) record(names ...string) {
	d.used.Add(names...)
	d.opt.Usage.Add(names...)
}

// warn records a warning (it names the file itself) and passes it to
// opt.Warn.
func (d *document) warn(msg string) {
	d.wmu.Lock()
	d.warnings = append(d.warnings, msg)
	d.wmu.Unlock()
	if d.opt.Warn != nil {
		d.opt.Warn(msg)
	}
}

// warnf is warn with the file name put before msg.
func (d *document) warnf(msg string) { d.warn(d.name + ": " + msg) }

// applyVocabulary sets how the backend applies the vocabulary: short
// fields filled from it (target English), and tag-and-protect or a
// glossary according to the backend's capabilities.
func (d *document) applyVocabulary() {
	opt, be := d.opt, d.be
	if opt.Vocabulary == nil || opt.Vocabulary.Len() == 0 {
		return
	}
	if opt.Target == "en" {
		// Short fields that are vocabulary entries are filled from it
		// (lemma matching only where the lemmatiser is configured: mtapi).
		be.fill, be.fillLem = opt.Vocabulary, opt.Lemmatizer
	}
	prot, isPlaceholders := placeholders(opt.Backend)
	switch g, isGlossary := opt.Backend.(backend.Glossary); {
	case isPlaceholders && prot.Lemmas:
		be.protector = &vocab.Protector{Vocab: opt.Vocabulary, Lemmatizer: opt.Lemmatizer, Warn: d.warnf}
	case isPlaceholders:
		// A backend taking placeholders without lemmas (ct2 nmt
		// families): surface matches only; with Fallback, a reply
		// that lost a placeholder is redone without protection.
		be.protector = &vocab.Protector{Vocab: opt.Vocabulary, Warn: d.warnf}
		be.fallback = prot.Fallback
	case isGlossary:
		be.glossary = g
		be.maxTerms = opt.GlossaryTerms
		if be.maxTerms == 0 {
			be.maxTerms = vocab.DefaultGlossaryTerms
		}
	default:
		d.warn(fmt.Sprintf("%s: backend %s takes no vocabulary; translating without it", d.name, opt.Backend.Name()))
	}
}

// alto translates an ALTO document into out.
func (d *document) alto(ctx context.Context, in []byte, out *Output) error {
	opt, be := d.opt, d.be
	conc := opt.Concurrency
	if conc <= 0 {
		conc = PageConcurrency(opt.Backend)
	}
	res, err := alto.Translate(ctx, in, alto.Options{
		Backend: be, Source: opt.Source, Target: opt.Target, Detector: d.det,
		MinConfidence: opt.MinConfidence, Order: opt.Order, DocumentLang: opt.DocumentLang, Mode: opt.Mode, FastAlign: opt.FastAlign,
		File: d.stem, Concurrency: conc, RetryRounds: opt.RetryRounds, Next: opt.Next, Prev: opt.Prev, PageDone: opt.PageDone,
	})
	if err != nil {
		return err
	}
	out.Data, out.Log, out.Languages = res.Output, res.Log, res.Languages
	out.Carried, out.FromPrev = res.Carried, res.FromPrev
	out.LangSources = sourceCounts(res.LangSources)
	s := res.Stats
	d.rejected = s.Rejected
	out.Stats = Stats{Pages: s.Pages, Blocks: s.Blocks, Lines: s.Lines, Units: s.Units, Translated: s.Translated,
		Skipped: s.Units - s.Translated, AlreadyDone: s.AlreadyDone, InTarget: s.InTarget, Unsupported: s.Unsupported,
		Untranslated: s.Untranslated, Rerun: s.Rerun,
		Calls: s.Calls, CleanBatches: s.CleanBatches, LineCountMismatches: s.LineCountMismatches,
		TransportErrors: s.TransportErrors + int(be.transportErrors.Load())}
	for _, w := range res.Warnings {
		d.warn(w)
	}
	out.Summary = s.Summary(d.stem)
	if be.transportErrors.Load() > 0 {
		out.Summary += fmt.Sprintf("; %d backend calls failed after retries", be.transportErrors.Load())
	}
	return nil
}

// metadata translates a metadata document into out.
func (d *document) metadata(ctx context.Context, in []byte, out *Output) error {
	opt, be := d.opt, d.be
	res, err := metadata.Translate(ctx, in, metadata.Options{
		Backend: be, Source: opt.Source, Target: opt.Target, Detector: d.det,
		MinConfidence: opt.MinConfidence, Order: opt.Order, DocumentLang: opt.DocumentLang, Mode: opt.Mode, Fields: opt.Fields, File: d.stem,
		RetryRounds: opt.RetryRounds,
	})
	if err != nil {
		return err
	}
	out.Data, out.Log, out.Languages = res.Output, res.Log, res.Languages
	out.LangSources = sourceCounts(res.LangSources)
	out.Stats = Stats{Units: res.Units, Translated: res.Translated, Skipped: res.Skipped,
		AlreadyDone: res.AlreadyDone, InTarget: res.InTarget, Unsupported: res.Unsupported,
		Untranslated: res.Untranslated, Rerun: res.Rerun, Mixed: res.Mixed, Calls: res.Calls, TransportErrors: int(be.transportErrors.Load())}
	for _, w := range res.Warnings {
		d.warn(w)
	}
	out.Summary = fmt.Sprintf("%s: field summary: %d fields, %d translated, %d skipped, %d backend calls, %d transport errors",
		d.stem, res.Units, res.Translated, res.Skipped, res.Calls, be.transportErrors.Load())
	return nil
}

// finish completes out once the pipeline ran: vocabulary counts, the
// statuses of the log rows, the terminology check, the characters of the
// translation that XML does not allow, the source language, the warnings
// and the components.
func (d *document) finish(out *Output) {
	be := d.be
	out.Stats.ProtectedTerms = int(be.protected.Load())
	out.Stats.PlaceholderCalls, out.Stats.PlaceholderFallbacks = int(be.placeholderCalls.Load()), int(be.placeholderFallbacks.Load())
	if _, tag, err := langtag.ForSources(d.opt.Target, out.Languages); err == nil {
		out.Tag = tag
	}
	out.Statuses = map[string]int{}
	for _, r := range out.Log {
		st := r.Status
		if st == "" {
			st = backend.OK
		}
		out.Statuses[string(st)]++
	}
	// The terms are expected only of a vocabulary that was applied: a
	// Czech vocabulary on a German document is skipped (with a warning),
	// and its terms are not missing from the translation.
	if be.fill != nil && be.applied.Load() > 0 {
		out.Terms, out.TermsChecked = checkTerms(d.opt.Vocabulary, out.Log), true
		if len(out.Terms.Missed) > 0 {
			d.warn(fmt.Sprintf("%s: terminology: %d of %d expected vocabulary terms missing from the translation (%s)",
				d.name, out.Terms.Expected-out.Terms.Hit, out.Terms.Expected, strings.Join(firstN(out.Terms.Missed, 5), "; ")))
		}
	}
	// Once for the document, whatever the number of its units.
	if msg := notAllowedWarning(out.Log); msg != "" {
		d.warnf(msg)
	}
	if n := out.Statuses[string(backend.Untranslated)]; n > 0 {
		why := ""
		if d.rejected != "" {
			why = "; the first one's last reply: " + d.rejected
		}
		d.warn(fmt.Sprintf("%s: %d segments left untranslated, their text kept as it was (status untranslated in the log): the MT service's replies did not look like translations of them (too long or short, copied or repeating), twice and again in %d end-of-document rounds%s; "+
			"for very short segments (page numbers, initials) this is expected, otherwise check what the MT service answers them", d.name, n, d.opt.RetryRounds, why))
	}
	if out.SourceLang == "" || out.SourceLang == "auto" {
		out.SourceLang = mostFrequent(out.Languages)
	}
	d.wmu.Lock()
	out.Warnings = d.warnings
	d.wmu.Unlock()
	out.Components = d.used.Components()
}

// ErrNotXML is matched (errors.Is) by a *NotXMLError.
var ErrNotXML = errors.New("not an XML document")

// NotXMLError is returned by Translate for a file that is, by its first
// bytes, a page image or a PDF (filekind.Of), not a document to translate
// (it failed as malformed XML, "invalid character entity").
type NotXMLError struct {
	Name string
	Type string // its media type, filekind's
}

func (e *NotXMLError) Error() string {
	return fmt.Sprintf("%s is %s by its content, a page image or PDF, not an XML document: translate takes ALTO, PAGE-XML, hOCR and metadata records (pageclass classifies page images)", e.Name, e.Type)
}

func (e *NotXMLError) Is(target error) bool { return target == ErrNotXML }

// ErrNothingTranslated is matched (errors.Is) by a *NothingTranslatedError.
var ErrNothingTranslated = errors.New("nothing translated")

// NothingTranslatedError is returned by Translate for a document in which
// no unit was translated and none already had its translation (append
// mode): no target text matched, every unit was in the target language or
// in a language the backend does not offer. Spec 4.1 counts such a run as
// failed; a document whose units all carry their translation already (a
// repeated append run) is a success, and so is a page without text
// (Output.NoText).
type NothingTranslatedError struct {
	Name     string
	Target   string
	Stats    Stats
	Warnings []string
	// Withheld counts the units the script check withheld (their
	// language source alto.FromScript; part of Stats.Unsupported): their
	// language could not be told, so they were not sent. Scripts are
	// their tags ("und-Hebr", "und-Cyrl": langid.ForeignTag), sorted.
	Withheld int
	Scripts  []string
}

func (e *NothingTranslatedError) Error() string {
	s := e.Stats
	var why string
	switch {
	case s.Units == 0:
		why = "none of the field list's XPath targets matched an element with text (is this the metadata format the field list is for?)"
	default:
		var parts []string
		if s.InTarget > 0 {
			parts = append(parts, fmt.Sprintf("%d already in the target language %s", s.InTarget, e.Target))
		}
		if e.Withheld > 0 {
			parts = append(parts, withheldReason(e.Scripts, e.Withheld))
		}
		if n := s.Unsupported - e.Withheld; n > 0 {
			parts = append(parts, fmt.Sprintf("%d in languages the backend does not offer", n))
		}
		if s.Untranslated > 0 {
			parts = append(parts, fmt.Sprintf("%d left untranslated after replies the degeneracy guard rejected twice", s.Untranslated))
		}
		if s.Mixed > 0 {
			parts = append(parts, fmt.Sprintf("%d with child elements, comments or processing instructions between their text (mixed content, not translated)", s.Mixed))
		}
		why = fmt.Sprintf("of its %d units, %s", s.Units, strings.Join(parts, ", "))
	}
	return fmt.Sprintf("%s: nothing translated: %s", e.Name, why)
}

func (e *NothingTranslatedError) Is(target error) bool { return target == ErrNothingTranslated }

// withheldReason says why n units in the scripts of tags (langid.ScriptTag)
// were not sent, and how to send them: "7 withheld by the script check
// because their language could not be told (Hebrew script, und-Hebr):
// give it as source_lang (--source_lang he, say) or as an element
// language attribute".
func withheldReason(tags []string, n int) string {
	var scripts, examples []string
	for _, tag := range tags {
		name, _ := langid.ScriptOfTag(tag)
		if name == "" {
			name = "an uncoded"
		}
		scripts = append(scripts, fmt.Sprintf("%s script, %s", langid.ScriptName(name), tag))
		if b, conf := language.Make(tag).Base(); conf != language.No && b.String() != "und" {
			examples = append(examples, "--source_lang "+b.String())
		}
	}
	how := "source_lang"
	if len(examples) > 0 {
		how += " (" + strings.Join(examples, ", ") + ", say)"
	}
	return fmt.Sprintf("%d withheld by the script check because their language could not be told (%s): give it as %s or as an element language attribute (xml:lang, LANG, primaryLanguage), if the translation service offers that language",
		n, strings.Join(scripts, "; "), how)
}

// CheckWellFormed parses src and returns its well-formedness error (an
// *xmlsplice.SyntaxError naming the line), or nil.
func CheckWellFormed(src []byte) error {
	text, _, err := xmlsplice.Decode(src)
	if err == nil {
		_, err = xmlsplice.Parse(text)
	}
	return err
}

func mostFrequent(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best, n := "auto", 0
	for _, k := range keys {
		if m[k] > n {
			best, n = k, m[k]
		}
	}
	return best
}

// Stem is name without its directory and format suffix: ".alto.xml"
// (any case) for ALTO file names, otherwise the last extension.
func Stem(name string) string {
	base := filepath.Base(name)
	if len(base) > len(".alto.xml") && strings.EqualFold(base[len(base)-len(".alto.xml"):], ".alto.xml") {
		return base[:len(base)-len(".alto.xml")]
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// OutputName is the translated document's file name (spec 2.1):
// "<stem>_<lang><suffix>", so "doc.alto.xml" gives "doc_en.alto.xml" and
// "C-9100725A.xml" gives "C-9100725A_en.xml".
func OutputName(name, lang string) string {
	base := filepath.Base(name)
	stem := Stem(base)
	return stem + "_" + lang + base[len(stem):]
}

// LogName is the translation log's file name (spec 2.2):
// "<stem>_log.csv", as in "MTX201501307_anon_log.csv" for
// "MTX201501307_anon.alto.xml".
func LogName(name string) string { return Stem(name) + "_log.csv" }

// detector records the language-identification component when it runs.
type detector struct {
	d      alto.Detector
	record func(...string)
}

func (d detector) Detect(text string) (string, float64) {
	d.record(ComponentLangID)
	return d.d.Detect(text)
}

// Scores passes every language's confidence through when the detector
// gives them (alto.Scorer), so the page and document priors apply.
func (d detector) Scores(text string) []langid.Score {
	d.record(ComponentLangID)
	if s, ok := d.d.(alto.Scorer); ok {
		return s.Scores(text)
	}
	lang, conf := d.d.Detect(text)
	return []langid.Score{{Lang: lang, Value: conf}}
}

// wrapped is the backend as the pipelines see it: it records the backend's
// licence components on first use, applies the vocabulary and counts
// transport failures.
type wrapped struct {
	inner     backend.Backend
	record    func(...string)
	protector *vocab.Protector
	glossary  backend.Glossary
	vocab     *vocab.Vocabulary
	maxTerms  int

	warn       func(string)
	warnedLang sync.Map

	// fallback: a reply that lost a placeholder is redone unprotected
	// (ct2 nmt families).
	fallback                               bool
	placeholderCalls, placeholderFallbacks atomic.Int64

	fill    *vocab.Vocabulary // answers short vocabulary entries (Fill)
	fillLem vocab.Lemmatizer

	protected       atomic.Int64
	transportErrors atomic.Int64
	// applied counts the texts the vocabulary was applied to (its
	// language was theirs): the terminology check expects its terms only
	// then.
	applied atomic.Int64
}

// Fill implements backend.Filler: a text of one or two words that is a
// vocabulary entry (by lemma when a lemmatiser is configured) is answered
// from the vocabulary, without a backend call.
func (w *wrapped) Fill(ctx context.Context, text, src, tgt string) (string, bool) {
	if w.fill == nil || tgt != "en" || !w.vocabApplies(src) {
		return "", false
	}
	var lem vocab.Lemmatizer
	if p, ok := placeholders(w.inner); w.fillLem != nil && ok && p.Lemmas {
		lem = w.fillLem
	}
	out, lemmasUsed, ok := w.fill.Fill(ctx, text, src, lem)
	if lemmasUsed {
		w.record(ComponentLemmatizerEngine, ComponentLemmatizerModels)
	}
	return out, ok
}

// Prepare implements backend.Preparer: when the lemmatiser keeps its
// answers (lemmatizer.Prefetcher, the session's lemmatizer.Cache), the
// lines that Fill and Protect will ask it about for segments are
// lemmatised in one go, so each of those calls is answered from memory.
// A failure is met again, and warned about, by the call that needs the
// lemmas (the vocabulary's single words are then not protected, as
// before).
func (w *wrapped) Prepare(ctx context.Context, segments []string, src, tgt string) {
	if w.vocab == nil || (w.vocab.Lang != "" && w.vocab.Lang != src) {
		return
	}
	var fillLem, protLem vocab.Lemmatizer
	if p, ok := placeholders(w.inner); ok && p.Lemmas && w.fill != nil && tgt == "en" {
		fillLem = w.fillLem
	}
	if w.protector != nil {
		protLem = w.protector.Lemmatizer
	}
	lem := protLem // both are Options.Lemmatizer when set
	if lem == nil {
		lem = fillLem
	}
	pf, ok := lem.(lemmatizer.Prefetcher)
	if !ok {
		return
	}
	if lines := w.vocab.LemmaLines(segments, fillLem != nil, protLem != nil); len(lines) > 0 {
		_ = pf.Prefetch(ctx, lines, src)
	}
}

func (w *wrapped) Name() string { return w.inner.Name() }

// Close closes the wrapped backend.
func (w *wrapped) Close() error { return w.inner.Close() }

// vocabApplies reports whether the vocabulary's source language is src;
// when it is not, the vocabulary is skipped with one warning per document
// and language.
func (w *wrapped) vocabApplies(src string) bool {
	lang := w.vocab.Lang
	if lang == "" || lang == src {
		w.applied.Add(1)
		return true
	}
	if _, dup := w.warnedLang.LoadOrStore(src, true); !dup && w.warn != nil {
		w.warn(fmt.Sprintf("vocabulary %s is for %s source text; text in %s is translated without it", w.vocab.Path, lang, src))
	}
	return false
}

// Supports refuses the tag of a script no supported language is written
// in (langid.ForeignTag: "und-Arab") with the reason naming the script,
// whatever the backend would say; other pairs are the backend's to judge.
func (w *wrapped) Supports(ctx context.Context, src, tgt string) error {
	if reason, ok := langid.ForeignTag(src); ok {
		return errors.New(reason)
	}
	return w.inner.Supports(ctx, src, tgt)
}

func (w *wrapped) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	w.record(BackendComponents(w.inner.Name(), ct2Family(w.inner))...)
	var (
		out string
		err error
	)
	switch {
	case (w.protector != nil || w.glossary != nil) && !w.vocabApplies(src):
		out, err = w.inner.Translate(ctx, text, src, tgt)
	case w.protector != nil:
		var p *vocab.Protected
		if p, err = w.protector.Protect(ctx, text, src); err != nil {
			return "", err
		}
		if p.LemmasUsed {
			w.record(ComponentLemmatizerEngine, ComponentLemmatizerModels)
		}
		if out, err = w.inner.Translate(ctx, p.Text, src, tgt); err == nil && w.fallback && p.Count() > 0 {
			w.placeholderCalls.Add(1)
			if p.Lost(out) > 0 {
				w.placeholderFallbacks.Add(1)
				p = &vocab.Protected{Text: text}
				out, err = w.inner.Translate(ctx, text, src, tgt)
			}
		}
		if err == nil {
			out = p.Restore(out)
			w.protected.Add(int64(p.Count()))
		} else if r := guard.AsRejection(err); r != nil && r.Output != "" {
			// The accepted lines of a rejected batch are used: restore them.
			r.Output = p.Restore(r.Output)
		}
	case w.glossary != nil:
		terms := w.vocab.Glossary(text, w.maxTerms)
		w.protected.Add(int64(len(terms)))
		out, err = w.glossary.TranslateWithGlossary(ctx, text, src, tgt, terms)
	default:
		out, err = w.inner.Translate(ctx, text, src, tgt)
	}
	if err != nil && transport.IsTransportError(err) {
		w.transportErrors.Add(1)
	}
	return out, err
}

// Score implements backend.Scorer for backends that score (ct2).
func (w *wrapped) Score(segment string) (float64, bool) {
	if s, ok := w.inner.(backend.Scorer); ok {
		return s.Score(segment)
	}
	return 0, false
}

// Deterministic implements backend.Deterministic: true when the inner
// backend is and no glossary is sent (a retry without the glossary can
// differ).
func (w *wrapped) Deterministic() bool {
	d, ok := w.inner.(backend.Deterministic)
	return ok && d.Deterministic() && w.glossary == nil
}

// Retry is the second attempt after a reply the guard rejected: backends
// that take a glossary retry without it (spec: LLM backends), the others
// repeat the call.
func (w *wrapped) Retry(ctx context.Context, text, src, tgt string) (string, error) {
	if w.glossary == nil {
		return w.Translate(ctx, text, src, tgt)
	}
	out, err := w.inner.Translate(ctx, text, src, tgt)
	if err != nil && transport.IsTransportError(err) {
		w.transportErrors.Add(1)
	}
	return out, err
}

func ct2Family(b backend.Backend) string {
	if f, ok := b.(backend.Family); ok {
		return f.Family()
	}
	return ""
}

// placeholders is b's backend.Placeholders answer; ok false when b takes
// no placeholders.
func placeholders(b backend.Backend) (backend.Protection, bool) {
	if p, ok := b.(backend.Placeholders); ok {
		return p.Placeholders()
	}
	return backend.Protection{}, false
}

// checkTerms checks the terminology of the written rows: each metadata
// field on its own, ALTO lines joined per page (a term may be split across
// lines by the alignment). Only rows in the vocabulary's source language
// are checked (all when it names none, or a row none): a unit in another
// language of the document was translated without the vocabulary
// (vocabApplies), so its terms are not expected.
func checkTerms(v *vocab.Vocabulary, rows []alto.LogRow) vocab.TermCheck {
	var total vocab.TermCheck
	add := func(src, out string) {
		c := v.CheckTerms(src, out)
		total.Expected += c.Expected
		total.Hit += c.Hit
		total.Missed = append(total.Missed, c.Missed...)
	}
	var src, out []string
	page := -1
	flush := func() {
		if len(src) > 0 {
			add(strings.Join(src, " "), strings.Join(out, " "))
		}
		src, out = nil, nil
	}
	for _, r := range rows {
		if !written(r.Status) {
			continue
		}
		if v.Lang != "" && r.Lang != "" && r.Lang != v.Lang {
			continue
		}
		if r.Page == 0 {
			add(r.Source, r.Target)
			continue
		}
		if r.Page != page {
			flush()
			page = r.Page
		}
		src, out = append(src, r.Source), append(out, r.Target)
	}
	flush()
	return total
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(append([]string(nil), s[:n]...), "...")
	}
	return s
}

// NormalizeLang lower-cases a language code and maps the ISO 639-3 codes
// of spec 10.2 to ISO 639-1 ("ces" gives "cs", "deu" "de"); any other code
// is returned lower-cased.
func NormalizeLang(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if len(s) == 3 {
		if two, ok := langid.ToISO6391(s); ok {
			return two
		}
	}
	return s
}

// ValidLang reports whether s is a language code as the CLI and the service
// accept it: two or three lower-case ASCII letters (ISO 639-1, or 639-3),
// or "auto" where autoOK (the source language). Anything else (a path such
// as "en/../x", upper case, digits) is refused before it reaches a file
// name or a backend URL.
func ValidLang(s string, autoOK bool) bool {
	if s == "auto" {
		return autoOK
	}
	if len(s) < 2 || len(s) > 3 {
		return false
	}
	for _, r := range s {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// keeping is the mode for PAGE-XML, which has no Alternative mode:
// alto.Append for it (PAGE-XML's append keeps the original beside the
// translation, removably), m otherwise.
func keeping(m alto.Mode) alto.Mode {
	if m == alto.Alternative {
		return alto.Append
	}
	return m
}

// sourceCounts turns a format's counts per rule of the language order into
// Output.LangSources.
// scriptTags are the languages, sorted, of the rows of log whose language
// the script check chose (alto.FromScript: "und-Hebr").
func scriptTags(log []alto.LogRow) []string {
	seen := map[string]bool{}
	var tags []string
	for _, r := range log {
		if r.LangSource == alto.FromScript && !seen[r.Lang] {
			seen[r.Lang] = true
			tags = append(tags, r.Lang)
		}
	}
	sort.Strings(tags)
	return tags
}

func sourceCounts(m map[alto.LangSource]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, n := range m {
		out[string(k)] += n
	}
	return out
}
