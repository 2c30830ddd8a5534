package imageio

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"strings"
	"testing"

	"github.com/davidbyttow/govips/v2/vips"

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

// A pyramidal TIFF, one image at halved resolutions flagged as reduced, is
// one page: its first, full-size one; the same pages not flagged are three
// pages.
func TestPyramidTIFFIsOnePage(t *testing.T) {
	levels := []hostile.TIFFPage{{W: 65, H: 32, Grey: 10}, {W: 33, H: 16, Grey: 10, Reduced: true}, {W: 16, H: 8, Grey: 10, Reduced: true}}
	d, err := Decode(hostile.TIFF(levels...), "pyramid.tif")
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
	levels[1].Reduced, levels[2].Reduced = false, false
	if d, err := Decode(hostile.TIFF(levels...), "halving.tif"); err != nil || d.Pages() != 3 {
		t.Errorf("halving pages not flagged: %v, %v; want 3 pages", d, err)
	}
}

// TestPyramidOverBudgetReadsFullPage: a pyramidal TIFF over the decode
// budget is shrunk from its full-size page, not from one of its smaller
// levels (libvips' thumbnail read a 78×109 level of a 5000×7000 page): a
// page whose full size is white and whose flagged levels are black comes
// out white, through the thumbnail and through the reduction
// (Options.MinSide).
func TestPyramidOverBudgetReadsFullPage(t *testing.T) {
	data := hostile.TIFF(hostile.TIFFPage{W: 400, H: 600, Grey: 250}, hostile.TIFFPage{W: 200, H: 300, Grey: 0, Reduced: true},
		hostile.TIFFPage{W: 100, H: 150, Grey: 0, Reduced: true}, hostile.TIFFPage{W: 50, H: 75, Grey: 0, Reduced: true})
	for _, side := range []int{0, 40} {
		o := DefaultOptions
		o.MaxDecodePixels, o.MinSide = 100*150, side
		d, err := o.Decode(data, "pyramid.tif")
		if err != nil {
			t.Fatal(err)
		}
		img, err := d.Page(0)
		if err != nil {
			t.Fatal(err)
		}
		if img.W*img.H > 100*150 || img.W < 50 {
			t.Errorf("MinSide %d: page of %d×%d, want within 15000 pixels", o.MinSide, img.W, img.H)
		}
		if r := img.Pix[(img.H/2*img.W+img.W/2)*3]; r < 200 {
			t.Errorf("MinSide %d: centre %d: a reduced level was read, not the white full-size page", o.MinSide, r)
		}
	}
}

