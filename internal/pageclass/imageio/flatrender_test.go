package imageio

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
)

// onePagePDF is a PDF of one page of w×h points with the given content
// stream and resources, its further objects numbered from 5.
func onePagePDF(w, h float64, content, resources string, objs ...string) []byte {
	return hostile.PDFObjects(append([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources %s /Contents 4 0 R >>", w, h, resources),
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
	}, objs...)...)
}

// wideImagePDF is a page drawing one JPEG image w pixels wide: 20 dark and
// light bands. Over 32767 pixels wide cairo, which poppler draws with
// through libvips, leaves it out and the page comes out white.
func wideImagePDF(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Pix[y*w+x] = [2]byte{30, 220}[(x/(w/20))%2]
		}
	}
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	pw, ph := 600.0, 600.0*float64(h)/float64(w)
	return onePagePDF(pw, ph, fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im1 Do Q", pw, ph), "<< /XObject << /Im1 5 0 R >> >>",
		fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n%s\nendstream",
			w, h, jb.Len(), jb.String()))
}

// TestFlatRender: a PDF page one renderer draws in one colour while the
// other draws on it is refused, naming the file, both renderers and what
// to do, in process and in a decoder process; a page both draw blank is a
// blank page, read; a page drawn is read as before.
func TestFlatRender(t *testing.T) {
	loadPDFium(t)
	wide := wideImagePDF(t, 33000, 400)
	blank := onePagePDF(300, 400, "", "<< >>")
	iso := isolation(t, 1, 0)
	for _, mode := range []string{"in process", "in a decoder process"} {
		o := DefaultOptions
		if mode != "in process" {
			o.Isolation = iso
		}
		_, err := decodeErr(o, wide, "wide.pdf")
		var e *Error
		if !errors.Is(err, ErrFlatRender) || !errors.As(err, &e) || e.Name != "wide.pdf" || e.Page != 1 ||
			!strings.Contains(err.Error(), "poppler drew it in one colour, but PDFium draws on it") ||
			!strings.Contains(err.Error(), "--pdf-renderer pdfium") {
			t.Errorf("%s: poppler's flat render of a page PDFium draws: %v", mode, err)
		}
		pdfium := o
		pdfium.Renderer = RendererPDFium
		img, err := decodeErr(pdfium, wide, "wide.pdf")
		if err != nil {
			t.Fatalf("%s: PDFium: %v", mode, err)
		}
		if _, flat := oneColour(img); flat {
			t.Fatalf("%s: PDFium drew the wide image flat too", mode)
		}
		for _, r := range []string{RendererPoppler, RendererPDFium} {
			o := o
			o.Renderer = r
			img, err := decodeErr(o, blank, "blank.pdf")
			if c, flat := oneColour(img); err != nil || !flat || c != [3]byte{255, 255, 255} || img.W < 100 {
				t.Errorf("%s, %s: a blank page: %d×%d, %v", mode, r, img.W, img.H, err)
			}
		}
	}
}
