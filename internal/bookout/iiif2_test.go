package bookout

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/book"
	"archivekit/internal/bookout/bookouttest"
)

// v2Outputs writes, for every canvas of the real Presentation 2 manifest
// path (of internal/book's testdata), a translation list (a line boxed on
// a page twice the canvas's size, a slanted line, an empty line, a line
// on the whole page) and a class list (two classes; the second canvas's
// flagged for review), and the derived manifest linking both lists and a
// translated ALTO file from each canvas; it returns the manifest read
// (its pages), the lists by canvas and the derived manifest's path.
func v2Outputs(t *testing.T, dir, path string) (b *book.Book, lists map[string][]string, manifest string) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ver, err := ManifestVersion(src)
	if err != nil || ver != Presentation2 {
		t.Fatalf("ManifestVersion: %v, %v; want 2", ver, err)
	}
	b, err = book.Read(context.Background(), path, book.Options{Text: book.TextNone})
	if err != nil {
		t.Fatal(err)
	}
	gen := Agent{Name: "archivekit translate", Version: "1.0", Homepage: "https://example.org/archivekit"}
	lists = map[string][]string{}
	var links []CanvasLinks
	for i, p := range b.Pages {
		w, h := float64(p.Image.Width), float64(p.Image.Height)
		box := Box{X: 200, Y: 100, W: 800, H: 60}
		slantBox, slant := Outline([]Point{{100, 300}, {1800, 250}, {1820, 330}, {120, 380}})
		lines := OnCanvas([]OCRPage{{Width: 2 * w, Height: 2 * h, Lines: []TextLine{
			{Text: "The first line", Box: &box}, {Text: "A slanted line", Box: slantBox, Polygon: slant}, {Text: ""}, {Text: "Whole page"}}}}, w, h)
		ids := []string{fmt.Sprintf("https://example.org/out/%d-en.json", i+1), fmt.Sprintf("https://example.org/out/%d-class.json", i+1)}
		tl, err := ver.TranslationPage(ids[0], p.ID, "en-t-ar-t0-und", lines, gen)
		if err != nil {
			t.Fatal(err)
		}
		var flag *ReviewFlag
		if i == 1 {
			flag = &ReviewFlag{Reasons: []string{"low_margin", "near_blank"}}
		}
		cl, err := ver.ClassPage(ids[1], p.ID, []PageClass{{"printed", 0.91}, {"handwritten", 0.05}}, flag, gen)
		if err != nil {
			t.Fatal(err)
		}
		for k, data := range [][]byte{tl, cl} {
			name := filepath.Join(dir, fmt.Sprintf("list-%d-%d.json", i+1, k))
			if err := os.WriteFile(name, data, 0o644); err != nil {
				t.Fatal(err)
			}
			lists[p.ID] = append(lists[p.ID], name)
		}
		links = append(links, CanvasLinks{Canvas: p.ID, Annotations: ids,
			ALTO: fmt.Sprintf("https://example.org/out/%d_en.alto.xml", i+1), ALTOProfile: "http://www.loc.gov/standards/alto/ns-v4#",
			Label: "ALTO, machine translation (en-t-ar-t0-und)"})
	}
	out, err := DerivedManifest(src, "https://example.org/out/manifest.json", links)
	if err != nil {
		t.Fatal(err)
	}
	manifest = filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(manifest, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return b, lists, manifest
}

// list2 is what a Presentation 2 viewer reads of an annotation list.
type list2 struct {
	Context   string `json:"@context"`
	ID        string `json:"@id"`
	Type      string `json:"@type"`
	Resources []struct {
		ID         string          `json:"@id"`
		Type       string          `json:"@type"`
		Label      string          `json:"label"`
		Motivation string          `json:"motivation"`
		On         json.RawMessage `json:"on"`
		Resource   struct {
			Type     string   `json:"@type"`
			Chars    string   `json:"chars"`
			Format   string   `json:"format"`
			Language string   `json:"language"`
			Score    *float64 `json:"score"`
			Reasons  []string `json:"reasons"`
		} `json:"resource"`
	} `json:"resources"`
}

var onFragmentRE = regexp.MustCompile(`^xywh=(\d+),(\d+),(\d+),(\d+)$`)

