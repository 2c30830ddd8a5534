//go:build ignore

// gen writes the small synthetic fixtures of imageio_test.go into the
// current directory. Run it from internal/pageclass/imageio/testdata with `go run gen.go`.
// The pixel values are chosen so the tests can predict every decoded pixel.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log"
	"os"

	"github.com/davidbyttow/govips/v2/vips"

	"archivekit/internal/pageclass/imageio/hostile"
)

func main() {
	vips.LoggingSettings(nil, vips.LogLevelWarning)
	vips.Startup(nil)
	defer vips.Shutdown()

	// grey.png: 8-bit grey, 16×4, value 16·x.
	g := image.NewGray(image.Rect(0, 0, 16, 4))
	for y := 0; y < 4; y++ {
		for x := 0; x < 16; x++ {
			g.SetGray(x, y, color.Gray{uint8(16 * x)})
		}
	}
	write("grey.png", encPNG(g))

	// rgba.png: 8×4; x<4 opaque red; x>=4 fully transparent with black stored;
	// pixel (0,3) half-transparent blue (alpha 128).
	a := image.NewNRGBA(image.Rect(0, 0, 8, 4))
	for y := 0; y < 4; y++ {
		for x := 0; x < 8; x++ {
			if x < 4 {
				a.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 255})
			} else {
				a.SetNRGBA(x, y, color.NRGBA{0, 0, 0, 0})
			}
		}
	}
	a.SetNRGBA(0, 3, color.NRGBA{0, 0, 255, 128})
	write("rgba.png", encPNG(a))

	// rgb16.png: 16-bit RGB, 3×1: (0xFFFF,0x8000,0x00FF), (0x1234,0,0xFFFF), (0x7FFF,0x0100,0x8080).
	r16 := image.NewRGBA64(image.Rect(0, 0, 3, 1))
	r16.SetRGBA64(0, 0, color.RGBA64{0xFFFF, 0x8000, 0x00FF, 0xFFFF})
	r16.SetRGBA64(1, 0, color.RGBA64{0x1234, 0x0000, 0xFFFF, 0xFFFF})
	r16.SetRGBA64(2, 0, color.RGBA64{0x7FFF, 0x0100, 0x8080, 0xFFFF})
	write("rgb16.png", encPNG(r16))

	// rgba16.png: 16-bit RGBA, 3×1: opaque red, transparent black, green at half alpha.
	a16 := image.NewNRGBA64(image.Rect(0, 0, 3, 1))
	a16.SetNRGBA64(0, 0, color.NRGBA64{0xFFFF, 0, 0, 0xFFFF})
	a16.SetNRGBA64(1, 0, color.NRGBA64{0, 0, 0, 0})
	a16.SetNRGBA64(2, 0, color.NRGBA64{0, 0xFFFF, 0, 0x8000})
	write("rgba16.png", encPNG(a16))

	// grey16.png: 16-bit grey, 4×1: 0x0000, 0x4000, 0x80FF, 0xFFFF.
	g16 := image.NewGray16(image.Rect(0, 0, 4, 1))
	for x, v := range []uint16{0x0000, 0x4000, 0x80FF, 0xFFFF} {
		g16.SetGray16(x, 0, color.Gray16{v})
	}
	write("grey16.png", encPNG(g16))

	// exif6.jpg: stored 32×16, left half red, right half blue, EXIF orientation 6
	// (rotate 90° clockwise to display): upright it is 16×32, top red, bottom blue.
	rb := paint(32, 16, func(x, y int) color.RGBA {
		if x < 16 {
			return color.RGBA{255, 0, 0, 255}
		}
		return color.RGBA{0, 0, 255, 255}
	})
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, rb, &jpeg.Options{Quality: 95}); err != nil {
		log.Fatal(err)
	}
	jpg := withOrientation(jb.Bytes(), 6)
	write("exif6.jpg", jpg)
	write("truncated.jpg", jpg[:len(jpg)/2])

	// page.tif and page.webp: 8×4, top half green (0,200,0), bottom half grey (90,90,90).
	gr := paint(8, 4, func(x, y int) color.RGBA {
		if y < 2 {
			return color.RGBA{0, 200, 0, 255}
		}
		return color.RGBA{90, 90, 90, 255}
	})
	ref, err := vips.NewImageFromBuffer(encPNG(gr))
	if err != nil {
		log.Fatal(err)
	}
	tp := vips.NewTiffExportParams()
	tp.Compression = vips.TiffCompressionLzw
	tif, _, err := ref.ExportTiff(tp)
	if err != nil {
		log.Fatal(err)
	}
	write("page.tif", tif)
	wp := vips.NewWebpExportParams()
	wp.Lossless = true
	webp, _, err := ref.ExportWebp(wp)
	if err != nil {
		log.Fatal(err)
	}
	write("page.webp", webp)

	write("two.pdf", twoPagePDF())

	// truncated.png: a 64×64 noisy PNG cut in the middle of its pixel data;
	// the header is intact, the pixels are not.
	n := image.NewGray(image.Rect(0, 0, 64, 64))
	for i := range n.Pix {
		n.Pix[i] = uint8(i*7919 + i/3)
	}
	full := encPNG(n)
	write("truncated.png", full[:len(full)/2])

	// corrupt.png: a PNG signature followed by garbage.
	write("corrupt.png", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("garbage!"), 8)...))

	// bomb.png: a valid PNG whose header announces 30000×30000 pixels.
	write("bomb.png", bombPNG(30000, 30000))

	write("notimage.png", []byte("this is a text file, not an image\n"))
}

