package main

import (
	"maps"
	"path/filepath"
	"time"

	"archivekit/internal/licence"
	runmeta "archivekit/internal/paradata"
	"archivekit/internal/shard"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/translator"
)

// stampLayout is the layout of the run's stamp in its output names.
const stampLayout = runmeta.StampLayout

// statistics are the translator's: the counts both tools keep, then its
// own.
type statistics struct {
	runmeta.Statistics
	BackendCalls        int            `json:"backend_calls"`
	TransportErrors     int            `json:"transport_errors"`
	LineCountMismatches int            `json:"line_count_mismatches"`
	Pages               int            `json:"pages"`
	UnitsTranslated     int            `json:"units_translated"`
	UnitsSkipped        int            `json:"units_skipped"`
	Languages           map[string]int `json:"source_languages"`
	// LanguageTags is the machine-translation tag (RFC 6497,
	// "en-t-cs-t0-und") of the text translated from each source language.
	LanguageTags map[string]string `json:"language_tags"`
	// LangSources counts the units whose source language each rule of the
	// source-language order chose: detected, element, document, default
	// (given with an explicit source language).
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
	Terminology *terminology `json:"terminology"`
	// Books holds one record per book of the run, its text files taken
	// as one document (bookstats.go); absent without books.
	Books []*bookStats `json:"books,omitempty"`
}

// termRate is expected vocabulary terms, those found in the translation,
// and their ratio (null when none was expected).
type termRate struct {
	Expected int      `json:"expected"`
	Hit      int      `json:"hit"`
	HitRate  *float64 `json:"hit_rate"`
}

func newTermRate(expected, hit int) termRate {
	t := termRate{Expected: expected, Hit: hit}
	if expected > 0 {
		r := float64(int(float64(hit)/float64(expected)*10000+0.5)) / 10000
		t.HitRate = &r
	}
	return t
}

type terminology struct {
	termRate
	Documents map[string]termRate `json:"documents"`
}

// paradataDoc is the translator's run metadata: internal/paradata's header,
// then the translator's own configuration and statistics, then the shared
// trail (skipped files, outputs, warnings, interrupted runs). The
// unexported fields are what the written licence, protected-term counts and
// terminology are derived from (View).
type paradataDoc struct {
	runmeta.Header
	Config     map[string]any `json:"config"`
	Statistics statistics     `json:"statistics"`
	runmeta.Trail

	components *licence.Components
	usage      *translator.Usage
	protected  map[string]int
	terms      map[string]termRate // terminology per document (stem)
}

// Parts hands the shared parts to the run-metadata writer.
func (d *paradataDoc) Parts() runmeta.Parts {
	return runmeta.Parts{Header: &d.Header, Config: d.Config, Statistics: &d.Statistics.Statistics, Trail: &d.Trail}
}

// View is the document as written: the licence from the components used so
// far, the protected terms and the terminology totals, in a copy that
// shares no map or list with d.
func (d *paradataDoc) View() *paradataDoc {
	v := *d
	res := translator.Resolve(d.components, d.usage.Components())
	v.SetLicence(res)
	cfg := maps.Clone(d.Config)
	total := 0
	prot := map[string]int{}
	for k, n := range d.protected {
		prot[k] = n
		total += n
	}
	cfg["vocabulary_protected_terms"] = prot
	cfg["vocabulary_protected_terms_total"] = total
	v.Config = cfg
	st := d.Statistics
	st.OutputCountsByType = maps.Clone(st.OutputCountsByType)
	st.PerformancePerMinute = maps.Clone(st.PerformancePerMinute)
	st.Languages = maps.Clone(st.Languages)
	if target, ok := cfg["target_lang"].(string); ok {
		st.LanguageTags, _, _ = langtag.ForSources(target, st.Languages)
	}
	st.SegmentStatus = maps.Clone(st.SegmentStatus)
	st.LangSources = maps.Clone(st.LangSources)
	st.Books = cloneBooks(st.Books)
	if d.terms != nil {
		tm := &terminology{Documents: map[string]termRate{}}
		exp, hit := 0, 0
		for k, t := range d.terms {
			tm.Documents[k] = t
			exp += t.Expected
			hit += t.Hit
		}
		tm.termRate = newTermRate(exp, hit)
		st.Terminology = tm
	}
	v.Statistics = st
	v.Trail = d.Trail.Clone()
	v.Warnings = append(v.Warnings, res.Warnings...)
	return &v
}

