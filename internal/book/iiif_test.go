package book

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"archivekit/internal/fetch"
)

// TestCanvasTexts: a canvas's text files by format or profile, in seeAlso,
// rendering, v2 otherContent and v3 supplementing annotations; the profile
// spellings found in published manifests.
func TestCanvasTexts(t *testing.T) {
	for _, c := range []struct {
		canvas string
		want   string // "FORMAT id" of each text, in order
	}{
		{`{"seeAlso": {"@id": "a", "profile": "http://www.loc.gov/standards/alto/"}}`, "ALTO a"},
		{`{"seeAlso": {"@id": "a", "profile": "http://www.loc.gov/standards/alto"}}`, "ALTO a"},
		{`{"seeAlso": [{"id": "a", "profile": "https://www.loc.gov/standards/alto/ns-v4#"}]}`, "ALTO a"},
		{`{"seeAlso": {"@id": "a", "profile": "http://www.loc.gov/standards/alto/v3/alto.xsd", "format": "application/xml"}}`, "ALTO a"},
		{`{"rendering": [{"id": "a", "format": "application/alto+xml"}]}`, "ALTO a"},
		{`{"seeAlso": {"@id": "h", "format": "text/vnd.hocr+html"}}`, "hOCR h"},
		{`{"seeAlso": {"@id": "h", "profile": "https://github.com/kba/hocr-spec/blob/master/hocr-spec.md", "format": "text/html"}}`, "hOCR h"},
		{`{"rendering": {"id": "h", "profile": "http://kba.github.io/hocr-spec/1.2/"}}`, "hOCR h"},
		{`{"seeAlso": {"@id": "p", "format": "application/vnd.prima.page+xml"}}`, "PAGE p"},
		{`{"otherContent": [{"@id": "l", "@type": "sc:AnnotationList"}, {"@id": "a", "@type": "sc:AnnotationList", "format": "application/xml+alto"}]}`, "ALTO a"},
		{`{"annotations": [{"type": "AnnotationPage", "items": [{"type": "Annotation", "motivation": "supplementing",
		   "body": {"id": "h", "type": "Text", "format": "text/vnd.hocr+html"}}]}]}`, "hOCR h"},
		{`{"seeAlso": [{"@id": "t", "format": "text/plain"}, {"@id": "e", "format": "application/ld+json", "profile": "http://www.europeana.eu/schemas/edm/"}]}`, ""},
		{`{"seeAlso": [{"@id": "a", "format": "application/xml+alto"}], "rendering": [{"@id": "a", "format": "application/xml+alto"}, {"@id": "h", "format": "text/vnd.hocr+html"}]}`, "ALTO a, hOCR h"},
	} {
		var canvas map[string]any
		if err := json.Unmarshal([]byte(c.canvas), &canvas); err != nil {
			t.Fatal(err)
		}
		got := ""
		for i, tx := range canvasTexts(canvas) {
			if i > 0 {
				got += ", "
			}
			got += string(tx.Format) + " " + tx.Location
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.canvas, got, c.want)
		}
	}
}

// TestImageService reads services as manifests write them.
func TestImageService(t *testing.T) {
	for _, c := range []struct {
		service string
		want    ImageService
	}{
		{`{"@context": "http://iiif.io/api/image/2/context.json", "@id": "s/", "profile": ["http://iiif.io/api/image/2/level0.json", {"supports": ["sizeByW"]}],
		   "width": 100, "height": 200, "sizes": [{"width": 50, "height": 100}]}`,
			ImageService{ID: "s", Version: 2, Level: 0, Width: 100, Height: 200, Sizes: []Size{{50, 100}}}},
		{`[{"id": "s", "type": "ImageService3", "profile": "level2"}]`, ImageService{ID: "s", Version: 3, Level: 2}},
		{`{"@id": "s", "profile": "http://library.stanford.edu/iiif/image-api/1.1/compliance.html#level1", "@context": "http://library.stanford.edu/iiif/image-api/1.1/context.json"}`,
			ImageService{ID: "s", Version: 1, Level: 1}},
		{`{"@id": "s", "protocol": "http://iiif.io/api/image"}`, ImageService{ID: "s", Version: 2, Level: -1}},
		// Limits: Image API 3's own, 2.1's in the profile's description.
		{`{"id": "s", "type": "ImageService3", "profile": "level2", "maxWidth": 300, "maxArea": 1e6}`, ImageService{ID: "s", Version: 3, Level: 2, MaxWidth: 300, MaxArea: 1_000_000}},
		{`{"@context": "http://iiif.io/api/image/2/context.json", "@id": "s", "profile": ["http://iiif.io/api/image/2/level2.json", {"maxWidth": 500, "maxHeight": 400}]}`,
			ImageService{ID: "s", Version: 2, Level: 2, MaxWidth: 500, MaxHeight: 400}},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.service), &v); err != nil {
			t.Fatal(err)
		}
		got := imageService(v)
		if got == nil || got.ID != c.want.ID || got.Version != c.want.Version || got.Level != c.want.Level ||
			got.Width != c.want.Width || got.Height != c.want.Height || len(got.Sizes) != len(c.want.Sizes) ||
			got.MaxWidth != c.want.MaxWidth || got.MaxHeight != c.want.MaxHeight || got.MaxArea != c.want.MaxArea {
			t.Errorf("%s: %+v, want %+v", c.service, got, c.want)
		}
	}
	if s := imageService(map[string]any{"@id": "x", "profile": "http://iiif.io/api/search/0/search"}); s != nil {
		t.Errorf("a search service read as an image service: %+v", s)
	}
}

