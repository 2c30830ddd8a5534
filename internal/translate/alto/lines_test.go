package alto

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/bookout"
	"archivekit/internal/translate/linestest"
	"archivekit/internal/translate/xmlsplice"
)

// TestLinesToAnnotations: the translated lines of OCR-D's Kant page
// (Alternative mode) become a IIIF annotation page whose targets are the
// lines' ALTO boxes scaled onto a canvas of half the page's size, and whose
// bodies hold the translation, not the source.
func TestLinesToAnnotations(t *testing.T) {
	src, err := os.ReadFile("../../book/testdata/mets/ocrd-kant/OCR-D-GT-ALTO/PAGE_0017_ALTO.xml")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Translate(context.Background(), src, Options{Backend: upper(), Source: "de", Target: "en", Mode: Alternative})
	if err != nil {
		t.Fatal(err)
	}
	pages, err := Lines(res.Output, "en")
	if err != nil || len(pages) != 1 || pages[0].Width == 0 {
		t.Fatalf("%d pages, %v", len(pages), err)
	}
	p := pages[0]
	lines := bookout.OnCanvas(pages, p.Width/2, p.Height/2)
	boxed := 0
	for _, l := range lines {
		if l.Box != nil {
			boxed++
		}
	}
	if boxed == 0 || boxed != len(p.Lines) {
		t.Errorf("%d of %d lines have a box", boxed, len(p.Lines))
	}
	out, err := bookout.TranslationPage("https://example.org/p17-en.json", "https://example.org/canvas/17", "en-t-de-t0-und", lines, bookout.Agent{Name: "archivekit translate"})
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []struct {
			Body   struct{ Value string }
			Target string
		}
	}
	if err := json.Unmarshal(out, &page); err != nil || len(page.Items) == 0 {
		t.Fatalf("%v: %s", err, out)
	}
	first := page.Items[0]
	if first.Body.Value != strings.ToUpper(first.Body.Value) || !strings.Contains(first.Target, "#xywh=") {
		t.Errorf("first annotation: %+v", first)
	}
	// The same page untranslated reads the source.
	orig, _ := Lines(src, "en")
	if orig[0].Lines[0].Text == p.Lines[0].Text {
		t.Error("the translated page reads as the source")
	}
}

