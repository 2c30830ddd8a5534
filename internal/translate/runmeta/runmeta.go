// Package runmeta is the translator's run-metadata document: the header,
// configuration and trail that both tools write alike (internal/paradata)
// around the translator's own statistics: backend calls, units translated
// and skipped, source languages, segment statuses, the terminology check
// and one record a book. The translate command writes it for a run
// ("{stamp}_translator.json"); translate-api writes the same document for
// a job, from the statistics each item of the job recorded (Item).
//
// A Run is the document of one run in progress (internal/paradata's
// Writer): Done counts a translated document, and View, called at every
// write, derives the licence from the components used so far, the
// protected-term counts and the terminology totals.
package runmeta

import (
	"maps"
	"slices"
	"time"

	"archivekit/internal/licence"
	"archivekit/internal/paradata"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/translator"
	"archivekit/internal/utf8name"
)

// Statistics are the translator's: the counts both tools keep, then its
// own.
type Statistics struct {
	paradata.Statistics
	BackendCalls        int            `json:"backend_calls"`
	TransportErrors     int            `json:"transport_errors"`
	LineCountMismatches int            `json:"line_count_mismatches"`
	Pages               int            `json:"pages"`
	UnitsTranslated     int            `json:"units_translated"`
	UnitsSkipped        int            `json:"units_skipped"`
	Languages           map[string]int `json:"source_languages"`
	// DocumentKinds counts the documents the output folder holds
	// translations of, by kind as read from their content: alto, page,
	// hocr, metadata ("unrecorded" for those kept from a ledger written
	// before kinds were recorded). config.mode says only whether files
	// named .alto.xml were taken as ALTO.
	DocumentKinds map[string]int `json:"document_kinds"`
	// DocumentsWithoutText counts the page documents (ALTO, PAGE, hOCR)
	// that held no text, blank pages, written as they were
	// (translator.Output.NoText); they count as processed.
	DocumentsWithoutText int `json:"documents_without_text"`
	// WithoutText names them (folder/stem, as the log files are named),
	// in the order they were done: which pages were blank, or had OCR
	// that found nothing.
	WithoutText []string `json:"documents_without_text_list,omitempty"`
	// LanguageTags is the machine-translation tag (RFC 6497,
	// "en-t-cs-t0-und") of the text translated from each source language.
	LanguageTags map[string]string `json:"language_tags"`
	// LangSources counts the units whose source language each rule of the
	// source-language order chose: detected, element, document, default
	// (given with an explicit source language; script for units in a
	// script no supported language is written in).
	LangSources map[string]int `json:"lang_sources"`
	// SegmentStatus counts log rows (ALTO lines, metadata fields) per
	// status: ok, retried, untranslated, unsupported_lang, vocabulary,
	// mixed_content.
	SegmentStatus map[string]int `json:"segment_status"`
	// PlaceholderCalls and PlaceholderFallbacks: ct2 nmt calls sent with
	// vocabulary placeholders, and those redone unprotected because the
	// model lost a placeholder.
	PlaceholderCalls     int `json:"placeholder_calls"`
	PlaceholderFallbacks int `json:"placeholder_fallbacks"`
	// Terminology is the vocabulary check per document and for the run;
	// null without a vocabulary (or for a target other than English).
	Terminology *Terminology `json:"terminology"`
	// Books holds one record per book of the run, its text files taken
	// as one document (Book); absent without books.
	Books []*Book `json:"books,omitempty"`
}

// NoText counts doc, a page document without text, in
// DocumentsWithoutText and WithoutText (taken back with undo).
func (st *Statistics) NoText(doc string, undo bool) {
	if undo {
		st.DocumentsWithoutText--
		if i := slices.Index(st.WithoutText, doc); i >= 0 {
			st.WithoutText = slices.Delete(st.WithoutText, i, i+1)
		}
		return
	}
	st.DocumentsWithoutText++
	st.WithoutText = append(st.WithoutText, doc)
}

// CountKind counts a document of kind k in DocumentKinds (by -1 with
// undo).
func (st *Statistics) CountKind(k translator.Kind, undo ...bool) {
	name := string(k)
	if name == "" {
		name = "unrecorded"
	}
	if st.DocumentKinds == nil {
		st.DocumentKinds = map[string]int{}
	}
	if len(undo) > 0 && undo[0] {
		if st.DocumentKinds[name]--; st.DocumentKinds[name] <= 0 {
			delete(st.DocumentKinds, name)
		}
		return
	}
	st.DocumentKinds[name]++
}

// NewStatistics is statistics with nothing counted yet (empty maps, not
// null, in the JSON).
func NewStatistics() Statistics {
	return Statistics{Statistics: paradata.Statistics{OutputCountsByType: map[string]int{}},
		Languages: map[string]int{}, SegmentStatus: map[string]int{}, LangSources: map[string]int{}, DocumentKinds: map[string]int{}}
}

