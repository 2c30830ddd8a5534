package imageio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"strings"
	"testing"
	"time"

	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/testenv"
	"github.com/davidbyttow/govips/v2/vips"
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

// twoTone is a w×h page dark on its left half, light on its right.
func twoTone(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{250, 250, 250, 255}
			if x < w/2 {
				c = color.RGBA{20, 20, 20, 255}
			}
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// firstPage is the first page of data decoded with o.
func firstPage(t *testing.T, o Options, data []byte, name string) Image {
	t.Helper()
	doc, err := o.Decode(data, name)
	if err != nil {
		t.Fatal(err)
	}
	page, err := doc.Page(0)
	if err != nil {
		t.Fatal(err)
	}
	return page
}

// TestMinSideShrinksJPEGOnLoad: with MinSide a JPEG is decoded shrunk by
// its decoder, both sides still at least MinSide, and its pixels are
// those of the page at full size scaled down (a two-tone page keeps its
// tones where they are); a PNG is decoded as it is.
func TestMinSideShrinksJPEGOnLoad(t *testing.T) {
	img := twoTone(1600, 2400)
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
		page := firstPage(t, o, tc.data, tc.name)
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

func TestReduceFactor(t *testing.T) {
	for _, tc := range []struct {
		w, h, budget int64
		near         bool // near the ideal factor
	}{
		{2480, 3508, 1152 * 1152, true}, // A4 at 300 dpi to PagePixels(384)
		{4960, 7016, 1152 * 1152, true}, // at 600 dpi
		{1000, 1001, 999_999, true},     // just over
		{40000, 3, 1000, false},         // a strip: its 3 pixels rounded up decide
	} {
		f := reduceFactor(tc.w, tc.h, tc.budget)
		n := reducedPixels(tc.w, tc.h, f)
		ideal := math.Sqrt(float64(tc.w*tc.h) / float64(tc.budget))
		if n > tc.budget || f < ideal || (tc.near && f > ideal*1.02) {
			t.Errorf("reduceFactor(%d, %d, %d) = %.4f (%d pixels), want the least factor near %.4f within the budget",
				tc.w, tc.h, tc.budget, f, n, ideal)
		}
	}
}

// TestMinSideReducesMasters: with MinSide, a TIFF master over the decode
// budget is reduced within it while decoding (the caller resizes it
// again), to the size the thumbnail gives without MinSide within a pixel,
// its tones where they were; a PNG, by the thumbnail either way, too.
func TestMinSideReducesMasters(t *testing.T) {
	img := twoTone(1600, 2400)
	var tif, p bytes.Buffer
	if err := hostile.RGBTIFF(&tif, img); err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(&p, img); err != nil {
		t.Fatal(err)
	}
	const budget = 600 * 900
	for _, tc := range []struct {
		name string
		data []byte
	}{{"tiff", tif.Bytes()}, {"png", p.Bytes()}} {
		var sizes [2][2]int
		for k, side := range []int{0, 384} {
			o := DefaultOptions
			o.MinSide, o.MaxDecodePixels = side, budget
			page := firstPage(t, o, tc.data, tc.name)
			sizes[k] = [2]int{page.W, page.H}
			if page.W*page.H > budget || page.W < 590 || page.H < 890 {
				t.Errorf("%s, MinSide %d: decoded %d×%d, want within %d pixels, about 600×900", tc.name, side, page.W, page.H, budget)
			}
			if r, _, _ := page.At(page.W/4, page.H/2); r > 40 {
				t.Errorf("%s, MinSide %d: left half %d, want dark", tc.name, side, r)
			}
			if r, _, _ := page.At(3*page.W/4, page.H/2); r < 230 {
				t.Errorf("%s, MinSide %d: right half %d, want light", tc.name, side, r)
			}
		}
		if d := max(abs(sizes[0][0]-sizes[1][0]), abs(sizes[0][1]-sizes[1][1])); d > 1 {
			t.Errorf("%s: reduced to %v, the thumbnail %v", tc.name, sizes[1], sizes[0])
		}
	}
}

func abs(x int) int { return max(x, -x) }

// TestReducedTIFFVariants: TIFF masters as archives keep them (LZW strips,
// deflate tiles, 16 bits a sample, CMYK, a later page of a multi-page
// scan) are reduced as they are read to the page the plain uncompressed
// TIFF gives (within two grey levels on average; CMYK, converted through
// ICC profiles, its size), of the thumbnail's size within a pixel and its
// mean grey within one level (each variant's own thumbnail: two, as CMYK
// is reduced before its conversion to sRGB; measured 1.3).
func TestReducedTIFFVariants(t *testing.T) {
	var plain bytes.Buffer
	if err := hostile.RGBTIFF(&plain, textPage(1240, 1754, 150)); err != nil {
		t.Fatal(err)
	}
	// export is the plain TIFF converted to conv (InterpretationError: as
	// it is) and written with p
	export := func(conv vips.Interpretation, p *vips.TiffExportParams) []byte {
		return convert(t, plain.Bytes(), conv, func(ref *vips.ImageRef) ([]byte, *vips.ImageMetadata, error) {
			return ref.ExportTiff(p)
		})
	}
	tiff := func(c vips.TiffCompression, tile bool) *vips.TiffExportParams {
		p := vips.NewTiffExportParams()
		p.Compression, p.Tile = c, tile
		return p
	}
	decode := func(data []byte, name string, page, side int) Image {
		o := DefaultOptions
		o.MinSide, o.MaxDecodePixels = side, 600*850
		doc, err := o.Decode(data, name)
		if err != nil {
			t.Fatal(err)
		}
		img, err := doc.Page(page)
		if err != nil {
			t.Fatalf("%s, MinSide %d: %v", name, side, err)
		}
		return img
	}
	ref := decode(plain.Bytes(), "plain.tif", 0, 384)
	if thumb := decode(plain.Bytes(), "plain.tif", 0, 0); abs(thumb.W-ref.W) > 1 || abs(thumb.H-ref.H) > 1 ||
		math.Abs(meanGrey(thumb)-meanGrey(ref)) > 1 {
		t.Errorf("reduced %d×%d, mean %.1f; the thumbnail %d×%d, mean %.1f", ref.W, ref.H, meanGrey(ref), thumb.W, thumb.H, meanGrey(thumb))
	}
	twoPages := hostile.TIFF(hostile.TIFFPage{W: 1240, H: 1754, Grey: 60}, hostile.TIFFPage{W: 1240, H: 1754, Grey: 200})
	for _, tc := range []struct {
		name     string
		data     []byte
		lossless bool // converted back to the plain TIFF's pixels
	}{
		{"lzw-strips", export(vips.InterpretationError, tiff(vips.TiffCompressionLzw, false)), true},
		{"deflate-tiles", export(vips.InterpretationError, tiff(vips.TiffCompressionDeflate, true)), true},
		{"16-bit", export(vips.InterpretationRGB16, tiff(vips.TiffCompressionNone, false)), true},
		// sRGB to CMYK and back through ICC profiles is not lossless:
		// against its own thumbnail only
		{"cmyk", export(vips.InterpretationCMYK, tiff(vips.TiffCompressionLzw, false)), false},
	} {
		got := decode(tc.data, tc.name+".tif", 0, 384)
		if got.W != ref.W || got.H != ref.H {
			t.Errorf("%s: reduced to %d×%d, the plain TIFF to %d×%d", tc.name, got.W, got.H, ref.W, ref.H)
			continue
		}
		if thumb := decode(tc.data, tc.name+".tif", 0, 0); math.Abs(meanGrey(thumb)-meanGrey(got)) > 2 {
			t.Errorf("%s: reduced page's mean grey %.1f, its thumbnail's %.1f", tc.name, meanGrey(got), meanGrey(thumb))
		}
		if !tc.lossless {
			continue
		}
		if d := meanDiff(got, ref); d > 2 {
			t.Errorf("%s: reduced page differs from the plain TIFF's by %.2f grey levels on average", tc.name, d)
		}
	}
	if p2 := decode(twoPages, "two-pages.tif", 1, 384); p2.W*p2.H > 600*850 || meanGrey(p2) != 200 {
		t.Errorf("page 2 of 2: %d×%d, mean grey %.1f, want within %d pixels and page 2's 200", p2.W, p2.H, meanGrey(p2), 600*850)
	}
}

// convert is the image in data converted to conv (InterpretationError: as
// it is) and written by export.
func convert(t testing.TB, data []byte, conv vips.Interpretation, export func(*vips.ImageRef) ([]byte, *vips.ImageMetadata, error)) []byte {
	t.Helper()
	ref, err := vips.LoadImageFromBuffer(data, vips.NewImportParams())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if conv != vips.InterpretationError {
		if err := ref.ToColorSpace(conv); err != nil {
			t.Fatal(err)
		}
	}
	out, _, err := export(ref)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// meanGrey is the mean of img's samples.
func meanGrey(img Image) float64 {
	var sum float64
	for _, v := range img.Pix {
		sum += float64(v)
	}
	return sum / float64(len(img.Pix))
}

// textPage is a w×h page of lines of dark words on light paper at dpi.
func textPage(w, h, dpi int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := uint8(245)
			if (y/(dpi/10))%3 == 0 && (x/(dpi/30))%4 != 0 { // lines of words
				v = 30
			}
			img.SetRGBA(x, y, color.RGBA{v, v, v - 10, 255})
		}
	}
	return img
}

// BenchmarkReduceMasters is the CPU time a page of decoding an A4 master
// (text-like bands; an uncompressed 8-bit RGB TIFF, or an 8-bit RGB PNG
// written by Go's encoder at its fastest compression) within
// PagePixels(384) (1.33 MP) as classify's UploadPage asks (MinSide:
// libvips' reduce, linear kernel) against the thumbnail's Lanczos-3 (no
// MinSide) and against decoding it whole, at 300 and 600 dpi, in
// alternating rounds (best of each). reduce/thumbnail is the gain.
//
//	go test -run '^$' -bench ReduceMasters -benchtime 1x ./internal/pageclass/imageio
func BenchmarkReduceMasters(b *testing.B) {
	for _, format := range []string{"tif", "png"} {
		for _, dpi := range []int{300, 600} {
			b.Run(fmt.Sprintf("%s-%ddpi", format, dpi), func(b *testing.B) {
				benchReduce(b, master(b, format, textPage(2480*dpi/300, 3508*dpi/300, dpi)), "master."+format)
			})
		}
	}
}

// master is page written as format: an uncompressed TIFF (tif) or a PNG
// at the fastest compression (png).
func master(b *testing.B, format string, page *image.RGBA) []byte {
	var out bytes.Buffer
	var err error
	if format == "tif" {
		err = hostile.RGBTIFF(&out, page)
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&out, page)
	}
	if err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// benchReduce is BenchmarkReduceMasters for one master.
func benchReduce(b *testing.B, data []byte, name string) {
	best := map[string]time.Duration{}
	for n := 0; n < b.N; n++ {
		for r := 0; r < 2; r++ {
			for _, m := range []struct {
				name   string
				side   int
				budget int64
			}{{"whole", 0, -1}, {"thumbnail", 0, 1152 * 1152}, {"reduce", 384, 1152 * 1152}} {
				o := DefaultOptions
				o.MinSide, o.MaxDecodePixels = m.side, m.budget
				c0 := testenv.CPUTime()
				for k := 0; k < 3; k++ {
					doc, err := o.Decode(data, name)
					if err != nil {
						b.Fatal(err)
					}
					if err := doc.Use(context.Background(), 0, func(Image) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
				if d := (testenv.CPUTime() - c0) / 3; best[m.name] == 0 || d < best[m.name] {
					best[m.name] = d
				}
			}
		}
	}
	for k, d := range best {
		b.ReportMetric(float64(d)/1e6, "ms-cpu-"+k)
	}
	b.ReportMetric(float64(best["reduce"])/float64(best["thumbnail"]), "reduce/thumbnail")
}

// TestReducedMastersStream: a TIFF or PNG master over the decode budget
// is reduced as it is read, never held at full size: the peak resident
// memory above the start stays under a third of the TIFF's decoded size
// (100 MiB; the PNG, RGB, is 286 MiB), as the thumbnail's does (logged; go
// test -v).
func TestReducedMastersStream(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes 100-million-pixel masters")
	}
	const side = 10000
	page := image.NewGray(image.Rect(0, 0, side, side))
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			if (y/40)%3 == 0 && (x/10)%4 != 0 {
				page.Pix[y*side+x] = 30
			} else {
				page.Pix[y*side+x] = 240
			}
		}
	}
	tif := hostile.GrayTIFF(page)
	page = nil
	for _, tc := range []struct {
		name string
		data []byte
	}{{"master.tif", tif}, {"master.png", hostile.PNG(side, side)}} {
		for _, minSide := range []int{0, 384} {
			o := DefaultOptions
			o.MinSide, o.MaxDecodePixels = minSide, 1152*1152
			var w, h int
			extra := peakMiB(t, func() {
				doc, err := o.Decode(tc.data, tc.name)
				if err != nil {
					t.Fatal(err)
				}
				if err := doc.Use(context.Background(), 0, func(img Image) error { w, h = img.W, img.H; return nil }); err != nil {
					t.Fatal(err)
				}
			})
			t.Logf("%s, MinSide %d: %d×%d, peak %.0f MiB above start", tc.name, minSide, w, h, extra)
			if w*h > 1152*1152 || w < 1100 {
				t.Errorf("%s, MinSide %d: decoded %d×%d, want within 1152² pixels", tc.name, minSide, w, h)
			}
			if extra > 100.0/3 {
				t.Errorf("%s, MinSide %d: peak %.0f MiB above start, want under a third of 100 MiB", tc.name, minSide, extra)
			}
		}
	}
}

