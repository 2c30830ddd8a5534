package pagexml

import (
	"context"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend/backendtest"
)

// If broken: a book's language, given for the document, is ignored and a
// region with no language of its own is translated from the default.
func TestDocumentLangGiven(t *testing.T) {
	src := page(ns2019, `<TextRegion id="r1"><TextLine id="l1"><TextEquiv><Unicode>hrob a jáma</Unicode></TextEquiv></TextLine></TextRegion>`)
	res, err := Translate(context.Background(), []byte(src), Options{Backend: &backendtest.Backend{}, Source: "auto", Target: "en",
		Detector: fixedDetector{"hu", 0.9}, DocumentLang: "pl", File: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Log) != 1 || res.Log[0].Lang != "pl" || res.Log[0].LangSource != alto.FromDocument {
		t.Errorf("log %+v, want the line from pl (document)", res.Log)
	}
}

// If broken: the log's source (and the text translated) is not the line's
// main TextEquiv, the lowest @index, unindexed ones after it.
func TestLineTextLowestIndex(t *testing.T) {
	for _, c := range []struct {
		name, equivs, want string
	}{
		{"unindexed before index 1", `<TextEquiv><Unicode>jáma</Unicode></TextEquiv><TextEquiv index="1"><Unicode>hrob</Unicode></TextEquiv>`, "hrob"},
		{"unindexed after index 1", `<TextEquiv index="1"><Unicode>hrob</Unicode></TextEquiv><TextEquiv><Unicode>jáma</Unicode></TextEquiv>`, "hrob"},
		{"two unindexed", `<TextEquiv><Unicode>hrob</Unicode></TextEquiv><TextEquiv><Unicode>jáma</Unicode></TextEquiv>`, "hrob"},
		{"index 2 before index 1", `<TextEquiv index="2"><Unicode>jáma</Unicode></TextEquiv><TextEquiv index="1"><Unicode>hrob</Unicode></TextEquiv>`, "hrob"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := translate(t, page(ns2019, `<TextRegion id="r1"><TextLine id="l1">`+c.equivs+`</TextLine></TextRegion>`), alto.Replace)
			if len(res.Log) != 1 || res.Log[0].Source != c.want {
				t.Errorf("log %+v, want source %q", res.Log, c.want)
			}
		})
	}
}

// If broken: a line read from its Words takes a Word's text from another
// TextEquiv than its lowest @index.
func TestWordTextLowestIndex(t *testing.T) {
	for _, c := range []struct {
		name, equivs string
	}{
		{"index 2 then 1", `<TextEquiv index="2"><Unicode>jáma</Unicode></TextEquiv><TextEquiv index="1"><Unicode>hrob</Unicode></TextEquiv>`},
		{"index 1 then 2", `<TextEquiv index="1"><Unicode>hrob</Unicode></TextEquiv><TextEquiv index="2"><Unicode>jáma</Unicode></TextEquiv>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := translate(t, page(ns2019, `<TextRegion id="r1"><TextLine id="l1"><Word id="w1">`+c.equivs+`</Word><Word id="w2"><TextEquiv><Unicode>sonda</Unicode></TextEquiv></Word></TextLine></TextRegion>`), "")
			if len(res.Log) != 1 || res.Log[0].Source != "hrob sonda" || res.Log[0].Target != "grave trench" {
				t.Errorf("log %+v, want hrob sonda -> grave trench", res.Log)
			}
		})
	}
}

// If broken: a PAGE 2016-07-15 document (which allows @index and
// @comments) gets its translation in a sidecar instead of in the document.
func TestAppend2016InDocument(t *testing.T) {
	in := page(`xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2016-07-15"`, `<TextRegion id="r1"><TextLine id="l1"><TextEquiv><Unicode>hrob</Unicode></TextEquiv></TextLine></TextRegion>`)
	res := translate(t, in, "")
	want := `<TextEquiv><Unicode>hrob</Unicode></TextEquiv><TextEquiv index="1" comments="en-t-cs-t0-und"><Unicode>grave</Unicode></TextEquiv></TextLine>`
	if res.Sidecar != nil || !strings.Contains(string(res.Output), want) {
		t.Errorf("sidecar %v; output lacks %s:\n%s", res.Sidecar != nil, want, res.Output)
	}
}

// If broken: the appended translation repeats the highest existing @index
// (two TextEquivs index="2").
func TestAppendIndexAboveConsecutive(t *testing.T) {
	in := page(ns2019, `<TextRegion id="r1"><TextLine id="l1"><TextEquiv index="1"><Unicode>hrob</Unicode></TextEquiv><TextEquiv index="2"><Unicode>hrob</Unicode></TextEquiv></TextLine></TextRegion>`)
	res := translate(t, in, "")
	want := `<TextEquiv index="2"><Unicode>hrob</Unicode></TextEquiv><TextEquiv index="3" comments="en-t-cs-t0-und"><Unicode>grave</Unicode></TextEquiv>`
	if !strings.Contains(string(res.Output), want) {
		t.Errorf("output lacks %s:\n%s", want, res.Output)
	}
}

// If broken: a PAGE document in the https namespace (as Transkribus
// exports write it) is not recognised as PAGE and is refused.
func TestHTTPSNamespace(t *testing.T) {
	in := page(`xmlns="https://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"`, `<TextRegion id="r1"><TextLine id="l1"><TextEquiv><Unicode>hrob</Unicode></TextEquiv></TextLine></TextRegion>`)
	if !IsPAGE([]byte(in)) || Version([]byte(in)) != "2019-07-15" {
		t.Errorf("IsPAGE %v, Version %q, want true, 2019-07-15", IsPAGE([]byte(in)), Version([]byte(in)))
	}
	res := translate(t, in, "")
	if len(res.Log) != 1 || res.Log[0].Target != "grave" {
		t.Errorf("log %+v", res.Log)
	}
}
