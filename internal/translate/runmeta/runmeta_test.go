package runmeta_test

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"
	"time"

	"archivekit/internal/licence"
	"archivekit/internal/paradata"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/vocab"
)

var start = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func newRun(t *testing.T) *runmeta.Run {
	t.Helper()
	r := runmeta.New(t.TempDir()+"/run.json", start, paradata.Info{ToolVersion: "1.2.3", RunID: "r1"}, &licence.Components{}, &translator.Usage{})
	r.SetConfig("target_lang", "en")
	return r
}

// output is a translated document with n units translated from lang.
func output(lang string, n, calls int, terms *vocab.TermCheck) *translator.Output {
	out := &translator.Output{Stats: translator.Stats{Pages: 1, Units: n + 1, Translated: n, Skipped: 1, Calls: calls, TransportErrors: 1, ProtectedTerms: 2},
		Languages: map[string]int{lang: n}, LangSources: map[string]int{"detected": n}, Statuses: map[string]int{"ok": n, "untranslated": 1}}
	if terms != nil {
		out.Terms, out.TermsChecked = *terms, true
	}
	return out
}

// TestDone: each translated document adds its counts, languages,
// statuses, protected terms and outputs to the run's statistics, and the
// terminology is the sum of its documents' checks, with the rate rounded
// to four decimals; without any checked document it is null.
func TestDone(t *testing.T) {
	for _, c := range []struct {
		name     string
		docs     []string
		outs     []*translator.Output
		units    int
		langs    map[string]int
		terms    *runmeta.TermRate // nil: no terminology
		perDoc   map[string]int    // expected terms per document
		protTot  int
		outputs  int
		statuses map[string]int
	}{
		{name: "one document", docs: []string{"a"}, outs: []*translator.Output{output("cs", 3, 2, nil)},
			units: 3, langs: map[string]int{"cs": 3}, protTot: 2, outputs: 2, statuses: map[string]int{"ok": 3, "untranslated": 1}},
		{name: "two languages", docs: []string{"a", "b"}, outs: []*translator.Output{output("cs", 3, 2, nil), output("de", 4, 1, nil)},
			units: 7, langs: map[string]int{"cs": 3, "de": 4}, protTot: 4, outputs: 4, statuses: map[string]int{"ok": 7, "untranslated": 2}},
		{name: "terminology", docs: []string{"a", "b", "a"},
			outs:  []*translator.Output{output("cs", 1, 1, &vocab.TermCheck{Expected: 3, Hit: 1}), output("cs", 1, 1, &vocab.TermCheck{Expected: 0}), output("cs", 1, 1, &vocab.TermCheck{Expected: 3, Hit: 1})},
			units: 3, langs: map[string]int{"cs": 3}, terms: &runmeta.TermRate{Expected: 6, Hit: 2}, perDoc: map[string]int{"a": 6, "b": 0},
			protTot: 6, outputs: 6, statuses: map[string]int{"ok": 3, "untranslated": 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(t)
			calls := 0
			for i, out := range c.outs {
				r.Done(c.docs[i], out, c.docs[i]+".xml", c.docs[i]+".csv")
				calls += out.Stats.Calls
			}
			d := r.Snapshot()
			st := d.Statistics
			if st.SuccessfullyProcessed != len(c.outs) || st.UnitsTranslated != c.units || st.UnitsSkipped != len(c.outs) ||
				st.BackendCalls != calls || st.TransportErrors != len(c.outs) || st.Pages != len(c.outs) ||
				st.OutputCountsByType["xml"] != len(c.outs) || len(d.Outputs) != c.outputs {
				t.Errorf("statistics %+v, outputs %v", st, d.Outputs)
			}
			if !maps.Equal(st.Languages, c.langs) || !maps.Equal(st.SegmentStatus, c.statuses) || st.LangSources["detected"] != c.units {
				t.Errorf("languages %v, statuses %v, lang sources %v", st.Languages, st.SegmentStatus, st.LangSources)
			}
			for l := range c.langs {
				if st.LanguageTags[l] != "en-t-"+l+"-t0-und" {
					t.Errorf("language tags %v", st.LanguageTags)
				}
			}
			if d.Config["vocabulary_protected_terms_total"] != c.protTot {
				t.Errorf("protected terms %v", d.Config["vocabulary_protected_terms_total"])
			}
			switch tm := st.Terminology; {
			case c.terms == nil && tm != nil:
				t.Errorf("terminology %+v, want null", tm)
			case c.terms != nil && (tm == nil || tm.Expected != c.terms.Expected || tm.Hit != c.terms.Hit || tm.HitRate == nil || *tm.HitRate != 0.3333):
				t.Errorf("terminology %+v, want %d of %d (0.3333)", tm, c.terms.Hit, c.terms.Expected)
			case c.terms != nil:
				for doc, exp := range c.perDoc {
					if tm.Documents[doc].Expected != exp {
						t.Errorf("terminology of %s: %+v, want %d expected", doc, tm.Documents[doc], exp)
					}
				}
				if tm.Documents["b"].HitRate != nil {
					t.Errorf("a document with no expected term has a rate: %+v", tm.Documents["b"])
				}
			}
		})
	}
}

