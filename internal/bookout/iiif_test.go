package bookout

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/book"
	"archivekit/internal/bookout/bookouttest"
)

var xywhRE = regexp.MustCompile(`#xywh=\d+,\d+,[1-9]\d*,[1-9]\d*$`)

// iiifOutputs writes, for every canvas of a real Presentation 3 manifest
// (the IIIF cookbook's newspaper issue), a translation page (two lines,
// one boxed from a page twice the canvas's size) and a class page (two
// classes; the second canvas's flagged for review), and the
// derived manifest linking them and a translated ALTO; it returns the
// files written.
func iiifOutputs(t *testing.T, dir string) (pages []string, manifest string) {
	t.Helper()
	path := filepath.Join("..", "book", "testdata", "iiif", "cookbook", "0068-newspaper", "newspaper_issue_1-manifest.json")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := book.Read(context.Background(), path, book.Options{Text: book.TextNone})
	if err != nil {
		t.Fatal(err)
	}
	gen := Agent{Name: "archivekit translate", Version: "1.0", Homepage: "https://example.org/archivekit"}
	var links []CanvasLinks
	for i, p := range b.Pages {
		w, h := 1000.0, 1000.0
		if p.Image != nil && p.Image.Width > 0 {
			w, h = float64(p.Image.Width), float64(p.Image.Height)
		}
		box := Box{X: 200, Y: 100, W: 800, H: 60}.Scale(2*w, 2*h, w, h)
		tp, err := TranslationPage("https://example.org/out/p"+string(rune('1'+i))+"-en.json", p.ID, "en-t-de-t0-und",
			[]TextLine{{Text: "The first line", Box: &box}, {Text: ""}, {Text: "Whole page"}}, gen)
		if err != nil {
			t.Fatal(err)
		}
		var flag *ReviewFlag
		if i == 1 {
			flag = &ReviewFlag{Reasons: []string{"low_margin", "near_blank"}}
		}
		cp, err := ClassPage("https://example.org/out/p"+string(rune('1'+i))+"-class.json", p.ID, []PageClass{{"printed", 0.91}, {"handwritten", 0.05}}, flag, gen)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range [][]byte{tp, cp} {
			name := filepath.Join(dir, "page"+string(rune('a'+len(pages)))+".json")
			os.WriteFile(name, f, 0o644)
			pages = append(pages, name)
		}
		links = append(links, CanvasLinks{Canvas: p.ID, Annotations: []string{"https://example.org/out/p" + string(rune('1'+i)) + "-en.json"},
			ALTO: "https://example.org/out/p" + string(rune('1'+i)) + "_en.alto.xml", ALTOProfile: "http://www.loc.gov/standards/alto/ns-v4#", Label: "ALTO, machine translation (en-t-de-t0-und)"})
	}
	out, err := DerivedManifest(src, "https://example.org/out/manifest.json", links)
	if err != nil {
		t.Fatal(err)
	}
	manifest = filepath.Join(dir, "manifest.json")
	os.WriteFile(manifest, out, 0o644)
	return pages, manifest
}

// TestIIIFOutputs: the annotation pages say what a viewer needs (a
// supplementing TextualBody with its language and an xywh target, a
// classifying body with category and score and a label of its rank, a
// flagged page's commenting annotation with the reasons, a Software
// generator), and the derived manifest keeps every canvas and links the
// pages and the ALTO in the form viewers match (format
// application/alto+xml, profile under http://www.loc.gov/standards/alto/).
func TestIIIFOutputs(t *testing.T) {
	pages, manifest := iiifOutputs(t, t.TempDir())
	var tp, cp annotationPage
	b, _ := os.ReadFile(pages[0])
	json.Unmarshal(b, &tp)
	b, _ = os.ReadFile(pages[1])
	json.Unmarshal(b, &cp)
	target := func(i int) string { s, _ := tp.Items[i].Target.(string); return s }
	if len(tp.Items) != 2 || tp.Items[0].Motivation != "supplementing" || tp.Items[0].Body.Language != "en-t-de-t0-und" ||
		!xywhRE.MatchString(target(0)) || strings.Contains(target(1), "#") || tp.Items[0].Generator.Type != "Software" {
		t.Errorf("translation page: %s", b)
	}
	if !strings.HasSuffix(target(0), "#xywh=100,50,400,30") {
		t.Errorf("target %s, want the box halved", target(0))
	}
	if len(cp.Items) != 2 || cp.Items[0].Motivation != "classifying" || cp.Items[0].Body.Value != "printed" || *cp.Items[0].Body.Score != 0.91 {
		t.Errorf("class page: %+v", cp)
	}
	if cp.Items[1].Body.Value != "handwritten" || !reflect.DeepEqual(cp.Items[1].Label, langMap{"en": {"class 2 of 2"}}) {
		t.Errorf("second class: %+v", cp.Items[1])
	}
	var flagged annotationPage
	b, _ = os.ReadFile(pages[3])
	json.Unmarshal(b, &flagged)
	if len(flagged.Items) != 3 {
		t.Fatalf("flagged class page: %d annotations, want the two classes and the flag: %s", len(flagged.Items), b)
	}
	r := flagged.Items[2]
	if r.Motivation != "commenting" || r.Body.Purpose != "assessing" || r.Body.Value != "needs review: low_margin, near_blank" ||
		!reflect.DeepEqual(r.Body.Reasons, []string{"low_margin", "near_blank"}) || r.Target != flagged.Items[0].Target {
		t.Errorf("review flag: %+v", r)
	}
	var m map[string]any
	b, _ = os.ReadFile(manifest)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, it := range m["items"].([]any) {
		c := it.(map[string]any)
		see := c["seeAlso"].([]any)
		last := see[len(see)-1].(map[string]any)
		if last["format"] != ALTOFormat || !strings.HasPrefix(last["profile"].(string), ALTOProfilePrefix) || len(c["annotations"].([]any)) == 0 {
			t.Errorf("canvas %v: seeAlso %v", c["id"], see)
		}
	}
	if _, err := DerivedManifest([]byte(`{"@id":"x","@type":"sc:Collection"}`), "y", nil); err == nil || !strings.Contains(err.Error(), "not a IIIF manifest") {
		t.Errorf("v2 collection: %v", err)
	}
	if _, err := DerivedManifest(b, "y", []CanvasLinks{{Canvas: "nope"}}); err == nil {
		t.Error("unknown canvas accepted")
	}
}

