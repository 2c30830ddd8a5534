package testenv

import (
	"os"
	"testing"
)

// PDFium is the PDFium library the build fetched (ARCHIVEKIT_PDFIUM, set
// by eval "$(make -s env)"); t is skipped without it.
func PDFium(t testing.TB) string {
	t.Helper()
	lib := os.Getenv("ARCHIVEKIT_PDFIUM")
	if lib == "" {
		t.Skip("ARCHIVEKIT_PDFIUM is not set (eval \"$(make -s env)\" sets it)")
	}
	return lib
}
