package metadata

import (
	"context"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/scripttest"
)

// testdata/arabic-script.oai_dc.xml is an OAI-PMH Dublin Core record of
// an Arabic book catalogued in German: its title is in Arabic script.
//
// With a given source language, a field in a script no supported
// language is written in (Arabic) is left as it was, logged
// unsupported_lang with the script's tag, with a warning naming the
// script, and the run goes on; the German description is translated. A
// given language written in that script (ar) keeps it: it is sent.
func TestForeignScriptGivenSource(t *testing.T) {
	w := scripttest.Want{File: "testdata/arabic-script.oai_dc.xml", Tag: "und-Arab", Other: "de", Own: "ar",
		Script: "Arabic", Word: "تاريخ", Kept: "<dc:title>كتاب في تاريخ مصر الحديث من عهد محمد علي</dc:title>", Foreign: []string{"//dc:title"}, Latin: []string{"//dc:description"}}
	scripttest.Test(t, w, func(be backend.Backend, src []byte, source string) (scripttest.Run, []byte, error) {
		res, err := Translate(context.Background(), src, Options{Backend: be, Source: source, Target: "en", Fields: scriptFields(t), Mode: alto.Replace, File: "rec.xml"})
		if err != nil {
			return scripttest.Run{}, nil, err
		}
		return scripttest.Run{Log: res.Log, Warnings: res.Warnings, Unsupported: res.Unsupported}, res.Output, nil
	})
}

// scriptFields are the record's title and description.
func scriptFields(t *testing.T) []*XPath {
	var fields []*XPath
	for _, expr := range []string{"//dc:title", "//dc:description"} {
		f, err := Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		fields = append(fields, f)
	}
	return fields
}
