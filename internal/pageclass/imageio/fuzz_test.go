package imageio

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/tiffifd"
)

// FuzzDecode: the header checks and the decoder never panic on arbitrary
// bytes; an input they accept decodes to W×H×3 samples within the pixel
// cap and the decode budget, or fails with an *Error naming the input,
// decoded at full size within the budget and for a caller that resizes
// every page itself (MinSide: a JPEG shrunk on load, a TIFF or PNG over
// the budget reduced as it is read). Seeds: every fixture of testdata
// (PNG, JPEG, TIFF, WebP, PDF, broken ones included) and a PNG over the
// budget.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 && filepath.Ext(p) != ".go" {
			f.Add(b)
		}
	}
	f.Add(hostile.PNG(600, 600)) // over the budget: reduced as it is read with MinSide
	// JPEG 2000 (file and codestream), a BigTIFF, a JPEG with junk
	// between its header's segments: the formats read by the paths of
	// their own (j2c.go, bigtiff.go, jpegjunk.go).
	var small bytes.Buffer
	if err := png.Encode(&small, image.NewGray(image.Rect(0, 0, 24, 32))); err != nil {
		f.Fatal(err)
	}
	jp2 := jp2Of(f, small.Bytes(), true)
	f.Add(jp2)
	f.Add(codestreamOf(f, jp2))
	f.Add(hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true}, image.NewGray(image.Rect(0, 0, 20, 30))))
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, image.NewGray(image.Rect(0, 0, 16, 16)), nil); err != nil {
		f.Fatal(err)
	}
	dht := bytes.Index(jpg.Bytes(), []byte{0xff, 0xc4})
	f.Add(append(append(append([]byte(nil), jpg.Bytes()[:dht]...), 1, 2, 3), jpg.Bytes()[dht:]...))
	full := Options{MaxPixels: 1 << 22, MaxDecodePixels: 1 << 18, DPI: 36}
	resized := full
	resized.MinSide = 64
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range []Options{full, resized} {
			d, err := o.Decode(data, "fuzz")
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("error %T %v is not an *Error", err, err)
				}
				return
			}
			for i := 0; i < min(d.Pages(), 2); i++ {
				img, err := d.Page(i)
				if err != nil {
					if _, ok := err.(*Error); !ok {
						t.Fatalf("MinSide %d: page error %T %v is not an *Error", o.MinSide, err, err)
					}
					continue
				}
				if img.W <= 0 || img.H <= 0 || len(img.Pix) != img.W*img.H*3 || int64(img.W)*int64(img.H) > o.MaxDecodePixels {
					t.Fatalf("MinSide %d: page %d: %d×%d with %d bytes", o.MinSide, i+1, img.W, img.H, len(img.Pix))
				}
			}
		}
	})
}

// FuzzTIFFPages: TIFFPages never panics on arbitrary bytes, and a count it
// gives is the one Decode's Doc.Pages gives the file where libvips reads
// every page TIFFPages counts (a corrupt directory that libtiff refuses
// and the walker does not, found by this target, can make them differ). Seeds: TIFFs of each layout (byte order, directories before or
// after the pixels, pyramid).
func FuzzTIFFPages(f *testing.F) {
	page := func(w, h int) *image.Gray { return image.NewGray(image.Rect(0, 0, w, h)) }
	for _, l := range []hostile.TIFFLayout{{}, {Order: binary.BigEndian, DirsAfter: true}} {
		f.Add(hostile.GrayTIFFAs(l, page(4, 6), page(6, 4)))
		f.Add(hostile.GrayTIFFAs(l, page(8, 6), page(4, 3)))
	}
	o := Options{MaxPixels: 1 << 22, MaxDecodePixels: 1 << 18, DPI: 36}
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := o.TIFFPages(bytes.NewReader(data))
		if err != nil {
			return
		}
		if n < 1 || n > tiffifd.MaxIFDs {
			t.Fatalf("TIFFPages = %d", n)
		}
		d, err := o.Decode(data, "fuzz")
		if err != nil || d.Pages() == n {
			return
		}
		// The counts differ only where libtiff refuses a directory the
		// walker reads (it checks a page's size and data offsets, not
		// every rule of libtiff): a page libvips cannot load.
		for i := range n {
			ref, err := d.load(i, o.DPI)
			if err != nil {
				return
			}
			ref.Close()
		}
		t.Fatalf("TIFFPages = %d, Doc.Pages() = %d, and libvips reads all %d pages", n, d.Pages(), n)
	})
}
