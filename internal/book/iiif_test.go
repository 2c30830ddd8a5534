package book

import (
	"encoding/json"
	"testing"
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
	} {
		var v any
		if err := json.Unmarshal([]byte(c.service), &v); err != nil {
			t.Fatal(err)
		}
		got := imageService(v)
		if got == nil || got.ID != c.want.ID || got.Version != c.want.Version || got.Level != c.want.Level ||
			got.Width != c.want.Width || got.Height != c.want.Height || len(got.Sizes) != len(c.want.Sizes) {
			t.Errorf("%s: %+v, want %+v", c.service, got, c.want)
		}
	}
	if s := imageService(map[string]any{"@id": "x", "profile": "http://iiif.io/api/search/0/search"}); s != nil {
		t.Errorf("a search service read as an image service: %+v", s)
	}
}
