package metadata

import (
	"context"
	"errors"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/xmlsplice"
)

type upperBE struct{ calls int }

func (b *upperBE) Name() string { return "upper" }
func (b *upperBE) Close() error { return nil }
func (b *upperBE) Supports(ctx context.Context, src, tgt string) error {
	if src == "xx" {
		return errors.New("unsupported language pair xx-" + tgt)
	}
	return nil
}
func (b *upperBE) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	b.calls++
	return strings.ToUpper(text) + " <&>", nil
}

type detector struct {
	lang string
	conf float64
}

func (d detector) Detect(string) (string, float64) { return d.lang, d.conf }

// Bare record with the default namespace, and a wrapped one with other prefixes.
const bare = "<?xml version='1.0'?>\n<amcr xmlns=\"https://api.aiscr.cz/schema/amcr/2.1/\">\n\t<dokument>\n\t\t<popis id='p'>Popis &amp; nález</popis>\n\t\t<poznamka/>\n\t\t<poznamka>  </poznamka>\n\t</dokument>\n</amcr>\n"

const wrapped = "<o:OAI-PMH xmlns:o=\"http://www.openarchives.org/OAI/2.0/\"><o:metadata>\r\n" +
	"  <x:amcr xmlns:x=\"https://api.aiscr.cz/schema/amcr/2.2/\"><x:dokument>\r\n" +
	"    <x:popis xml:lang=\"cs\">jedna</x:popis>\r\n" +
	"    <popis>not in the namespace</popis>\r\n" +
	"  </x:dokument></x:amcr></o:metadata></o:OAI-PMH>"

func compileAll(t *testing.T, exprs ...string) []*XPath {
	var out []*XPath
	for _, e := range exprs {
		x, err := Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, x)
	}
	return out
}

func TestModes(t *testing.T) {
	fs := compileAll(t, "//arch:amcr/arch:dokument/arch:popis", "//arch:amcr/arch:dokument/arch:poznamka")
	cases := []struct {
		name, src string
		mode      alto.Mode
		want      string
	}{
		{"bare replace", bare, alto.Replace,
			strings.Replace(bare, "Popis &amp; nález", "POPIS &amp; NÁLEZ &lt;&amp;&gt;", 1)},
		{"bare append", bare, alto.Append,
			strings.Replace(bare, "<popis id='p'>Popis &amp; nález</popis>",
				"<popis id='p' xml:lang=\"cs\">Popis &amp; nález</popis>\n\t\t<popis id='p' xml:lang=\"en\">POPIS &amp; NÁLEZ &lt;&amp;&gt;</popis>", 1)},
		// The field's own xml:lang follows its text into the target
		// language (before, English text stayed labelled cs).
		{"wrapped replace relabels", wrapped, alto.Replace, strings.Replace(wrapped, `xml:lang="cs">jedna<`, `xml:lang="en">JEDNA &lt;&amp;&gt;<`, 1)},
		{"wrapped append keeps existing label", wrapped, alto.Append,
			strings.Replace(wrapped, "<x:popis xml:lang=\"cs\">jedna</x:popis>",
				"<x:popis xml:lang=\"cs\">jedna</x:popis>\r\n    <x:popis xml:lang=\"en\">JEDNA &lt;&amp;&gt;</x:popis>", 1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be := &upperBE{}
			opt := Options{Backend: be, Source: "cs", Target: "en", Fields: fs, Mode: c.mode}
			res, err := Translate(context.Background(), []byte(c.src), opt)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Output) != c.want {
				t.Fatalf("got\n%s\nwant\n%s", res.Output, c.want)
			}
			if be.calls != 1 || res.Units != 1 {
				t.Errorf("%d calls, %d units", be.calls, res.Units)
			}
			if _, err := xmlsplice.Parse(res.Output); err != nil {
				t.Errorf("output does not parse: %v", err)
			}
		})
	}
}

// detectAll is the source-language order that detects every field,
// whatever its length.
var detectAll = alto.LangOrder{MinLength: 0, MinConfidence: alto.DefaultMinConfidence, Default: alto.FallbackLang}

