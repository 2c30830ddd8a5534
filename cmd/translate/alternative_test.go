package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/docrecord"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator/translatortest"
)

// TestAlternativeMode: --output-mode alternative writes the real ALTO
// sample's translation as ALTERNATIVE elements tagged en-t-cs-t0-und,
// which removed give back the input byte for byte; the run metadata names
// the tag per source language and the document record keeps output_mode
// append (the original is kept), with output_form and language_tag.
func TestAlternativeMode(t *testing.T) {
	schema, err := docrecord.LoadSchema(testenv.Path(t, "../../spec/document.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "CTX1.document.json")
	os.WriteFile(base, []byte(`{"schema_version":"1.0","doc_id":"CTX1"}`), 0o644)
	src := testenv.Path(t, sampleALTO)
	orig, _ := os.ReadFile(src)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), src, "-o", out, "-src", "cs", "--fast-align", "--vocabulary", "",
		"--document-json", base, "--output-mode", "alternative")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got, err := os.ReadFile(filepath.Join(out, "MTX201501307_anon_en.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(got, []byte(`<ALTERNATIVE PURPOSE="translation:en-t-cs-t0-und">`)); n == 0 {
		t.Error("no ALTERNATIVE written")
	}
	if back, err := alto.RemoveAlternatives(got); err != nil || !bytes.Equal(back, orig) {
		t.Errorf("removing the ALTERNATIVEs does not give the input back (%v)", err)
	}
	if d := readParadata(t, out); d.Statistics.LanguageTags["cs"] != "en-t-cs-t0-und" || d.Config["output_mode"] != "alternative" {
		t.Errorf("run metadata: tags %v, output_mode %v", d.Statistics.LanguageTags, d.Config["output_mode"])
	}
	rec, err := docrecord.Load(filepath.Join(out, "CTX1.document.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(rec); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"translations/output_mode": "append", "translations/output_form": "alternative",
		"translations/language_tag": "en-t-cs-t0-und"} {
		if got, _ := rec.Get(strings.Split(path, "/")...); got != want {
			t.Errorf("%s = %v, want %s", path, got, want)
		}
	}
}
