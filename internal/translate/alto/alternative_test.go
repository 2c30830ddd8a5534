package alto

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/translate/xmlsplice"
	"archivekit/internal/translate/xsd"
)

// TestAlternativeSmall: Alternative mode leaves every byte of the document
// and adds one ALTERNATIVE per String that received words, in the String's
// namespace prefix, with the machine-translation tag as its PURPOSE; a
// second run adds nothing and calls no backend; RemoveAlternatives gives the
// input back.
func TestAlternativeSmall(t *testing.T) {
	f := upper()
	res, err := Translate(context.Background(), []byte(small), Options{Backend: f, Source: "cs", Target: "en", Mode: Alternative, File: "s"})
	if err != nil {
		t.Fatal(err)
	}
	alt := func(s string) string {
		return `<ALTERNATIVE PURPOSE="translation:en-t-cs-t0-und">` + s + `</ALTERNATIVE>`
	}
	want := strings.NewReplacer(
		`<String ID="S1" CONTENT="Dobrý"/>`, `<String ID="S1" CONTENT="Dobrý">`+alt("DOBRÝ")+`</String>`,
		`<String CONTENT='den &apos;x&apos;'/>`, `<String CONTENT='den &apos;x&apos;'>`+alt("DEN 'X'")+`</String>`,
		`<String CONTENT="světe"/>`, `<String CONTENT="světe">`+alt("SVĚTE")+`</String>`,
		`<String CONTENT="jedna dva"/>`, `<String CONTENT="jedna dva">`+alt("JEDNA DVA")+`</String>`,
	).Replace(small)
	if string(res.Output) != want {
		t.Errorf("got\n%s\nwant\n%s", res.Output, want)
	}
	back, err := RemoveAlternatives(res.Output)
	if err != nil || string(back) != small {
		t.Errorf("RemoveAlternatives: %v\n%s", err, back)
	}
	again := upper()
	res2, err := Translate(context.Background(), res.Output, Options{Backend: again, Source: "cs", Target: "en", Mode: Alternative})
	if err != nil {
		t.Fatal(err)
	}
	if string(res2.Output) != string(res.Output) || again.nCalls() != 0 || res2.Stats.AlreadyDone != 2 {
		t.Errorf("second run: %d calls, %d already done, output changed: %v", again.nCalls(), res2.Stats.AlreadyDone, string(res2.Output) != string(res.Output))
	}
}

