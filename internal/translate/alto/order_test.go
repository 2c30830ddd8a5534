package alto

import (
	"context"
	"testing"

	"archivekit/internal/translate/langid"
)

// scoreDetector answers fixed scores, best first, for every text.
type scoreDetector []langid.Score

func (d scoreDetector) Detect(string) (string, float64) { return d[0].Lang, d[0].Value }
func (d scoreDetector) Scores(string) []langid.Score    { return d }

// The order of issue 33: detected (long enough, confident), else the
// element's language, else the document's, else the default.
func TestLangOrderChoose(t *testing.T) {
	long := "Záchranný archeologický výzkum proběhl v obci Vraní během roku"
	short := "Obsah"
	arabic := "كتاب في تاريخ مصر الحديث من عهد محمد علي"
	def := DefaultLangOrder()
	ignore := def
	ignore.Element = ElementIgnore
	cases := []struct {
		name            string
		order           LangOrder
		det             Detector
		text, elem, doc string
		wantLang        string
		wantFrom        LangSource
	}{
		{"long and confident: detected", def, fixedDetector{"de", 0.9}, long, "sk", "cs", "de", FromDetected},
		{"long, at the threshold: element", def, fixedDetector{"de", 0.2}, long, "sk", "cs", "sk", FromElement},
		{"long, not confident, no element: document", def, fixedDetector{"de", 0.1}, long, "", "cs", "cs", FromDocument},
		{"long, not confident, nothing: default", def, fixedDetector{"de", 0.1}, long, "", "", "cs", FromDefault},
		{"short: never detected, element", def, fixedDetector{"de", 0.99}, short, "sk", "cs", "sk", FromElement},
		{"short, no element: document", def, fixedDetector{"de", 0.99}, short, "", "pl", "pl", FromDocument},
		{"short, nothing: configured default", LangOrder{MinLength: 20, MinConfidence: 0.2, Default: "de"}, fixedDetector{"pl", 0.99}, short, "", "", "de", FromDefault},
		{"minimum length 0: short detected", LangOrder{MinLength: 0, MinConfidence: 0.2, Default: "cs"}, fixedDetector{"sk", 0.9}, short, "", "cs", "sk", FromDetected},
		{"minimum length 0: no letter, not detected", LangOrder{MinLength: 0, MinConfidence: 0.2, Default: "cs"}, fixedDetector{"sk", 0.9}, "12 / 3", "", "", "cs", FromDefault},
		{"higher minimum length: element", LangOrder{MinLength: 80, MinConfidence: 0.2, Default: "cs"}, fixedDetector{"de", 0.9}, long, "hu", "cs", "hu", FromElement},
		{"higher minimum confidence: document", LangOrder{MinLength: 20, MinConfidence: 0.95, Default: "cs"}, fixedDetector{"de", 0.9}, long, "", "cs", "cs", FromDocument},
		{"no detector: element", def, nil, long, "sk", "cs", "sk", FromElement},
		{"empty detection: document", def, fixedDetector{"", 0.9}, long, "", "cs", "cs", FromDocument},
		// The document's language is the prior: Slovak 0.40 against
		// Czech 0.35 x 3 gives Czech, confident on its own 0.35.
		{"prior weighted: detected prior", def, scoreDetector{{Lang: "sk", Value: 0.40}, {Lang: "cs", Value: 0.35}}, long, "", "cs", "cs", FromDetected},
		// The prior wins the weighting but its own 0.15 is not
		// confident: the element decides.
		{"prior weighted, not confident: element", def, scoreDetector{{Lang: "sk", Value: 0.30}, {Lang: "cs", Value: 0.15}}, long, "de", "cs", "de", FromElement},
		// --element-lang ignore: the element's language is not read.
		{"element ignored, short: document", ignore, fixedDetector{"de", 0.99}, short, "sk", "cs", "cs", FromDocument},
		{"element ignored, short, no document: default", ignore, fixedDetector{"de", 0.99}, short, "sk", "", "cs", FromDefault},
		{"element ignored, long, not confident: document", ignore, fixedDetector{"de", 0.1}, long, "hu", "pl", "pl", FromDocument},
		{"element ignored, long and confident: detected", ignore, fixedDetector{"de", 0.9}, long, "sk", "cs", "de", FromDetected},
		{"element rule empty: used", LangOrder{MinLength: 20, MinConfidence: 0.2, Default: "cs"}, nil, short, "sk", "cs", "sk", FromElement},
		{"unweighted winner confident: detected", def, scoreDetector{{Lang: "de", Value: 0.8}, {Lang: "cs", Value: 0.1}}, long, "", "cs", "de", FromDetected},
		// A script no supported language is written in comes first,
		// whatever the element, the document, the default or a
		// confident detection say; an element language written in it is
		// taken.
		{"Arabic, element cs: script", def, fixedDetector{"cs", 0.9}, arabic, "cs", "cs", "und-Arab", FromScript},
		{"Arabic, short, nothing: script", def, nil, "بسم الله", "", "", "und-Arab", FromScript},
		{"Arabic, element ar: element", def, fixedDetector{"cs", 0.9}, arabic, "ar", "cs", "ar", FromElement},
		{"Arabic, element ar ignored: script", ignore, nil, arabic, "ar", "cs", "und-Arab", FromScript},
		// An element language whose script CLDR does not know (Classical
		// Syriac) is taken at its word, as a given source is; one it knows
		// in another script is not.
		{"Syriac, element syc: element", def, nil, "ܥܠ ܚܝܠܗ ܕܡܪܢ ܝܫܘܥ ܡܫܝܚܐ", "syc", "cs", "syc", FromElement},
		{"Syriac, element syc ignored: script", ignore, nil, "ܥܠ ܚܝܠܗ ܕܡܪܢ ܝܫܘܥ ܡܫܝܚܐ", "syc", "cs", "und-Syrc", FromScript},
		{"Syriac, element cs: script", def, nil, "ܥܠ ܚܝܠܗ ܕܡܪܢ ܝܫܘܥ ܡܫܝܚܐ", "cs", "cs", "und-Syrc", FromScript},
		{"Czech with an Arabic name: detected", def, fixedDetector{"cs", 0.9}, long + " (محمد علي)", "", "", "cs", FromDetected},
		{"Russian: not a foreign script", def, fixedDetector{"ru", 0.9}, "Отчёт об археологических раскопках в деревне", "", "cs", "ru", FromDetected},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lang, from := c.order.Choose(c.det, c.text, c.elem, c.doc)
			if lang != c.wantLang || from != c.wantFrom {
				t.Errorf("Choose = %s (%s), want %s (%s)", lang, from, c.wantLang, c.wantFrom)
			}
		})
	}
}

