package imageio

import (
	"errors"
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
)

// A multi-page TIFF (a scanner's multi-page scan) gives every page, each
// decoded from its own directory; before, only the first page was read and
// the others were dropped without a word.
func TestMultiPageTIFF(t *testing.T) {
	pages := []hostile.TIFFPage{{W: 40, H: 60, Grey: 10}, {W: 60, H: 40, Grey: 128}, {W: 30, H: 30, Grey: 250}}
	d, err := Decode(hostile.TIFF(pages...), "scan.tif")
	if err != nil {
		t.Fatal(err)
	}
	if d.Pages() != len(pages) {
		t.Fatalf("Pages() = %d, want %d", d.Pages(), len(pages))
	}
	for i, p := range pages {
		img, err := d.Page(i)
		if err != nil {
			t.Fatalf("page %d: %v", i+1, err)
		}
		if img.W != p.W || img.H != p.H {
			t.Errorf("page %d: %d×%d, want %d×%d", i+1, img.W, img.H, p.W, p.H)
		}
		if r, g, b := img.At(img.W/2, img.H/2); r != p.Grey || g != p.Grey || b != p.Grey {
			t.Errorf("page %d centre = (%d,%d,%d), want grey %d", i+1, r, g, b, p.Grey)
		}
	}
	_, err = d.Page(3)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrPageRange) || e.Page != 4 || !strings.Contains(err.Error(), "scan.tif: page 4") {
		t.Errorf("Page(3) error = %v, want ErrPageRange naming scan.tif page 4", err)
	}

	// A page over the decode budget is shrunk while decoding: its own
	// pixels, not the first page's.
	small, err := Options{MaxDecodePixels: 900}.Decode(hostile.TIFF(pages...), "scan.tif")
	if err != nil {
		t.Fatal(err)
	}
	img, err := small.Page(1)
	if err != nil {
		t.Fatal(err)
	}
	if img.W*img.H > 900 || img.W <= img.H {
		t.Errorf("shrunk page 2: %d×%d, want a landscape page of at most 900 pixels", img.W, img.H)
	}
	if r, _, _ := img.At(img.W/2, img.H/2); r != 128 {
		t.Errorf("shrunk page 2 centre = %d, want 128 (page 2's grey)", r)
	}
}

// A pyramidal TIFF, one image at halved resolutions, is one page: its
// first, full-size one.
func TestPyramidTIFFIsOnePage(t *testing.T) {
	d, err := Decode(hostile.TIFF(hostile.TIFFPage{W: 65, H: 32, Grey: 10}, hostile.TIFFPage{W: 33, H: 16, Grey: 10}, hostile.TIFFPage{W: 16, H: 8, Grey: 10}), "pyramid.tif")
	if err != nil {
		t.Fatal(err)
	}
	if d.Pages() != 1 {
		t.Fatalf("Pages() = %d, want 1", d.Pages())
	}
	img, err := d.Page(0)
	if err != nil {
		t.Fatal(err)
	}
	if img.W != 65 || img.H != 32 {
		t.Errorf("page 1: %d×%d, want 65×32", img.W, img.H)
	}
}
