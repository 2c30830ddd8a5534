package alto

import (
	"context"
	"strings"
	"testing"
)

// TestALTO1Language: ALTO 1.x (no namespace, or the CCS namespace of
// docWorks and NDNP) gives TextBlock a language attribute and no LANG.
// Append mode names the original's and the copy's language with it; Replace
// mode makes it the target, as it does LANG; a block's language is read
// from it; ALTO 2 to 4 keep LANG. Before, Append wrote LANG, which the ALTO
// 1.x schemas refuse, and a block's language attribute was not read.
func TestALTO1Language(t *testing.T) {
	const (
		noNS = `<alto xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:noNamespaceSchemaLocation="http://schema.ccs-gmbh.com/docworks/version20/alto-1-4.xsd">`
		ccs  = `<alto xmlns="http://schema.ccs-gmbh.com/ALTO">`
		v2   = `<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#">`
	)
	body := func(attrs string) string {
		return `<Layout><Page ID="P1"><PrintSpace>` + "\n" +
			`<TextBlock ID="B1"` + attrs + `><TextLine ID="L1"><String ID="S1" CONTENT="Dobrý"/><SP/><String ID="S2" CONTENT="den"/></TextLine></TextBlock>` + "\n" +
			`</PrintSpace></Page></Layout></alto>`
	}
	copyOf := func(attr string) string {
		return `<TextBlock ID="B1_en" ` + attr + `="en"><TextLine ID="L1_en"><String ID="S1_en" CONTENT="DOBRÝ"/><SP/><String ID="S2_en" CONTENT="DEN"/></TextLine></TextBlock>`
	}
	for _, c := range []struct {
		name, root, attrs string
		mode              Mode
		want              string // the TextBlock lines of the output
	}{
		{"1.4 append", noNS, "", Append,
			`<TextBlock ID="B1" language="cs"><TextLine ID="L1"><String ID="S1" CONTENT="Dobrý"/><SP/><String ID="S2" CONTENT="den"/></TextLine></TextBlock>` + "\n" + copyOf("language")},
		{"CCS append", ccs, "", Append,
			`<TextBlock ID="B1" language="cs"><TextLine ID="L1"><String ID="S1" CONTENT="Dobrý"/><SP/><String ID="S2" CONTENT="den"/></TextLine></TextBlock>` + "\n" + copyOf("language")},
		{"1.4 append, language given", noNS, ` language="cs"`, Append,
			`<TextBlock ID="B1" language="cs"><TextLine ID="L1"><String ID="S1" CONTENT="Dobrý"/><SP/><String ID="S2" CONTENT="den"/></TextLine></TextBlock>` + "\n" + copyOf("language")},
		{"1.4 replace, language given", noNS, ` language="cs"`, Replace,
			`<TextBlock ID="B1" language="en"><TextLine ID="L1"><String ID="S1" CONTENT="DOBRÝ"/><SP/><String ID="S2" CONTENT="DEN"/></TextLine></TextBlock>`},
		{"2 append", v2, "", Append,
			`<TextBlock ID="B1" LANG="cs"><TextLine ID="L1"><String ID="S1" CONTENT="Dobrý"/><SP/><String ID="S2" CONTENT="den"/></TextLine></TextBlock>` + "\n" + copyOf("LANG")},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.root + body(c.attrs)
			res, err := Translate(context.Background(), []byte(src), Options{Backend: upper(), Source: "cs", Target: "en", Mode: c.mode, File: "a"})
			if err != nil {
				t.Fatal(err)
			}
			want := c.root + `<Layout><Page ID="P1"><PrintSpace>` + "\n" + c.want + "\n" + `</PrintSpace></Page></Layout></alto>`
			if string(res.Output) != want {
				t.Errorf("got\n%s\nwant\n%s", res.Output, want)
			}
		})
	}
	// The block's own language attribute is read like LANG: a Slovak block
	// of a Czech-default document is translated from Slovak.
	src := noNS + body(` language="slk"`)
	res, err := Translate(context.Background(), []byte(src), Options{Backend: upper(), Source: "auto", Target: "en", Detector: fixedDetector{"cs", 0.9}, File: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Log) != 1 || res.Log[0].Lang != "sk" || res.Log[0].LangSource != FromElement {
		t.Errorf("log %+v, want the line from sk (element)", res.Log)
	}
	if !strings.Contains(string(res.Output), `language="en"`) {
		t.Errorf("the block's language attribute does not name the target:\n%s", res.Output)
	}
}