func TestDetectionPerField(t *testing.T) {
	fs := compileAll(t, "//arch:amcr/arch:dokument/arch:popis")
	cases := []struct {
		name  string
		det   detector
		calls int
		lang  string
		warn  bool
	}{
		{"confident", detector{"sk", 0.8}, 1, "sk", false},
		{"at threshold falls back to Czech", detector{"pl", 0.2}, 1, "cs", false},
		{"already English", detector{"en", 0.9}, 0, "", false},
		{"unsupported detected pair is skipped", detector{"xx", 0.9}, 0, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be := &upperBE{}
			// The field is short: detected only with a minimum length
			// of 0 (the default order gives it Czech).
			res, err := Translate(context.Background(), []byte(bare), Options{Backend: be, Target: "en", Detector: c.det, Fields: fs, Order: &detectAll})
			if err != nil {
				t.Fatal(err)
			}
			if be.calls != c.calls || !res.DetectionUsed || (len(res.Warnings) > 0) != c.warn {
				t.Errorf("%d calls, detection %v, warnings %q", be.calls, res.DetectionUsed, res.Warnings)
			}
			if c.lang != "" && res.Languages[c.lang] != 1 {
				t.Errorf("languages %v", res.Languages)
			}
		})
	}
	// An explicit unsupported pair is an error naming the pair.
	_, err := Translate(context.Background(), []byte(bare), Options{Backend: &upperBE{}, Source: "xx", Target: "en", Fields: fs})
	if err == nil || !strings.Contains(err.Error(), "xx-en") {
		t.Errorf("explicit unsupported pair: %v", err)
	}
}

func TestCompile(t *testing.T) {
	good := []struct {
		expr string
		n    int
	}{
		{"//arch:amcr/arch:dokument/arch:popis", 1},
		{"//arch:popis", 1},
		{"/oai:OAI-PMH//arch:*", 0},
		{"/arch:amcr//arch:*", 4},
		{"//arch:dokument/arch:*", 3},
		{"//*", 5},
		{"//popis", 0}, // an unprefixed name means no namespace
	}
	doc, err := xmlsplice.Parse([]byte(bare))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range good {
		x, err := Compile(c.expr)
		if err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		if got := len(x.Select(doc, DefaultNamespaces)); got != c.n {
			t.Errorf("%s selected %d elements, want %d", c.expr, got, c.n)
		}
	}
	for _, bad := range []string{"arch:popis", "//arch:popis[1]", "//arch:popis/@id", "//text()", "//a/../b", "//child::a", "//:a"} {
		if _, err := Compile(bad); err == nil {
			t.Errorf("Compile(%q) accepted", bad)
		}
	}
	if _, err := ParseFields("f.txt", []byte("\ufeff# c\n\n//arch:a\n//arch:b[2]\n")); err == nil || !strings.Contains(err.Error(), "f.txt:4") {
		t.Errorf("ParseFields error %v, want one naming f.txt:4", err)
	}
	if _, err := Translate(context.Background(), []byte(bare), Options{Backend: &upperBE{}, Source: "cs", Target: "en", Fields: compileAll(t, "//dc:title")}); err == nil {
		t.Error("unbound prefix accepted")
	}
}

