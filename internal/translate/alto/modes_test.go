package alto

import (
	"bytes"
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/xmlsplice"
)

const small = "\ufeff<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n" +
	"<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v3#\">\r\n" +
	"<Layout><Page ID=\"P1\">\r\n" +
	"  <TextBlock ID=\"B1\">\r\n" +
	"    <TextLine ID=\"L1\"><String ID=\"S1\" CONTENT=\"Dobrý\"/><SP/><String CONTENT='den &apos;x&apos;'/></TextLine>\r\n" +
	"    <TextLine ID=\"L2\"></TextLine>\r\n" +
	"    <TextLine><String CONTENT=\"světe\"/><HYP CONTENT=\"-\"/></TextLine>\r\n" +
	"  </TextBlock>\r\n" +
	"  <ComposedBlock><TextBlock ID=\"B2\" LANG=\"cs\"><TextLine><String CONTENT=\"jedna dva\"/></TextLine></TextBlock></ComposedBlock>\r\n" +
	"  <TextBlock ID=\"B3\"><TextLine><String CONTENT=\"\"/></TextLine></TextBlock>\r\n" +
	"</Page></Layout></alto>\r\n"

func TestSmallReplace(t *testing.T) {
	f := upper()
	res, err := Translate(context.Background(), []byte(small), Options{Backend: f, Source: "cs", Target: "en", File: "s"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(`"Dobrý"`, `"DOBRÝ"`, `'den &apos;x&apos;'`, `'DEN &apos;X&apos;'`, `"světe"`, `"SVĚTE"`, `"jedna dva"`, `"JEDNA DVA"`,
		`ID="B2" LANG="cs"`, `ID="B2" LANG="en"`).Replace(small)
	if string(res.Output) != want {
		t.Errorf("got\n%s\nwant\n%s", res.Output, want)
	}
	if f.nCalls() != 2 {
		t.Errorf("%d calls, want 2", f.nCalls())
	}
	// Lines: L1 and the third line (position 3) of B1, line 1 of B2; the
	// String-less L2 and the empty B3 get no row.
	var ids []string
	for _, r := range res.Log {
		ids = append(ids, r.Line+"="+r.Target)
	}
	if got := strings.Join(ids, ","); got != "L1=DOBRÝ DEN 'X',3=SVĚTE,1=JEDNA DVA" {
		t.Errorf("log %s", got)
	}
}

// TestLangFollowsTranslation: the LANG of a translated block, and of its
// lines and Strings, names the language its text is now in (Replace), or
// that of the copy (Append); a block left as it was keeps its LANG, and no
// LANG is added in Replace mode. Before, a replaced block kept LANG="cs" over
// English text (1,049 blocks of the shared sample), and an appended copy's
// lines and Strings kept the source's LANG.
func TestLangFollowsTranslation(t *testing.T) {
	const src = `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="P1"><PrintSpace>` + "\n" +
		`<TextBlock ID="B1" LANG="cs"><TextLine ID="L1" LANG='cs'><String CONTENT="Dobrý" LANG="sk"/><SP/><String CONTENT="den"/></TextLine></TextBlock>` + "\n" +
		`<TextBlock ID="B2"><TextLine ID="L2"><String CONTENT="jedna"/></TextLine></TextBlock>` + "\n" +
		`<TextBlock ID="B3" LANG="cs"><TextLine ID="L3"><String CONTENT="" LANG="cs"/></TextLine></TextBlock>` + "\n" +
		`</PrintSpace></Page></Layout></alto>`
	res, err := Translate(context.Background(), []byte(src), Options{Backend: upper(), Source: "cs", Target: "en", File: "l"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(
		`<TextBlock ID="B1" LANG="cs"><TextLine ID="L1" LANG='cs'><String CONTENT="Dobrý" LANG="sk"/><SP/><String CONTENT="den"/>`,
		`<TextBlock ID="B1" LANG="en"><TextLine ID="L1" LANG='en'><String CONTENT="DOBRÝ" LANG="en"/><SP/><String CONTENT="DEN"/>`,
		`<String CONTENT="jedna"/>`, `<String CONTENT="JEDNA"/>`).Replace(src)
	if string(res.Output) != want {
		t.Errorf("replace: got\n%s\nwant\n%s", res.Output, want)
	}
	res, err = Translate(context.Background(), []byte(src), Options{Backend: upper(), Source: "cs", Target: "en", Mode: Append, File: "l"})
	if err != nil {
		t.Fatal(err)
	}
	want = strings.NewReplacer(
		`<String CONTENT="den"/></TextLine></TextBlock>`,
		`<String CONTENT="den"/></TextLine></TextBlock>`+"\n"+
			`<TextBlock ID="B1_en" LANG="en"><TextLine ID="L1_en" LANG='en'><String CONTENT="DOBRÝ" LANG="en"/><SP/><String CONTENT="DEN"/></TextLine></TextBlock>`,
		`<TextBlock ID="B2"><TextLine ID="L2"><String CONTENT="jedna"/></TextLine></TextBlock>`,
		`<TextBlock ID="B2" LANG="cs"><TextLine ID="L2"><String CONTENT="jedna"/></TextLine></TextBlock>`+"\n"+
			`<TextBlock ID="B2_en" LANG="en"><TextLine ID="L2_en"><String CONTENT="JEDNA"/></TextLine></TextBlock>`).Replace(src)
	if string(res.Output) != want {
		t.Errorf("append: got\n%s\nwant\n%s", res.Output, want)
	}
}

func TestSmallAppendIdempotent(t *testing.T) {
	f := upper()
	opt := Options{Backend: f, Source: "cs", Target: "en", Mode: Append, File: "s"}
	res, err := Translate(context.Background(), []byte(small), opt)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(small,
		"  <TextBlock ID=\"B1\">", "  <TextBlock ID=\"B1\" LANG=\"cs\">", 1)
	want = strings.Replace(want, "</TextLine>\r\n  </TextBlock>\r\n",
		"</TextLine>\r\n  </TextBlock>\r\n"+
			"  <TextBlock ID=\"B1_en\" LANG=\"en\">\r\n"+
			"    <TextLine ID=\"L1_en\"><String ID=\"S1_en\" CONTENT=\"DOBRÝ\"/><SP/><String CONTENT='DEN &apos;X&apos;'/></TextLine>\r\n"+
			"    <TextLine ID=\"L2_en\"></TextLine>\r\n"+
			"    <TextLine><String CONTENT=\"SVĚTE\"/><HYP CONTENT=\"-\"/></TextLine>\r\n"+
			"  </TextBlock>\r\n", 1)
	want = strings.Replace(want, "</TextBlock></ComposedBlock>",
		"</TextBlock><TextBlock ID=\"B2_en\" LANG=\"en\"><TextLine><String CONTENT=\"JEDNA DVA\"/></TextLine></TextBlock></ComposedBlock>", 1)
	if string(res.Output) != want {
		t.Fatalf("got\n%s\nwant\n%s", res.Output, want)
	}
	appendAgain(t, f, res.Output, opt)
}

func TestRealSampleAppendIdempotent(t *testing.T) {
	src := readSample(t)
	f := upper()
	opt := Options{Backend: f, Source: "cs", Target: "en", Mode: Append, File: "x"}
	res, err := Translate(context.Background(), src, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := xmlsplice.Parse(res.Output); err != nil {
		t.Fatalf("append output does not parse: %v", err)
	}
	if f.nCalls() != 130 {
		t.Errorf("%d calls, want 130", f.nCalls())
	}
	appendAgain(t, f, res.Output, opt)
	// Removing the inserted copies gives back the input byte for byte, except
	// for LANG="cs" added to the 8 blocks of the sample that have no LANG.
	doc, _ := xmlsplice.Parse(res.Output)
	ed := xmlsplice.NewEditor(res.Output)
	copies := 0
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		if a, ok := n.Attr("", "LANG"); ok && n.Name.Local == "TextBlock" && a.Value == "en" {
			ed.Replace(n.Start-len(n.Indent(res.Output)), n.End, "")
			copies++
			return false
		}
		return true
	})
	back, _ := ed.Bytes()
	lang := []byte(` LANG="cs"`)
	if added := bytes.Count(back, lang) - bytes.Count(src, lang); added != 8 {
		t.Errorf("LANG=\"cs\" added to %d blocks, want 8", added)
	}
	if !bytes.Equal(bytes.ReplaceAll(back, lang, nil), bytes.ReplaceAll(src, lang, nil)) {
		t.Error("original blocks were modified in append mode")
	}
	if copies != res.Stats.Blocks {
		t.Errorf("%d copies for %d translated blocks", copies, res.Stats.Blocks)
	}
}

func TestDetection(t *testing.T) {
	cases := []struct {
		name  string
		det   fixedDetector
		calls int
		lang  string
	}{
		{"confident slovak", fixedDetector{"sk", 0.9}, 2, "sk"},
		{"low confidence falls back to Czech", fixedDetector{"pl", 0.2}, 2, "cs"},
		{"degraded detector", fixedDetector{"en", 0.0}, 2, "cs"},
		{"already target language", fixedDetector{"en", 0.9}, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := upper()
			// The blocks are short: every unit is detected only with a
			// minimum length of 0 (the default order gives them Czech,
			// TestLangOrderDefaults).
			order := LangOrder{MinLength: 0, MinConfidence: DefaultMinConfidence, Default: FallbackLang}
			res, err := Translate(context.Background(), []byte(small), Options{Backend: f, Source: "auto", Target: "en", Detector: c.det, Order: &order})
			if err != nil {
				t.Fatal(err)
			}
			if f.nCalls() != c.calls || !res.DetectionUsed {
				t.Errorf("%d calls, detection used %v", f.nCalls(), res.DetectionUsed)
			}
			if c.lang != "" && res.Languages[c.lang] != 2 {
				t.Errorf("languages %v", res.Languages)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		opt  Options
		msg  string
	}{
		{"not alto", "<a/>", Options{Backend: upper(), Source: "cs", Target: "en", File: "f.xml"}, "f.xml: root element is not <alto>"},
		{"dtd", "<!DOCTYPE alto><alto/>", Options{Backend: upper(), Source: "cs", Target: "en", File: "f.xml"}, "DOCTYPE"},
		{"no detector", small, Options{Backend: upper(), Target: "en"}, "no Detector"},
		{"bad mode", small, Options{Backend: upper(), Source: "cs", Target: "en", Mode: "merge"}, "unknown output mode"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Translate(context.Background(), []byte(c.src), c.opt)
			if err == nil || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %v, want it to mention %q", err, c.msg)
			}
		})
	}
}

// TestConcurrentPages: page concurrency changes nothing in the output or log.
func TestConcurrentPages(t *testing.T) {
	src := readSample(t)
	one, err := Translate(context.Background(), src, Options{Backend: mtLogBackend(t), Source: "cs", Target: "en"})
	if err != nil {
		t.Fatal(err)
	}
	four, err := Translate(context.Background(), src, Options{Backend: mtLogBackend(t), Source: "cs", Target: "en", Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Output, four.Output) || len(one.Log) != len(four.Log) || one.Stats != four.Stats {
		t.Error("concurrent run differs")
	}
}

// TestPageDone: each page of a long document is told as it is done, with
// the document's page count, once, however many run at once: a progress
// line names the page (it sat on the file until its end).
func TestPageDone(t *testing.T) {
	src := readSample(t)
	for _, conc := range []int{1, 4} {
		var mu sync.Mutex
		var told []int
		total := 0
		res, err := Translate(context.Background(), src, Options{Backend: mtLogBackend(t), Source: "cs", Target: "en", Concurrency: conc,
			PageDone: func(done, n int) {
				mu.Lock()
				defer mu.Unlock()
				told, total = append(told, done), n
			}})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(told)
		want := make([]int, res.Stats.Pages)
		for i := range want {
			want[i] = i + 1
		}
		if total != res.Stats.Pages || !slices.Equal(told, want) {
			t.Errorf("concurrency %d: told %v of %d, want 1..%d once each", conc, told, total, res.Stats.Pages)
		}
	}
}

func BenchmarkRealSample(b *testing.B) {
	src := readSample(b)
	for _, fast := range []bool{false, true} {
		name := "dual-pass"
		if fast {
			name = "fast-align"
		}
		b.Run(name, func(b *testing.B) {
			f := upper()
			b.SetBytes(int64(len(src)))
			for i := 0; i < b.N; i++ {
				if _, err := Translate(context.Background(), src, Options{Backend: f, Source: "cs", Target: "en", FastAlign: fast}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// appendAgain runs append mode on its own output: nothing may change and the
// backend must not be called.
func appendAgain(t *testing.T, f *fake, out []byte, opt Options) {
	t.Helper()
	n := f.nCalls()
	res, err := Translate(context.Background(), out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(res.Output, out) || f.nCalls() != n {
		t.Errorf("second append run changed the output or made %d backend calls", f.nCalls()-n)
	}
}

// BenchmarkLatency50ms translates the sample against a backend that takes
// 50 ms per call, one page at a time and four pages at a time.
func BenchmarkLatency50ms(b *testing.B) {
	src := readSample(b)
	for _, conc := range []int{1, 4} {
		b.Run("pages-"+strconv.Itoa(conc), func(b *testing.B) {
			f := upper()
			for i := 0; i < b.N; i++ {
				if _, err := Translate(context.Background(), src, Options{Backend: slow{f}, Source: "cs", Target: "en", Concurrency: conc}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// slow sleeps 50 ms once per call (not per line).
type slow struct{ *fake }

func (s slow) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	time.Sleep(50 * time.Millisecond)
	return strings.ToUpper(text), nil
}

func TestIsALTO(t *testing.T) {
	cases := []struct {
		src  string
		want bool
	}{
		{small, true},
		{"<?xml version='1.0'?><!-- c --><alto/>", true},
		{`<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><alto/></OAI-PMH>`, false},
		{"not xml", false},
		{"", false},
	}
	for _, c := range cases {
		if got := IsALTO([]byte(c.src)); got != c.want {
			t.Errorf("IsALTO(%.40q) = %v, want %v", c.src, got, c.want)
		}
	}
}

// TestAppendTargetLanguageBlocks: in append mode a block labelled with the
// target language is an earlier run's copy only when it follows its
// original (the original's ID with "_en", or no ID); a document written in
// English, whose blocks are all labelled en, is not taken for a translated
// one (it came back unchanged with every block counted done), and an
// English block after a Czech one is no copy of it.
func TestAppendTargetLanguageBlocks(t *testing.T) {
	const head = `<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#"><Layout><Page ID="P1"><PrintSpace>`
	const tail = `</PrintSpace></Page></Layout></alto>`
	run := func(src string) *Result {
		t.Helper()
		res, err := Translate(context.Background(), []byte(src), Options{Backend: upper(), Source: "auto", Target: "en", Mode: Append, File: "a", Detector: langid.Shared()})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	english := head + `<TextBlock ID="B1" language="en"><TextLine ID="L1"><String CONTENT="Report"/></TextLine></TextBlock>` +
		`<TextBlock ID="B2" language="en"><TextLine ID="L2"><String CONTENT="Grave"/></TextLine></TextBlock>` + tail
	res := run(english)
	if res.Stats.AlreadyDone != 0 || res.Stats.InTarget != 2 || res.Stats.Translated != 0 {
		t.Errorf("English document: %+v; want both blocks in the target language, none done before", res.Stats)
	}
	var statuses []string
	for _, r := range res.Log {
		statuses = append(statuses, string(r.Status))
	}
	if strings.Join(statuses, ",") != "in_target,in_target" {
		t.Errorf("English document: log statuses %v", statuses)
	}
	mixed := head + `<TextBlock ID="B1" LANG="cs"><TextLine ID="L1"><String CONTENT="Hrob"/></TextLine></TextBlock>` +
		`<TextBlock ID="B9" LANG="en"><TextLine ID="L9"><String CONTENT="Grave"/></TextLine></TextBlock>` + tail
	res = run(mixed)
	if res.Stats.Translated != 1 || res.Stats.InTarget != 1 || res.Stats.AlreadyDone != 0 || !bytes.Contains(res.Output, []byte(`<TextBlock ID="B1_en" LANG="en"><TextLine ID="L1_en"><String CONTENT="HROB"/>`)) {
		t.Errorf("Czech then English: %+v\n%s", res.Stats, res.Output)
	}
	// The copy that run wrote is taken for one by the next run, and is no
	// unit of its own: 2 units, the Czech one done before.
	again := run(string(res.Output))
	if again.Stats.Translated != 0 || again.Stats.Units != 2 || again.Stats.AlreadyDone != 1 || again.Stats.InTarget != 1 || !bytes.Equal(again.Output, res.Output) {
		t.Errorf("second append run: %+v", again.Stats)
	}
}

// TestEmptiedLineMarked: a block whose translation has fewer words than it
// has lines leaves a line without a word; that line's CONTENT is emptied,
// its log row says approx_alignment, and the document's warnings count it.
func TestEmptiedLineMarked(t *testing.T) {
	const doc = `<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page ID="P1">` +
		`<TextBlock ID="B1"><TextLine ID="L1"><String CONTENT="první"/></TextLine>` +
		`<TextLine ID="L2"><String CONTENT="druhý"/></TextLine>` +
		`<TextLine ID="L3"><String CONTENT="třetí"/></TextLine></TextBlock>` +
		`</Page></Layout></alto>`
	// The block becomes one word; the lines' own translations (the anchors)
	// are upper-cased.
	f := &fake{answer: func(s string) string {
		if s == "první druhý třetí" {
			return "ALL"
		}
		return strings.ToUpper(s)
	}}
	for _, fast := range []bool{false, true} {
		res, err := Translate(context.Background(), []byte(doc), Options{Backend: f, Source: "cs", Target: "en", File: "e.xml", FastAlign: fast})
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(res.Output), `CONTENT=""`); n != 2 {
			t.Errorf("fast %v: %d emptied Strings, want 2:\n%s", fast, n, res.Output)
		}
		if res.Stats.LinesEmptied != 2 {
			t.Errorf("fast %v: LinesEmptied %d, want 2", fast, res.Stats.LinesEmptied)
		}
		var emptied int
		for _, r := range res.Log {
			if r.Target == "" {
				emptied++
				if !r.Approx || !r.Emptied || r.UnitStatus() != backend.UnitApproxAlignment {
					t.Errorf("fast %v: emptied line %s logged unit status %s", fast, r.Line, r.UnitStatus())
				}
			}
		}
		if emptied != 2 {
			t.Errorf("fast %v: %d log rows without a translation, want 2: %+v", fast, emptied, res.Log)
		}
		if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "e.xml: 2 lines got no word") {
			t.Errorf("fast %v: warnings %q", fast, w)
		}
	}
}

// TestRowUnitStatus: a line emptied says approx_alignment whatever its
// block's status (a block translated in an end round said rerun, while the
// document's warning said the emptied lines' rows say approx_alignment);
// the other rows say what backend.UnitStatus says.
func TestRowUnitStatus(t *testing.T) {
	for _, c := range []struct {
		row  LogRow
		want string
	}{
		{LogRow{}, backend.UnitOK},
		{LogRow{Status: backend.OK, Approx: true}, backend.UnitApproxAlignment},
		{LogRow{Status: backend.Retried}, backend.UnitRerun},
		{LogRow{Status: backend.Retried, Approx: true, Emptied: true}, backend.UnitApproxAlignment},
		{LogRow{Status: backend.Untranslated}, backend.UnitUntranslated},
	} {
		if got := c.row.UnitStatus(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.row, got, c.want)
		}
	}
}

// TestNoLineEmptiedWithWordsToSpare: a block whose short lines' own
// translations are refused (an MT service wrapping each answer: a line of
// one letter came back five times as long, and the guard's length check
// refused it, leaving the line no anchor) still has words enough for
// every line, and each line gets one (the alignment left them empty,
// CONTENT="", as the 79-page sample's "C"/"N" and "0)"/"u"/"9" lines were).
func TestNoLineEmptiedWithWordsToSpare(t *testing.T) {
	const doc = `<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page ID="P1">` +
		`<TextBlock ID="B1"><TextLine ID="L1"><String CONTENT="C"/></TextLine>` +
		`<TextLine ID="L2"><String CONTENT="N"/></TextLine>` +
		`<TextLine ID="L3"><String CONTENT="dlouhý"/><String CONTENT="řádek"/><String CONTENT="textu"/></TextLine></TextBlock>` +
		`</Page></Layout></alto>`
	f := &fake{answer: func(s string) string {
		if len(s) == 1 {
			return "" // refused
		}
		return "EN[" + s + "]"
	}}
	for _, fast := range []bool{false, true} {
		res, err := Translate(context.Background(), []byte(doc), Options{Backend: f, Source: "cs", Target: "en", File: "e.xml", FastAlign: fast})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(res.Output), `CONTENT=""`) || res.Stats.LinesEmptied != 0 {
			t.Errorf("fast %v: %d lines emptied though the block's translation has 5 words for 3 lines:\n%s", fast, res.Stats.LinesEmptied, res.Output)
		}
		for _, r := range res.Log {
			if r.Target == "" {
				t.Errorf("fast %v: line %s got no word", fast, r.Line)
			}
		}
	}
}

// TestNoLineEmptiedFastAlign: with --fast-align a short line's share of
// the block's words rounds to none (6 words over lines of 1, 1 and 10
// source words: 0, 0 and 6), and each short line still gets a word.
func TestNoLineEmptiedFastAlign(t *testing.T) {
	const doc = `<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page ID="P1">` +
		`<TextBlock ID="B1"><TextLine ID="L1"><String CONTENT="C"/></TextLine>` +
		`<TextLine ID="L2"><String CONTENT="N"/></TextLine>` +
		`<TextLine ID="L3"><String CONTENT="a b c d e f g h i j"/></TextLine></TextBlock>` +
		`</Page></Layout></alto>`
	f := &fake{answer: func(string) string { return "one two three four five six" }}
	res, err := Translate(context.Background(), []byte(doc), Options{Backend: f, Source: "cs", Target: "en", File: "e.xml", FastAlign: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res.Log {
		got[r.Line] = r.Target
	}
	if got["L1"] != "one" || got["L2"] != "two" || got["L3"] != "three four five six" || res.Stats.LinesEmptied != 0 {
		t.Errorf("lines %q, %d emptied; want one, two and the rest", got, res.Stats.LinesEmptied)
	}
}
