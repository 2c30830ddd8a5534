package imageio

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"
)

func TestJPEGShrink(t *testing.T) {
	for _, tc := range []struct{ w, h, side, want int }{
		{2480, 3508, 384, 4},  // A4 at 300 dpi: 620×877
		{2480, 3508, 1152, 2}, // 1240×1754
		{2480, 3508, 0, 1},
		{1000, 3000, 384, 2}, // the short side decides: 500
		{400, 400, 384, 1},
		{3072, 3072, 384, 8},
		{3065, 3072, 384, 8}, // 383.1 rounds up to 384
		{3064, 3072, 384, 4},
	} {
		if got := jpegShrink(tc.w, tc.h, tc.side); got != tc.want {
			t.Errorf("jpegShrink(%d, %d, %d) = %d, want %d", tc.w, tc.h, tc.side, got, tc.want)
		}
	}
}

// TestMinSideShrinksJPEGOnLoad: with MinSide a JPEG is decoded shrunk by
// its decoder, both sides still at least MinSide, and its pixels are
// those of the page at full size scaled down (a two-tone page keeps its
// tones where they are); a PNG is decoded as it is.
func TestMinSideShrinksJPEGOnLoad(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 1600, 2400))
	for y := 0; y < 2400; y++ {
		for x := 0; x < 1600; x++ {
			c := color.RGBA{250, 250, 250, 255}
			if x < 800 {
				c = color.RGBA{20, 20, 20, 255}
			}
			img.Set(x, y, c)
		}
	}
	var j, p bytes.Buffer
	if err := jpeg.Encode(&j, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(&p, img); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		data       []byte
		side, w, h int
	}{
		{"jpeg", j.Bytes(), 384, 400, 600},
		{"jpeg-full", j.Bytes(), 0, 1600, 2400},
		{"png", p.Bytes(), 384, 1600, 2400},
	} {
		o := DefaultOptions
		o.MinSide = tc.side
		doc, err := o.Decode(tc.data, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		page, err := doc.Page(0)
		if err != nil {
			t.Fatal(err)
		}
		if page.W != tc.w || page.H != tc.h {
			t.Errorf("%s: decoded %d×%d, want %d×%d", tc.name, page.W, page.H, tc.w, tc.h)
			continue
		}
		if r, _, _ := page.At(page.W/4, page.H/2); r > 40 {
			t.Errorf("%s: left half %d, want dark", tc.name, r)
		}
		if r, _, _ := page.At(3*page.W/4, page.H/2); r < 230 {
			t.Errorf("%s: right half %d, want light", tc.name, r)
		}
	}
}