// vipsTIFF writes a w×h grey page (a gradient) as libvips writes TIFFs
// (through libtiff: each directory after its pixels, LZW): as pageHeight
// pages of h/pageHeight lines (0: one page), or as a tiled pyramid.
func vipsTIFF(t *testing.T, w, h, pageHeight int, pyramid bool) []byte {
	t.Helper()
	g := image.NewGray(image.Rect(0, 0, w, h))
	for i := range g.Pix {
		g.Pix[i] = uint8(i)
	}
	ref, err := vips.LoadImageFromBuffer(hostile.GrayTIFF(g), vips.NewImportParams())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	if pageHeight > 0 {
		if err := ref.SetPageHeight(pageHeight); err != nil {
			t.Fatal(err)
		}
	}
	p := vips.NewTiffExportParams()
	if pyramid {
		p.Tile, p.Pyramid, p.TileWidth, p.TileHeight = true, true, 16, 16
	}
	out, _, err := ref.ExportTiff(p)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTIFFPagesAgreesWithDecode: Options.TIFFPages, which reads a TIFF's
// directories alone, counts every TIFF as Decode's Doc.Pages counts it
// (one rule, ClassifiedTIFFPages): multi-page and pyramidal TIFFs of
// either byte order, directories before or after the pixels, classic or
// BigTIFF, written here or by libvips; one it cannot tell about (a loop,
// a truncated file) or whose first page is over MaxPixels is an error,
// where its caller decodes the file instead.
func TestTIFFPagesAgreesWithDecode(t *testing.T) {
	page := func(w, h int) *image.Gray { return image.NewGray(image.Rect(0, 0, w, h)) }
	scan := []*image.Gray{page(40, 60), page(60, 40), page(30, 30)}
	pyramid := []*image.Gray{page(65, 32), page(33, 16), page(16, 8)}
	levels := []bool{false, true, true} // NewSubfileType: reduced resolution
	be, le := binary.BigEndian, binary.LittleEndian
	var rgb bytes.Buffer
	if err := hostile.RGBTIFF(&rgb, image.NewRGBA(image.Rect(0, 0, 50, 70))); err != nil {
		t.Fatal(err)
	}
	loop := hostile.GrayTIFF(scan[:2]...)
	le.PutUint32(loop[8+2+9*12+4+40*60+2+9*12:], 8) // page 2's next directory: page 1's
	three := hostile.GrayTIFFAs(hostile.TIFFLayout{DirsAfter: true}, scan...)
	vipsPyramid := vipsTIFF(t, 256, 200, 0, true)
	if ref, err := vips.LoadImageFromBuffer(vipsPyramid, vips.NewImportParams()); err != nil || ref.Pages() < 3 {
		t.Fatalf("libvips' pyramid: %v; want 3 levels or more", err)
	} else {
		ref.Close()
	}
	for _, tc := range []struct {
		name string
		data []byte
		opts Options
		want int // 0: TIFFPages cannot tell
	}{
		{"one page", hostile.GrayTIFF(page(40, 60)), DefaultOptions, 1},
		{"RGB master", rgb.Bytes(), DefaultOptions, 1},
		{"scan II", hostile.GrayTIFF(scan...), DefaultOptions, 3},
		{"scan II, directories after", three, DefaultOptions, 3},
		{"scan MM", hostile.GrayTIFFAs(hostile.TIFFLayout{Order: be}, scan...), DefaultOptions, 3},
		{"scan MM, directories after", hostile.GrayTIFFAs(hostile.TIFFLayout{Order: be, DirsAfter: true}, scan...), DefaultOptions, 3},
		{"pyramid II", hostile.GrayTIFFAs(hostile.TIFFLayout{Reduced: levels}, pyramid...), DefaultOptions, 1},
		{"pyramid MM, directories after", hostile.GrayTIFFAs(hostile.TIFFLayout{Order: be, DirsAfter: true, Reduced: levels}, pyramid...), DefaultOptions, 1},
		{"halving pages, not flagged", hostile.GrayTIFF(pyramid...), DefaultOptions, 3},
		{"page and its thumbnail", hostile.GrayTIFFAs(hostile.TIFFLayout{Reduced: []bool{false, true}}, page(60, 80), page(13, 18)), DefaultOptions, 1},
		{"libvips pages", vipsTIFF(t, 40, 180, 60, false), DefaultOptions, 3},
		{"libvips pyramid", vipsPyramid, DefaultOptions, 1},
		{"loop", loop, DefaultOptions, 0},
		{"truncated", three[:len(three)-20], DefaultOptions, 0},
		{"over MaxPixels", hostile.GrayTIFF(scan...), Options{MaxPixels: 2000}, 0},
		{"BigTIFF", hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true}, scan...), DefaultOptions, 3},
		{"BigTIFF MM", hostile.GrayTIFFAs(hostile.TIFFLayout{Order: be, Big: true}, scan...), DefaultOptions, 3},
		{"BigTIFF pyramid", hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true, DirsAfter: true, Reduced: levels}, pyramid...), DefaultOptions, 1},
		{"BigTIFF MM pyramid", hostile.GrayTIFFAs(hostile.TIFFLayout{Order: be, Big: true, Reduced: levels}, pyramid...), DefaultOptions, 1},
		{"BigTIFF over MaxPixels", hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true}, scan...), Options{MaxPixels: 2000}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.opts.TIFFPages(bytes.NewReader(tc.data))
			if tc.want == 0 {
				if err == nil {
					t.Fatalf("TIFFPages = %d; want an error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("TIFFPages = %d, %v; want %d", got, err, tc.want)
			}
			d, err := tc.opts.Decode(tc.data, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if d.Pages() != got {
				t.Errorf("TIFFPages = %d, Doc.Pages() = %d", got, d.Pages())
			}
		})
	}
	if _, err := (Options{MaxPixels: 2000}).Decode(hostile.GrayTIFF(scan...), "big.tif"); !errors.Is(err, ErrTooManyPixels) {
		t.Errorf("Decode over MaxPixels: %v, want ErrTooManyPixels as TIFFPages", err)
	}
	if _, err := (Options{MaxPixels: 2000}).Decode(hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true}, scan...), "big.tif"); !errors.Is(err, ErrTooManyPixels) {
		t.Errorf("Decode of a BigTIFF over MaxPixels: %v, want ErrTooManyPixels as TIFFPages", err)
	}
}

