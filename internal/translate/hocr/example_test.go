package hocr_test

import (
	"context"
	"fmt"
	"log"

	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/hocr"
)

// Translate an hOCR line from Czech into English: the words take the
// translation's tokens; the page gets its language tag.
func ExampleTranslate() {
	doc := []byte(`<html><head><meta name='ocr-capabilities' content='ocr_page ocr_line ocrx_word'/></head><body>
<div class='ocr_page' title='bbox 0 0 90 10'>
 <span class='ocr_line' title='bbox 0 0 90 10'><span class='ocrx_word' title='bbox 0 0 30 10'>hrob</span> <span class='ocrx_word' title='bbox 40 0 50 10'>a</span> <span class='ocrx_word' title='bbox 60 0 90 10'>jáma</span></span>
</div></body></html>`)
	res, err := hocr.Translate(context.Background(), doc, hocr.Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s\n", res.Output)
	// Output:
	// <html><head><meta name='ocr-capabilities' content='ocr_page ocr_line ocrx_word ocrp_lang'/></head><body>
	// <div class='ocr_page' title='bbox 0 0 90 10' lang="en-t-cs-t0-und">
	//  <span class='ocr_line' title='bbox 0 0 90 10'><span class='ocrx_word' title='bbox 0 0 30 10'>grave</span> <span class='ocrx_word' title='bbox 40 0 50 10'>and</span> <span class='ocrx_word' title='bbox 60 0 90 10'>pit</span></span>
	// </div></body></html>
}