// TestAlternativePlacement: the ALTERNATIVE goes after a String's Shape and
// ALTERNATIVE children and before its Glyphs (the order of ALTO 3 and 4),
// with their indentation; an empty String written with an end tag and a
// prefixed one come back byte for byte too.
func TestAlternativePlacement(t *testing.T) {
	doc := func(strs string) string {
		return `<a:alto xmlns:a="http://www.loc.gov/standards/alto/ns-v4#"><a:Layout><a:Page><a:TextBlock><a:TextLine>` + strs + `</a:TextLine></a:TextBlock></a:Page></a:Layout></a:alto>`
	}
	alt := `<a:ALTERNATIVE PURPOSE="translation:en-t-cs-t0-und">X</a:ALTERNATIVE>`
	for _, c := range []struct{ name, in, out string }{
		{"glyph", `<a:String CONTENT="x"><a:Glyph CONTENT="x"/></a:String>`, `<a:String CONTENT="x">` + alt + `<a:Glyph CONTENT="x"/></a:String>`},
		{"indented", "<a:String CONTENT=\"x\">\n  <a:Shape/>\n  <a:ALTERNATIVE>y</a:ALTERNATIVE>\n  <a:Glyph CONTENT=\"x\"/>\n</a:String>",
			"<a:String CONTENT=\"x\">\n  <a:Shape/>\n  <a:ALTERNATIVE>y</a:ALTERNATIVE>\n  " + alt + "\n  <a:Glyph CONTENT=\"x\"/>\n</a:String>"},
		{"end tag", `<a:String CONTENT="x"></a:String>`, "<a:String CONTENT=\"x\">\n" + alt + `</a:String>`},
		{"self-closing with space", `<a:String CONTENT="x" />`, `<a:String CONTENT="x" >` + alt + `</a:String>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Translate(context.Background(), []byte(doc(c.in)), Options{Backend: upper(), Source: "cs", Target: "en", Mode: Alternative})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Output) != doc(c.out) {
				t.Errorf("got\n%s\nwant\n%s", res.Output, doc(c.out))
			}
			back, err := RemoveAlternatives(res.Output)
			if err != nil || string(back) != doc(c.in) {
				t.Errorf("RemoveAlternatives: %v\n%s", err, back)
			}
		})
	}
}

// TestAlternativeVersions: ALTO 2 to 4 take ALTERNATIVE; ALTO 1.x only when
// its schema location names 1.1 to 1.4 (ALTO 1.0 has none); anything else
// is refused with ErrNoAlternative, naming the way out.
func TestAlternativeVersions(t *testing.T) {
	body := `<Layout><Page><TextBlock><TextLine><String CONTENT="x"/></TextLine></TextBlock></Page></Layout></alto>`
	xsi := `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" `
	for _, c := range []struct {
		root string
		ok   bool
	}{
		{`<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#">`, true},
		{`<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#">`, true},
		{`<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#">`, true},
		{`<alto ` + xsi + `xsi:noNamespaceSchemaLocation="http://schema.ccs-gmbh.com/docworks/version20/alto-1-4.xsd">`, true},
		// NDNP (Chronicling America): ALTO 1.1 in the CCS namespace, its
		// schema named with an underscore and a revision.
		{`<alto ` + xsi + `xmlns="http://schema.ccs-gmbh.com/ALTO" xsi:noNamespaceSchemaLocation="http://www.loc.gov/ndnp/alto_1-1-041.xsd">`, true},
		{`<alto ` + xsi + `xmlns="http://schema.ccs-gmbh.com/ALTO" xsi:noNamespaceSchemaLocation="http://www.loc.gov/ndnp/alto_1-0-041.xsd">`, false},
		{`<alto>`, false},
		{`<alto ` + xsi + `xsi:noNamespaceSchemaLocation="alto-1-0.xsd">`, false},
		{`<alto xmlns="http://www.loc.gov/standards/alto/ns-v5#">`, false},
	} {
		_, err := Translate(context.Background(), []byte(c.root+body), Options{Backend: upper(), Source: "cs", Target: "en", Mode: Alternative, File: "f.xml"})
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.root, err)
		}
		if !c.ok && (!errors.Is(err, ErrNoAlternative) || !strings.Contains(err.Error(), "append or replace")) {
			t.Errorf("%s: got %v, want ErrNoAlternative", c.root, err)
		}
	}
}

// realALTO lists the real ALTO files of the repository: the translator's
// corpus (ABBYY, Tesseract, CCS docWorks and OCR-D; ALTO 1.4 without a
// namespace, 2, 3 and 4), OCR-D's ground truth of the book reader (ALTO 2)
// and an eScriptorium page (ALTO 4, TextLine Shapes; testdata/SOURCES.md).
// version names the schema of testdata/schema its outputs are validated
// against ("" when none is at hand). English files are translated into
// German.
var realALTO = []struct{ path, version, source string }{
	{"../../../testdata/realworld/abbyy11_v2_bom.alto.xml", "2-1", "de"},
	{"../../../testdata/realworld/abbyy11_v2_bom_crlf.alto.xml", "2-1", "de"},
	{"../../../testdata/realworld/abbyy11_v2_mannheim.alto.xml", "2-1", "fr"},
	{"../../../testdata/realworld/tesseract303_v2_wetzel.alto.xml", "2-1", "de"},
	{"../../../testdata/realworld/tesseract41rc1_v3.alto.xml", "3-1", "de"},
	{"../../../testdata/realworld/tesseract41rc4_v3_lorem.alto.xml", "3-1", "la"},
	{"../../../testdata/realworld/v3_minimal.alto.xml", "3-1", "de"},
	{"../../../testdata/realworld/docworks67_v1-4_europeana.alto.xml", "1-4", "fr"},
	{"../../../testdata/realworld/ocrd_v4-1_ulb-neue-friedens.alto.xml", "4-4", "de"},
	{"../../../testdata/realworld/tesseract541_v3_ulb-neue-friedens.alto.xml", "3-1", "de"},
	{"../../../testdata/realworld/ocrd_v4-1_ulb-737434_latin.alto.xml", "4-4", "la"},
	{"../../book/testdata/mets/ocrd-kant/OCR-D-GT-ALTO/PAGE_0017_ALTO.xml", "2-1", "de"},
	{"testdata/real/escriptorium_hebrew_bsb00084914-00007.alto.xml", "4-4", "he"},
}

