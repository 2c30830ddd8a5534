package hocr

import (
	"context"
	"testing"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/scripttest"
)

// testdata/arabic-script.hocr is Tesseract-shaped hOCR of a bilingual
// page read with a German model: every paragraph says lang='deu', the
// second is Arabic.
//
// With a given source language, a paragraph in a script no supported
// language is written in (Arabic) is left as it was, logged
// unsupported_lang with the script's tag, with a warning naming the
// script, and the run goes on; the German paragraph is translated. A
// given language written in that script (ar) keeps it: it is sent.
func TestForeignScriptGivenSource(t *testing.T) {
	w := scripttest.Want{File: "testdata/arabic-script.hocr", Tag: "und-Arab", Other: "de", Own: "ar",
		Script: "Arabic", Word: "تاريخ", Kept: "<span class='ocrx_word' id='word_1_7' title='bbox 620 300 800 340; x_wconf 60'>تاريخ</span>", Foreign: []string{"line_1_2", "line_1_3"}, Latin: []string{"line_1_1"}}
	scripttest.Test(t, w, func(be backend.Backend, src []byte, source string) (scripttest.Run, []byte, error) {
		res, err := Translate(context.Background(), src, Options{Backend: be, Source: source, Target: "en", File: "p7.hocr"})
		if err != nil {
			return scripttest.Run{}, nil, err
		}
		return scripttest.Run{Log: res.Log, Warnings: res.Warnings, Unsupported: res.Stats.Unsupported}, res.Output, nil
	})
}