// onCanvas returns the canvas an annotation's on names and the box
// (x, y, w, h; nil: the whole canvas) it selects, for an on that is a URL
// or an oa:SpecificResource with an oa:Choice of box and polygon.
func onCanvas(t *testing.T, raw json.RawMessage) (canvas string, box []int, svg string) {
	t.Helper()
	var frag string
	var s string
	if json.Unmarshal(raw, &s) == nil {
		canvas, frag, _ = strings.Cut(s, "#")
	} else {
		var sr struct {
			Type     string `json:"@type"`
			Full     string `json:"full"`
			Selector struct {
				Type    string                       `json:"@type"`
				Default struct{ Type, Value string } `json:"default"`
				Item    struct{ Type, Value string } `json:"item"`
			} `json:"selector"`
		}
		if err := json.Unmarshal(raw, &sr); err != nil || sr.Type != "oa:SpecificResource" || sr.Selector.Type != "oa:Choice" {
			t.Fatalf("on %s: %v", raw, err)
		}
		canvas, frag, svg = sr.Full, sr.Selector.Default.Value, sr.Selector.Item.Value
	}
	if frag == "" {
		return canvas, nil, svg
	}
	m := onFragmentRE.FindStringSubmatch(frag)
	if m == nil {
		t.Fatalf("on %s: fragment %q is not xywh=x,y,w,h", raw, frag)
	}
	for _, v := range m[1:] {
		n, _ := strconv.Atoi(v)
		box = append(box, n)
	}
	return canvas, box, svg
}

// TestIIIF2Outputs: for a real Presentation 2 manifest (the British
// Library issue of mirador-textoverlay, its canvases' seeAlso one ALTO
// object each) the derived manifest gives each canvas otherContent
// naming its two annotation lists and a seeAlso list keeping the
// canvas's own link and adding the translated ALTO (@id, format, profile,
// label); every annotation of a list is on that canvas, boxes inside it
// (the line boxed on a page twice the canvas's size halved; the slanted
// line's box, as oa:Choice default beside its SVG polygon); a
// translation is an sc:painting cnt:ContentAsText in its language; a
// class is oa:classifying with its score, a flag oa:commenting with its
// reasons. Everything loads in iiif-prezi's 2.1 reader.
func TestIIIF2Outputs(t *testing.T) {
	src := filepath.Join("..", "book", "testdata", "iiif", "textoverlay-EAP119-1-8-1_issue1.json")
	b, lists, manifest := v2Outputs(t, t.TempDir(), src)
	var orig, m struct {
		ID        string `json:"@id"`
		Sequences []struct {
			Canvases []map[string]json.RawMessage `json:"canvases"`
		} `json:"sequences"`
	}
	raw, _ := os.ReadFile(src)
	if err := json.Unmarshal(raw, &orig); err != nil {
		t.Fatal(err)
	}
	raw, _ = os.ReadFile(manifest)
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	canvases := m.Sequences[0].Canvases
	if m.ID != "https://example.org/out/manifest.json" || len(canvases) != 33 || len(b.Pages) != 33 {
		t.Fatalf("derived manifest %s: @id %q, %d canvases", manifest, m.ID, len(canvases))
	}
	for i, c := range canvases {
		var id string
		json.Unmarshal(c["@id"], &id)
		var other []struct {
			ID   string `json:"@id"`
			Type string `json:"@type"`
		}
		var see []map[string]any
		if err := json.Unmarshal(c["otherContent"], &other); err != nil || len(other) != 2 ||
			other[0].ID != fmt.Sprintf("https://example.org/out/%d-en.json", i+1) || other[1].ID != fmt.Sprintf("https://example.org/out/%d-class.json", i+1) ||
			other[0].Type != "sc:AnnotationList" || other[1].Type != "sc:AnnotationList" {
			t.Fatalf("canvas %s: otherContent %s (%v)", id, c["otherContent"], err)
		}
		var own map[string]any
		json.Unmarshal(orig.Sequences[0].Canvases[i]["seeAlso"], &own)
		if err := json.Unmarshal(c["seeAlso"], &see); err != nil || len(see) != 2 || fmt.Sprint(see[0]) != fmt.Sprint(own) {
			t.Fatalf("canvas %s: seeAlso %s, want its own %v and the translation (%v)", id, c["seeAlso"], own, err)
		}
		if see[1]["@id"] != fmt.Sprintf("https://example.org/out/%d_en.alto.xml", i+1) || see[1]["format"] != ALTOFormat ||
			see[1]["profile"] != "http://www.loc.gov/standards/alto/ns-v4#" || see[1]["label"] != "ALTO, machine translation (en-t-ar-t0-und)" {
			t.Errorf("canvas %s: translation seeAlso %v", id, see[1])
		}
		for k, path := range lists[id] {
			checkList2(t, path, other[k].ID, id, b.Pages[i].Image.Width, b.Pages[i].Image.Height, i == 1)
		}
	}
	var all []string
	for _, p := range b.Pages {
		all = append(all, lists[p.ID]...)
	}
	t.Logf("iiif-prezi: %s", bookouttest.Prezi2(t, manifest, all...))
}