// TestManifestRelativeLocations: a manifest's relative image and text
// locations are resolved against where the manifest was read: a local
// manifest's against its folder (they were taken relative to the working
// folder, so a book beside its manifest was not found), a served one's
// against its URL (they named local files); absolute URLs are kept as
// written.
func TestManifestRelativeLocations(t *testing.T) {
	manifest := []byte(`{"@context": "http://iiif.io/api/presentation/3/context.json", "id": "https://example.org/m", "type": "Manifest", "items": [
  {"id": "https://example.org/m/c1", "type": "Canvas", "width": 10, "height": 10,
   "items": [{"type": "AnnotationPage", "items": [{"type": "Annotation", "motivation": "painting", "body": {"id": "img/1.jpg", "type": "Image"}}]}],
   "seeAlso": [{"id": "ocr/1.xml", "type": "Dataset", "profile": "http://www.loc.gov/standards/alto/ns-v4#"},
               {"id": "https://other.example.org/a%20b/2.hocr", "type": "Text", "format": "text/vnd.hocr+html"}]}]}`)
	dir := t.TempDir()
	local := filepath.Join(dir, "manifest.json")
	if err := os.WriteFile(local, manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(manifest) }))
	defer srv.Close()
	for _, c := range []struct {
		at, image, text string
	}{
		{local, filepath.Join(dir, "img", "1.jpg"), filepath.Join(dir, "ocr", "1.xml")},
		{srv.URL + "/b/manifest.json", srv.URL + "/b/img/1.jpg", srv.URL + "/b/ocr/1.xml"},
	} {
		f := fetch.New(fetch.Policy{Private: fetch.PrivateAllowed, Retries: -1}, nil)
		b, err := Read(context.Background(), c.at, Options{Fetcher: f})
		if err != nil {
			t.Fatalf("%s: %v", c.at, err)
		}
		p := b.Pages[0]
		if p.Image == nil || p.Image.Location != c.image || len(p.Texts) != 2 || p.Texts[0].Location != c.text ||
			p.Texts[1].Location != "https://other.example.org/a%20b/2.hocr" {
			t.Errorf("%s: image %+v, texts %+v; want %s and %s", c.at, p.Image, p.Texts, c.image, c.text)
		}
	}
}

// TestCanvasPaintedTwice: a canvas painted by two images (the two halves
// of a spread, a fold-out) is read with its first image and the book says
// so; a choice between images counts once. (The page was classified from
// its first half without a word.)
func TestCanvasPaintedTwice(t *testing.T) {
	anno := func(body string) string {
		return `{"type":"Annotation","motivation":"painting","target":"https://example.org/c1","body":` + body + `}`
	}
	img := func(n int) string {
		return fmt.Sprintf(`{"id":"https://example.org/i%d.jpg","type":"Image","format":"image/jpeg"}`, n)
	}
	for _, c := range []struct {
		name, annos string
		problem     string
	}{
		{"two halves", anno(img(1)) + "," + anno(img(2)), "painted by 2 images: only the first is read (https://example.org/i1.jpg)"},
		{"a choice", anno(`{"type":"Choice","items":[` + img(1) + "," + img(2) + `]}`), ""},
		{"one image", anno(img(1)), ""},
		{"one image painted twice", anno(img(1)) + "," + anno(img(1)), ""}, // as e-codices' manifests do
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.json")
			doc := `{"@context":"http://iiif.io/api/presentation/3/context.json","id":"https://example.org/m","type":"Manifest","items":[
			  {"id":"https://example.org/c1","type":"Canvas","width":100,"height":100,"items":[{"type":"AnnotationPage","items":[` + c.annos + `]}]}]}`
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := Read(context.Background(), path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Pages) != 1 || b.Pages[0].Image == nil || b.Pages[0].Image.Location != "https://example.org/i1.jpg" {
				t.Fatalf("pages %+v", b.Pages)
			}
			var got []string
			for _, p := range b.Problems {
				got = append(got, p.Reason)
			}
			if want := []string{c.problem}; c.problem == "" && len(got) != 0 || c.problem != "" && !reflect.DeepEqual(got, want) {
				t.Errorf("problems %q, want %q", got, c.problem)
			}
		})
	}
}