// TestIIIFPrezi3: the annotation pages and the derived manifest load in
// PyPI iiif-prezi3 (its pydantic models of Presentation 3), and every
// language tag is valid for Python langcodes (the tools virtualenv of
// test/requirements-tools.txt).
func TestIIIFPrezi3(t *testing.T) {
	pages, manifest := iiifOutputs(t, t.TempDir())
	got := bookouttest.Prezi3(t, manifest, pages...)
	t.Logf("iiif-prezi3 loads %d annotation pages and the manifest (%s)", len(pages), got)
}

// TestDerivedManifestFormats: the seeAlso entry of each text format has
// its media type and profile (an ALTO link without a profile gets the
// ALTO prefix; another format without one gets none).
func TestDerivedManifestFormats(t *testing.T) {
	src := []byte(`{"type": "Manifest", "id": "m", "items": [{"id": "c", "type": "Canvas"}]}`)
	for _, c := range []struct {
		link            CanvasLinks
		format, profile string
	}{
		{CanvasLinks{ALTO: "a.xml"}, ALTOFormat, ALTOProfilePrefix},
		{CanvasLinks{ALTO: "p.xml", Format: PAGEFormat, ALTOProfile: "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"},
			"application/vnd.prima.page+xml", "http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15"},
		{CanvasLinks{ALTO: "h.hocr", Format: HOCRFormat, ALTOProfile: HOCRProfile}, "text/vnd.hocr+html", "http://kba.cloud/hocr-spec/1.2/"},
		{CanvasLinks{ALTO: "x.txt", Format: "text/plain"}, "text/plain", ""},
	} {
		c.link.Canvas = "c"
		out, err := DerivedManifest(src, "n", []CanvasLinks{c.link})
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Items []struct {
				SeeAlso []map[string]any `json:"seeAlso"`
			} `json:"items"`
		}
		if err := json.Unmarshal(out, &m); err != nil || len(m.Items[0].SeeAlso) != 1 {
			t.Fatalf("%v: %s", err, out)
		}
		see := m.Items[0].SeeAlso[0]
		profile, _ := see["profile"].(string)
		if see["id"] != c.link.ALTO || see["format"] != c.format || profile != c.profile {
			t.Errorf("%+v: seeAlso %v", c.link, see)
		}
	}
}

// TestOnCanvas: each page's boxes are scaled from that page's size; a
// line without a box stays without one, and the pages' lines are not
// changed.
func TestOnCanvas(t *testing.T) {
	pages := []OCRPage{
		{Width: 2000, Height: 1000, Lines: []TextLine{{Text: "a", Box: &Box{X: 200, Y: 100, W: 1000, H: 50}}, {Text: "b"}}},
		{Width: 400, Height: 500, Lines: []TextLine{{Text: "c", Box: &Box{X: 40, Y: 50, W: 40, H: 5}}}},
	}
	got := OnCanvas(pages, 1000, 2000)
	want := []TextLine{{Text: "a", Box: &Box{100, 200, 500, 100}}, {Text: "b"}, {Text: "c", Box: &Box{100, 200, 100, 20}}}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i, l := range got {
		w := want[i]
		if l.Text != w.Text || (l.Box == nil) != (w.Box == nil) || l.Box != nil && *l.Box != *w.Box {
			t.Errorf("line %d: %+v %v, want %+v %v", i, l, l.Box, w, w.Box)
		}
	}
	if *pages[0].Lines[0].Box != (Box{200, 100, 1000, 50}) {
		t.Errorf("the page's box changed: %v", *pages[0].Lines[0].Box)
	}
}