// checkList2 checks the annotation list path (id, on canvas of w × h;
// flagged: its class list has a review flag) as a viewer reads it.
func checkList2(t *testing.T, path, id, canvas string, w, h int, flagged bool) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var l list2
	if err := json.Unmarshal(raw, &l); err != nil {
		t.Fatal(err)
	}
	if l.Context != "http://iiif.io/api/presentation/2/context.json" || l.ID != id || l.Type != "sc:AnnotationList" {
		t.Fatalf("%s: @context %q @id %q @type %q", path, l.Context, l.ID, l.Type)
	}
	class := strings.HasSuffix(id, "-class.json")
	want := 3 // three lines with text, or two classes and the flag
	if class && !flagged {
		want = 2
	}
	if len(l.Resources) != want {
		t.Fatalf("%s: %d annotations, want %d", path, len(l.Resources), want)
	}
	for k, a := range l.Resources {
		on, box, svg := onCanvas(t, a.On)
		wantID := fmt.Sprintf("%s#t%d", id, k+1)
		if class {
			wantID = fmt.Sprintf("%s#c%d", id, k+1)
			if k == 2 {
				wantID = id + "#r1"
			}
		}
		if on != canvas || a.Type != "oa:Annotation" || a.ID != wantID ||
			a.Resource.Type != "cnt:ContentAsText" || a.Resource.Chars == "" || a.Resource.Format != "text/plain" {
			t.Fatalf("%s: annotation %d %+v on %s", path, k+1, a, a.On)
		}
		if box != nil && (box[0]+box[2] > w || box[1]+box[3] > h) {
			t.Errorf("%s: annotation %d box %v outside the %d × %d canvas", path, k+1, box, w, h)
		}
		switch {
		case !class:
			if a.Motivation != "sc:painting" || a.Resource.Language != "en-t-ar-t0-und" {
				t.Errorf("%s: translation %+v", path, a)
			}
			wantBox := [][]int{{100, 50, 400, 30}, {50, 125, 860, 65}, nil}[k]
			if fmt.Sprint(box) != fmt.Sprint(wantBox) || (k == 1) != (svg != "") {
				t.Errorf("%s: line %d box %v svg %q, want %v (the page's halved)", path, k+1, box, svg, wantBox)
			}
		case k < 2:
			if a.Motivation != "oa:classifying" || box != nil || a.Resource.Score == nil || a.Label != fmt.Sprintf("class %d of 2", k+1) ||
				a.Resource.Chars != []string{"printed", "handwritten"}[k] || *a.Resource.Score != []float64{0.91, 0.05}[k] {
				t.Errorf("%s: class %+v", path, a)
			}
		default:
			if a.Motivation != "oa:commenting" || a.Resource.Chars != "needs review: low_margin, near_blank" ||
				strings.Join(a.Resource.Reasons, ";") != "low_margin;near_blank" || a.Label != "needs review" {
				t.Errorf("%s: review flag %+v", path, a)
			}
		}
	}
}

// TestIIIF2TwoSequences: a Presentation 2 manifest with two sequences
// (e-codices, as Mirador's fixture) gets the lists on the canvases of
// either; a canvas not in the manifest is refused, and so is a document
// that is no manifest.
func TestIIIF2TwoSequences(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "book", "testdata", "iiif", "mirador-gau.json"))
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Sequences []struct {
			Canvases []struct {
				ID string `json:"@id"`
			} `json:"canvases"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal(src, &in); err != nil || len(in.Sequences) != 2 {
		t.Fatalf("%v: %d sequences", err, len(in.Sequences))
	}
	first, second := in.Sequences[0].Canvases[0].ID, in.Sequences[1].Canvases[len(in.Sequences[1].Canvases)-1].ID
	out, err := DerivedManifest(src, "https://example.org/out/gau.json", []CanvasLinks{
		{Canvas: first, Annotations: []string{"https://example.org/out/1.json"}},
		{Canvas: second, Annotations: []string{"https://example.org/out/2.json"}, ALTO: "https://example.org/out/2.xml"}})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range m["sequences"].([]any) {
		for _, c := range s.(map[string]any)["canvases"].([]any) {
			c := c.(map[string]any)
			if other, ok := c["otherContent"].([]any); ok {
				got[c["@id"].(string)] = other[0].(map[string]any)["@id"].(string)
			}
		}
	}
	if len(got) != 2 || got[first] != "https://example.org/out/1.json" || got[second] != "https://example.org/out/2.json" {
		t.Errorf("otherContent by canvas: %v", got)
	}
	if _, err := DerivedManifest(src, "x", []CanvasLinks{{Canvas: "https://example.org/nope"}}); err == nil {
		t.Error("a canvas not in the manifest accepted")
	}
	if _, err := ManifestVersion([]byte(`{"@context": "http://iiif.io/api/presentation/2/context.json", "@type": "sc:Collection"}`)); err == nil {
		t.Error("a collection taken for a manifest")
	}
}
