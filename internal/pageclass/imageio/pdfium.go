package imageio

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"archivekit/bindings/pdfium"
)

// Renderers of PDF pages (Options.Renderer).
const (
	// RendererPoppler renders through libvips' PDF loader, which uses
	// poppler (GPL-2 or GPL-3): the default.
	RendererPoppler = "poppler"
	// RendererPDFium renders with PDFium (BSD-3-Clause and Apache-2.0,
	// bindings/pdfium), loaded at run time by LoadPDFium: no GPL code
	// renders the page, and with libvips' poppler module absent none is
	// loaded at all.
	RendererPDFium = "pdfium"
)

// EnvPDFium names the PDFium library file LoadPDFium loads.
const EnvPDFium = "PDFIUM_LIBRARY"

// CheckRenderer refuses a renderer name other than "", poppler and pdfium.
func CheckRenderer(name string) error {
	switch name {
	case "", RendererPoppler, RendererPDFium:
		return nil
	}
	return fmt.Errorf("PDF renderer %q: use %s (libvips and poppler, the default) or %s", name, RendererPoppler, RendererPDFium)
}

// LoadPDFium loads the PDFium library for RendererPDFium: the file named by
// PDFIUM_LIBRARY (getenv), else lib/libpdfium.so of the installed tree (beside
// the program's bin/), else libpdfium.so wherever the dynamic loader finds it.
// It returns the path loaded.
func LoadPDFium(getenv func(string) string) (string, error) {
	path := getenv(EnvPDFium)
	if path == "" {
		path = "libpdfium.so"
		if exe, err := os.Executable(); err == nil {
			if p := filepath.Join(filepath.Dir(exe), "..", "lib", "libpdfium.so"); fileExists(p) {
				path = p
			}
		}
	}
	if err := pdfium.Load(path); err != nil {
		return "", fmt.Errorf("%w (PDF_RENDERER=pdfium needs the PDFium library: set %s to libpdfium.so, which make pdfium fetches and the installed tree ships in lib/)", err, EnvPDFium)
	}
	return pdfium.Loaded(), nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

func (o Options) pdfium() bool { return o.Renderer == RendererPDFium }

// pdfiumPages opens the PDF with PDFium for its page count.
func pdfiumPages(data []byte) (int, error) {
	doc, err := pdfium.Open(data)
	if err != nil {
		return 0, err
	}
	defer doc.Close()
	return doc.Pages(), nil
}

// pdfiumLabels reads the page labels of an encrypted PDF (pdflabel reads
// no encrypted strings) with PDFium, which decrypts a document whose user
// password is empty, as most encrypted PDFs are (the password guards
// printing or copying, not reading); ok is false when PDFium is not
// loaded or cannot open it. A PDF with no labels gives "" for each page.
func pdfiumLabels(data []byte, pages int) (labels []string, ok bool) {
	if pdfium.Loaded() == "" {
		return nil, false
	}
	doc, err := pdfium.Open(data)
	if err != nil {
		return nil, false
	}
	defer doc.Close()
	n := min(pages, doc.Pages())
	labels = make([]string, pages)
	found := false
	for i := range n {
		labels[i] = doc.Label(i)
		found = found || labels[i] != ""
	}
	if !found {
		return nil, true
	}
	return labels, true
}

// usePDFium is Use for a PDF rendered by PDFium: the page's size at the
// DPI (lowered to fit MaxDecodePixels, as for poppler) is checked against
// MaxPixels before anything is drawn, then the page is drawn inside the
// process-wide pixel budget. The document is opened per page (PDFium reads
// it lazily), so a Doc holds no native handle between calls.
func (d *Doc) usePDFium(ctx context.Context, i int, fn func(Image) error) error {
	if i < 0 || i >= d.pages {
		return d.wrap(i, fmt.Errorf("%w: %d of %d", ErrPageRange, i+1, d.pages))
	}
	doc, err := pdfium.Open(d.data)
	if err != nil {
		return d.wrap(i, err)
	}
	defer doc.Close()
	pw, ph, err := doc.Size(i)
	if err != nil {
		return d.wrap(i, err)
	}
	w, h := pdfPixels(pw, ph, float64(d.opts.DPI))
	if w <= 0 || h <= 0 {
		return d.wrap(i, fmt.Errorf("invalid size %d×%d", w, h))
	}
	budget := d.opts.pdfPageBudget()
	if budget > 0 && w*h > max(budget, d.opts.MaxPixels) {
		// Too large to draw at DPI even once (a 100-inch square, a
		// scroll): drawn at the DPI that fits, as poppler's pages are
		// (it was refused as a decompression bomb).
		w, h = pdfPixels(pw, ph, float64(fitDPI(d.opts.DPI, w*h, budget)))
	}
	if w*h > d.opts.MaxPixels {
		return d.wrap(i, fmt.Errorf("%w: %d×%d = %d pixels, limit %d", ErrTooManyPixels, w, h, w*h, d.opts.MaxPixels))
	}
	if budget > 0 && w*h > budget {
		w, h = pdfPixels(pw, ph, float64(fitDPI(d.opts.DPI, w*h, budget)))
	}
	n := w * h
	if err := inFlight.acquire(ctx, n); err != nil {
		return d.wrap(i, err)
	}
	defer inFlight.release(n)
	pix, free, err := doc.Render(i, int(w), int(h))
	if err != nil {
		return d.wrap(i, err)
	}
	defer free()
	return fn(Image{Pix: pix, W: int(w), H: int(h)})
}

// pdfPixels is the size in pixels of a page of w×h points at dpi, rounded
// as libvips rounds a poppler page.
func pdfPixels(w, h, dpi float64) (int64, int64) {
	return int64(math.Round(w * dpi / 72)), int64(math.Round(h * dpi / 72))
}