// paradata is the run metadata of one run, written atomically at start,
// after every document and at the end, so a run that fails part-way leaves
// a complete file describing what happened up to then.
type paradata struct {
	*runmeta.Writer[*paradataDoc]
	path  string
	stamp string
	usage *translator.Usage
}

func newParadata(dir string, start time.Time, sh shard.Spec, comps *licence.Components, usage *translator.Usage, getenv func(string) string) (*paradata, error) {
	name := func(stamp string) string { return stamp + "_translator" + sh.FileSuffix() + ".json" }
	stamp, err := runmeta.Claim(dir, start.Format(stampLayout), name)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name(stamp))
	info := runmeta.NewInfo(getenv)
	info.RunID = stamp
	doc := &paradataDoc{
		Header:     runmeta.NewHeader(translator.Program, start, info),
		Config:     map[string]any{},
		Statistics: statistics{Statistics: runmeta.Statistics{OutputCountsByType: map[string]int{}}, Languages: map[string]int{}, SegmentStatus: map[string]int{}, LangSources: map[string]int{}},
		Trail:      runmeta.NewTrail(),
		components: comps, usage: usage, protected: map[string]int{},
	}
	return &paradata{Writer: runmeta.NewWriter(path, start, doc), path: path, stamp: stamp, usage: usage}, nil
}

// shard labels the run metadata of one share of a sharded run: the share,
// the input count of the whole run, the digest of its input list
// (shard.InputsDigest, which --merge compares) and the input it was
// collected from, in its configuration (the share is in its file name from
// newParadata, so the n runs of one batch started in the same second on a
// shared output folder write n files).
func (p *paradata) shard(s shard.Spec, total int, inputs, from string) {
	p.SetConfig("shard", s.String())
	p.SetConfig("shard_inputs_all", total)
	p.SetConfig(shard.InputsConfig, inputs)
	p.SetConfig(shard.FolderConfig, from)
}

// done records a translated document and the files written for it; doc
// names it in the per-document maps: its stem, under its folder in a
// directory run (book1/0001), so that two folders' documents of one name
// are not merged.
func (p *paradata) done(doc string, out *translator.Output, files ...string) {
	p.Update(func(d *paradataDoc) {
		st := &d.Statistics
		st.SuccessfullyProcessed++
		st.OutputCountsByType["xml"]++
		st.OutputCountsByType["csv"]++
		st.BackendCalls += out.Stats.Calls
		st.TransportErrors += out.Stats.TransportErrors
		st.LineCountMismatches += out.Stats.LineCountMismatches
		st.Pages += out.Stats.Pages
		st.UnitsTranslated += out.Stats.Translated
		st.UnitsSkipped += out.Stats.Skipped
		addCounts(st.Languages, out.Languages)
		st.PlaceholderCalls += out.Stats.PlaceholderCalls
		st.PlaceholderFallbacks += out.Stats.PlaceholderFallbacks
		addCounts(st.SegmentStatus, out.Statuses)
		addCounts(st.LangSources, out.LangSources)
		d.protected[doc] += out.Stats.ProtectedTerms
		if out.TermsChecked {
			if d.terms == nil {
				d.terms = map[string]termRate{}
			}
			prev := d.terms[doc]
			d.terms[doc] = newTermRate(prev.Expected+out.Terms.Expected, prev.Hit+out.Terms.Hit)
		}
		d.Outputs = append(d.Outputs, files...)
	})
}

func (p *paradata) output(kind, file string) {
	p.CountOutput(kind, 1)
	p.AddOutputFile(file)
}