// TestMixedContentCounted: a targeted field whose text is interleaved with a
// child element, a comment or a processing instruction cannot be replaced
// as one text; it is left byte for byte as it was, but counted as a skipped
// unit, warned about with its line and logged with status mixed_content,
// never dropped silently (a record of only such fields used to be called
// one where no field matched).
func TestMixedContentCounted(t *testing.T) {
	const src = "<amcr xmlns=\"https://api.aiscr.cz/schema/amcr/2.2/\">\n" +
		"<dokument><popis>Hrad <b>Kámen</b> nad řekou</popis></dokument>\n" +
		"<dokument><popis>Kostel<!-- c --> u obce</popis></dokument>\n" +
		"<dokument><popis>Zeď<?pi x?> kamenná</popis></dokument>\n" +
		"<dokument><popis><b>jen dítě</b></popis><poznamka>Jáma</poznamka></dokument>\n</amcr>\n"
	fs := compileAll(t, "//arch:amcr/arch:dokument/arch:popis", "//arch:amcr/arch:dokument/arch:poznamka")
	for _, mode := range []alto.Mode{alto.Replace, alto.Append} {
		be := &upperBE{}
		res, err := Translate(context.Background(), []byte(src), Options{Backend: be, Source: "cs", Target: "en", Fields: fs, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		// Three mixed fields with text of their own; the fourth popis has
		// only a child element, no text: not a unit.
		if res.Units != 4 || res.Translated != 1 || res.Skipped != 3 || res.Mixed != 3 || be.calls != 1 {
			t.Errorf("%s: units %d, translated %d, skipped %d, mixed %d, calls %d; want 4, 1, 3, 3, 1",
				mode, res.Units, res.Translated, res.Skipped, res.Mixed, be.calls)
		}
		var mixedRows []string
		for _, r := range res.Log {
			if r.Status == backend.MixedContent {
				mixedRows = append(mixedRows, r.Source)
				if r.Target != "" {
					t.Errorf("%s: mixed row has a translation %q", mode, r.Target)
				}
			}
		}
		if strings.Join(mixedRows, "|") != "Hrad  nad řekou|Kostel u obce|Zeď kamenná" {
			t.Errorf("%s: mixed_content rows %q", mode, mixedRows)
		}
		for _, line := range []string{"line 2", "line 3", "line 4"} {
			found := false
			for _, w := range res.Warnings {
				found = found || strings.Contains(w, line) && strings.Contains(w, "mixed_content")
			}
			if !found {
				t.Errorf("%s: no warning naming %s in %q", mode, line, res.Warnings)
			}
		}
		for _, keep := range []string{"<popis>Hrad <b>Kámen</b> nad řekou</popis>", "<popis>Kostel<!-- c --> u obce</popis>", "<popis>Zeď<?pi x?> kamenná</popis>"} {
			if !strings.Contains(string(res.Output), keep) {
				t.Errorf("%s: %q changed:\n%s", mode, keep, res.Output)
			}
		}
	}
}

// The source-language order on fields: a short field takes its own
// xml:lang, else the document's language (detected over all fields, else
// the root's xml:lang), else the default.
func TestLangOrder(t *testing.T) {
	fs := compileAll(t, "//arch:popis")
	doc := func(rootLang, fieldLang string) string {
		return `<amcr xmlns="https://api.aiscr.cz/schema/amcr/2.1/"` + rootLang + `><popis` + fieldLang + `>hrob a jáma</popis></amcr>`
	}
	cases := []struct{ name, src, want string }{
		{"field xml:lang", doc(` xml:lang="cs"`, ` xml:lang="de"`), "de/element"},
		{"root xml:lang", doc(` xml:lang="pl"`, ""), "pl/document"},
		{"default", doc("", ""), "cs/default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Translate(context.Background(), []byte(c.src), Options{Backend: &upperBE{}, Target: "en", Detector: detector{"hu", 0.9}, Fields: fs})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Log) != 1 || res.Log[0].Lang+"/"+string(res.Log[0].LangSource) != c.want {
				t.Errorf("log %+v, want %s", res.Log, c.want)
			}
		})
	}
}

// failingBE answers every translation with an error.
type failingBE struct{ upperBE }

func (b *failingBE) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	return "", errors.New("MT service: 500 Internal Server Error")
}

// TestErrorNamesFieldAsWritten: a failure names the field with the
// prefixes its document writes, as its log rows do (it said
// //arch:amcr/arch:dokument/arch:popis, the field list's form, which a
// search of the document or the log does not find).
func TestErrorNamesFieldAsWritten(t *testing.T) {
	fs := compileAll(t, "//arch:amcr/arch:dokument/arch:popis")
	_, err := Translate(context.Background(), []byte(wrapped), Options{Backend: &failingBE{}, Source: "cs", Target: "en", Fields: fs, Mode: alto.Replace, File: "r.xml"})
	if err == nil || !strings.Contains(err.Error(), "//x:amcr/x:dokument/x:popis") || strings.Contains(err.Error(), "arch:") {
		t.Errorf("error %v; want it to name //x:amcr/x:dokument/x:popis", err)
	}
}
