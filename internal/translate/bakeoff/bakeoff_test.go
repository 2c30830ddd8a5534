package bakeoff

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/mteval"
	"archivekit/internal/translate/vocab"
)

const altoDoc = `<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page><PrintSpace>
<TextBlock ID="B1"><TextLine><String CONTENT="Hrob"/><SP/><String CONTENT="12"/></TextLine><TextLine><String CONTENT="a jáma 3,5 m"/></TextLine></TextBlock>
<TextBlock ID="B2"><TextLine><String CONTENT="Already English text here"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`

const record = `<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><GetRecord><record><metadata>
<amcr:amcr xmlns:amcr="https://api.aiscr.cz/schema/amcr/2.2/"><amcr:dokument><amcr:popis>Sídliště z doby bronzové</amcr:popis></amcr:dokument></amcr:amcr>
</metadata></record></GetRecord></OAI-PMH>`

func samples(t *testing.T) (string, []*metadata.XPath) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "box"), 0o755)
	os.WriteFile(filepath.Join(dir, "doc.alto.xml"), []byte(altoDoc), 0o644)
	os.WriteFile(filepath.Join(dir, "box", "C-1.xml"), []byte(record), 0o644)
	os.WriteFile(filepath.Join(dir, "box", "broken.xml"), []byte("<a><b></a>"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a sample"), 0o644)
	fields, err := metadata.ParseFields("fields", []byte("//arch:amcr/arch:dokument/arch:popis\n"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, fields
}

func TestLoadSegments(t *testing.T) {
	dir, fields := samples(t)
	segs, warnings, err := LoadSegments([]string{dir}, fields)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range segs {
		ids = append(ids, s.ID+"="+s.Kind+":"+s.Text)
	}
	want := "box/C-1.xml#//arch:amcr/arch:dokument/arch:popis[1]=metadata:Sídliště z doby bronzové," +
		"doc.alto.xml#B1=alto:Hrob 12 a jáma 3,5 m,doc.alto.xml#B2=alto:Already English text here"
	if strings.Join(ids, ",") != want {
		t.Errorf("segments\n got %s\nwant %s", strings.Join(ids, ","), want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "broken.xml: skipped") {
		t.Errorf("warnings %q", warnings)
	}
	if _, _, err := LoadSegments([]string{filepath.Join(dir, "absent")}, fields); err == nil {
		t.Error("a missing samples path gave no error")
	}
	if _, _, err := LoadSegments([]string{dir, dir}, fields); err == nil || !strings.Contains(err.Error(), "appears twice") {
		t.Errorf("samples given twice: %v", err)
	}
}

// fake is a backend: "echo" returns an upper-cased copy, dropping numbers
// when dropNumbers; it offers only the pairs in pairs and fails the calls
// whose text contains failOn.
type fake struct {
	name        string
	pairs       map[string]bool
	failOn      string
	dropNumbers bool
	calls       []string
}

func (f *fake) Name() string { return f.name }
func (f *fake) Supports(_ context.Context, src, tgt string) error {
	if !f.pairs[src+"-"+tgt] {
		return fmt.Errorf("%s: pair %s-%s not offered", f.name, src, tgt)
	}
	return nil
}
func (f *fake) Translate(_ context.Context, text, src, tgt string) (string, error) {
	f.calls = append(f.calls, src+">"+tgt+":"+text)
	if src == "auto" || tgt == "auto" {
		return "", errors.New("auto reached the backend")
	}
	if f.failOn != "" && strings.Contains(text, f.failOn) {
		return "", errors.New("HTTP 503: overloaded")
	}
	out := strings.NewReplacer("Hrob", "Grave", "jáma", "pit", "Sídliště", "Settlement", "a ", "and ").Replace(text)
	if f.dropNumbers {
		out = strings.NewReplacer("12", "", "3,5", "").Replace(out)
	}
	return out, nil
}
func (f *fake) Close() error { return nil }

// langs detects by a table of texts.
type langs map[string]string

func (l langs) Detect(text string) (string, float64) {
	if lang, ok := l[text]; ok {
		return lang, 0.9
	}
	return "xx", 0.1 // not confident: falls back to Czech
}

func TestRun(t *testing.T) {
	dir, fields := samples(t)
	segs, _, err := LoadSegments([]string{dir}, fields)
	if err != nil {
		t.Fatal(err)
	}
	good := &fake{name: "good", pairs: map[string]bool{"cs-en": true}}
	flaky := &fake{name: "flaky", pairs: map[string]bool{"cs-en": true}, failOn: "Hrob", dropNumbers: true}
	none := &fake{name: "none", pairs: map[string]bool{}}
	voc, err := vocab.Parse(strings.NewReader("source_lemma,target_translation\nhrob,grave\njáma,pit\nsídliště,settlement\n"), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	ref := "Grave 12 and pit 3.5 m"
	tick := time.Unix(0, 0)
	cfg := Config{Backends: []backend.Backend{good, flaky, none}, Source: "auto", Target: "en",
		Detector: langs{"Already English text here": "en", "Sídliště z doby bronzové": "cs"}, Vocabulary: voc,
		Refs: map[string]string{"doc.alto.xml#B1": ref},
		Now:  func() time.Time { tick = tick.Add(250 * time.Millisecond); return tick }}
	rows, err := Run(context.Background(), segs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("%d rows, want 3 segments × 3 backends", len(rows))
	}
	for _, f := range []*fake{good, flaky, none} {
		for _, c := range f.calls {
			if strings.Contains(c, "auto") {
				t.Errorf("%s got %q", f.name, c)
			}
		}
	}
	by := map[string]Row{}
	for _, r := range rows {
		by[r.ID+"|"+r.Backend] = r
	}
	g := by["doc.alto.xml#B1|good"]
	if g.Status != StatusOK || g.Lang != "cs" || g.Hypothesis != "Grave 12 and pit 3,5 m" || g.NumTotal != 2 || g.NumKept != 2 ||
		g.TermTotal != 2 || g.TermHit != 2 || g.Seconds != 0.25 {
		t.Errorf("good B1: %+v", g)
	}
	if math.Abs(g.ChrF-mteval.ChrF(g.Hypothesis, ref)) > 1e-12 || math.Abs(g.BLEU-mteval.BLEU(g.Hypothesis, ref)) > 1e-12 || !g.HasRef {
		t.Errorf("good B1 scores chrF %g BLEU %g", g.ChrF, g.BLEU)
	}
	if f := by["doc.alto.xml#B1|flaky"]; f.Status != StatusError || !strings.Contains(f.Error, "HTTP 503") {
		t.Errorf("flaky B1: %+v", f)
	}
	if f := by["box/C-1.xml#//arch:amcr/arch:dokument/arch:popis[1]|flaky"]; f.Status != StatusOK || f.TermHit != 1 {
		t.Errorf("flaky went on after its failure: %+v", f)
	}
	if n := by["doc.alto.xml#B1|none"]; n.Status != StatusUnsupported || len(none.calls) != 0 {
		t.Errorf("unsupported: %+v, calls %v", n, none.calls)
	}
	if e := by["doc.alto.xml#B2|good"]; e.Status != StatusInTarget || len(good.calls) != 2 {
		t.Errorf("in target: %+v, calls %v", e, good.calls)
	}

	sums := Summarise(rows)
	if len(sums) != 3 || sums[0].Backend != "good" || sums[0].OK != 2 || sums[0].InTgt != 1 || sums[0].Scored != 1 ||
		sums[1].Failed != 1 || sums[2].Unsupported != 2 {
		t.Errorf("summaries %+v", sums)
	}
	var table bytes.Buffer
	WriteTable(&table, sums)
	if !strings.Contains(table.String(), "100.0% (2/2)") || !strings.Contains(table.String(), "flaky") {
		t.Errorf("table:\n%s", table.String())
	}

	out := filepath.Join(t.TempDir(), "bakeoff.csv")
	if err := WriteCSV(out, rows, true); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(out)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 10 || strings.Join(recs[0], ",") != strings.Join(Columns, ",") {
		t.Fatalf("csv: %v %d rows, header %v", err, len(recs), recs[0])
	}
	for _, r := range recs[1:] {
		if r[0] == "doc.alto.xml#B1" && r[4] == "good" {
			if r[10] != "1.1000" || r[11] != "2" || r[12] != "2" || r[13] != "2" || r[14] != "2" || r[15] == "" || r[16] == "" || r[19] != ref {
				t.Errorf("csv row %v", r)
			}
		}
		if r[5] != StatusOK && (r[10] != "" || r[15] != "") {
			t.Errorf("metrics on a row that was not translated: %v", r)
		}
	}
}

func TestExplicitSourceSkipsDetection(t *testing.T) {
	b := &fake{name: "b", pairs: map[string]bool{"de-en": true}}
	rows, err := Run(context.Background(), []Segment{{ID: "x", Text: "Grab"}}, Config{Backends: []backend.Backend{b}, Source: "de", Target: "en"})
	if err != nil || rows[0].Lang != "de" || rows[0].Status != StatusOK || b.calls[0] != "de>en:Grab" {
		t.Errorf("rows %+v err %v calls %v", rows, err, b.calls)
	}
	if _, err := Run(context.Background(), nil, Config{Source: "auto", Target: "en"}); err == nil {
		t.Error("auto without a detector accepted")
	}
	if _, err := Run(context.Background(), nil, Config{Source: "cs", Target: "auto"}); err == nil {
		t.Error("target auto accepted")
	}
}

func TestLoadRefs(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ body, want string }{
		{"segment_id,reference\na,A\nb,\"B, with comma\"\n", ""},
		{"id,text\na,A\n", "want the header"},
		{"segment_id,reference\na,\n", "empty reference"},
		{"segment_id,reference\na,A\na,B\n", "second reference"},
	} {
		p := filepath.Join(dir, "refs.csv")
		os.WriteFile(p, []byte(c.body), 0o644)
		refs, err := LoadRefs(p)
		if c.want == "" {
			if err != nil || refs["b"] != "B, with comma" {
				t.Errorf("%q: %v %v", c.body, refs, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
}
