package translator

import (
	"archivekit/internal/testenv"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"archivekit/internal/docrecord"
	"archivekit/internal/ledger"
	"archivekit/internal/licence"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/transport"
	"archivekit/internal/translate/vocab"
	"archivekit/internal/translate/xmlsplice"
)

func sharedPath(t testing.TB, name string) string { return testenv.Path(t, name) }

func readShared(t testing.TB, name string) []byte {
	b, err := os.ReadFile(sharedPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newMT returns an mtapi backend talking to a fresh stand-in.
func newMT(t testing.TB, cfg translatortest.Config) (*mtapi.Backend, *translatortest.Server) {
	srv := translatortest.New(cfg)
	t.Cleanup(srv.Close)
	return mtapi.New(mtapi.Config{BaseURL: srv.URL,
		Policy: transport.Policy{MaxRetries: 2, BackoffBase: time.Millisecond}}), srv
}

func loadFields(t testing.TB) []*metadata.XPath {
	f, err := metadata.LoadFields("../../../setup/translate/amcr-fields.txt")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestNames(t *testing.T) {
	for _, c := range []struct{ in, stem, out, log string }{
		{"MTX201501307_anon.alto.xml", "MTX201501307_anon", "MTX201501307_anon_en.alto.xml", "MTX201501307_anon_log.csv"},
		{"/x/y/doc-1.ALTO.XML", "doc-1", "doc-1_en.ALTO.XML", "doc-1_log.csv"},
		{"C-9100725A.xml", "C-9100725A", "C-9100725A_en.xml", "C-9100725A_log.csv"},
		{"notes.txt", "notes", "notes_en.txt", "notes_log.csv"},
		{"noext", "noext", "noext_en", "noext_log.csv"},
	} {
		if g := Stem(c.in); g != c.stem {
			t.Errorf("Stem(%q) = %q, want %q", c.in, g, c.stem)
		}
		if g := OutputName(c.in, "en"); g != c.out {
			t.Errorf("OutputName(%q) = %q, want %q", c.in, g, c.out)
		}
		if g := LogName(c.in); g != c.log {
			t.Errorf("LogName(%q) = %q, want %q", c.in, g, c.log)
		}
	}
}

// TestALTOSample: on the real sample only CONTENT values change, and each
// page costs 2 backend calls (1 with fast alignment).
func TestALTOSample(t *testing.T) {
	src := readShared(t, "alto/MTX201501307_anon.alto.xml")
	for _, fast := range []bool{false, true} {
		be, srv := newMT(t, translatortest.Config{})
		out, err := Translate(context.Background(), src, "MTX201501307_anon.alto.xml",
			Options{Backend: be, Source: "cs", Target: "en", FastAlign: fast})
		if err != nil {
			t.Fatal(err)
		}
		if out.Kind != KindALTO || out.Name != "MTX201501307_anon_en.alto.xml" {
			t.Fatalf("kind %q name %q", out.Kind, out.Name)
		}
		if bytes.Equal(out.Data, src) {
			t.Fatal("nothing was translated")
		}
		if a, b := alto.MaskTranslatable(src), alto.MaskTranslatable(out.Data); !bytes.Equal(a, b) {
			t.Fatal("output differs outside CONTENT values")
		}
		per := 2
		if fast {
			per = 1
		}
		// 65 of the 79 pages hold text; empty pages cost nothing.
		if text := pagesWithText(src); out.Stats.Pages != 79 || text != 65 || out.Stats.Calls != per*text {
			t.Errorf("fast=%v: %d calls for %d pages with text, want %d per page", fast, out.Stats.Calls, text, per)
		}
		t.Logf("fast=%v: %d pages, %d backend calls, %d HTTP requests, %d log rows", fast, out.Stats.Pages, out.Stats.Calls, srv.Posts.Load(), len(out.Log))
		if len(out.Log) == 0 || out.Log[0].File != "MTX201501307_anon" || out.Log[0].Page != 1 {
			t.Errorf("log starts %+v", out.Log[:min(1, len(out.Log))])
		}
		if !strings.HasPrefix(out.Summary, "MTX201501307_anon: batch summary: ") {
			t.Errorf("summary %q", out.Summary)
		}
		if got := out.Components; len(got) != 1 || got[0] != ComponentMTAPI {
			t.Errorf("components %v, want only %s (explicit source, no vocabulary)", got, ComponentMTAPI)
		}
	}
}

var pageRE = regexp.MustCompile(`<Page\b`)
var textRE = regexp.MustCompile(`CONTENT="[^"]*[^\s"][^"]*"`)

// pagesWithText counts the pages with a non-blank CONTENT value.
func pagesWithText(src []byte) int {
	n := 0
	for _, p := range pageRE.Split(string(src), -1)[1:] {
		if textRE.MatchString(p) {
			n++
		}
	}
	return n
}

// targetsBlanked empties the content of every element the field list
// selects, so that what is left must be byte-identical.
func targetsBlanked(t *testing.T, src []byte, fields []*metadata.XPath) []byte {
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var ranges [][2]int
	for _, f := range fields {
		for _, el := range f.Select(doc, metadata.DefaultNamespaces) {
			ranges = append(ranges, [2]int{el.StartTagEnd, el.EndTagStart})
		}
	}
	sort.Slice(ranges, func(i, j int) bool { return ranges[i][0] > ranges[j][0] })
	out := append([]byte(nil), src...)
	for _, r := range ranges {
		out = append(out[:r[0]], out[r[1]:]...)
	}
	return out
}

// TestRecords: on the 15 real records only the targeted texts change, and a
// second append run makes no backend call and no change.
func TestRecords(t *testing.T) {
	dir := sharedPath(t, "records")
	names, _ := filepath.Glob(filepath.Join(dir, "*.xml"))
	if len(names) != 15 {
		t.Fatalf("%d records, want 15", len(names))
	}
	fields := loadFields(t)
	for _, path := range names {
		src, _ := os.ReadFile(path)
		name := filepath.Base(path)
		be, srv := newMT(t, translatortest.Config{})
		out, err := Translate(context.Background(), src, name, Options{Backend: be, Target: "en", Fields: fields})
		if err != nil {
			t.Fatal(err)
		}
		if out.Kind != KindMetadata || out.Stats.Translated == 0 {
			t.Fatalf("%s: kind %s, %d translated", name, out.Kind, out.Stats.Translated)
		}
		if !bytes.Equal(targetsBlanked(t, src, fields), targetsBlanked(t, out.Data, fields)) {
			t.Errorf("%s: bytes outside the targeted texts changed", name)
		}
		if !contains(out.Components, ComponentLangID) || !contains(out.Components, ComponentMTAPI) {
			t.Errorf("%s: components %v", name, out.Components)
		}

		once, err := Translate(context.Background(), src, name, Options{Backend: be, Target: "en", Fields: fields, Mode: alto.Append})
		if err != nil {
			t.Fatal(err)
		}
		before := srv.Posts.Load()
		twice, err := Translate(context.Background(), once.Data, name, Options{Backend: be, Target: "en", Fields: fields, Mode: alto.Append})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(once.Data, twice.Data) || srv.Posts.Load() != before || twice.Stats.Calls != 0 {
			t.Errorf("%s: second append changed %v, calls %d", name, !bytes.Equal(once.Data, twice.Data), twice.Stats.Calls)
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestALTOAppendTwice: a second ALTO append run makes no backend call.
func TestALTOAppendTwice(t *testing.T) {
	src := readShared(t, "alto/MTX201501307_anon.alto.xml")
	be, srv := newMT(t, translatortest.Config{})
	opt := Options{Backend: be, Source: "cs", Target: "en", Mode: alto.Append, FastAlign: true}
	once, err := Translate(context.Background(), src, "a.alto.xml", opt)
	if err != nil {
		t.Fatal(err)
	}
	before := srv.Posts.Load()
	twice, err := Translate(context.Background(), once.Data, "a.alto.xml", opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(once.Data, twice.Data) || srv.Posts.Load() != before {
		t.Errorf("second append: changed=%v, %d more requests", !bytes.Equal(once.Data, twice.Data), srv.Posts.Load()-before)
	}
}

var debrisRE = regexp.MustCompile(`QZX|XQZ|ZXQ|QXZ`)

// TestVocabulary: with the real vocabulary and the lemmatiser stand-in,
// terms come back as the vocabulary's English, no placeholder debris reaches
// output or log, and the lemmatiser's components count.
func TestVocabulary(t *testing.T) {
	v, err := vocab.Load(sharedPath(t, "vocabulary.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lem := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer lem.Close()
	lc := lemmatizer.New(lem.URL, transport.New(transport.Policy{}, nil))
	fields := loadFields(t)

	names, _ := filepath.Glob(filepath.Join(sharedPath(t, "records"), "*.xml"))
	names = append(names, sharedPath(t, "alto/MTX201501307_anon.alto.xml"))
	protected := 0
	for _, path := range names {
		src, _ := os.ReadFile(path)
		be, _ := newMT(t, translatortest.Config{})
		var usage Usage
		out, err := Translate(context.Background(), src, filepath.Base(path), Options{Backend: be, Source: "cs", Target: "en",
			Fields: fields, Vocabulary: v, Lemmatizer: lc, Usage: &usage, FastAlign: true})
		if err != nil {
			t.Fatal(err)
		}
		protected += out.Stats.ProtectedTerms
		if debrisRE.Match(out.Data) {
			t.Errorf("%s: placeholder debris in output", path)
		}
		for _, r := range out.Log {
			if debrisRE.MatchString(r.Target) {
				t.Errorf("%s: placeholder debris in log: %q", path, r.Target)
			}
		}
		for _, c := range []string{ComponentMTAPI, ComponentRecordsVocabulary, ComponentThesaurusData, ComponentLemmatizerEngine, ComponentLemmatizerModels} {
			if !contains(usage.Components(), c) {
				t.Errorf("%s: component %s not recorded (%v)", path, c, usage.Components())
			}
		}
	}
	if protected == 0 {
		t.Error("no vocabulary term was protected")
	}

	// A protected term comes back as the vocabulary's English (the stand-in
	// would have upper-cased "kostel").
	doc := []byte(`<r xmlns="https://api.aiscr.cz/schema/amcr/2.2/"><amcr><dokument><popis>kostel a hrob v jámě</popis></dokument></amcr></r>`)
	be, _ := newMT(t, translatortest.Config{})
	out, err := Translate(context.Background(), doc, "r.xml", Options{Backend: be, Source: "cs", Fields: fields, Vocabulary: v, Lemmatizer: lc})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Log[0].Target; got != "church and grave in pit" {
		t.Errorf("translation %q, want %q", got, "church and grave in pit")
	}
}

// TestFailures: failing, rate-limiting and garbage-answering APIs.
func TestFailures(t *testing.T) {
	src := readShared(t, "records/C-9107617A.xml")
	fields := loadFields(t)
	t.Run("always failing: error, components still recorded", func(t *testing.T) {
		be, _ := newMT(t, translatortest.Config{FailAlways: 500})
		var usage Usage
		_, err := Translate(context.Background(), src, "C-9107617A.xml", Options{Backend: be, Fields: fields, Usage: &usage})
		if err == nil || !strings.Contains(err.Error(), "C-9107617A.xml") {
			t.Fatalf("error %v, want one naming the file", err)
		}
		if !contains(usage.Components(), ComponentMTAPI) || !contains(usage.Components(), ComponentLangID) {
			t.Errorf("components %v", usage.Components())
		}
	})
	t.Run("429 then success", func(t *testing.T) {
		be, srv := newMT(t, translatortest.Config{Fail: []int{429, 429}})
		out, err := Translate(context.Background(), src, "C-9107617A.xml", Options{Backend: be, Source: "cs", Fields: fields})
		if err != nil {
			t.Fatal(err)
		}
		if out.Stats.Translated != 5 || int(srv.Posts.Load()) != 5+2 {
			t.Errorf("%d translated, %d requests", out.Stats.Translated, srv.Posts.Load())
		}
	})
	t.Run("garbage batches: per-item fallback counted in the summary", func(t *testing.T) {
		alt := readShared(t, "alto/MTX201501307_anon.alto.xml")
		// Batches answered with garbage, single lines translated.
		be, _ := newMT(t, translatortest.Config{Garbage: func(in string) string {
			if strings.Contains(in, "\n") {
				return "<html>oops</html>"
			}
			return translatortest.Translate(in)
		}})
		out, err := Translate(context.Background(), alt, "m.alto.xml", Options{Backend: be, Source: "cs", FastAlign: true})
		if err != nil {
			t.Fatal(err)
		}
		if out.Stats.LineCountMismatches == 0 || !strings.Contains(out.Summary, "line-count mismatches") {
			t.Errorf("mismatches %d, summary %q", out.Stats.LineCountMismatches, out.Summary)
		}
		if bytes.Contains(out.Data, []byte("oops")) {
			t.Error("a garbage answer was written")
		}
	})
	t.Run("one answer for every text: refused as the service's failure", func(t *testing.T) {
		// A sign-in page served as text: before, every line sent alone
		// got it as its translation.
		alt := readShared(t, "alto/MTX201501307_anon.alto.xml")
		be, _ := newMT(t, translatortest.Config{Garbage: func(string) string { return "Please sign in to the network" }})
		out, err := Translate(context.Background(), alt, "m.alto.xml", Options{Backend: be, Source: "cs", FastAlign: true})
		if !errors.Is(err, backend.ErrSameReply) || !ledger.Transient(err) || out != nil {
			t.Fatalf("err %v (output %v), want ErrSameReply, a passing failure, and no output", err, out != nil)
		}
	})
	t.Run("unsupported pair names it", func(t *testing.T) {
		be, _ := newMT(t, translatortest.Config{Pairs: []string{"cs-en"}})
		out, err := Translate(context.Background(), src, "C-9107617A.xml", Options{Backend: be, Source: "cs", Target: "de", Fields: fields})
		if err == nil && (out.Stats.Translated != 0 || len(out.Warnings) == 0 || !strings.Contains(strings.Join(out.Warnings, " "), "cs-de")) {
			t.Errorf("translated %d, warnings %v", out.Stats.Translated, out.Warnings)
		}
		if err != nil && !strings.Contains(err.Error(), "cs-de") {
			t.Errorf("error %v does not name the pair", err)
		}
	})
	t.Run("ALTO forced on metadata", func(t *testing.T) {
		be, _ := newMT(t, translatortest.Config{})
		if _, err := Translate(context.Background(), src, "x.xml", Options{Backend: be, Kind: KindALTO}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("metadata without fields", func(t *testing.T) {
		be, _ := newMT(t, translatortest.Config{})
		if _, err := Translate(context.Background(), src, "x.xml", Options{Backend: be}); err == nil {
			t.Error("no error")
		}
	})
	t.Run("DTD refused", func(t *testing.T) {
		be, _ := newMT(t, translatortest.Config{})
		_, err := Translate(context.Background(), []byte(`<!DOCTYPE r [<!ENTITY x "y">]><r>&x;</r>`), "d.xml", Options{Backend: be, Fields: fields})
		if err == nil || !errors.Is(err, xmlsplice.ErrDTD) {
			t.Errorf("error %v", err)
		}
	})
}

func loadComponents(t testing.TB) *licence.Components {
	c, err := licence.LoadComponents("../../../setup/translate/para_config.txt")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestLicence: the shipped components file declares every component the
// translator records, and the spec's recipes resolve as the spec says.
func TestLicence(t *testing.T) {
	c := loadComponents(t)
	all := []string{ComponentLangID, ComponentMTAPI, ComponentLemmatizerEngine, ComponentLemmatizerModels,
		ComponentRecordsVocabulary, ComponentThesaurusData, ComponentChatProvider, ComponentCT2Runtime}
	for _, f := range []string{"llm", "nmt1", "nmt2", "nmt3"} {
		all = append(all, CT2ModelComponent(f))
	}
	for _, n := range all {
		if _, ok := c.Get(n); !ok {
			t.Errorf("component %s not declared", n)
		}
	}
	if l, _ := c.Get(ComponentLangID); l.License != langid.LibraryLicense {
		t.Errorf("language identification declared %q, library is %q", l.License, langid.LibraryLicense)
	}
	v2 := &vocab.Vocabulary{Entries: []vocab.Entry{{Source: "hrob", Target: "grave"}}}
	for _, c2 := range []struct {
		name string
		used []string
		want string
	}{
		{"default run", append(append([]string{ComponentLangID}, BackendComponents("mtapi", "")...), append(VocabularyComponents(v2), ComponentLemmatizerEngine, ComponentLemmatizerModels)...), "CC BY-NC-SA 4.0"},
		{"mtapi, explicit source, no vocabulary", BackendComponents("mtapi", ""), "CC BY-NC-SA 4.0"},
		{"permissive: ct2 llm, explicit source, no vocabulary", BackendComponents("ct2", "llm"), "Apache-2.0"},
		{"permissive: ct2 nmt3", BackendComponents("ct2", "nmt3"), "CC BY 4.0"},
		{"ct2 nmt2", BackendComponents("ct2", "nmt2"), "CC BY-NC 4.0"},
		{"ct2 llm with detection (lingua is Apache-2.0)", append(BackendComponents("ct2", "llm"), ComponentLangID), "Apache-2.0"},
		{"ct2 llm with a loaded vocabulary", append(BackendComponents("ct2", "llm"), VocabularyComponents(v2)...), "CC BY-NC 4.0"},
		{"undeclared family", BackendComponents("ct2", "nmt9"), licence.Unknown},
	} {
		res := Resolve(c, c2.used)
		if res.EffectiveLicense != c2.want {
			t.Errorf("%s: %s, want %s", c2.name, res.EffectiveLicense, c2.want)
		}
	}
	chat := Resolve(c, BackendComponents("chat_compatible", ""))
	if chat.Rank != licence.RankUnknown || !chat.IsNonCommercial || !chat.IsShareAlike || len(chat.Warnings) == 0 {
		t.Errorf("chat provider: %+v", chat)
	}
	if VocabularyComponents(&vocab.Vocabulary{}) != nil {
		t.Error("empty vocabulary counts")
	}
	five := &vocab.Vocabulary{Entries: []vocab.Entry{{Source: "a", Target: "b", Origin: "amcr"}}}
	if got := VocabularyComponents(five); len(got) != 1 || got[0] != ComponentRecordsVocabulary {
		t.Errorf("records-only vocabulary: %v", got)
	}
}

// TestRecord: the translator's block validates against the spec's schema
// and the project's, doc_id comes from the baseline, and an invalid record
// is never written.
func TestRecord(t *testing.T) {
	spec, err := docrecord.LoadSchema(sharedPath(t, "../../spec/document.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	project, err := docrecord.ProjectSchema()
	if err != nil {
		t.Fatal(err)
	}
	base := `{"schema_version":"1.0","doc_id":"CTX000000001","source":{"filename":"CTX000000001.pdf"},"derived_from":{"alto":"ALTO/CTX000000001-1.alto.xml"},"custom":{"keep":1.50}}`
	rec, err := docrecord.Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	res := Resolve(loadComponents(t), BackendComponents("mtapi", ""))
	err = AccreteRecord(rec, RecordInfo{SourceLang: "cs", TargetLang: "en", Backend: "mtapi", Mode: "append",
		TranslatedXML: "out/CTX000000001-1_en.alto.xml", Licence: res, RunID: "260101-120000", ParadataRef: "out/260101-120000_translator.json",
		At: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), HadBaseline: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, s := range []*docrecord.Schema{spec, project} {
		path, err := rec.WriteToDir(dir, s)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(path) != "CTX000000001.document.json" {
			t.Errorf("file %s", path)
		}
	}
	back, _ := docrecord.Load(filepath.Join(dir, "CTX000000001.document.json"))
	for path, want := range map[string]any{
		"doc_id": "CTX000000001", "translations/source_lang": "cs", "translations/target_lang": "en",
		"translations/backend": "mtapi", "translations/output_mode": "append",
		"translations/license": "CC BY-NC-SA 4.0", "derived_from/translated_xml": "out/CTX000000001-1_en.alto.xml",
		"derived_from/alto": "ALTO/CTX000000001-1.alto.xml", "assembled/blocks/translations/program": "translator",
	} {
		if got, _ := back.Get(strings.Split(path, "/")...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if got, _ := back.Get("translations", "license_detail", "effective_license"); got != "CC BY-NC-SA 4.0" {
		t.Errorf("license_detail.effective_license = %v", got)
	}
	if got, _ := back.Get("custom", "keep"); got == nil || got.(interface{ String() string }).String() != "1.50" {
		t.Errorf("other block changed: %v", got)
	}

	// An invalid mode is refused by the project schema and nothing is written.
	bad, _ := docrecord.Parse([]byte(base))
	AccreteRecord(bad, RecordInfo{SourceLang: "cs", TargetLang: "en", Backend: "mtapi", Mode: "overwrite", TranslatedXML: "x", Licence: res})
	p := filepath.Join(t.TempDir(), "bad.document.json")
	if err := bad.WriteFile(p, project); err == nil {
		t.Error("invalid record written")
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("invalid record file exists")
	}
	if err := AccreteRecord(rec, RecordInfo{}); err == nil {
		t.Error("record without translated reference accepted")
	}
}