// TestViewDeepCopy: a view shares no map or list with the run, so later
// documents do not change a view taken before them.
func TestViewDeepCopy(t *testing.T) {
	r := newRun(t)
	r.Update(func(d *runmeta.Doc) { d.Statistics.Books = []*runmeta.Book{runmeta.NewBook("mets.xml")} })
	r.Done("a", output("cs", 2, 1, &vocab.TermCheck{Expected: 2, Hit: 2}), "a.xml")
	r.Update(func(d *runmeta.Doc) {
		d.Statistics.Books[0].Add(runmeta.ItemOf(output("cs", 2, 1, &vocab.TermCheck{Expected: 2, Hit: 2})))
	})
	v := r.Snapshot()
	before, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	r.Done("a", output("de", 5, 3, &vocab.TermCheck{Expected: 4, Hit: 1}), "b.xml")
	r.Update(func(d *runmeta.Doc) {
		d.Statistics.Books[0].Add(runmeta.ItemOf(output("de", 5, 3, &vocab.TermCheck{Expected: 4})))
	})
	r.SetConfig("x", 1)
	r.Warn("w")
	r.Skip("c.xml", "broken")
	for _, change := range []func(d *runmeta.Doc){
		func(d *runmeta.Doc) { d.Statistics.Languages["pl"]++ },
		func(d *runmeta.Doc) { d.Statistics.SegmentStatus["ok"]++ },
		func(d *runmeta.Doc) { d.Statistics.LangSources["element"]++ },
		func(d *runmeta.Doc) { d.Statistics.OutputCountsByType["png"]++ },
		func(d *runmeta.Doc) { d.Statistics.Books[0].Languages["pl"]++ },
		func(d *runmeta.Doc) { d.Statistics.Books[0].Terminology.Hit++ },
		func(d *runmeta.Doc) { d.Config["y"] = 2 },
	} {
		r.Update(change)
	}
	after, _ := json.Marshal(v)
	if string(before) != string(after) {
		t.Errorf("a view changed after it was taken:\nbefore %s\nafter  %s", before, after)
	}
	now := r.Snapshot()
	if now.Statistics.Languages["de"] != 5 || now.Statistics.Terminology.Documents["a"].Expected != 6 || now.Statistics.Books[0].Files != 2 {
		t.Errorf("the run lost its later documents: %+v", now.Statistics)
	}
}

