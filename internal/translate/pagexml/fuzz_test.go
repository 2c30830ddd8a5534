package pagexml

import (
	"context"
	"strings"
	"testing"

	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/xmlsplice"
)

// FuzzAppendRemovable: append mode on any document it accepts writes
// well-formed XML, and deleting what it added (Remove) gives back the
// input byte for byte (PAGE 2013: the output is the input and the
// sidecar parses).
func FuzzAppendRemovable(f *testing.F) {
	for _, s := range []string{
		page(ns2019, `<TextRegion id="r"><TextLine id="l"><TextEquiv index="2"><Unicode>hrob a</Unicode></TextEquiv></TextLine></TextRegion>`),
		page(`xmlns:pc="http://schema.primaresearch.org/PAGE/gts/pagecontent/2017-07-15"`, ``),
		"<pc:PcGts xmlns:pc=\"http://schema.primaresearch.org/PAGE/gts/pagecontent/2016-07-15\">\r\n\t<pc:Page><pc:TextRegion><pc:TextLine><pc:Word><pc:TextEquiv><pc:Unicode>x &amp; y</pc:Unicode></pc:TextEquiv></pc:Word></pc:TextLine></pc:TextRegion></pc:Page></pc:PcGts>",
		page(`xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2013-07-15"`, `<TextRegion id="r"><TextLine id="l"><TextEquiv><Unicode>jáma</Unicode></TextEquiv></TextLine></TextRegion>`),
		page(ns2019, `<TableRegion><TextRegion><TextRegion><TextLine><TextEquiv><Unicode>a</Unicode></TextEquiv><TextEquiv><Unicode/></TextEquiv></TextLine></TextRegion></TextRegion></TableRegion>`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if _, err := (xmlsplice.Limits{Depth: 32, Nodes: 5000}).Parse(src); err != nil || strings.Contains(string(src), "t0") {
			return // not XML, too large, or may hold machine translations already
		}
		res, err := Translate(context.Background(), src, Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en", File: "fuzz.xml"})
		if err != nil {
			return
		}
		if res.Sidecar != nil {
			if string(res.Output) != string(src) {
				t.Fatal("PAGE 2013 input changed")
			}
			if _, err := xmlsplice.Parse(res.Sidecar); err != nil {
				t.Fatalf("sidecar does not parse: %v\n%s", err, res.Sidecar)
			}
			return
		}
		if _, err := xmlsplice.Parse(res.Output); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, res.Output)
		}
		back, err := Remove(res.Output)
		if err != nil || string(back) != string(src) {
			t.Fatalf("Remove: %v\ngot  %q\nwant %q", err, back, src)
		}
	})
}
