package main

import (
	"os"
	"testing"
)

// TestBrokenPageObjectPDFium is TestBrokenPageObject with PDFium loaded:
// the PDF is rendered with PDFium, and pages 1 and 3 have the scores of
// the intact PDF's with --pdf-renderer pdfium. (This file sorts after
// pdfium_test.go, whose TestPDFRendererFlag needs PDFium not loaded yet.)
func TestBrokenPageObjectPDFium(t *testing.T) {
	lib := os.Getenv("ARCHIVEKIT_PDFIUM")
	if lib == "" {
		t.Skip("ARCHIVEKIT_PDFIUM is not set (eval \"$(make -s env)\" sets it)")
	}
	t.Setenv("PDFIUM_LIBRARY", lib)
	checkBrokenPage(t, "--pdf-renderer", "pdfium")
}
