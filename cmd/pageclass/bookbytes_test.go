package main

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"archivekit/internal/book/booktest"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio"
)

// TestBookBytesAt384 serves a typical full-size page (a sample page
// enlarged to A4 at 300 dpi, 2480×3508) through a IIIF image service at
// levels 0, 1 and 2 (level 0 listing an eighth, a quarter and a half) to
// the shipped demo model of input size 384: at each level the derivative
// asked for weighs at most 60 KB (issue 28's target), and the page is
// classified.
func TestBookBytesAt384(t *testing.T) {
	demo := filepath.Join("..", "..", "weights", "demo", "model_v44")
	if _, err := os.Stat(filepath.Join(demo, "model.pt")); err != nil {
		t.Skip("no shipped demo model v44:", err)
	}
	src := classifytest.Pages(t, 1)[0]
	d, err := imageio.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	img, err := d.Page(0)
	if err != nil {
		t.Fatal(err)
	}
	const w, h = 2480, 3508 // A4 at 300 dpi
	big := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, g, b := img.At(x*img.W/w, y*img.H/h)
			i := big.PixOffset(x, y)
			big.Pix[i], big.Pix[i+1], big.Pix[i+2], big.Pix[i+3] = r, g, b, 255
		}
	}
	page := filepath.Join(t.TempDir(), "a4.png")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, big); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e := newEnv(t, nil)
	s := booktest.New(t, []string{page}, 3, true) // levels 0, 1, 2
	code, log := e.run(t, "-m", demo, "--rotation-model", "", "-f", s.ManifestURL(), "--fetch-private", "--results", e.results)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	_, denied, sizes, sent := s.Served()
	if len(denied) > 0 {
		t.Errorf("requests the levels do not allow: %v", denied)
	}
	for i, level := range s.Levels {
		t.Logf("level %d: asked for %s, %d bytes", level, sizes[i], sent[i])
		if sent[i] > 60_000 {
			t.Errorf("level %d: %d bytes for a page at 384 px, want at most 60 KB", level, sent[i])
		}
	}
}