// TestItemRoundTrip: an Item stored as JSON (a job item's summary) adds
// what the document's Output adds, and its licence components.
func TestItemRoundTrip(t *testing.T) {
	out := output("cs", 4, 2, &vocab.TermCheck{Expected: 5, Hit: 4, Missed: []string{"hrob = grave"}})
	out.Components = []string{"model"}
	b, err := json.Marshal(runmeta.ItemOf(out))
	if err != nil {
		t.Fatal(err)
	}
	var it runmeta.Item
	if err := json.Unmarshal(b, &it); err != nil {
		t.Fatal(err)
	}
	direct, stored := newRun(t), newRun(t)
	direct.Done("a", out, "a.xml")
	stored.Add("a", it)
	stored.Processed(1)
	stored.CountOutput("xml", 1)
	stored.CountOutput("csv", 1)
	d1, _ := json.Marshal(direct.Writer.Snapshot().Statistics)
	d2, _ := json.Marshal(stored.Writer.Snapshot().Statistics)
	if string(d1) != string(d2) {
		t.Errorf("from the stored item %s\nfrom the output      %s", d2, d1)
	}
	// The item's licence components count in the run's licence.
	if c := stored.Snapshot().LicenseDetail.Components; len(c) != 1 || c[0].Name != "model" {
		t.Errorf("licence components %+v, want the item's", c)
	}
}

// TestJSONNames: the statistics keep the names the translator's run
// metadata has always had.
func TestJSONNames(t *testing.T) {
	r := newRun(t)
	r.Done("a", output("cs", 1, 1, &vocab.TermCheck{Expected: 1, Hit: 1}))
	b, err := r.Encode(nil, start.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Program    string         `json:"program"`
		Status     string         `json:"status"`
		Statistics map[string]any `json:"statistics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Program != translator.Program || doc.Status != paradata.StatusCompleted {
		t.Errorf("program %q status %q", doc.Program, doc.Status)
	}
	for _, k := range []string{"input_files_total", "successfully_processed", "backend_calls", "transport_errors", "line_count_mismatches", "pages",
		"units_translated", "units_skipped", "source_languages", "language_tags", "lang_sources", "segment_status",
		"placeholder_calls", "placeholder_fallbacks", "terminology", "output_counts_by_type", "performance_per_minute"} {
		if _, ok := doc.Statistics[k]; !ok {
			t.Errorf("statistics.%s missing: %s", k, b)
		}
	}
	if _, ok := doc.Statistics["books"]; ok {
		t.Errorf("statistics.books present in a run without books")
	}
}

// TestWithdraw: a document withdrawn after it was recorded leaves the
// run's statistics, outputs, protected terms, terminology and book record
// as they were without it, every count of its statistics taken back.
func TestWithdraw(t *testing.T) {
	all := translator.Stats{}
	s := reflect.ValueOf(&all).Elem()
	for i := range s.NumField() {
		s.Field(i).SetInt(int64(i + 1)) // every count, so none is forgotten
	}
	withdrawn := &translator.Output{Stats: all, Languages: map[string]int{"de": 4, "cs": 1}, LangSources: map[string]int{"detected": 5},
		Statuses: map[string]int{"ok": 5}, Terms: vocab.TermCheck{Expected: 2, Hit: 2}, TermsChecked: true}
	kept := output("cs", 3, 2, &vocab.TermCheck{Expected: 3, Hit: 1})
	kept.Statuses["rerun"] = 0 // a zero count of its own stays
	snapshot := func(r *runmeta.Run) string {
		d := r.Snapshot()
		b, err := json.Marshal([]any{d.Statistics, d.Outputs, d.Config["vocabulary_protected_terms"], d.Config["vocabulary_protected_terms_total"]})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want, got := newRun(t), newRun(t)
	for _, r := range []*runmeta.Run{want, got} {
		r.SetBooks([]*runmeta.Book{runmeta.NewBook("book.xml")})
		r.Done("a", kept, "a.xml", "a.csv")
		r.BookDone(0, runmeta.ItemOf(kept))
	}
	got.Done("b", withdrawn, "b.xml", "b.csv")
	got.BookDone(0, runmeta.ItemOf(withdrawn))
	if snapshot(got) == snapshot(want) {
		t.Fatal("the document changed nothing")
	}
	got.Withdraw("b", runmeta.ItemOf(withdrawn), "b.xml", "b.csv")
	got.BookWithdraw(0, runmeta.ItemOf(withdrawn))
	if g, w := snapshot(got), snapshot(want); g != w {
		t.Errorf("after the withdrawal\n%s\nwant\n%s", g, w)
	}
}
