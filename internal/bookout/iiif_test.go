package bookout

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/book"
	"archivekit/internal/bookout/bookouttest"
)

var xywhRE = regexp.MustCompile(`#xywh=\d+,\d+,[1-9]\d*,[1-9]\d*$`)

// iiifOutputs writes, for every canvas of a real Presentation 3 manifest
// (the IIIF cookbook's newspaper issue), a translation page (two lines,
// one boxed from a page twice the canvas's size) and a class page, and the
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
		cp, err := ClassPage("https://example.org/out/p"+string(rune('1'+i))+"-class.json", p.ID, []PageClass{{"printed", 0.91}, {"handwritten", 0.05}}, gen)
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
// classifying body with category and score, a Software generator), and
// the derived manifest keeps every canvas and links the pages and the
// ALTO in the form viewers match (format application/alto+xml, profile
// under http://www.loc.gov/standards/alto/).
func TestIIIFOutputs(t *testing.T) {
	pages, manifest := iiifOutputs(t, t.TempDir())
	var tp, cp annotationPage
	b, _ := os.ReadFile(pages[0])
	json.Unmarshal(b, &tp)
	b, _ = os.ReadFile(pages[1])
	json.Unmarshal(b, &cp)
	if len(tp.Items) != 2 || tp.Items[0].Motivation != "supplementing" || tp.Items[0].Body.Language != "en-t-de-t0-und" ||
		!xywhRE.MatchString(tp.Items[0].Target) || strings.Contains(tp.Items[1].Target, "#") || tp.Items[0].Generator.Type != "Software" {
		t.Errorf("translation page: %s", b)
	}
	if !strings.HasSuffix(tp.Items[0].Target, "#xywh=100,50,400,30") {
		t.Errorf("target %s, want the box halved", tp.Items[0].Target)
	}
	if len(cp.Items) != 2 || cp.Items[0].Motivation != "classifying" || cp.Items[0].Body.Value != "printed" || *cp.Items[0].Body.Score != 0.91 {
		t.Errorf("class page: %+v", cp)
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
	if _, err := DerivedManifest([]byte(`{"@id":"x","@type":"sc:Manifest"}`), "y", nil); err == nil || !strings.Contains(err.Error(), "Presentation 2") {
		t.Errorf("v2: %v", err)
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
