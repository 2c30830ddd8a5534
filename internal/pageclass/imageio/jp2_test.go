package imageio

import (
	"bytes"
	"errors"
	"image/png"
	"testing"

	"github.com/davidbyttow/govips/v2/vips"
)

// jp2Of is the page img written as a JPEG 2000 file (the JP2 format) by
// libvips, lossless or not, its colour samples at full resolution (as
// archives' masters are: Debian 12's libvips refuses a JPEG 2000 with
// subsampled chroma, "components differ in geometry").
func jp2Of(t *testing.T, pngData []byte, lossless bool) []byte {
	t.Helper()
	return convert(t, pngData, vips.InterpretationError, func(ref *vips.ImageRef) ([]byte, *vips.ImageMetadata, error) {
		p := vips.NewJp2kExportParams()
		p.Lossless, p.Quality, p.SubsampleMode = lossless, 80, vips.VipsForeignSubsampleOff
		return ref.ExportJp2k(p)
	})
}

// A JPEG 2000 page (the masters of Europeana's and many libraries' books,
// and what IIIF image servers keep) is read by its content whatever its
// name: a lossless one gives exactly the pixels of the page it was made
// from, a lossy one nearly; a large one is shrunk within the decode budget
// as the other formats are; a broken one is refused naming the file.
func TestJPEG2000(t *testing.T) {
	var page bytes.Buffer
	if err := png.Encode(&page, textPage(620, 877, 75)); err != nil {
		t.Fatal(err)
	}
	want := decodeOne(t, DefaultOptions, page.Bytes(), "page.png")
	lossless := jp2Of(t, page.Bytes(), true)
	if got := Sniff(lossless[:SniffLen]); got != ".jp2" {
		t.Fatalf("Sniff: %q, want .jp2", got)
	}
	if !Supported("scan.JP2") {
		t.Error(".jp2 is not among the extensions collected")
	}
	got := decodeOne(t, DefaultOptions, lossless, "0001.png") // the name does not decide
	if got.W != want.W || got.H != want.H || !bytes.Equal(got.Pix, want.Pix) {
		t.Errorf("lossless JPEG 2000: %d×%d, differs from the page (%d×%d)", got.W, got.H, want.W, want.H)
	}
	lossy := decodeOne(t, DefaultOptions, jp2Of(t, page.Bytes(), false), "lossy.jp2")
	if d := meanGrey(lossy) - meanGrey(want); d > 2 || d < -2 {
		t.Errorf("lossy JPEG 2000: mean grey %.1f off the page's", d)
	}
	// Over the budget it is shrunk as the PNG is (libvips 8.14's
	// thumbnail of a JPEG 2000 under SizeDown gave 78×110 here).
	small := DefaultOptions
	small.MaxDecodePixels = 300 * 430
	shrunk, ref := decodeOne(t, small, lossless, "page.jp2"), decodeOne(t, small, page.Bytes(), "page.png")
	if shrunk.W*shrunk.H > 300*430 || shrunk.W < ref.W-2 || shrunk.H < ref.H-2 {
		t.Errorf("JPEG 2000 over the decode budget: %d×%d, the PNG %d×%d", shrunk.W, shrunk.H, ref.W, ref.H)
	}
	if d := meanGrey(shrunk) - meanGrey(ref); d > 2 || d < -2 {
		t.Errorf("JPEG 2000 over the decode budget: mean grey %.1f off the PNG's", d)
	}
	broken := append([]byte(nil), lossless[:len(lossless)/3]...)
	_, err := decodeErr(DefaultOptions, broken, "broken.jp2")
	var e *Error
	if err == nil || !errors.As(err, &e) || e.Name != "broken.jp2" {
		t.Errorf("a truncated JPEG 2000: %v", err)
	}
}

// decodeOne decodes data's first page with o.
func decodeOne(t *testing.T, o Options, data []byte, name string) Image {
	t.Helper()
	img, err := decodeErr(o, data, name)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// decodeErr decodes data's first page with o, or says why it cannot.
func decodeErr(o Options, data []byte, name string) (Image, error) {
	doc, err := o.Decode(data, name)
	if err != nil {
		return Image{}, err
	}
	return doc.Page(0)
}
