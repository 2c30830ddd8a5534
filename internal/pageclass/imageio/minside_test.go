package imageio

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
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
		ref, err := vips.LoadImageFromBuffer(plain.Bytes(), vips.NewImportParams())
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Close()
		if conv != vips.InterpretationError {
			if err := ref.ToColorSpace(conv); err != nil {
				t.Fatal(err)
			}
		}
		out, _, err := ref.ExportTiff(p)
		if err != nil {
			t.Fatal(err)
		}
		return out
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
		var diff float64
		for i := range got.Pix {
			diff += math.Abs(float64(got.Pix[i]) - float64(ref.Pix[i]))
		}
		if d := diff / float64(len(got.Pix)); d > 2 {
			t.Errorf("%s: reduced page differs from the plain TIFF's by %.2f grey levels on average", tc.name, d)
		}
	}
	if p2 := decode(twoPages, "two-pages.tif", 1, 384); p2.W*p2.H > 600*850 || meanGrey(p2) != 200 {
		t.Errorf("page 2 of 2: %d×%d, mean grey %.1f, want within %d pixels and page 2's 200", p2.W, p2.H, meanGrey(p2), 600*850)
	}
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

// BenchmarkReduceMasters is the CPU time a page of decoding an A4 TIFF
// master (uncompressed 8-bit RGB, text-like bands) within PagePixels(384)
// (1.33 MP) as classify's UploadPage asks (MinSide: libvips' reduce,
// linear kernel) against the thumbnail's Lanczos-3 (no MinSide) and
// against decoding it whole, at 300 and 600 dpi, in alternating rounds
// (best of each). reduce/thumbnail is the gain.
//
//	go test -run '^$' -bench ReduceMasters -benchtime 1x ./internal/pageclass/imageio
func BenchmarkReduceMasters(b *testing.B) {
	for _, dpi := range []int{300, 600} {
		b.Run(fmt.Sprintf("%ddpi", dpi), func(b *testing.B) {
			var tif bytes.Buffer
			if err := hostile.RGBTIFF(&tif, textPage(2480*dpi/300, 3508*dpi/300, dpi)); err != nil {
				b.Fatal(err)
			}
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
							doc, err := o.Decode(tif.Bytes(), "master.tif")
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
		})
	}
}

// TestReducedTIFFStreams: a TIFF master over the decode budget is reduced
// as it is read, never held at full size: the peak resident memory above
// the start stays under a third of its decoded size (100 MiB), as the
// thumbnail's does (logged; go test -v).
func TestReducedTIFFStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes a 100-million-pixel TIFF")
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
	data := hostile.GrayTIFF(page)
	page = nil
	for _, minSide := range []int{0, 384} {
		o := DefaultOptions
		o.MinSide, o.MaxDecodePixels = minSide, 1152*1152
		var w, h int
		extra := peakMiB(t, func() {
			doc, err := o.Decode(data, "master.tif")
			if err != nil {
				t.Fatal(err)
			}
			if err := doc.Use(context.Background(), 0, func(img Image) error { w, h = img.W, img.H; return nil }); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("MinSide %d: %d×%d, peak %.0f MiB above start", minSide, w, h, extra)
		if w*h > 1152*1152 || w < 1100 {
			t.Errorf("MinSide %d: decoded %d×%d, want within 1152² pixels", minSide, w, h)
		}
		if extra > 100.0/3 {
			t.Errorf("MinSide %d: peak %.0f MiB above start, want under a third of the page's 100 MiB", minSide, extra)
		}
	}
}
