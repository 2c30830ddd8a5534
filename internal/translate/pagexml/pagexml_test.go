package pagexml

import (
	"context"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend/backendtest"
)

const ns2019 = `xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"`

func page(ns, body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<PcGts ` + ns + `>
  <Metadata><Creator>test</Creator></Metadata>
  <Page imageFilename="a.png" imageWidth="10" imageHeight="10">
` + body + `
  </Page>
</PcGts>
`
}

func translate(t *testing.T, src string, mode alto.Mode) *Result {
	t.Helper()
	res, err := Translate(context.Background(), []byte(src), Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en", Mode: mode, File: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestAppend: each translated line gets one TextEquiv after its existing
// ones, indexed one above the highest, tagged; nothing else changes, and
// Remove gives back the input.
func TestAppend(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string // substrings of the output
	}{
		{"indexed", page(ns2019, `    <TextRegion id="r1">
      <TextLine id="l1">
        <Coords points="0,0 1,1"/>
        <TextEquiv index="1" conf="0.9"><Unicode>hrob a jáma</Unicode></TextEquiv>
        <TextEquiv index="3"><Unicode>hrob a jama</Unicode></TextEquiv>
        <TextStyle fontSize="10"/>
      </TextLine>
    </TextRegion>`), []string{
			"<TextEquiv index=\"3\"><Unicode>hrob a jama</Unicode></TextEquiv>\n        <TextEquiv index=\"4\" comments=\"en-t-cs-t0-und\"><Unicode>grave and pit</Unicode></TextEquiv>\n        <TextStyle",
		}},
		{"no index", page(ns2019, `<TextRegion id="r1"><TextLine id="l1"><Coords points="0,0"/><TextEquiv><Unicode>sonda v hrob</Unicode></TextEquiv></TextLine></TextRegion>`), []string{
			`<TextEquiv><Unicode>sonda v hrob</Unicode></TextEquiv><TextEquiv index="1" comments="en-t-cs-t0-und"><Unicode>trench in grave</Unicode></TextEquiv></TextLine>`,
		}},
		{"words only, prefixed", strings.ReplaceAll(strings.ReplaceAll(page(`xmlns:pc="http://schema.primaresearch.org/PAGE/gts/pagecontent/2018-07-15"`, `<TextRegion id="r1"><TextLine id="l1"><Coords points="0,0"/>
	<Word id="w1"><Coords points="0,0"/><TextEquiv><Unicode>hrob</Unicode></TextEquiv></Word>
	<Word id="w2"><Coords points="0,0"/><TextEquiv><Unicode>kostel</Unicode></TextEquiv></Word>
	<TextStyle/></TextLine></TextRegion>`), "<", "<pc:"), "<pc:/", "</pc:"), []string{
			"<pc:Unicode>kostel</pc:Unicode></pc:TextEquiv></pc:Word>\n\t<pc:TextEquiv index=\"1\" comments=\"en-t-cs-t0-und\"><pc:Unicode>grave KOSTEL</pc:Unicode></pc:TextEquiv>\n\t<pc:TextStyle/>",
		}},
		{"escaped", page(ns2019, `<TextRegion id="r1"><TextLine id="l1"><TextEquiv><Unicode>a &amp; &lt;b&gt;</Unicode></TextEquiv></TextLine></TextRegion>`), []string{
			`<Unicode>and &amp; &lt;B&gt;</Unicode>`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(c.in, "<?xml", "<?xml", 1)
			if strings.HasPrefix(c.name, "words") {
				in = strings.Replace(in, "<pc:?xml", "<?xml", 1)
			}
			res := translate(t, in, "")
			out := string(res.Output)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if res.Sidecar != nil || res.Stats.Translated != 1 || res.Tag != "en-t-cs-t0-und" {
				t.Errorf("sidecar %v, stats %+v, tag %q", res.Sidecar != nil, res.Stats, res.Tag)
			}
			back, err := Remove(res.Output)
			if err != nil || string(back) != in {
				t.Errorf("Remove: %v\n%s\nwant\n%s", err, back, in)
			}
			again := translate(t, out, "")
			if string(again.Output) != out || again.Stats.AlreadyDone != 1 || again.Stats.Calls != 0 {
				t.Errorf("second run changed the output or translated again: %+v", again.Stats)
			}
		})
	}
}

// TestAppendRegion: a region with a TextEquiv of its own (the region's
// whole transcription beside its lines') gets one more holding its lines'
// translations, one a line, after its own; a region without one gets
// none; a second run adds nothing and Remove gives back the input.
func TestAppendRegion(t *testing.T) {
	in := page(ns2019, `    <TextRegion id="r1">
      <TextLine id="l1"><TextEquiv><Unicode>hrob</Unicode></TextEquiv></TextLine>
      <TextLine id="l2"><TextEquiv><Unicode>sonda</Unicode></TextEquiv></TextLine>
      <TextEquiv index="1"><Unicode>hrob
sonda</Unicode></TextEquiv>
      <TextStyle fontSize="10"/>
    </TextRegion>
    <TextRegion id="r2">
      <TextLine id="l3"><TextEquiv><Unicode>jáma</Unicode></TextEquiv></TextLine>
    </TextRegion>`)
	res := translate(t, in, "")
	out := string(res.Output)
	want := "sonda</Unicode></TextEquiv>\n      <TextEquiv index=\"2\" comments=\"en-t-cs-t0-und\"><Unicode>grave\ntrench</Unicode></TextEquiv>\n      <TextStyle"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks the region's translation %q:\n%s", want, out)
	}
	if n := strings.Count(out, `comments="en-t-cs-t0-und"`); n != 4 {
		t.Errorf("%d TextEquivs added, want 4 (three lines, one region):\n%s", n, out)
	}
	if back, err := Remove(res.Output); err != nil || string(back) != in {
		t.Errorf("Remove: %v\n%s", err, back)
	}
	if again := translate(t, out, ""); string(again.Output) != out || again.Stats.Calls != 0 {
		t.Errorf("second run changed the output or translated again: %+v", again.Stats)
	}
}

// TestPAGE2013: append leaves the input alone and writes a sidecar with
// the same ids and the translation; the tag goes on the TextLine, as
// TextEquiv has no @comments in 2013.
func TestPAGE2013(t *testing.T) {
	in := page(`xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2013-07-15"`, `<TextRegion id="r1"><TextLine id="l1"><TextEquiv><Unicode>hrob</Unicode></TextEquiv></TextLine><TextLine id="l2"><TextEquiv><Unicode>jáma</Unicode></TextEquiv></TextLine><TextEquiv><Unicode>hrob
jáma</Unicode></TextEquiv></TextRegion>`)
	res := translate(t, in, "")
	if string(res.Output) != in {
		t.Errorf("input changed:\n%s", res.Output)
	}
	want := `<TextLine id="l1" comments="en-t-cs-t0-und"><TextEquiv><Unicode>grave</Unicode></TextEquiv></TextLine><TextLine id="l2" comments="en-t-cs-t0-und"><TextEquiv><Unicode>pit</Unicode></TextEquiv></TextLine><TextEquiv><Unicode>grave
pit</Unicode></TextEquiv></TextRegion>`
	if !strings.Contains(string(res.Sidecar), want) {
		t.Errorf("sidecar lacks %s:\n%s", want, res.Sidecar)
	}
}

// TestReplace: the line's TextEquiv, its Words and the region's text
// are overwritten; the TextEquiv is tagged; the languages they state
// become English (none is added).
func TestReplace(t *testing.T) {
	in := page(ns2019, `<TextRegion id="r1" primaryLanguage="Czech"><TextLine id="l1" primaryLanguage="Czech"><Word id="w1" language="Czech"><TextEquiv><PlainText>hrob</PlainText><Unicode>hrob</Unicode></TextEquiv></Word><Word id="w2"><TextEquiv><Unicode/></TextEquiv></Word><TextEquiv conf="1"><PlainText>hrob a</PlainText><Unicode>hrob a</Unicode></TextEquiv></TextLine><TextEquiv><Unicode>hrob a</Unicode></TextEquiv></TextRegion>`)
	res := translate(t, in, alto.Replace)
	// A Word's PlainText is written with its Unicode, and the region's
	// TextEquiv is tagged as the line's (both were left before 2026-11-28).
	want := `<TextRegion id="r1" primaryLanguage="English"><TextLine id="l1" primaryLanguage="English"><Word id="w1" language="English"><TextEquiv><PlainText>grave</PlainText><Unicode>grave</Unicode></TextEquiv></Word><Word id="w2"><TextEquiv><Unicode>and</Unicode></TextEquiv></Word><TextEquiv conf="1" comments="en-t-cs-t0-und"><PlainText>grave and</PlainText><Unicode>grave and</Unicode></TextEquiv></TextLine><TextEquiv comments="en-t-cs-t0-und"><Unicode>grave and</Unicode></TextEquiv></TextRegion>`
	if !strings.Contains(string(res.Output), want) {
		t.Errorf("output lacks %s:\n%s", want, res.Output)
	}
	if len(res.Log) != 1 || res.Log[0].Source != "hrob a" || res.Log[0].Target != "grave and" || res.Log[0].Line != "l1" {
		t.Errorf("log %+v", res.Log)
	}
}

func TestRefused(t *testing.T) {
	for name, in := range map[string]string{
		"alto":    `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"/>`,
		"2010":    `<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2010-03-19"/>`,
		"no ns":   `<PcGts/>`,
		"doctype": `<!DOCTYPE x><PcGts ` + ns2019 + `/>`,
	} {
		if _, err := Translate(context.Background(), []byte(in), Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en"}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if !IsPAGE([]byte(page(ns2019, ""))) || IsPAGE([]byte(`<alto/>`)) || Version([]byte(page(`xmlns:pc="https://schema.primaresearch.org/PAGE/gts/pagecontent/2013-07-15"`, ""))) != "" {
		t.Error("IsPAGE/Version")
	}
}

