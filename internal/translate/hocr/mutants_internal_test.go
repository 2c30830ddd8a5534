package hocr

import (
	"context"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend/backendtest"
)

// hocrPage is an hOCR document of one page holding body.
func hocrPage(body string) string {
	return "<html><head><meta name='ocr-capabilities' content='ocr_page ocr_par ocr_line ocrx_word'></head><body><div class='ocr_page' id='page_1' title='bbox 0 0 9 9'>" +
		body + "</div></body></html>"
}

func runAuto(t *testing.T, src string) *Result {
	t.Helper()
	res, err := Translate(context.Background(), []byte(src), Options{Backend: &backendtest.Backend{}, Source: "auto", Target: "en",
		Detector: fixedDetector{"sk", 0.9}, File: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// If broken: a paragraph without lang whose lines all declare one language
// is not translated from it, or lines declaring different languages make
// the paragraph take one of them.
func TestParagraphLangFromLines(t *testing.T) {
	par := func(l1, l2 string) string {
		return hocrPage(`<p class='ocr_par' id='par_1'><span class='ocr_line' id='line_1' lang='` + l1 + `'><span class='ocrx_word'>hrob</span></span>` +
			`<span class='ocr_line' id='line_2' lang='` + l2 + `'><span class='ocrx_word'>jáma</span></span></p>`)
	}
	for _, c := range []struct {
		name, src, want string
	}{
		{"lines agree", par("deu", "deu"), "de/element"},
		{"lines disagree", par("deu", "slk"), "cs/default"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := runAuto(t, c.src)
			if len(res.Log) != 2 {
				t.Fatalf("log %+v, want two rows", res.Log)
			}
			for _, r := range res.Log {
				if got := r.Lang + "/" + string(r.LangSource); got != c.want {
					t.Errorf("line %s: %s, want %s", r.Line, got, c.want)
				}
			}
		})
	}
}

// If broken: a word split by inline markup (Wo<em>rd</em>) is sent as two
// words ("Wo rd").
func TestWordSplitByMarkup(t *testing.T) {
	res := run(t, "<html><body>"+`<div class='ocr_page'><span class='ocr_line' id='line_1'><span class='ocrx_word'>hr<em>ob</em></span> <span class='ocrx_word'>jáma</span></span></div>`+"</body></html>")
	if len(res.Log) != 1 || res.Log[0].Source != "hrob jáma" || res.Log[0].Target != "grave pit" {
		t.Errorf("log %+v, want hrob jáma -> grave pit", res.Log)
	}
	if !strings.Contains(string(res.Output), "<span class='ocrx_word'>grave<em></em></span> <span class='ocrx_word'>pit</span>") {
		t.Errorf("output:\n%s", res.Output)
	}
}

// If broken: a page whose paragraphs are in two languages is labelled with
// the tag of the first paragraph's language, not of the language most of
// its lines are in.
func TestPageLangIsMainLanguage(t *testing.T) {
	src := hocrPage(`<p class='ocr_par' id='par_1' lang='deu'><span class='ocr_line' id='line_1'><span class='ocrx_word'>Grube</span></span></p>` +
		`<p class='ocr_par' id='par_2' lang='ces'><span class='ocr_line' id='line_2'><span class='ocrx_word'>hrob</span></span>` +
		`<span class='ocr_line' id='line_3'><span class='ocrx_word'>jáma</span></span></p>`)
	res := runAuto(t, src)
	if res.Tag != "en-t-cs-t0-und" {
		t.Fatalf("tag %q, want en-t-cs-t0-und", res.Tag)
	}
	out := string(res.Output)
	for _, want := range []string{
		`<div class='ocr_page' id='page_1' title='bbox 0 0 9 9' lang="en-t-cs-t0-und">`,
		`<p class='ocr_par' id='par_1' lang='en-t-de-t0-und'>`,
		`<p class='ocr_par' id='par_2' lang='en-t-cs-t0-und'>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if n := res.LangSources[alto.FromElement]; n != 3 {
		t.Errorf("LangSources %v, want 3 lines from their element", res.LangSources)
	}
}