// paint returns a w×h image whose pixel (x, y) is at(x, y).
func paint(w, h int, at func(x, y int) color.RGBA) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.SetRGBA(x, y, at(x, y))
		}
	}
	return m
}

func write(name string, data []byte) {
	if err := os.WriteFile(name, data, 0o644); err != nil {
		log.Fatal(err)
	}
}

func encPNG(m image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		log.Fatal(err)
	}
	return b.Bytes()
}

// withOrientation inserts an APP1 Exif segment holding only the
// Orientation tag right after the JPEG SOI marker.
func withOrientation(jpg []byte, orientation uint16) []byte {
	var t bytes.Buffer
	t.WriteString("II*\x00")
	binary.Write(&t, binary.LittleEndian, uint32(8)) // IFD0 offset
	binary.Write(&t, binary.LittleEndian, uint16(1)) // one entry
	binary.Write(&t, binary.LittleEndian, uint16(0x0112))
	binary.Write(&t, binary.LittleEndian, uint16(3)) // SHORT
	binary.Write(&t, binary.LittleEndian, uint32(1))
	binary.Write(&t, binary.LittleEndian, orientation)
	binary.Write(&t, binary.LittleEndian, uint16(0))
	binary.Write(&t, binary.LittleEndian, uint32(0)) // no next IFD
	payload := append([]byte("Exif\x00\x00"), t.Bytes()...)
	seg := []byte{0xFF, 0xE1, 0, 0}
	binary.BigEndian.PutUint16(seg[2:], uint16(len(payload)+2))
	seg = append(seg, payload...)
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

// twoPagePDF builds a two-page PDF: page 1 is 72×144 pt filled red, page 2
// is 144×72 pt filled blue. At 150 dpi they render as 150×300 and 300×150.
func twoPagePDF() []byte {
	content1 := "1 0 0 rg 0 0 72 144 re f\n"
	content2 := "0 0 1 rg 0 0 144 72 re f\n"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 72 144] /Contents 5 0 R >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 144 72] /Contents 6 0 R >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content1), content1),
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content2), content2),
	}
	return hostile.PDFObjects(objs...)
}

// bombPNG writes a PNG with an IHDR of w×h 8-bit grey and one tiny IDAT
// (one compressed empty row), enough for a header-only reader.
func bombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = 8 // bit depth
	ihdr[9] = 0 // grey
	hostile.Chunk(&b, "IHDR", ihdr)
	hostile.Chunk(&b, "IDAT", []byte{0x78, 0x9c, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01})
	hostile.Chunk(&b, "IEND", nil)
	return b.Bytes()
}
