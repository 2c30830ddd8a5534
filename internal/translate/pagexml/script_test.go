package pagexml

import (
	"context"
	"testing"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/scripttest"
)

// testdata/hebrew-script.page.xml is an eScriptorium-shaped page: a
// German region and a Hebrew one, neither labelled, as an OCR model set
// up for German transcribes a bilingual print.
//
// With a given source language, a region in a script no supported
// language is written in (Hebrew) is left as it was, logged
// unsupported_lang with the script's tag, with a warning naming the
// script, and the run goes on; the German region is translated. A
// given language written in that script (he) keeps it: it is sent.
func TestForeignScriptGivenSource(t *testing.T) {
	w := scripttest.Want{File: "testdata/hebrew-script.page.xml", Tag: "und-Hebr", Other: "de", Own: "he",
		Script: "Hebrew", Word: "בראשית", Kept: "והארץ היתה תהו ובהו", Foreign: []string{"l_2", "l_3"}, Latin: []string{"l_1"}}
	scripttest.Test(t, w, func(be backend.Backend, src []byte, source string) (scripttest.Run, []byte, error) {
		res, err := Translate(context.Background(), src, Options{Backend: be, Source: source, Target: "en", File: "p.xml"})
		if err != nil {
			return scripttest.Run{}, nil, err
		}
		return scripttest.Run{Log: res.Log, Warnings: res.Warnings, Unsupported: res.Stats.Unsupported}, res.Output, nil
	})
}