// TestLinesShape: a TextLine with a Shape/Polygon is outlined by it, in
// either POINTS form of the ALTO schema ("x,y x,y" and "x y x y"): the
// polygon's bounding box, and the polygon when it is not a rectangle; a
// TextLine without one, or whose Shape is no Polygon or a malformed or
// flat one, keeps its HPOS/VPOS/WIDTH/HEIGHT box and no polygon.
func TestLinesShape(t *testing.T) {
	hpos := &bookout.Box{X: 1, Y: 2, W: 300, H: 40}
	slanted := []bookout.Point{{X: 10, Y: 20}, {X: 50, Y: 25}, {X: 50, Y: 45}, {X: 10, Y: 40}}
	slantedBox := &bookout.Box{X: 10, Y: 20, W: 40, H: 25}
	for _, c := range []struct {
		name, shape string
		box         *bookout.Box
		polygon     []bookout.Point
	}{
		{"no shape", ``, hpos, nil},
		{"pairs", `<Shape><Polygon POINTS="10,20 50,25 50,45 10,40"/></Shape>`, slantedBox, slanted},
		{"numbers", `<Shape><Polygon POINTS="10 20 50 25 50 45 10 40"/></Shape>`, slantedBox, slanted},
		{"numbers, line breaks, decimals", "<Shape><Polygon POINTS=\"10.0 20\n\t50 25.0 50 45 10 40 \"/></Shape>", slantedBox, slanted},
		{"rectangle", `<Shape><Polygon POINTS="10,20 50,20 50,40 30,40 10,40"/></Shape>`, &bookout.Box{X: 10, Y: 20, W: 40, H: 20}, nil},
		{"ellipse", `<Shape><Ellipse HPOS="5" VPOS="5" HLENGTH="10" VLENGTH="4"/></Shape>`, hpos, nil},
		{"odd count", `<Shape><Polygon POINTS="10 20 50 25 50 45 10"/></Shape>`, hpos, nil},
		{"forms mixed", `<Shape><Polygon POINTS="10,20 50 25 50,45 10,40"/></Shape>`, hpos, nil},
		{"three in a pair", `<Shape><Polygon POINTS="10,20,5 50,25 50,45"/></Shape>`, hpos, nil},
		{"not a number", `<Shape><Polygon POINTS="10,20 50,x 50,45"/></Shape>`, hpos, nil},
		{"infinite", `<Shape><Polygon POINTS="10,20 Inf,25 50,45"/></Shape>`, hpos, nil},
		{"flat", `<Shape><Polygon POINTS="10,20 50,20 30,20"/></Shape>`, hpos, nil},
		{"empty", `<Shape><Polygon POINTS=" "/></Shape>`, hpos, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page WIDTH="400" HEIGHT="500"><PrintSpace><TextBlock>` +
				`<TextLine HPOS="1" VPOS="2" WIDTH="300" HEIGHT="40">` + c.shape + `<String CONTENT="a"/><SP/><String CONTENT="b"/></TextLine>` +
				`</TextBlock></PrintSpace></Page></Layout></alto>`
			pages, err := Lines([]byte(src), "en")
			if err != nil || len(pages) != 1 || len(pages[0].Lines) != 1 {
				t.Fatalf("%+v, %v", pages, err)
			}
			l := pages[0].Lines[0]
			if l.Text != "a b" || l.Box == nil || *l.Box != *c.box {
				t.Errorf("%q, box %v; want \"a b\", %v", l.Text, l.Box, c.box)
			}
			if !slices.Equal(l.Polygon, c.polygon) {
				t.Errorf("polygon %v, want %v", l.Polygon, c.polygon)
			}
		})
	}
}

// TestLinesShapeReal: the lines of a real eScriptorium ALTO 4 page (its
// Shape polygons in the "x y x y" form; 28 slanted, 2 rectangles, one line
// without a Shape) are outlined by their polygons, as a person reads them
// from the file, before and after translation in
// Alternative and Replace mode; the lines of the other real ALTO files
// keep their boxes, and only those with a Shape/Polygon (OCR-D's ALTO
// 4.1 page 737434, every line) get one.
func TestLinesShapeReal(t *testing.T) {
	const file = "testdata/real/escriptorium_hebrew_bsb00084914-00007.alto.xml"
	in, orig := linestest.ReadPage(t, file, Lines, "en", linestest.Page{W: 3177, H: 4308, Lines: 31, Boxed: 31})
	var doc struct {
		Lines []struct {
			Polygon struct {
				Points string `xml:"POINTS,attr"`
			} `xml:"Shape>Polygon"`
		} `xml:"Layout>Page>PrintSpace>TextBlock>TextLine"`
	}
	if err := xml.Unmarshal(in, &doc); err != nil || len(doc.Lines) != 31 {
		t.Fatalf("%d lines, %v", len(doc.Lines), err)
	}
	polygons := 0
	for k, l := range orig[0].Lines {
		nums := strings.Fields(doc.Lines[k].Polygon.Points)
		if l.Polygon == nil {
			continue // a rectangle, or no Shape
		}
		polygons++
		if len(nums) != 2*len(l.Polygon) {
			t.Fatalf("line %d: %d points, want %d", k, len(l.Polygon), len(nums)/2)
		}
		x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for j, p := range l.Polygon {
			x, _ := strconv.ParseFloat(nums[2*j], 64)
			y, _ := strconv.ParseFloat(nums[2*j+1], 64)
			if p.X != x || p.Y != y {
				t.Errorf("line %d point %d: %v, want %g,%g", k, j, p, x, y)
			}
			x0, y0, x1, y1 = math.Min(x0, x), math.Min(y0, y), math.Max(x1, x), math.Max(y1, y)
		}
		if b := *l.Box; b.X != x0 || b.Y != y0 || b.X+b.W != x1 || b.Y+b.H != y1 {
			t.Errorf("line %d: box %+v, want the polygon's bounds %g,%g-%g,%g", k, b, x0, y0, x1, y1)
		}
	}
	if polygons != 28 {
		t.Errorf("%d of 31 lines have a polygon, want 28", polygons)
	}
	for _, mode := range []Mode{Alternative, Replace} {
		res, err := Translate(context.Background(), in, Options{Backend: upper(), Source: "he", Target: "en", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Lines(res.Output, "en")
		if err != nil {
			t.Fatal(err)
		}
		linestest.SameLines(t, file+" "+string(mode), orig, got, func(s string) string { return s })
	}
	// On a canvas, each polygon line targets a SpecificResource with its
	// box and an SvgSelector; the others the canvas's xywh fragment.
	out, err := bookout.TranslationPage("https://example.org/p7-en.json", "https://example.org/canvas/7", "en-t-he-t0-und",
		bookout.OnCanvas(orig, 3177/2.0, 4308/2.0), bookout.Agent{Name: "archivekit translate"})
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []struct{ Target json.RawMessage }
	}
	if err := json.Unmarshal(out, &page); err != nil || len(page.Items) != 31 {
		t.Fatalf("%d annotations, %v", len(page.Items), err)
	}
	svg := 0
	for k, a := range page.Items {
		var sr struct {
			Type     string
			Selector []struct{ Type, Value string }
		}
		if json.Unmarshal(a.Target, &sr) == nil {
			if sr.Type != "SpecificResource" || len(sr.Selector) != 2 || sr.Selector[1].Type != "SvgSelector" || orig[0].Lines[k].Polygon == nil {
				t.Errorf("line %d: target %s", k, a.Target)
			}
			svg++
		}
	}
	if svg != polygons {
		t.Errorf("%d SvgSelector targets, want %d", svg, polygons)
	}
	t.Logf("%d of 31 lines targeted by their polygon", svg)
	for _, f := range realALTO {
		if f.path == file {
			continue
		}
		src, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		pages, err := Lines(src, "en")
		if err != nil {
			t.Fatal(err)
		}
		boxed, outlined := 0, 0
		for _, p := range pages {
			boxed += linestest.Boxed(p)
			for _, l := range p.Lines {
				if l.Polygon != nil {
					outlined++
				}
			}
		}
		if boxed == 0 {
			t.Errorf("%s: no line has a box", f.path)
		}
		if want := shapedLines(t, src); outlined != want {
			t.Errorf("%s: %d lines outlined by a polygon, want %d (its TextLines with a Shape/Polygon)", f.path, outlined, want)
		}
	}
}

// shapedLines counts the TextLines of an ALTO document that have a
// Shape/Polygon child whose points are not an axis-aligned rectangle
// (more than two distinct x or y values): those Lines outlines by their
// polygon.
func shapedLines(t *testing.T, src []byte) int {
	t.Helper()
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	doc.Root.Walk(func(e *xmlsplice.Node) bool {
		if e.Name.Local != "TextLine" {
			return true
		}
		for _, c := range e.Elements() {
			for _, p := range c.Elements() {
				if a, ok := p.Attr("", "POINTS"); ok && c.Name.Local == "Shape" && p.Name.Local == "Polygon" {
					xs, ys := map[string]bool{}, map[string]bool{}
					for i, v := range strings.FieldsFunc(a.Value, func(r rune) bool { return r == ' ' || r == ',' }) {
						if i%2 == 0 {
							xs[v] = true
						} else {
							ys[v] = true
						}
					}
					if len(xs) > 2 || len(ys) > 2 {
						n++
					}
				}
			}
		}
		return false
	})
	return n
}