// TestTranslationPageTargets: a line whose outline is its box targets the
// canvas at the box (a Media Fragment in the target URL, as before); a
// line with a polygon targets a SpecificResource of the canvas with the
// box as a FragmentSelector first and the polygon, scaled onto the canvas
// as the box is, as an SvgSelector; a line without a box targets the
// canvas. The page loads in iiif-prezi3.
func TestTranslationPageTargets(t *testing.T) {
	const canvas = "https://example.org/iiif/canvas/1"
	rect, rectPolygon := Outline([]Point{{10, 20}, {210, 20}, {210, 60}, {10, 60}})
	box, polygon := Outline([]Point{{10, 30}, {200, 20}, {210, 50}, {20, 60.5}})
	if rectPolygon != nil || polygon == nil {
		t.Fatalf("Outline: rectangle polygon %v, slanted polygon %v", rectPolygon, polygon)
	}
	pages := []OCRPage{{Width: 400, Height: 200, Lines: []TextLine{
		{Text: "boxed", Box: rect}, {Text: "slanted", Box: box, Polygon: polygon}, {Text: "anywhere"}}}}
	dir := t.TempDir()
	page, err := TranslationPage("https://example.org/out/1.json", canvas, "en-t-de-t0-und", OnCanvas(pages, 800, 1000), Agent{Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Items []struct {
			Target json.RawMessage `json:"target"`
		} `json:"items"`
	}
	if err := json.Unmarshal(page, &got); err != nil || len(got.Items) != 3 {
		t.Fatalf("page: %v\n%s", err, page)
	}
	for i, want := range []string{
		`"https://example.org/iiif/canvas/1#xywh=20,100,400,200"`,
		`{"type":"SpecificResource","source":"https://example.org/iiif/canvas/1","selector":[` +
			`{"type":"FragmentSelector","conformsTo":"http://www.w3.org/TR/media-frags/","value":"xywh=20,100,400,203"},` +
			`{"type":"SvgSelector","value":"<svg xmlns='http://www.w3.org/2000/svg'><path d='M20,150 L400,100 L420,250 L40,302.5 Z'/></svg>"}]}`,
		`"https://example.org/iiif/canvas/1"`,
	} {
		var g, w any
		if err := json.Unmarshal(got.Items[i].Target, &g); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("line %d: target\n%s\nwant\n%s", i, got.Items[i].Target, want)
		}
	}
	pagePath := filepath.Join(dir, "page.json")
	os.WriteFile(pagePath, page, 0o644)
	_, manifest := iiifOutputs(t, dir)
	t.Logf("iiif-prezi3: %s", bookouttest.Prezi3(t, manifest, pagePath))
}

// TestCanvasNumbers: the canvases are numbered in the manifest's order
// (Presentation 3 items, Presentation 2 the first sequence), and a page is
// named after its canvas's number whatever was written before it (a
// canvas without a text file shifted translate's numbers after it).
func TestCanvasNumbers(t *testing.T) {
	v3 := `{"@context":"http://iiif.io/api/presentation/3/context.json","id":"m","type":"Manifest","items":[{"id":"c1","type":"Canvas"},{"id":"c2","type":"Canvas"},{"id":"c3","type":"Canvas"}]}`
	v2 := `{"@context":"http://iiif.io/api/presentation/2/context.json","@id":"m","@type":"sc:Manifest","sequences":[{"canvases":[{"@id":"c1"},{"@id":"c2"},{"@id":"c3"}]}]}`
	for name, src := range map[string]string{"v3": v3, "v2": v2} {
		nums := CanvasNumbers([]byte(src))
		for _, c := range []struct {
			canvas string
			k, seq int
			want   string
		}{
			{"c1", 1, 1, "1.json"},
			{"c3", 1, 2, "3.json"}, // c2 had no text file
			{"c3", 2, 3, "3-2.json"},
			{"elsewhere", 1, 4, "x4.json"},
		} {
			if got := PageName(nums, c.canvas, c.k, c.seq); got != c.want {
				t.Errorf("%s: PageName(%s, %d, %d) = %s, want %s", name, c.canvas, c.k, c.seq, got, c.want)
			}
		}
	}
	if CanvasNumbers([]byte("not json")) != nil {
		t.Error("a manifest that cannot be read numbered canvases")
	}
}