// Given: with an explicit source language, a unit in a script no
// supported language is written in takes the script's tag, unless the
// given language is written in it.
func TestGiven(t *testing.T) {
	cases := []struct {
		text, source, want string
		from               LangSource
	}{
		{"كتاب في تاريخ مصر الحديث", "cs", "und-Arab", FromScript},
		{"كتاب في تاريخ مصر الحديث", "ar", "ar", FromGiven},
		{"ספר בראשית פרק ראשון", "de", "und-Hebr", FromScript},
		{"ספר בראשית פרק ראשון", "he", "he", FromGiven},
		{"四庫全書總目提要", "en", "und-Hani", FromScript},
		{"Dopis paši Muhammadu Alímu (محمد علي) z Káhiry", "cs", "cs", FromGiven},
		{"12 / 3", "cs", "cs", FromGiven},
		{"ܥܠ ܚܝܠܗ ܕܡܪܢ ܝܫܘܥ ܡܫܝܚܐ", "syc", "syc", FromGiven},
	}
	for _, c := range cases {
		if lang, from := Given(c.text, c.source); lang != c.want || from != c.from {
			t.Errorf("Given(%q, %s) = %s (%s), want %s (%s)", c.text, c.source, lang, from, c.want, c.from)
		}
	}
}

func TestElementLang(t *testing.T) {
	cases := map[string]string{
		"cs": "cs", "en-US": "en", "ces": "cs", "cze": "cs", "ger": "de", "slo": "sk", "Czech": "cs",
		"german": "de", "Latin": "la", "lat": "la", " sk ": "sk", "und": "", "zxx": "", "mul": "",
		"": "", "xx-nonsense-!": "", "Klingonish": "",
	}
	for in, want := range cases {
		if got := ElementLang(in); got != want {
			t.Errorf("ElementLang(%q) = %q, want %q", in, got, want)
		}
	}
}