// realTarget is the language a real file is translated into: English, or
// German for an English file.
func realTarget(source string) string {
	if source == "en" {
		return "de"
	}
	return "en"
}

// TestAlternativeRealRemovable: every real ALTO file, translated in
// Alternative mode, gains ALTERNATIVEs and comes back byte for byte when
// they are removed.
func TestAlternativeRealRemovable(t *testing.T) {
	for _, f := range realALTO {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			src, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			tgt := realTarget(f.source)
			res, err := Translate(context.Background(), src, Options{Backend: upper(), Source: f.source, Target: tgt, Mode: Alternative})
			if err != nil {
				t.Fatal(err)
			}
			n := strings.Count(string(res.Output), `PURPOSE="translation:`+tgt+`-t-`+f.source+`-t0-und"`)
			if n == 0 || n < res.Stats.Lines {
				t.Errorf("%d ALTERNATIVEs for %d lines", n, res.Stats.Lines)
			}
			back, err := RemoveAlternatives(res.Output)
			if err != nil || string(back) != string(src) {
				t.Errorf("RemoveAlternatives did not give the input back (%v)", err)
			}
		})
	}
}

// FuzzAlternativeRemovable: Alternative mode on any document it accepts
// writes well-formed XML, and RemoveAlternatives gives back the input
// byte for byte.
func FuzzAlternativeRemovable(f *testing.F) {
	for _, s := range []string{
		small,
		`<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page><TextBlock><TextLine><String CONTENT="a b"></String><String CONTENT="c"><Shape/>` + "\n\t" + `<ALTERNATIVE>d</ALTERNATIVE><Glyph/></String><HYP/></TextLine><TextLine><String CONTENT="e" /></TextLine></TextBlock></Page></Layout></alto>`,
		`<x:alto xmlns:x="http://www.loc.gov/standards/alto/ns-v2#"><x:Layout><x:Page><x:TextBlock><x:TextLine><x:String CONTENT="ne-" SUBS_TYPE="HypPart1"/><x:HYP/></x:TextLine><x:TextLine><x:String CONTENT="bo" SUBS_TYPE="HypPart2"> </x:String></x:TextLine></x:TextBlock></x:Page></x:Layout></x:alto>`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if _, err := (xmlsplice.Limits{Depth: 32, Nodes: 5000}).Parse(src); err != nil || strings.Contains(string(src), "t0") {
			return // not XML, too large, or may hold machine translations already
		}
		res, err := Translate(context.Background(), src, Options{Backend: upper(), Source: "cs", Target: "en", Mode: Alternative, File: "fuzz.xml"})
		if err != nil {
			return
		}
		if _, err := xmlsplice.Parse(res.Output); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, res.Output)
		}
		back, err := RemoveAlternatives(res.Output)
		if err != nil || string(back) != string(src) {
			t.Fatalf("RemoveAlternatives: %v\ngot  %q\nwant %q", err, back, src)
		}
	})
}

// TestRealSchemaValid validates each real ALTO file and its translation in
// every output mode (Replace, Append, Alternative; with and without
// FastAlign) against the official ALTO schema of its version with xmllint
// (testdata/schema, sources in testdata/SOURCES.md): no translation has a
// schema error its input did not have.
func TestRealSchemaValid(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, f := range realALTO {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			if f.version == "" {
				t.Skip("no schema at hand for this version")
			}
			v, err := xsd.New(ctx, filepath.Join("testdata", "schema", "alto-"+f.version+".xsd"))
			if errors.Is(err, xsd.ErrNoValidator) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			src, err := os.ReadFile(f.path)
			if err != nil {
				t.Fatal(err)
			}
			base, err := v.Problems(ctx, dir, "in.xml", src)
			if err != nil {
				t.Fatal(err)
			}
			for _, mode := range []Mode{Replace, Append, Alternative} {
				for _, fast := range []bool{false, true} {
					res, err := Translate(ctx, src, Options{Backend: upper(), Source: f.source, Target: realTarget(f.source), Mode: mode, FastAlign: fast})
					if err != nil {
						t.Fatal(err)
					}
					got, err := v.Problems(ctx, dir, "out.xml", res.Output)
					if err != nil {
						t.Fatal(err)
					}
					for msg, n := range got {
						if n > base[msg] {
							t.Errorf("mode %v, fast %v: new schema error: %s", mode, fast, msg)
						}
					}
				}
			}
			t.Logf("input: %d schema errors", len(base))
		})
	}
}
