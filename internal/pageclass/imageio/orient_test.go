package imageio

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"strings"
	"testing"

	"github.com/davidbyttow/govips/v2/vips"

	"archivekit/internal/pageclass/imageio/hostile"
)

// xmpOrientationPacket is an XMP packet giving tiff:Orientation o as an
// attribute, as Adobe's tools write it.
func xmpOrientationPacket(o string) []byte {
	return []byte(`<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
		`<rdf:Description rdf:about="" xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="` + o + `"/></rdf:RDF></x:xmpmeta>`)
}

// TestOrientationBeyondEXIF checks that a page turned in its XMP
// (tiff:Orientation) or in ImageMagick's raw EXIF profile of a PNG is
// decoded upright, as Pillow's exif_transpose gives it, and that EXIF,
// where present, decides as it does there. The stored page is 32×16, left
// half red, right half blue: turned by 6 (90° clockwise) it is 16×32, red
// above blue; by 3 (180°) 32×16 with blue on the left.
func TestOrientationBeyondEXIF(t *testing.T) {
	xmpAttr := func(o string) string { return string(xmpOrientationPacket(o)) }
	xmpElem := func(o string) string {
		return `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">` +
			`<rdf:Description rdf:about="" xmlns:tiff="http://ns.adobe.com/tiff/1.0/"><tiff:Orientation>` + o +
			`</tiff:Orientation></rdf:Description></rdf:RDF></x:xmpmeta>`
	}
	exifWith := func(o int) []byte { return exifBlock(binary.BigEndian, map[uint16]uint16{0x0112: uint16(o)}) }
	exifWithout := exifBlock(binary.LittleEndian, map[uint16]uint16{0x0128: 2}) // ResolutionUnit only
	tests := []struct {
		name string
		data []byte
		turn int // 0: as stored
	}{
		{"png xmp attribute", pngWith(t, itxt("XML:com.adobe.xmp", xmpAttr("6"))), 6},
		{"png xmp element", pngWith(t, itxt("XML:com.adobe.xmp", xmpElem("3"))), 3},
		{"png xmp upright", pngWith(t, itxt("XML:com.adobe.xmp", xmpAttr("1"))), 0},
		{"png xmp undefined number", pngWith(t, itxt("XML:com.adobe.xmp", xmpAttr("9"))), 0},
		{"png raw profile", pngWith(t, ztxt("Raw profile type exif", rawProfileText(exifWith(6)))), 6},
		{"png raw profile little-endian", pngWith(t, ztxt("Raw profile type exif",
			rawProfileText(exifBlock(binary.LittleEndian, map[uint16]uint16{0x0112: 3})))), 3},
		// Raw profile first; XMP only where it has no orientation tag.
		{"png raw profile upright beats xmp", pngWith(t, ztxt("Raw profile type exif", rawProfileText(exifWith(1))),
			itxt("XML:com.adobe.xmp", xmpAttr("6"))), 0},
		{"png raw profile without the tag, xmp", pngWith(t, ztxt("Raw profile type exif", rawProfileText(exifWithout)),
			itxt("XML:com.adobe.xmp", xmpAttr("6"))), 6},
		{"png eXIf beats raw profile", pngWith(t, chunk("eXIf", exifWith(1)),
			ztxt("Raw profile type exif", rawProfileText(exifWith(6)))), 0},
		{"png eXIf", pngWith(t, chunk("eXIf", exifWith(6))), 6},
		{"png eXIf upright beats xmp", pngWith(t, chunk("eXIf", exifWith(1)), itxt("XML:com.adobe.xmp", xmpAttr("6"))), 0},
		// eXIf after the pixels, which libvips does not read (Pillow does).
		{"png eXIf after the pixels", pngAround(t, nil, [][]byte{chunk("eXIf", exifWith(6))}), 6},
		{"png eXIf after the pixels beats raw profile", pngAround(t, [][]byte{ztxt("Raw profile type exif", rawProfileText(exifWith(6)))},
			[][]byte{chunk("eXIf", exifWith(1))}), 0},
		{"png eXIf after the pixels without the tag, xmp", pngAround(t, [][]byte{itxt("XML:com.adobe.xmp", xmpAttr("3"))},
			[][]byte{chunk("eXIf", exifWithout)}), 3},
		// Text chunks after the pixels, which libvips does not read (Pillow
		// does once it has loaded the pixels).
		{"png xmp after the pixels", pngAround(t, nil, [][]byte{itxt("XML:com.adobe.xmp", xmpAttr("6"))}), 6},
		{"png compressed xmp after the pixels", pngAround(t, nil, [][]byte{itxtCompressed("XML:com.adobe.xmp", xmpElem("3"))}), 3},
		{"png raw profile after the pixels", pngAround(t, nil, [][]byte{ztxt("Raw profile type exif", rawProfileText(exifWith(6)))}), 6},
		{"png plain raw profile after the pixels", pngAround(t, nil, [][]byte{chunk("tEXt",
			[]byte("Raw profile type exif\x00"+rawProfileText(exifWith(3))))}), 3},
		{"png raw profile after the pixels beats xmp", pngAround(t, [][]byte{itxt("XML:com.adobe.xmp", xmpAttr("6"))},
			[][]byte{ztxt("Raw profile type exif", rawProfileText(exifWith(1)))}), 0},
		{"png other text after the pixels", pngAround(t, nil, [][]byte{itxt("Comment", xmpAttr("6"))}), 0},
		// A TIFF's XMP where it has no Orientation tag of its own.
		{"tiff xmp", tiffWith(t, 0, xmpAttr("6")), 6},
		{"tiff own tag upright beats xmp", tiffWith(t, 1, xmpAttr("6")), 0},
		{"tiff own tag beats xmp", tiffWith(t, 3, xmpElem("6")), 3},
		{"jpeg xmp", jpegWith(t, app1("http://ns.adobe.com/xap/1.0/\x00", xmpAttr("6"))), 6},
		{"jpeg exif upright beats xmp", jpegWith(t, app1("Exif\x00\x00", string(exifWith(1))),
			app1("http://ns.adobe.com/xap/1.0/\x00", xmpAttr("6"))), 0},
		{"jpeg exif beats xmp", jpegWith(t, app1("Exif\x00\x00", string(exifWith(3))),
			app1("http://ns.adobe.com/xap/1.0/\x00", xmpAttr("6"))), 3},
		{"webp xmp", webpWithXMP(t, xmpElem("6")), 6},
	}
	// Each page also over a decode budget, shrunk by the thumbnail and by
	// the streamed reduction (PNG with MinSide), which read it again.
	shrunk := DefaultOptions
	shrunk.MaxDecodePixels = 128
	streamed := shrunk
	streamed.MinSide = 4
	for _, o := range []struct {
		name string
		opts Options
	}{{"full size", DefaultOptions}, {"thumbnail", shrunk}, {"streamed", streamed}} {
		for _, tt := range tests {
			t.Run(o.name+"/"+tt.name, func(t *testing.T) {
				img, err := decodeErr(o.opts, tt.data, tt.name)
				if err != nil {
					t.Fatal(err)
				}
				if limit := max(o.opts.MaxDecodePixels, 512); img.W*img.H > int(limit) {
					t.Fatalf("decoded %d×%d, over %d pixels", img.W, img.H, limit)
				}
				if (img.W < img.H) != (tt.turn == 6) {
					t.Fatalf("decoded %d×%d, want %s (turn %d)", img.W, img.H,
						map[bool]string{true: "taller than wide", false: "wider than tall"}[tt.turn == 6], tt.turn)
				}
				red, blue := [3]uint8{255, 0, 0}, [3]uint8{0, 0, 255}
				first, second := red, blue // left and right, or top and bottom
				if tt.turn == 3 {
					first, second = blue, red
				}
				at := [2][2]int{{img.W / 8, img.H / 2}, {img.W - 1 - img.W/8, img.H / 2}}
				if tt.turn == 6 {
					at = [2][2]int{{img.W / 2, img.H / 8}, {img.W / 2, img.H - 1 - img.H/8}}
				}
				for i, want := range [2][3]uint8{first, second} {
					x, y := at[i][0], at[i][1]
					r, g, b := img.At(x, y)
					if !near(r, want[0], 12) || !near(g, want[1], 12) || !near(b, want[2], 12) {
						t.Errorf("pixel (%d,%d) of %d×%d = (%d,%d,%d), want (%d,%d,%d) (turn %d)",
							x, y, img.W, img.H, r, g, b, want[0], want[1], want[2], tt.turn)
					}
				}
			})
		}
	}
}

