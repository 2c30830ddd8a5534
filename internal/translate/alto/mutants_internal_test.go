package alto

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/translate/backend"
)

// refusing is the fake backend without the pair from one source language.
type refusing struct {
	*fake
	lang string
}

func (r refusing) Supports(ctx context.Context, src, tgt string) error {
	if src == r.lang {
		return fmt.Errorf("%s to %s is not supported", src, tgt)
	}
	return nil
}

// altoDoc is an ALTO 3 document of one page holding blocks.
func altoDoc(blocks ...string) string {
	return `<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page ID="P1"><PrintSpace>` + "\n" +
		strings.Join(blocks, "\n") + "\n" + `</PrintSpace></Page></Layout></alto>`
}

// If broken: with --source auto, a file with one block detected in a
// language the backend lacks stops with an error instead of leaving that
// block untouched with a warning and translating the rest.
func TestAutoUnsupportedDetectedLanguageLeftUntouched(t *testing.T) {
	long := `<TextBlock ID="B2"><TextLine ID="L2"><String CONTENT="Die Grube war mit dunkler Erde verfüllt und enthielt zahlreiche Scherben."/></TextLine></TextBlock>`
	src := altoDoc(`<TextBlock ID="B1" LANG="cs"><TextLine ID="L1"><String CONTENT="Dobrý den"/></TextLine></TextBlock>`, long)
	res, err := Translate(context.Background(), []byte(src), Options{
		Backend: refusing{upper(), "de"}, Source: "auto", Target: "en", Detector: fixedDetector{"de", 0.99}, File: "a",
	})
	if err != nil {
		t.Fatalf("the file stopped: %v", err)
	}
	rows := map[string]LogRow{}
	for _, r := range res.Log {
		rows[r.Line] = r
	}
	if r := rows["L2"]; r.Status != backend.UnsupportedLang || r.Lang != "de" || r.Target != "" {
		t.Errorf("detected German line: %+v, want it unsupported and untranslated", r)
	}
	if r := rows["L1"]; r.Status != backend.OK || r.Target != "DOBRÝ DEN" {
		t.Errorf("Czech line: %+v, want it translated", r)
	}
	if !strings.Contains(string(res.Output), long) {
		t.Errorf("the German block was changed:\n%s", res.Output)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, `"de" left untouched`) {
		t.Errorf("warnings %q, want one naming the detected language", res.Warnings)
	}
}

// If broken: when every candidate count scores alike, a line is given more
// (or fewer) words than its anchor has, and words move between lines.
func TestAlignTieTakesExpectedCount(t *testing.T) {
	for _, c := range []struct {
		name    string
		tokens  []string
		anchors []string
		want    []int
	}{
		// Nothing matches: counts 1 and 2 both score 0 for a one-word anchor.
		{"no match, one-word anchor", []string{"x", "y", "z"}, []string{"abc", "def"}, []int{1, 2}},
		{"no match, then more lines", []string{"q", "r", "s", "t"}, []string{"abc", "def", "ghi"}, []int{1, 1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, over := alignByAnchors(c.tokens, c.anchors)
			if !slices.Equal(got, c.want) || over != 0 {
				t.Errorf("alignByAnchors(%q, %q) = %v (%d over), want %v", c.tokens, c.anchors, got, over, c.want)
			}
		})
	}
}

// If broken: a one-word line before a line whose first word is huge gets
// no word at all and is written empty (CONTENT="").
func TestAlignOneWordLineKeepsAWord(t *testing.T) {
	huge := strings.Repeat("x", 8*MaxAlignRunes+1)
	tokens := []string{huge, "b", "c", "d"}
	got, _ := alignByAnchors(tokens, []string{"abc", "long line of words"})
	if got[0] < 1 || got[0]+got[1] != len(tokens) {
		t.Errorf("counts %v, want at least one word for the one-word line", got)
	}
}

