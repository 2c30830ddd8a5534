package main

import (
	"testing"

	"archivekit/internal/testenv"
)

// TestBrokenPageObjectPDFium is TestBrokenPageObject with PDFium loaded:
// the PDF is rendered with PDFium, and pages 1 and 3 have the scores of
// the intact PDF's with --pdf-renderer pdfium. (This file sorts after
// pdfium_test.go, whose TestPDFRendererFlag needs PDFium not loaded yet.)
func TestBrokenPageObjectPDFium(t *testing.T) {
	lib := testenv.PDFium(t)
	t.Setenv("PDFIUM_LIBRARY", lib)
	checkBrokenPage(t, "--pdf-renderer", "pdfium")
}