func TestXMPOrientation(t *testing.T) {
	for _, tt := range []struct {
		xmp  string
		want int
	}{
		{`tiff:Orientation="6"`, 6},
		{`tiff:Orientation='8'`, 8},
		{`tiff:Orientation = "2"`, 2},
		{"<tiff:Orientation>\n 5 </tiff:Orientation>", 5},
		{`exif:Orientation="6"`, 0},
		{`tiff:OrientationX="6"`, 0},
		{`tiff:Orientation=""`, 0},
		{``, 0},
	} {
		if got := xmpOrientation([]byte(tt.xmp)); got != tt.want {
			t.Errorf("xmpOrientation(%q) = %d, want %d", tt.xmp, got, tt.want)
		}
	}
}

func TestEXIFOrientationBounds(t *testing.T) {
	good := exifBlock(binary.BigEndian, map[uint16]uint16{0x0112: 6})
	for i := range 8 + 2 + 12 { // up to the end of its one entry
		if o, ok := exifOrientation(good[:i]); ok {
			t.Errorf("%d of %d bytes: orientation %d read from a cut block", i, len(good), o)
		}
	}
	if o, ok := exifOrientation(append([]byte("Exif\x00\x00"), good...)); !ok || o != 6 {
		t.Errorf("with the Exif header: %d, %v; want 6, true", o, ok)
	}
	bad := bytes.Clone(good)
	binary.BigEndian.PutUint32(bad[4:], 0xFFFFFFF0) // directory far past the end
	if _, ok := exifOrientation(bad); ok {
		t.Error("directory offset past the end read")
	}
	// A PNG cut anywhere, or with a chunk length past its end, walks off
	// without reading past it.
	p := pngAround(t, nil, [][]byte{chunk("eXIf", good)})
	for i := range len(p) {
		if c, ok := pngChunk(p[:i], "eXIf"); ok && !bytes.Equal(c, good) {
			t.Fatalf("%d of %d bytes: eXIf %x", i, len(p), c)
		}
	}
	long := bytes.Clone(p)
	binary.BigEndian.PutUint32(long[8:], 0xFFFFFFF0) // IHDR's length
	if _, ok := pngChunk(long, "eXIf"); ok {
		t.Error("a chunk length past the end walked over")
	}
	if rawProfile("\nexif\n 4\nzz00\n") != nil || rawProfile("exif") != nil {
		t.Error("a raw profile that is not hexadecimal decoded")
	}
}