// If broken: the IIIF annotation of a line of one String shows the source,
// not its translation.
func TestLinesOneStringLineReadsTranslation(t *testing.T) {
	src := altoDoc(`<TextBlock ID="B1"><TextLine ID="L1" HPOS="1" VPOS="1" WIDTH="10" HEIGHT="5"><String CONTENT="Dobrý"/></TextLine></TextBlock>`)
	res, err := Translate(context.Background(), []byte(src), Options{Backend: upper(), Source: "cs", Target: "en", Mode: Alternative})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := Lines(res.Output, "en")
	if err != nil || len(pages) != 1 || len(pages[0].Lines) != 1 {
		t.Fatalf("%v: %+v", err, pages)
	}
	if got := pages[0].Lines[0].Text; got != "DOBRÝ" {
		t.Errorf("line text %q, want the translation DOBRÝ", got)
	}
}

// If broken: a line whose Strings are all empty gets a log row and words
// of the block's translation, taken from the line that had the text.
func TestLineOfEmptyStringsStaysEmpty(t *testing.T) {
	src := altoDoc(`<TextBlock ID="B1"><TextLine ID="L1"><String CONTENT="Dobrý"/><SP/><String CONTENT="den"/></TextLine>` +
		`<TextLine ID="L2"><String CONTENT=""/><SP/><String CONTENT=""/></TextLine></TextBlock>`)
	res, err := Translate(context.Background(), []byte(src), Options{Backend: upper(), Source: "cs", Target: "en", File: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Log) != 1 || res.Log[0].Line != "L1" || res.Log[0].Target != "DOBRÝ DEN" {
		t.Errorf("log %+v, want one row: L1 DOBRÝ DEN", res.Log)
	}
	want := strings.NewReplacer(`"Dobrý"`, `"DOBRÝ"`, `"den"`, `"DEN"`).Replace(src)
	if string(res.Output) != want {
		t.Errorf("got\n%s\nwant\n%s", res.Output, want)
	}
}

// If broken: Alternative mode gives the Strings that received no word of a
// shorter translation an empty ALTERNATIVE.
func TestAlternativeNoEmptyAlternative(t *testing.T) {
	src := altoDoc(`<TextBlock ID="B1"><TextLine ID="L1"><String ID="S1" CONTENT="Dobrý"/><SP/><String ID="S2" CONTENT="den"/><SP/><String ID="S3" CONTENT="všem"/></TextLine></TextBlock>`)
	hello := &fake{answer: func(string) string { return "Hello" }}
	res, err := Translate(context.Background(), []byte(src), Options{Backend: hello, Source: "cs", Target: "en", Mode: Alternative, File: "a"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(src, `<String ID="S1" CONTENT="Dobrý"/>`,
		`<String ID="S1" CONTENT="Dobrý"><ALTERNATIVE PURPOSE="translation:en-t-cs-t0-und">Hello</ALTERNATIVE></String>`, 1)
	if string(res.Output) != want {
		t.Errorf("got\n%s\nwant\n%s", res.Output, want)
	}
}

// If broken: the log does not mark as approximate the lines of a block
// one of whose lines was too long to align (its words placed by share).
func TestOverAlignLimitMarkedApproximate(t *testing.T) {
	words := make([]string, MaxAlignWords+1)
	for i := range words {
		words[i] = fmt.Sprintf("slovo%d", i)
	}
	src := altoDoc(`<TextBlock ID="B1"><TextLine ID="L1"><String CONTENT="` + strings.Join(words, " ") + `"/></TextLine>` +
		`<TextLine ID="L2"><String CONTENT="Dobrý"/><SP/><String CONTENT="den"/></TextLine></TextBlock>`)
	res, err := Translate(context.Background(), []byte(src), Options{Backend: upper(), Source: "cs", Target: "en", File: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Log) != 2 {
		t.Fatalf("log %+v, want two rows", res.Log)
	}
	for _, r := range res.Log {
		if !r.Approx {
			t.Errorf("line %s not marked approximate", r.Line)
		}
	}
	if res.Stats.OverAlignLimit != 1 {
		t.Errorf("OverAlignLimit %d, want 1", res.Stats.OverAlignLimit)
	}
}