// The default order on blocks with no document language: short blocks
// take their LANG, else the default (Czech), never a detection.
func TestLangOrderDefaults(t *testing.T) {
	res, err := Translate(context.Background(), []byte(small), Options{Backend: upper(), Source: "auto", Target: "en", Detector: fixedDetector{"sk", 0.9}, File: "s"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res.Log {
		got[r.Source] = r.Lang + "/" + string(r.LangSource)
	}
	want := map[string]string{"Dobrý den 'x'": "cs/default", "světe": "cs/default", "jedna dva": "cs/element"}
	for src, w := range want {
		if got[src] != w {
			t.Errorf("%q: %s, want %s (log %v)", src, got[src], w, got)
		}
	}
	if res.LangSources[FromDefault] != 1 || res.LangSources[FromElement] != 1 || res.LangSources[FromDetected] != 0 {
		t.Errorf("LangSources %v", res.LangSources)
	}
}

// On the shared sample (79 pages of Czech OCR whose TextBlocks carry the
// OCR engine's LANG: cs, and sk on 227 mostly short blocks) each block's
// rule is recorded on its lines, and every block is counted once.
func TestLangOrderRealALTO(t *testing.T) {
	res, err := Translate(context.Background(), readSample(t), Options{Backend: upper(), Source: "auto", Target: "en", Detector: langid.Shared(), File: "m"})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		page int
		src  string
	}
	got := map[row]string{}
	for _, r := range res.Log {
		got[row{r.Page, r.Source}] = r.Lang + "/" + string(r.LangSource)
		if r.Lang == "" || r.LangSource == "" {
			t.Errorf("page %d line %s: no language or rule recorded", r.Page, r.Line)
		}
	}
	want := map[row]string{
		// Long enough, detected Czech with confidence.
		{2, "Oprávněná organizace:"}:                       "cs/detected",
		{2, "Pueblo - archeologická společnost, o. p. s."}: "cs/detected",
		// Short, LANG="cs" on its TextBlock.
		{1, "Záchranný archeologický výzkum"}: "cs/element",
		// Short, LANG="sk" (the OCR engine's label on a Czech word):
		// the element's language comes before the document's.
		{4, "Obsah"}: "sk/element",
		// Short, no LANG: the page's (document's) language.
		{3, "intravilán obce"}:                "cs/document",
		{8, "5. Stručná historie obce Vraní"}: "cs/document",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("page %d %q: %q, want %q", k.page, k.src, got[k], w)
		}
	}
	total := 0
	for _, n := range res.LangSources {
		total += n
	}
	if total != res.Stats.Units-res.Stats.AlreadyDone || res.LangSources[FromDetected] == 0 || res.LangSources[FromDocument] == 0 || res.LangSources[FromDefault] != 0 {
		t.Errorf("LangSources %v for %d units", res.LangSources, res.Stats.Units)
	}
	t.Logf("blocks per rule: %v; languages (blocks): %v", res.LangSources, res.Languages)
}

// --element-lang ignore on the shared sample: the 151 short blocks the
// OCR engine labelled sk in the Czech document take the page's Czech, and
// so does its one block labelled en-US (three URLs, left untouched as
// English when the element is used); the element rule chooses nothing,
// and detected blocks are as before.
func TestElementIgnoreRealALTO(t *testing.T) {
	run := func(e ElementRule) *Result {
		o := DefaultLangOrder()
		o.Element = e
		res, err := Translate(context.Background(), readSample(t), Options{Backend: upper(), Source: "auto", Target: "en", Detector: langid.Shared(), File: "m", Order: &o})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	use, ignore := run(ElementUse), run(ElementIgnore)
	if use.Languages["sk"] != 151 || ignore.Languages["sk"] != 0 || ignore.Languages["cs"] != use.Languages["cs"]+152 ||
		use.Stats.InTarget-ignore.Stats.InTarget != 1 {
		t.Errorf("blocks per language: use %v, ignore %v; in target: use %d, ignore %d; want the 151 sk blocks and the en-US one Czech",
			use.Languages, ignore.Languages, use.Stats.InTarget, ignore.Stats.InTarget)
	}
	if ignore.LangSources[FromElement] != 0 || ignore.LangSources[FromDetected] != use.LangSources[FromDetected] ||
		ignore.LangSources[FromDocument] != use.LangSources[FromDocument]+use.LangSources[FromElement] {
		t.Errorf("blocks per rule: use %v, ignore %v", use.LangSources, ignore.LangSources)
	}
	type key struct {
		page       int
		line, text string
	}
	after := map[key]LogRow{}
	for _, r := range ignore.Log {
		after[key{r.Page, r.Line, r.Source}] = r
	}
	changed := map[string]int{}
	for _, r := range use.Log {
		g := after[key{r.Page, r.Line, r.Source}]
		if r.Page == 4 && r.Source == "Obsah" && g.Lang+"/"+string(g.LangSource) != "cs/document" {
			t.Errorf("page 4 Obsah: %s/%s, want cs/document", g.Lang, g.LangSource)
		}
		if r.Lang != g.Lang || r.LangSource != g.LangSource {
			changed[r.Lang+"/"+string(r.LangSource)+" -> "+g.Lang+"/"+string(g.LangSource)]++
		}
	}
	// The en-US block's 3 lines are logged in_target with the element rule.
	if len(changed) != 3 || changed["sk/element -> cs/document"] != 532 || changed["cs/element -> cs/document"] != 1078 ||
		changed["en/element -> cs/document"] != 3 {
		t.Errorf("log rows changed: %v", changed)
	}
}
