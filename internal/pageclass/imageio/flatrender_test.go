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

// formPDF is a page holding one filled text field without an appearance
// stream (the form asks the reader to draw it): poppler draws it, and so
// does PDFium with its form layer (without it, before 2026-11-28, PDFium
// left the page white).
func formPDF() []byte {
	return hostile.PDFObjects(
		"<< /Type /Catalog /Pages 2 0 R /AcroForm << /Fields [5 0 R] /NeedAppearances true /DA (/Helv 24 Tf 0 g) /DR << /Font << /Helv 6 0 R >> >> >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << >> /Contents 4 0 R /Annots [5 0 R] >>",
		"<< /Length 0 >>\nstream\n\nendstream",
		"<< /Type /Annot /Subtype /Widget /FT /Tx /T (name) /V (Hello archive) /Rect [20 80 280 130] /F 4 /P 3 0 R /DA (/Helv 24 Tf 0 g) /MK << /BG [0.8 0.8 0.8] /BC [0 0 0] >> >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	)
}

// linePDF is a page holding one line annotation without an appearance
// stream: poppler draws the line, PDFium, which makes appearances for some
// kinds of annotation but not lines, leaves the page white.
func linePDF() []byte {
	return hostile.PDFObjects(
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << >> /Contents 4 0 R /Annots [5 0 R] >>",
		"<< /Length 0 >>\nstream\n\nendstream",
		"<< /Type /Annot /Subtype /Line /Rect [10 10 290 190] /L [20 20 280 180] /C [0 0 0] /BS << /W 6 >> /F 4 /P 3 0 R >>",
	)
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
		_, err = decodeErr(pdfium, linePDF(), "line.pdf")
		if !errors.Is(err, ErrFlatRender) || !strings.Contains(err.Error(), "line.pdf") ||
			!strings.Contains(err.Error(), "PDFium drew it in one colour, but poppler draws on it") ||
			!strings.Contains(err.Error(), "--pdf-renderer poppler") {
			t.Errorf("%s: PDFium's flat render of a page poppler draws: %v", mode, err)
		}
		for _, r := range []string{RendererPoppler, RendererPDFium} {
			o := o
			o.Renderer = r
			for name, pdf := range map[string][]byte{"the line": linePDF(), "the form": formPDF()} {
				if r == RendererPDFium && name == "the line" {
					continue
				}
				if img, err := decodeErr(o, pdf, "form.pdf"); err != nil {
					t.Errorf("%s: %s, %s: %v", mode, r, name, err)
				} else if _, flat := oneColour(img); flat {
					t.Errorf("%s: %s drew %s flat", mode, r, name)
				}
			}
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
