package imageio

import (
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"testing"

	"archivekit/bindings/pdfium"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/testenv"
)

// loadPDFium loads the library make env names (ARCHIVEKIT_PDFIUM).
func loadPDFium(t *testing.T) {
	t.Helper()
	lib := testenv.PDFium(t)
	if _, err := LoadPDFium(func(k string) string {
		if k == EnvPDFium {
			return lib
		}
		return ""
	}); err != nil {
		t.Fatal(err)
	}
}

// TestPDFiumMatchesPoppler: both renderers give each page of the same PDF
// the same size, and pixels that differ only at anti-aliased edges.
func TestPDFiumMatchesPoppler(t *testing.T) {
	loadPDFium(t)
	data := scannedPDF(t)
	render := func(renderer string) []Image {
		o := DefaultOptions
		o.Renderer = renderer
		d, err := o.Decode(data, "two.pdf")
		if err != nil {
			t.Fatalf("%s: %v", renderer, err)
		}
		var pages []Image
		for i := 0; i < d.Pages(); i++ {
			img, err := d.Page(i)
			if err != nil {
				t.Fatalf("%s page %d: %v", renderer, i+1, err)
			}
			pages = append(pages, img)
		}
		return pages
	}
	pop, pdf := render(RendererPoppler), render(RendererPDFium)
	if len(pop) != len(pdf) || len(pop) == 0 {
		t.Fatalf("%d pages with poppler, %d with PDFium", len(pop), len(pdf))
	}
	for i := range pop {
		a, b := pop[i], pdf[i]
		if a.W != b.W || a.H != b.H {
			t.Fatalf("page %d: poppler %d×%d, PDFium %d×%d", i+1, a.W, a.H, b.W, b.H)
		}
		// The classifier sees pages shrunk to a few hundred pixels: compare
		// them shrunk 8 times (box filter), where a difference at the
		// edges of letters (resampling, anti-aliasing) averages out.
		if mean := meanAbsDiff(shrink(a, 8), shrink(b, 8)); mean > 3 {
			t.Errorf("page %d: mean absolute difference %.2f of 255 between the renderers (shrunk 8×), want at most 3", i+1, mean)
		} else {
			t.Logf("page %d: %d×%d, mean absolute difference %.3f of 255 (shrunk 8×); at full size %.3f", i+1, a.W, a.H, mean, meanAbsDiff(a, b))
		}
	}
}

// TestPDFiumBudgets: with PDFium too, a page over MaxPixels is refused
// before it is drawn, and one over MaxDecodePixels is drawn smaller.
func TestPDFiumBudgets(t *testing.T) {
	loadPDFium(t)
	data, err := os.ReadFile(filepath.Join("testdata", "two.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions
	o.Renderer, o.MaxPixels = RendererPDFium, 1000
	d, err := o.Decode(data, "two.pdf")
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Use(context.Background(), 0, func(Image) error { return nil }); !errors.Is(err, ErrTooManyPixels) {
		t.Errorf("page over MaxPixels: %v, want ErrTooManyPixels", err)
	}
	o.MaxPixels, o.MaxDecodePixels = DefaultMaxPixels, 10_000
	d, _ = o.Decode(data, "two.pdf")
	err = d.Use(context.Background(), 0, func(img Image) error {
		if int64(img.W*img.H) > 10_000 {
			t.Errorf("drawn at %d×%d, over the 10,000-pixel budget", img.W, img.H)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckRenderer("mupdf"); err == nil {
		t.Error("renderer mupdf accepted")
	}
	// A page too large to draw at 150 dpi even once (100 inches square:
	// 225 MP, over MaxPixels) is drawn at the DPI that fits the budget.
	o = DefaultOptions
	o.Renderer = RendererPDFium
	d, err = o.Decode(hostile.PDF(1, 100, 100), "huge.pdf")
	if err != nil {
		t.Fatal(err)
	}
	err = d.Use(context.Background(), 0, func(img Image) error {
		if n := int64(img.W * img.H); n > o.pdfPageBudget() || n < o.pdfPageBudget()*7/10 {
			t.Errorf("100-inch page drawn at %d×%d", img.W, img.H)
		}
		return nil
	})
	if err != nil {
		t.Errorf("100-inch page: %v", err)
	}
}

// scannedPDF is a one-page PDF as scanners write them (hostile.ScanPDF)
// of a sample page.
func scannedPDF(t *testing.T) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join(testenv.Data(t, "pages"), "TEXT", "caa_conference-04.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	pdf, err := hostile.ScanPDF([]image.Image{img}, 150, "")
	if err != nil {
		t.Fatal(err)
	}
	return pdf
}

// shrink averages f×f blocks of img.
func shrink(img Image, f int) Image {
	w, h := img.W/f, img.H/f
	out := Image{W: w, H: h, Pix: make([]byte, w*h*3)}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			for c := 0; c < 3; c++ {
				sum := 0
				for dy := 0; dy < f; dy++ {
					for dx := 0; dx < f; dx++ {
						sum += int(img.Pix[((y*f+dy)*img.W+x*f+dx)*3+c])
					}
				}
				out.Pix[(y*w+x)*3+c] = byte(sum / (f * f))
			}
		}
	}
	return out
}

func meanAbsDiff(a, b Image) float64 {
	var sum float64
	for k := range a.Pix {
		d := float64(a.Pix[k]) - float64(b.Pix[k])
		if d < 0 {
			d = -d
		}
		sum += d
	}
	return sum / float64(len(a.Pix))
}

// TestLabelsAgreeWithPDFium: the project's page-label reader
// (internal/pageclass/pdflabel, used with either renderer) reads the same
// labels as PDFium's own FPDF_GetPageLabel.
func TestLabelsAgreeWithPDFium(t *testing.T) {
	loadPDFium(t)
	page := "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>"
	for _, tree := range []string{
		"<< /Nums [0 << /S /r >> 3 << /S /D >>] >>",
		"<< /Nums [0 << /S /D /St 11 /P (p. ) >>] >>",
		"<< /Nums [0 << /S /R /St 9 >> 2 << /S /A /St 25 >> 5 << /S /a >>] >>",
		"<< /Nums [0 << /P (Cover) >> 1 << /S /D /P (A-) >>] >>",
		"<< /Kids [<< /Nums [0 << /S /r >>] >> << /Nums [4 << /S /D /St 12 >>] >>] >>",
		"<< /Nums [0 << /S /D /P <FEFF004B0101> >>] >>",
		"<< /Nums [2 << /S /r >>] >>",
	} {
		objs := []string{"<< /Type /Catalog /Pages 2 0 R /PageLabels " + tree + " >>", "<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 6 0 R 7 0 R 8 0 R] /Count 6 >>"}
		for i := 0; i < 6; i++ {
			objs = append(objs, page)
		}
		data := hostile.PDFObjects(objs...)
		d, err := Decode(data, "labels.pdf")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := pdfium.Open(data)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < d.Pages(); i++ {
			ours, theirs := d.Label(i), doc.Label(i)
			if theirs == "" {
				theirs = fmt.Sprint(i + 1) // PDFium has no label before the first range
			}
			if ours != theirs {
				t.Errorf("%s: page %d: pdflabel %q, PDFium %q", tree, i+1, ours, theirs)
			}
		}
		doc.Close()
	}
}
