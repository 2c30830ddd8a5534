package main

import (
	"image"
	_ "image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
)

// TestPDFRendererFlag: --pdf-renderer pdfium classifies a scanned PDF as
// poppler does (same rows, same first category on each page), records the
// renderer in the run metadata, and without the library fails at once,
// saying how to give it.
func TestPDFRendererFlag(t *testing.T) {
	lib := os.Getenv("ARCHIVEKIT_PDFIUM")
	if lib == "" {
		t.Skip("ARCHIVEKIT_PDFIUM is not set (eval \"$(make -s env)\" sets it)")
	}
	var imgs []image.Image
	for _, p := range classifytest.Pages(t, 1)[:4] {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := image.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, img)
	}
	pdf, err := hostile.ScanPDF(imgs, 150, "")
	if err != nil {
		t.Fatal(err)
	}
	raw := func(renderer string) [][]string {
		e := newEnv(t, nil)
		e.model(t, "v4.4")
		doc := filepath.Join(e.root, "scan.pdf")
		write(t, doc, string(pdf))
		if code, log := e.run(t, "-f", doc, "--raw", "--pdf-renderer", renderer); code != exitOK {
			t.Fatalf("%s: exit %d: %s", renderer, code, log)
		}
		out := readCSV(t, e.output(t, "_v4.4_RAW.csv"))
		if got := readParadata(t, e).Config["pdf_renderer"]; got != renderer {
			t.Errorf("run metadata pdf_renderer %v, want %s", got, renderer)
		}
		return out
	}

	t.Setenv("PDFIUM_LIBRARY", filepath.Join(t.TempDir(), "libpdfium.so"))
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	doc := filepath.Join(e.root, "scan.pdf")
	write(t, doc, string(pdf))
	if code, log := e.run(t, "-f", doc, "--pdf-renderer", "pdfium"); code != exitUsage || !strings.Contains(log, "PDFIUM_LIBRARY") {
		t.Fatalf("without the library: exit %d: %s", code, log)
	}

	t.Setenv("PDFIUM_LIBRARY", lib)
	// The scores of the 11 categories of each page agree within 0.02.
	pop, pdfi := raw("poppler"), raw("pdfium")
	if len(pop) != 5 || len(pdfi) != len(pop) || strings.Join(pop[0], ",") != strings.Join(pdfi[0], ",") {
		t.Fatalf("tables differ in shape:\npoppler %q\npdfium  %q", pop, pdfi)
	}
	worst := 0.0
	for i := 1; i < len(pop); i++ {
		for j := range pop[i] {
			a, errA := strconv.ParseFloat(pop[i][j], 64)
			b, errB := strconv.ParseFloat(pdfi[i][j], 64)
			if errA != nil || errB != nil {
				if pop[i][j] != pdfi[i][j] {
					t.Errorf("row %d column %s: %q and %q", i, pop[0][j], pop[i][j], pdfi[i][j])
				}
				continue
			}
			worst = max(worst, math.Abs(a-b))
		}
	}
	if worst > 0.02 {
		t.Errorf("scores differ by up to %.4f between the renderers, want at most 0.02", worst)
	}
	t.Logf("4 pages: scores differ by at most %.4f between poppler and PDFium", worst)
}