// The source-language order: a short region takes its primaryLanguage
// (PAGE writes language names), else the one its lines share, else the
// Page's, else the default.
func TestLangOrder(t *testing.T) {
	region := func(attrs, lineAttrs string) string {
		return `<TextRegion id="r1"` + attrs + `><TextLine id="l1"` + lineAttrs + `><Coords points="0,0"/><TextEquiv><Unicode>hrob a jáma</Unicode></TextEquiv></TextLine></TextRegion>`
	}
	cases := []struct {
		name, src, want string
	}{
		{"region primaryLanguage", page(ns2019, region(` primaryLanguage="German"`, "")), "de/element"},
		{"lines' primaryLanguage", page(ns2019, region("", ` primaryLanguage="Slovak"`)), "sk/element"},
		{"Page primaryLanguage", strings.Replace(page(ns2019, region("", "")), `imageHeight="10"`, `imageHeight="10" primaryLanguage="Polish"`, 1), "pl/document"},
		{"default", page(ns2019, region("", "")), "cs/default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Translate(context.Background(), []byte(c.src), Options{Backend: &backendtest.Backend{}, Source: "auto", Target: "en",
				Detector: fixedDetector{"hu", 0.9}, File: "t"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Log) != 1 || res.Log[0].Lang+"/"+string(res.Log[0].LangSource) != c.want {
				t.Errorf("log %+v, want %s", res.Log, c.want)
			}
		})
	}
}

type fixedDetector struct {
	lang string
	conf float64
}

func (d fixedDetector) Detect(string) (string, float64) { return d.lang, d.conf }

// TestReplaceRegionCRLF: a CRLF document's region text, rewritten from its
// lines in replace mode, keeps CRLF between them (it was joined with LF).
func TestReplaceRegionCRLF(t *testing.T) {
	in := strings.ReplaceAll(page(ns2019, "<TextRegion id=\"r1\"><TextLine id=\"l1\"><TextEquiv><Unicode>hrob</Unicode></TextEquiv></TextLine>\n"+
		"<TextLine id=\"l2\"><TextEquiv><Unicode>jáma</Unicode></TextEquiv></TextLine>\n<TextEquiv><Unicode>hrob\njáma</Unicode></TextEquiv></TextRegion>"), "\n", "\r\n")
	res := translate(t, in, alto.Replace)
	if !strings.Contains(string(res.Output), "<Unicode>grave\r\npit</Unicode>") || strings.Count(string(res.Output), "\n") != strings.Count(string(res.Output), "\r\n") {
		t.Errorf("output has a bare LF:\n%q", res.Output)
	}
}