// TermRate is expected vocabulary terms, those found in the translation,
// and their ratio (null when none was expected).
type TermRate struct {
	Expected int      `json:"expected"`
	Hit      int      `json:"hit"`
	HitRate  *float64 `json:"hit_rate"`
}

// NewTermRate is the rate of hit terms of expected, rounded to four
// decimals.
func NewTermRate(expected, hit int) TermRate {
	t := TermRate{Expected: expected, Hit: hit}
	if expected > 0 {
		r := float64(int(float64(hit)/float64(expected)*10000+0.5)) / 10000
		t.HitRate = &r
	}
	return t
}

// Terminology is the vocabulary check of the run (its totals) and of each
// document.
type Terminology struct {
	TermRate
	Documents map[string]TermRate `json:"documents"`
}

// NewTerminology is the terminology of documents, its totals summed over
// them.
func NewTerminology(documents map[string]TermRate) *Terminology {
	exp, hit := 0, 0
	for _, t := range documents {
		exp, hit = exp+t.Expected, hit+t.Hit
	}
	return &Terminology{TermRate: NewTermRate(exp, hit), Documents: documents}
}

// Doc is the translator's run metadata: internal/paradata's header, then
// the translator's own configuration and statistics, then the shared
// trail (skipped files, outputs, warnings, interrupted runs). The
// unexported fields are what the written licence, protected-term counts
// and terminology are derived from (View).
type Doc struct {
	paradata.Header
	Config     map[string]any `json:"config"`
	Statistics Statistics     `json:"statistics"`
	paradata.Trail

	components *licence.Components
	usage      *translator.Usage
	protected  map[string]int
	terms      map[string]TermRate // terminology per document
}

// Parts hands the shared parts to the run-metadata writer.
func (d *Doc) Parts() paradata.Parts {
	return paradata.Parts{Header: &d.Header, Config: d.Config, Statistics: &d.Statistics.Statistics, Trail: &d.Trail}
}

// View is the document as written: the licence from the components used so
// far, the protected terms and the terminology totals, in a copy that
// shares no map or list with d, every name in it that is not UTF-8 written
// with \xNN for each stray byte (utf8name.Escape; names.go).
func (d *Doc) View() *Doc {
	v := *d
	res := translator.Resolve(d.components, d.usage.Components())
	v.SetLicence(res)
	cfg := EscapeConfig(d.Config)
	total := 0
	for _, n := range d.protected {
		total += n
	}
	cfg["vocabulary_protected_terms"] = escapeKeys(d.protected, func(a, b int) int { return a + b })
	cfg["vocabulary_protected_terms_total"] = total
	v.Config = cfg
	st := d.Statistics
	st.OutputCountsByType = maps.Clone(st.OutputCountsByType)
	st.PerformancePerMinute = maps.Clone(st.PerformancePerMinute)
	st.Languages = maps.Clone(st.Languages)
	st.DocumentKinds = maps.Clone(st.DocumentKinds)
	if target, ok := cfg["target_lang"].(string); ok {
		st.LanguageTags, _, _ = langtag.ForSources(target, st.Languages)
	}
	st.SegmentStatus = maps.Clone(st.SegmentStatus)
	st.LangSources = maps.Clone(st.LangSources)
	st.WithoutText = escapeAll(st.WithoutText)
	st.Books = cloneBooks(st.Books)
	for _, b := range st.Books {
		b.Source, b.Problems = utf8name.Escape(b.Source), escapeAll(b.Problems)
	}
	if d.terms != nil {
		st.Terminology = NewTerminology(escapeKeys(d.terms, func(a, b TermRate) TermRate {
			return NewTermRate(a.Expected+b.Expected, a.Hit+b.Hit)
		}))
	}
	v.Statistics = st
	v.Trail = d.Trail.Clone()
	escapeTrail(&v.Trail)
	v.Warnings = append(v.Warnings, res.Warnings...)
	return &v
}

// Run is the run metadata of one run in progress: its document in
// internal/paradata's Writer, which writes it (Flush, Finish) or encodes it
// (Encode, a job's).
type Run struct {
	*paradata.Writer[*Doc]
}

// New starts the run metadata at path of a run started at start by the
// program described by info; comps are the licence components known and
// usage collects those the run uses, from which the licence is resolved at
// every write. It writes nothing yet.
func New(path string, start time.Time, info paradata.Info, comps *licence.Components, usage *translator.Usage) *Run {
	doc := &Doc{
		Header:     paradata.NewHeader(translator.Program, start, info),
		Config:     map[string]any{},
		Statistics: NewStatistics(),
		Trail:      paradata.NewTrail(),
		components: comps, usage: usage, protected: map[string]int{},
	}
	return &Run{Writer: paradata.NewWriter(path, start, doc)}
}

