package pagexml

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"archivekit/internal/bookout"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/linestest"
	"archivekit/internal/translate/xmlsplice"
)

// TestLines: each real PAGE file, translated in append and replace mode
// (PAGE 2013 append: its sidecar), reads as the same lines with the same
// boxes as the original, each line's text the stand-in's translation of
// the original's (not the original), inside the page's image size.
func TestLines(t *testing.T) {
	files := []struct {
		name, src string
		want      linestest.Page
	}{
		{"ocrd-gt_german_kant1784-0017.page.xml", "de", linestest.Page{W: 1457, H: 2083, Lines: 24, Boxed: 24}},
		{"transkribus_spanish_170025120000003-0074.page.xml", "es", linestest.Page{W: 2743, H: 3965, Lines: 44, Boxed: 44}},
		{"escriptorium_syriac_onb-syr1-0001.page.xml", "syc", linestest.Page{W: 1969, H: 2365, Lines: 12, Boxed: 12}},
		// Region-level text only: each region is a line.
		{"prima_english_simplepage.page.xml", "en", linestest.Page{W: 800, H: 600, Lines: 12, Boxed: 12}},
	}
	for _, f := range files {
		in, orig := linestest.ReadPage(t, filepath.Join("testdata", "real", f.name), Lines, "fr", f.want)
		for _, mode := range []alto.Mode{alto.Append, alto.Replace} {
			res, err := Translate(context.Background(), in, Options{Backend: &backendtest.Backend{}, Source: f.src, Target: "fr", Mode: mode, File: f.name})
			if err != nil {
				t.Fatal(err)
			}
			out := res.Output
			if res.Sidecar != nil {
				out = res.Sidecar
			}
			got, err := Lines(out, "fr")
			if err != nil {
				t.Fatal(err)
			}
			if changed := linestest.SameLines(t, f.name+" "+string(mode), orig, got, backendtest.Translate); f.src != "syc" && changed == 0 {
				t.Errorf("%s %s: no line reads as translated", f.name, mode)
			}
			// Another target reads the original text where append mode
			// kept it.
			if mode == alto.Append && res.Sidecar == nil {
				other, _ := Lines(out, "de")
				if other[0].Lines[0].Text != orig[0].Lines[0].Text {
					t.Errorf("%s: target de reads %q, want the original %q", f.name, other[0].Lines[0].Text, orig[0].Lines[0].Text)
				}
			}
		}
	}
}

// TestOutline: the bounding box of a polygon; none for a missing,
// malformed or flat one; the polygon itself too when it is not an
// axis-aligned rectangle (however many points it has along the edges).
func TestOutline(t *testing.T) {
	slanted := []bookout.Point{{X: 320, Y: 2074}, {X: 327, Y: 1959}, {X: 297, Y: 1957}, {X: 290, Y: 2072}}
	for _, c := range []struct {
		xml     string
		want    *bookout.Box
		polygon []bookout.Point
	}{
		{`<TextLine><Coords points="320,2074 327,1959 297,1957 290,2072"/></TextLine>`, &bookout.Box{X: 290, Y: 1957, W: 37, H: 117}, slanted},
		{`<TextLine><Coords points="10,20 50,20 50,40 10,40"/></TextLine>`, &bookout.Box{X: 10, Y: 20, W: 40, H: 20}, nil},
		{`<TextLine><Coords points="10,40 10,20 30,20 50,20 50,40 10,40"/></TextLine>`, &bookout.Box{X: 10, Y: 20, W: 40, H: 20}, nil},
		{`<TextLine><Coords points="10,20 50,20 50,40 30,30 10,40"/></TextLine>`, &bookout.Box{X: 10, Y: 20, W: 40, H: 20},
			[]bookout.Point{{X: 10, Y: 20}, {X: 50, Y: 20}, {X: 50, Y: 40}, {X: 30, Y: 30}, {X: 10, Y: 40}}},
		{`<TextLine><Coords points="1,2 5,2"/></TextLine>`, nil, nil},
		{`<TextLine><Coords points="1,2 5;6"/></TextLine>`, nil, nil},
		{`<TextLine><Coords points="1,2 Inf,6 3,9"/></TextLine>`, nil, nil},
		{`<TextLine><Coords/></TextLine>`, nil, nil},
		{`<TextLine/>`, nil, nil},
	} {
		doc, err := xmlsplice.Parse([]byte(c.xml))
		if err != nil {
			t.Fatal(err)
		}
		got, polygon := outline(rootElement(doc))
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: %v, want %v", c.xml, got, c.want)
		}
		if !slices.Equal(polygon, c.polygon) {
			t.Errorf("%s: polygon %v, want %v", c.xml, polygon, c.polygon)
		}
	}
}