// TestReducedPNGVariants: PNG masters as they come (interlaced, 16 bits a
// sample, a palette, grey with alpha, RGBA with transparent paper, grey and
// RGBA at 16 bits) decoded with MinSide give the page they gave before,
// through the thumbnail (MinSide 0), within a pixel in size and a grey
// level in mean (their pixels differ as Lanczos-3 and a linear kernel do:
// about 6 levels on average on this page of 5-pixel words halved), and the
// page their plain 8-bit RGB equivalent (flattened on white) gives within
// half a level on average (measured 0.18 at most): a transparent pixel's
// colour does not bleed into its neighbours (0.9 when reduced without
// premultiplying). An interlaced PNG, which libvips decodes whole whatever
// the access, keeps the thumbnail: the same pixels exactly.
func TestReducedPNGVariants(t *testing.T) {
	page := textPage(1240, 1754, 150)
	encode := func(img image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// export is data converted to conv and written with p
	export := func(data []byte, conv vips.Interpretation, p *vips.PngExportParams) []byte {
		return convert(t, data, conv, func(ref *vips.ImageRef) ([]byte, *vips.ImageMetadata, error) {
			return ref.ExportPng(p)
		})
	}
	interlaced := vips.NewPngExportParams()
	interlaced.Interlace = true
	wide := image.NewRGBA64(page.Bounds())
	palette := image.NewPaletted(page.Bounds(), color.Palette{color.RGBA{245, 245, 235, 255}, color.RGBA{30, 30, 20, 255}})
	// the paper transparent black, the ink opaque: flattened on white, a
	// text page on white paper (onWhite); reduced without premultiplying,
	// the paper's black would darken the ink's edges
	transparent, transparent16 := image.NewNRGBA(page.Bounds()), image.NewNRGBA64(page.Bounds())
	onWhite := image.NewRGBA(page.Bounds())
	grey, grey16 := image.NewGray(page.Bounds()), image.NewGray16(page.Bounds())
	for y := 0; y < page.Rect.Dy(); y++ {
		for x := 0; x < page.Rect.Dx(); x++ {
			c := page.RGBAAt(x, y)
			wide.Set(x, y, c)
			palette.Set(x, y, c)
			grey.SetGray(x, y, color.Gray{c.G})
			grey16.SetGray16(x, y, color.Gray16{uint16(c.G) * 257})
			onWhite.SetRGBA(x, y, color.RGBA{255, 255, 255, 255})
			if c.R < 128 {
				transparent.SetNRGBA(x, y, color.NRGBA{c.R, c.G, c.B, 255})
				transparent16.SetNRGBA64(x, y, color.NRGBA64{uint16(c.R) * 257, uint16(c.G) * 257, uint16(c.B) * 257, 65535})
				onWhite.SetRGBA(x, y, c)
			}
		}
	}
	plain := encode(page)
	for _, tc := range []struct {
		name          string
		data, like    []byte // like: the plain 8-bit RGB equivalent
		depth, colour byte   // the PNG's, from its header
		interlaced    bool
	}{
		{"interlaced", export(plain, vips.InterpretationSRGB, interlaced), plain, 8, 2, true},
		{"16-bit", encode(wide), plain, 16, 2, false},
		{"palette", encode(palette), plain, 1, 3, false},
		{"grey-alpha", export(encode(transparent), vips.InterpretationBW, vips.NewPngExportParams()),
			export(encode(onWhite), vips.InterpretationBW, vips.NewPngExportParams()), 8, 4, false},
		{"rgba-transparent", encode(transparent), encode(onWhite), 8, 6, false},
		{"grey-16-bit", encode(grey16), encode(grey), 16, 0, false},
		{"rgba-16-bit-transparent", encode(transparent16), encode(onWhite), 16, 6, false},
	} {
		if tc.data[24] != tc.depth || tc.data[25] != tc.colour || pngInterlaced(tc.data) != tc.interlaced {
			t.Fatalf("%s: a PNG of depth %d, colour type %d, interlaced %v; want %d, %d, %v", tc.name,
				tc.data[24], tc.data[25], pngInterlaced(tc.data), tc.depth, tc.colour, tc.interlaced)
		}
		decode := func(data []byte, side int) Image {
			o := DefaultOptions
			o.MinSide, o.MaxDecodePixels = side, 600*850
			return firstPage(t, o, data, tc.name+".png")
		}
		got, before, like := decode(tc.data, 384), decode(tc.data, 0), decode(tc.like, 384)
		t.Logf("%s: %d×%d, %.2f levels from its thumbnail, %.2f from its plain equivalent", tc.name, got.W, got.H,
			meanDiff(got, before), meanDiff(got, like))
		if abs(before.W-got.W) > 1 || abs(before.H-got.H) > 1 || math.Abs(meanGrey(before)-meanGrey(got)) > 1 {
			t.Errorf("%s: reduced %d×%d, mean %.1f; the thumbnail %d×%d, mean %.1f", tc.name, got.W, got.H, meanGrey(got), before.W, before.H, meanGrey(before))
		}
		if tc.interlaced {
			if !bytes.Equal(got.Pix, before.Pix) {
				t.Errorf("%s: MinSide gave other pixels than the thumbnail", tc.name)
			}
			continue
		}
		if d := meanDiff(got, like); d > 0.5 {
			t.Errorf("%s: reduced page %.2f levels from its plain equivalent's on average", tc.name, d)
		}
	}
}

// meanDiff is the mean absolute difference of a's and b's samples; +Inf
// when their sizes differ.
func meanDiff(a, b Image) float64 {
	if a.W != b.W || a.H != b.H {
		return math.Inf(1)
	}
	var diff float64
	for i := range a.Pix {
		diff += math.Abs(float64(a.Pix[i]) - float64(b.Pix[i]))
	}
	return diff / float64(len(a.Pix))
}

// TestReducedPNGTruncated: a PNG master cut short, reduced as it is read,
// is an error naming the file and saying what failed.
func TestReducedPNGTruncated(t *testing.T) {
	data := hostile.PNG(3000, 4000)
	o := DefaultOptions
	o.MinSide, o.MaxDecodePixels = 384, 1152*1152
	doc, err := o.Decode(data[:len(data)/2], "cut.png")
	if err != nil {
		t.Fatal(err)
	}
	_, err = doc.Page(0)
	var e *Error
	if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "cut.png: cannot shrink while decoding: ") || !strings.Contains(err.Error(), "libpng read error") {
		t.Errorf("error %v, want one naming cut.png and libpng's read error", err)
	}
}
