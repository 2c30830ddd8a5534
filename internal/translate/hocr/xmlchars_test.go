package hocr

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/xmlsplice"
)

// TestNotAllowedChars: a service whose replies carry characters that XML
// does not allow (nor HTML, where they are parse errors) gets them written
// as U+FFFD, as the XML formats write them: Tesseract's XHTML hOCR stays
// well-formed, and neither it nor HTML5 hOCR holds one of them.
func TestNotAllowedChars(t *testing.T) {
	html5 := "<!DOCTYPE html>\n<html><head><meta name='ocr-capabilities' content='ocr_page ocr_line ocrx_word'></head><body>" +
		"<div class='ocr_page' title='bbox 0 0 9 9'><span class='ocr_line'><span class='ocrx_word'>hrob</span> <span class='ocrx_word'>kostel</span></span></div></body></html>"
	cases := []struct {
		name, src string
		xhtml     bool
		want      []string // in the output
	}{
		{"XHTML with declaration", tess, true, []string{">pit \ufffd \ufffd<span", ">trench &amp; KOSTEL \ufffd \ufffd<"}},
		{"HTML5", html5, false, []string{">KOSTEL \ufffd \ufffd<"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			be := &backendtest.Backend{Then: backendtest.Suffixed(" \x01\x0b\ufffe")}
			res, err := Translate(context.Background(), []byte(c.src), Options{Backend: be, Source: "cs", Target: "en", File: "t"})
			if err != nil {
				t.Fatal(err)
			}
			out := string(res.Output)
			if i := strings.IndexFunc(out, func(r rune) bool { return !xmlsplice.IsChar(r) }); i >= 0 {
				t.Errorf("output holds %U at offset %d:\n%q", []rune(out[i:])[0], i, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if c.xhtml {
				d := xml.NewDecoder(strings.NewReader(out))
				for {
					_, err := d.Token()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("output is not well-formed XML: %v\n%s", err, out)
					}
				}
			}
		})
	}
}
