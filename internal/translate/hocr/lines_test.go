package hocr

import (
	"context"
	"path/filepath"
	"testing"

	"archivekit/internal/bookout"
	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/linestest"
)

// TestLines: each real hOCR file reads as its page size and its lines
// with their bboxes; translated, the same lines with the same boxes read
// as the stand-in's translation of the original's text.
func TestLines(t *testing.T) {
	files := []struct {
		name, src string
		want      linestest.Page
	}{
		{"tesseract4_german_hocrjs-309515696-2.hocr", "de", linestest.Page{W: 2338, H: 3404, Lines: 41, Boxed: 41}},
		{"tesseract3_english_hocrtools-tess.hocr", "en", linestest.Page{W: 2488, H: 3507, Lines: 37, Boxed: 37}},
		{"ocropy_german_hocrtools-litver.hocr", "de", linestest.Page{W: 4299, H: 3035, Lines: 105, Boxed: 105}},
		// 43 line elements, 21 of them empty.
		{"gcv_english_gcv2hocr-1.hocr", "en", linestest.Page{W: 1928, H: 2552, Lines: 22, Boxed: 22}},
	}
	for _, f := range files {
		in, orig := linestest.ReadPage(t, filepath.Join("testdata", "real", f.name), Lines, "fr", f.want)
		res, err := Translate(context.Background(), in, Options{Backend: &backendtest.Backend{}, Source: f.src, Target: "fr", File: f.name})
		if err != nil {
			t.Fatal(err)
		}
		got, err := Lines(res.Output, "fr")
		if err != nil {
			t.Fatal(err)
		}
		if linestest.SameLines(t, f.name, orig, got, backendtest.Translate) == 0 {
			t.Errorf("%s: no line reads as translated", f.name)
		}
	}
}

// TestBboxOf: the bbox property among a title's others; none for a
// missing, malformed or empty one.
func TestBboxOf(t *testing.T) {
	for _, c := range []struct {
		tag  string
		want *bookout.Box
	}{
		{`<span class='ocr_line' title='bbox 795 230 2238 272; baseline 0 -8; x_size 42'>`, &bookout.Box{X: 795, Y: 230, W: 1443, H: 42}},
		{`<div title="image &quot;a.png&quot;; bbox 0 0 4299 3035; ppageno 0">`, &bookout.Box{W: 4299, H: 3035}},
		{`<span title='bbox 10 10 10 20'>`, nil},
		{`<span title='bbox 1 2 x 4'>`, nil},
		{`<span title='x_wconf 90'>`, nil},
		{`<span>`, nil},
	} {
		got := bboxOf(&elem{raw: []byte(c.tag)})
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("%s: %v, want %v", c.tag, got, c.want)
		}
	}
}
