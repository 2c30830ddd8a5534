package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
)

// greyPage reads a sample page (PNG) as a grey image, a page of a
// scanner's multi-page TIFF.
func greyPage(t *testing.T, path string) *image.Gray {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		var img image.Image
		if img, err = png.Decode(bytes.NewReader(b)); err == nil {
			g := image.NewGray(img.Bounds())
			draw.Draw(g, g.Bounds(), img, img.Bounds().Min, draw.Src)
			return g
		}
	}
	t.Fatalf("%s: %v", path, err)
	return nil
}

// TestTIFFDocument: /predict_document classifies every page of a
// multi-page TIFF (three sample pages of different categories), taken by
// its content whatever its label, each page numbered and answered as the
// same page sent alone to /predict_image; the pages field selects among
// them, MAX_PDF_PAGES bounds them as it bounds a PDF's.
func TestTIFFDocument(t *testing.T) {
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", EnvMaxPDFPages: "3"}, nil)
	samples := classifytest.Pages(t, 1)
	paths := []string{samples[0], samples[7], samples[2]}
	var pages []*image.Gray
	for _, p := range paths {
		pages = append(pages, greyPage(t, p))
	}
	scan := hostile.GrayTIFF(pages...)

	// Each page alone, the reference.
	alone := make([][]prediction, len(pages))
	for i, p := range pages {
		status, b := postForm(t, ts.URL+"/predict_image", upload{Field: "file", Name: fmt.Sprintf("page%d.tif", i+1), CType: "image/tiff", Data: hostile.GrayTIFF(p)},
			upload{Field: "topn", Data: []byte("11")})
		var r anyResponse
		if err := json.Unmarshal(b, &r); status != 200 || err != nil {
			t.Fatalf("page %d alone: status %d: %s", i+1, status, b)
		}
		alone[i] = r.Predictions
	}
	// The pages are told apart by their answers (the fixture models' scores
	// are close to uniform, but not alike), so a page answered for another
	// is seen.
	for i := range alone {
		for j := range i {
			if scoreGap(alone[i], alone[j]) < 3e-4 {
				t.Fatalf("pages %d and %d answered alike (%v, %v): pick other pages", j+1, i+1, alone[j], alone[i])
			}
		}
	}

	for _, ctype := range []string{"image/tiff", "application/octet-stream"} {
		t.Run(ctype, func(t *testing.T) {
			status, b := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "scan.tif", CType: ctype, Data: scan},
				upload{Field: "topn", Data: []byte("11")}, upload{Field: "thumbnails", Data: []byte("true")})
			if status != 200 {
				t.Fatalf("status %d: %s", status, b)
			}
			var r anyResponse
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			if r.Type != "document" || r.PageCount != 3 || len(r.Pages) != 3 {
				t.Fatalf("type %q, page_count %d, %d pages; want a document of 3", r.Type, r.PageCount, len(r.Pages))
			}
			for i, p := range r.Pages {
				if p.Page != i+1 || !strings.HasPrefix(p.Thumbnail, "data:image/jpeg;base64,") {
					t.Errorf("page %d: number %d, thumbnail %.30q", i+1, p.Page, p.Thumbnail)
				}
				samePredictions(t, i+1, p.Predictions, alone[i])
			}
		})
	}

	t.Run("pages=2", func(t *testing.T) {
		status, b := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "scan.tif", CType: "image/tiff", Data: scan},
			upload{Field: "topn", Data: []byte("11")}, upload{Field: "pages", Data: []byte("2")})
		var r anyResponse
		if err := json.Unmarshal(b, &r); status != 200 || err != nil {
			t.Fatalf("status %d: %s", status, b)
		}
		if r.PageCount != 3 || len(r.Pages) != 1 || r.Pages[0].Page != 2 {
			t.Fatalf("page_count %d, pages %+v; want page 2 of 3", r.PageCount, r.Pages)
		}
		samePredictions(t, 2, r.Pages[0].Predictions, alone[1])
	})

	t.Run("over MAX_PDF_PAGES", func(t *testing.T) {
		four := hostile.GrayTIFF(append(pages, pages[0])...)
		status, b := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "four.tif", CType: "image/tiff", Data: four})
		var e struct{ Detail, Reason string }
		if err := json.Unmarshal(b, &e); status != 413 || err != nil || e.Reason != "too_many_pages" ||
			!strings.Contains(e.Detail, `"four.tif" has 4 pages: at most 3 pages are classified per request (MAX_PDF_PAGES)`) {
			t.Fatalf("status %d: %s", status, b)
		}
	})
}

// samePredictions checks that page's predictions are want's: every
// category's score within 1.5e-4 (one step of the 4 decimals, and batched
// forward passes' rounding).
func samePredictions(t *testing.T, page int, got, want []prediction) {
	t.Helper()
	if len(got) != len(want) || scoreGap(got, want) > 1.5e-4 {
		t.Errorf("page %d: predictions %v, the page alone %v", page, got, want)
	}
}

// scoreGap is the largest difference between a's and b's scores of one
// category (1 for a category in one only).
func scoreGap(a, b []prediction) float64 {
	scores := map[string]float64{}
	for _, p := range b {
		scores[p.Label] = p.Score
	}
	gap := 0.0
	for _, p := range a {
		s, ok := scores[p.Label]
		if !ok {
			return 1
		}
		gap = max(gap, math.Abs(p.Score-s))
	}
	return gap
}
