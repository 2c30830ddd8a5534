package hocr

import (
	"context"
	"testing"

	"archivekit/internal/translate/backend/backendtest"
)

// FuzzParallel: on any document it accepts, Translate writes a parallel
// document that differs from the input only in text runs, lang on
// ocr_page/ocr_par and ocr-capabilities (sameBut), and never panics.
func FuzzParallel(f *testing.F) {
	for _, s := range []string{
		tess,
		"<html><head><meta name=ocr-capabilities content=ocr_line></head><body><div class=ocr_page title='bbox 0 0 9 9'><p class=ocr_par lang><span class=ocr_line title='bbox 0 0 9 9'>hrob a <b>jáma</b></span><br><p class=ocr_par><span class='ocr_line'>v</span></body></html>",
		"<div class='ocr_page'><span class='ocr_line'><span class='ocrx_word'><span class='ocrx_cinfo'>a</span></span><span class='ocrx_word'>x &amp; y</span></span></div>",
		"<div class=ocr_page LANG=cs><p class=ocr_par lang=cs lang=de><span class=ocr_header>a<span class=ocr_line>b</span>c</span></p></div",
		"<DIV CLASS='ocr_page'/><span class=ocr_line>hrob</span>",
		"<meta name=ocr-capabilities content><div class=ocr_page title=x/><p class=ocr_par lang title=y/><span class=ocr_line>hrob</span></p></div>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		res, err := Translate(context.Background(), src, Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en"})
		if err != nil {
			return
		}
		sameBut(t, src, res.Output, res.Tag)
	})
}
