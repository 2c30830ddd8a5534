package alto

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"archivekit/internal/bookout"
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