// stored is the test's page as stored: 32×16, left half red, right blue.
func stored() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 32, 16))
	for y := range 16 {
		for x := range 32 {
			c := color.RGBA{255, 0, 0, 255}
			if x >= 16 {
				c = color.RGBA{0, 0, 255, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// exifBlock is an EXIF block: a TIFF header and one directory of SHORT
// entries.
func exifBlock(order binary.ByteOrder, tags map[uint16]uint16) []byte {
	var b bytes.Buffer
	if order == binary.LittleEndian {
		b.WriteString("II*\x00")
	} else {
		b.WriteString("MM\x00*")
	}
	binary.Write(&b, order, uint32(8))
	binary.Write(&b, order, uint16(len(tags)))
	for tag, v := range tags {
		binary.Write(&b, order, tag)
		binary.Write(&b, order, uint16(3))
		binary.Write(&b, order, uint32(1))
		binary.Write(&b, order, v)
		binary.Write(&b, order, uint16(0))
	}
	binary.Write(&b, order, uint32(0))
	return b.Bytes()
}

// rawProfileText writes an EXIF block as ImageMagick's raw profile text.
func rawProfileText(exif []byte) string {
	exif = append([]byte("Exif\x00\x00"), exif...)
	h := hex.EncodeToString(exif)
	var lines []string
	for len(h) > 72 {
		lines, h = append(lines, h[:72]), h[72:]
	}
	lines = append(lines, h)
	return fmt.Sprintf("\nexif\n%8d\n%s\n", len(exif), strings.Join(lines, "\n"))
}

// chunk is a PNG chunk (hostile.Chunk).
func chunk(typ string, data []byte) []byte {
	var b bytes.Buffer
	hostile.Chunk(&b, typ, data)
	return b.Bytes()
}

func itxt(key, text string) []byte {
	return chunk("iTXt", []byte(key+"\x00\x00\x00\x00\x00"+text))
}

// tiffWith is the stored page as an RGB TIFF with the Orientation tag o
// (none for 0) and the XMP packet xmp.
func tiffWith(t *testing.T, o int, xmp string) []byte {
	var b bytes.Buffer
	if err := hostile.RGBTIFFWith(&b, stored(), o, []byte(xmp)); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func itxtCompressed(key, text string) []byte {
	return chunk("iTXt", append([]byte(key+"\x00\x01\x00en\x00\x00"), deflated(text)...))
}

func ztxt(key, text string) []byte {
	return chunk("zTXt", append([]byte(key+"\x00\x00"), deflated(text)...))
}

// deflated is text compressed as PNG's compressed text chunks hold it.
func deflated(text string) []byte {
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte(text))
	w.Close()
	return z.Bytes()
}

// pngWith is the stored page as a PNG with chunks after its IHDR.
func pngWith(t *testing.T, chunks ...[]byte) []byte { return pngAround(t, chunks, nil) }

// pngAround is the stored page as a PNG with the chunks before after its
// IHDR and the chunks after after its pixels (before IEND, its last 12
// bytes).
func pngAround(t *testing.T, before, after [][]byte) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, stored()); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	const ihdrEnd = 8 + 8 + 13 + 4
	out := append([]byte{}, data[:ihdrEnd]...)
	for _, c := range before {
		out = append(out, c...)
	}
	out = append(out, data[ihdrEnd:len(data)-12]...)
	for _, c := range after {
		out = append(out, c...)
	}
	return append(out, data[len(data)-12:]...)
}

func app1(header, payload string) []byte {
	body := header + payload
	return append([]byte{0xFF, 0xE1, byte((len(body) + 2) >> 8), byte(len(body) + 2)}, body...)
}

// jpegWith is the stored page as a JPEG with segments after its SOI.
func jpegWith(t *testing.T, segments ...[]byte) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, stored(), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	out := append([]byte{}, b.Bytes()[:2]...)
	for _, s := range segments {
		out = append(out, s...)
	}
	return append(out, b.Bytes()[2:]...)
}

// webpWithXMP is the stored page as an extended WebP (VP8X) with an XMP
// chunk.
func webpWithXMP(t *testing.T, xmp string) []byte {
	startup()
	var b bytes.Buffer
	if err := png.Encode(&b, stored()); err != nil {
		t.Fatal(err)
	}
	ref, err := vips.NewImageFromBuffer(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	p := vips.NewWebpExportParams()
	p.Lossless = true
	p.StripMetadata = true
	simple, _, err := ref.ExportWebp(p)
	if err != nil {
		t.Fatal(err)
	}
	// The image data chunk alone (libvips may write a VP8X header too).
	var pixels []byte
	for at := 12; at+8 <= len(simple); {
		n := int(binary.LittleEndian.Uint32(simple[at+4:]))
		end := min(len(simple), at+8+n+n%2)
		if string(simple[at:at+4]) == "VP8L" {
			pixels = simple[at:end]
		}
		at = end
	}
	if pixels == nil {
		t.Fatal("libvips wrote no lossless WebP")
	}
	vp8x := []byte{0x04, 0, 0, 0, 31, 0, 0, 15, 0, 0} // XMP flag, canvas 32×16
	riffChunk := func(typ string, data []byte) []byte {
		out := append([]byte(typ), 0, 0, 0, 0)
		binary.LittleEndian.PutUint32(out[4:], uint32(len(data)))
		out = append(out, data...)
		if len(data)%2 == 1 {
			out = append(out, 0)
		}
		return out
	}
	body := []byte("WEBP")
	body = append(body, riffChunk("VP8X", vp8x)...)
	body = append(body, pixels...)
	body = append(body, riffChunk("XMP ", []byte(xmp))...)
	out := append([]byte("RIFF"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[4:], uint32(len(body)))
	return append(out, body...)
}

// TestOrientationIsolated: a decoder process turns a page by its XMP as
// this process does (the child reads the metadata itself).
func TestOrientationIsolated(t *testing.T) {
	data := pngWith(t, itxt("XML:com.adobe.xmp", `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">`+
		`<rdf:Description rdf:about="" xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="6"/></rdf:RDF></x:xmpmeta>`))
	local, err := DefaultOptions.Decode(data, "xmp.png")
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions
	o.Isolation = isolation(t, 1, 0)
	remote, err := o.Decode(data, "xmp.png")
	if err != nil {
		t.Fatal(err)
	}
	samePages(t, local, remote)
	if img, err := remote.Page(0); err != nil || img.W != 16 || img.H != 32 {
		t.Errorf("decoded in a decoder process: %d×%d (%v), want 16×32, turned", img.W, img.H, err)
	}
}

// TestTIFFPagesOrientation: each page of a TIFF of several pages is
// turned by the XMP packet of its own directory where that directory has
// no Orientation tag, as Pillow 13's exif_transpose turns each frame (the
// four pages' turns checked against it); a page's own tag wins. Before,
// the XMP of a TIFF of several pages was not read at all.
func TestTIFFPagesOrientation(t *testing.T) {
	xmp := xmpOrientationPacket
	data := hostile.RGBTIFFPages(
		hostile.RGBPage{Img: stored(), XMP: xmp("6")},
		hostile.RGBPage{Img: stored(), XMP: xmp("3")},
		hostile.RGBPage{Img: stored(), Orientation: 1, XMP: xmp("6")},
		hostile.RGBPage{Img: stored()},
	)
	if path := os.Getenv("ARCHIVEKIT_WRITE_TIFF"); path != "" {
		_ = os.WriteFile(path, data, 0o644) // for the comparison with Pillow
	}
	doc, err := DefaultOptions.Decode(data, "pages.tif")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages() != 4 {
		t.Fatalf("%d pages, want 4", doc.Pages())
	}
	for i, want := range []int{6, 3, 0, 0} {
		img, err := doc.Page(i)
		if err != nil {
			t.Fatal(err)
		}
		r, _, b := img.At(img.W/8, img.H/8) // red at the stored page's left, now where its turn put it
		got := 0
		switch {
		case img.W < img.H:
			got = 6 // the left edge turned to the top
		case b > r:
			got = 3 // upside down: blue on the left
		}
		if got != want {
			t.Errorf("page %d: %d×%d turned %d, want %d", i+1, img.W, img.H, got, want)
		}
	}
}

// TestTIFFTurns: a TIFF whose directories cannot be followed (a chain
// that loops back, a file cut short) or no TIFF gives no turns, so its
// pages are decoded as libvips reads them.
func TestTIFFTurns(t *testing.T) {
	two := hostile.RGBTIFFPages(hostile.RGBPage{Img: stored()}, hostile.RGBPage{Img: stored(), Orientation: 3})
	looped := append([]byte{}, two...)
	binary.LittleEndian.PutUint32(looped[8+2+10*12:], 8) // the first directory's next is itself
	if dirs, got := tiffTurns(two); len(got) != 2 || got[0] != 0 || got[1] != 0 || len(dirs) != 2 {
		t.Errorf("two pages without XMP: turns %v, want [0 0]", got)
	}
	for name, data := range map[string][]byte{"loop": looped, "cut short": two[:20], "no tiff": []byte("not a tiff at all")} {
		if dirs, got := tiffTurns(data); got != nil || dirs != nil {
			t.Errorf("%s: turns %v", name, got)
		}
	}
}

// TestBigTIFFPagesOrientation: the pages of a BigTIFF are turned by their
// own directories' XMP as a classic TIFF's are (TestTIFFPagesOrientation):
// before, a BigTIFF's XMP was not read, and its pages came out as stored.
func TestBigTIFFPagesOrientation(t *testing.T) {
	xmp := xmpOrientationPacket
	g := image.NewGray(image.Rect(0, 0, 80, 120))
	for y := 0; y < 120; y++ {
		for x := 0; x < 80; x++ {
			g.Pix[y*80+x] = uint8(x*3 + y/2) // darker to the left and the top
		}
	}
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		data := hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true, Order: order, XMP: [][]byte{xmp("6"), xmp("3"), nil}}, g, g, g)
		doc, err := DefaultOptions.Decode(data, "big.tif")
		if err != nil {
			t.Fatal(err)
		}
		var imgs []Image
		for i := 0; i < 3; i++ {
			img, err := doc.Page(i)
			if err != nil {
				t.Fatalf("%v page %d: %v", order, i+1, err)
			}
			imgs = append(imgs, img)
		}
		stored, turned, upside := imgs[2], imgs[0], imgs[1]
		if stored.W != 80 || stored.H != 120 || turned.W != 120 || turned.H != 80 {
			t.Errorf("%v: pages %d×%d (XMP 6) and %d×%d (none), want 120×80 and 80×120", order, turned.W, turned.H, stored.W, stored.H)
		}
		for _, p := range [][2]int{{2, 3}, {70, 10}, {40, 100}} {
			r, _, _ := upside.At(p[0], p[1])
			want, _, _ := stored.At(79-p[0], 119-p[1])
			if d := int(r) - int(want); d < -2 || d > 2 {
				t.Errorf("%v: page 2 (XMP 3) at %v is %d, want the stored page turned 180° (%d)", order, p, r, want)
			}
		}
	}
}