// A BigTIFF (64-bit offsets: masters over 4 GiB, and what some scanners
// and libvips write) is read page by page like a classic TIFF: the same
// pixels, a page over the decode budget shrunk within it, a truncated one
// refused naming the file.
func TestBigTIFF(t *testing.T) {
	grad := func(w, h, shift int) *image.Gray {
		g := image.NewGray(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				g.Pix[y*w+x] = uint8(x*3 + y + shift)
			}
		}
		return g
	}
	pages := []*image.Gray{grad(80, 120, 0), grad(120, 80, 50)}
	classic := hostile.GrayTIFF(pages...)
	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		big := hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true, Order: order}, pages...)
		if Sniff(big[:SniffLen]) != ".tif" {
			t.Fatalf("Sniff of a BigTIFF: %q", Sniff(big[:SniffLen]))
		}
		for i := range pages {
			want := decodePage(t, DefaultOptions, classic, i)
			got := decodePage(t, DefaultOptions, big, i)
			if got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
				t.Errorf("%v page %d: %d×%d, differs from the classic TIFF's %d×%d", order, i+1, got.W, got.H, want.W, want.H)
			}
		}
		small := DefaultOptions
		small.MaxDecodePixels = 40 * 60
		if got := decodePage(t, small, big, 0); got.W*got.H > 40*60 || got.W < 38 || got.H < 58 {
			t.Errorf("%v over the decode budget: %d×%d, want about 40×60", order, got.W, got.H)
		}
	}
	big := hostile.GrayTIFFAs(hostile.TIFFLayout{Big: true}, pages...)
	d, err := DefaultOptions.Decode(big[:len(big)/2], "cut.tif")
	if err == nil {
		_, err = d.Page(0)
	}
	var e *Error
	if !errors.As(err, &e) || e.Name != "cut.tif" {
		t.Errorf("a truncated BigTIFF: %v", err)
	}
}

// decodePage decodes page i of data with o.
func decodePage(t *testing.T, o Options, data []byte, i int) Image {
	t.Helper()
	d, err := o.Decode(data, "page.tif")
	if err != nil {
		t.Fatal(err)
	}
	img, err := d.Page(i)
	if err != nil {
		t.Fatalf("page %d: %v", i+1, err)
	}
	return img
}

// TestClassifiedTIFFPages: the pyramid rule, on the directories'
// NewSubfileType flags: pages whose sizes halve but are not flagged are
// pages (an A3 page then an A5 one was taken for a pyramid, the A5 page
// dropped without a word); a page followed by flagged levels or a flagged
// thumbnail is one page.
func TestClassifiedTIFFPages(t *testing.T) {
	for _, tc := range []struct {
		n       int
		reduced []bool
		want    int
	}{
		{0, nil, 0},
		{1, []bool{false}, 1},
		{3, []bool{false, true, true}, 1},
		{2, []bool{false, true}, 1},
		{3, []bool{false, false, false}, 3},
		{4, []bool{false, true, false, true}, 4},
		{3, nil, 3},
		{3, []bool{false, true}, 3}, // flags of another count: all pages
	} {
		if got := ClassifiedTIFFPages(tc.n, tc.reduced); got != tc.want {
			t.Errorf("%d pages, reduced %v: %d, want %d", tc.n, tc.reduced, got, tc.want)
		}
	}
}

// TestTenThousandPages: a TIFF of 10,000 pages or more has them all (libvips'
// page-count getter gives 1 over 10,000, so it passed the page limit as a
// one-page document and its other pages were dropped).
func TestTenThousandPages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 10,001-page TIFF")
	}
	pages := make([]*image.Gray, 10_001)
	for i := range pages {
		pages[i] = image.NewGray(image.Rect(0, 0, 2, 2))
	}
	d, err := DefaultOptions.Decode(hostile.GrayTIFF(pages...), "many.tif")
	if err != nil {
		t.Fatal(err)
	}
	if d.Pages() != len(pages) {
		t.Errorf("Pages() = %d, want %d", d.Pages(), len(pages))
	}
}