// Done records a translated document and the files written for it; doc
// names it in the per-document maps: its stem, under its folder in a
// directory run (book1/0001), so that two folders' documents of one name
// are not merged.
func (r *Run) Done(doc string, out *translator.Output, files ...string) {
	r.Update(func(d *Doc) {
		st := &d.Statistics
		st.SuccessfullyProcessed++
		st.OutputCountsByType[out.Kind.OutputType()]++
		st.OutputCountsByType["csv"]++
		d.Outputs = append(d.Outputs, files...)
		d.add(doc, ItemOf(out))
	})
}

// Add adds the translator's statistics of a document translated elsewhere
// (a job's item, from the Item stored with it), and its licence components
// to the run's usage; the caller counts the document and its outputs
// (Processed, CountOutput, AddOutputFile). doc names it as for Done.
func (r *Run) Add(doc string, it Item) {
	r.Update(func(d *Doc) {
		d.usage.Add(it.Components...)
		d.add(doc, it)
	})
}

// SetBooks starts the run's book records (statistics.books), one a book,
// in the order BookDone names them by.
func (r *Run) SetBooks(books []*Book) {
	r.Update(func(d *Doc) { d.Statistics.Books = books })
}

// BookDone counts a translated text file (it, ItemOf its output) in the
// record of the run's book i (SetBooks); an i out of range counts nothing.
func (r *Run) BookDone(i int, it Item) {
	r.Update(func(d *Doc) {
		if i >= 0 && i < len(d.Statistics.Books) {
			d.Statistics.Books[i].Add(it)
		}
	})
}

// add adds a document's statistics; the caller holds the writer's lock.
func (d *Doc) add(doc string, it Item) {
	st := &d.Statistics
	st.BackendCalls += it.Stats.Calls
	st.TransportErrors += it.Stats.TransportErrors
	st.LineCountMismatches += it.Stats.LineCountMismatches
	st.Pages += it.Stats.Pages
	st.UnitsTranslated += it.Stats.Translated
	st.UnitsSkipped += it.Stats.Skipped
	st.CountKind(it.Kind, it.taken)
	if it.NoText() {
		st.NoText(doc, it.taken)
	}
	AddCounts(st.Languages, it.Languages)
	st.PlaceholderCalls += it.Stats.PlaceholderCalls
	st.PlaceholderFallbacks += it.Stats.PlaceholderFallbacks
	AddCounts(st.SegmentStatus, it.Statuses)
	AddCounts(st.LangSources, it.LangSources)
	d.protected[doc] += it.Stats.ProtectedTerms
	if it.Terms != nil {
		if d.terms == nil {
			d.terms = map[string]TermRate{}
		}
		prev := d.terms[doc]
		d.terms[doc] = NewTermRate(prev.Expected+it.Terms.Expected, prev.Hit+it.Terms.Hit)
	}
}

// Item is what the run metadata counts of one translated document: its
// statistics, languages, statuses and terminology (translator.Output's),
// and the licence components it used. A service stores it with the job
// item that translated the document (JSON, a few hundred bytes) and adds
// it to the job's run metadata when the job ends (Run.Add).
type Item struct {
	// Kind is the document's kind (its translation's OutputType).
	Kind        translator.Kind  `json:"kind,omitempty"`
	Stats       translator.Stats `json:"stats"`
	Languages   map[string]int   `json:"source_languages,omitempty"`
	LangSources map[string]int   `json:"lang_sources,omitempty"`
	Statuses    map[string]int   `json:"segment_status,omitempty"`
	// Terms is the terminology check; nil when it was not checked.
	Terms      *Terms   `json:"terms,omitempty"`
	Components []string `json:"components,omitempty"`
	// Warnings are the document's warnings (translator.Output's), which a
	// job's run metadata lists as the command line's does (Run.Add does
	// not: the command line warns as it goes).
	Warnings []string `json:"warnings,omitempty"`
	// taken is set on an item negated to take a document's counts back.
	taken bool
}

// Terms is a document's terminology check: the expected vocabulary terms
// and those the translation holds.
type Terms struct {
	Expected int `json:"expected"`
	Hit      int `json:"hit"`
}

// ItemOf is the Item of a translated document.
func ItemOf(out *translator.Output) Item {
	it := Item{Kind: out.Kind, Stats: out.Stats, Languages: out.Languages, LangSources: out.LangSources, Statuses: out.Statuses, Components: out.Components,
		Warnings: out.Warnings}
	if out.TermsChecked {
		it.Terms = &Terms{Expected: out.Terms.Expected, Hit: out.Terms.Hit}
	}
	return it
}

// NoText reports an item of a page document without text (a blank page,
// translator.Output.NoText).
func (it Item) NoText() bool {
	return it.Kind != "" && it.Kind != translator.KindMetadata && it.Stats.Units == 0
}

// AddCounts adds the counts of src to dst.
func AddCounts(dst, src map[string]int) {
	for k, n := range src {
		dst[k] += n
	}
}
