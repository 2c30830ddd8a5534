package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/docrecord"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/metadata"
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

// TestAlternativeModeMetadata: --output-mode alternative gives a metadata
// record its removable form: each translated field's sibling labelled with
// the machine-translation tag, the original left as it was (not labelled
// with its language, as append does), so metadata.Remove gives the input
// back byte for byte; the run metadata says metadata got alternative.
func TestAlternativeModeMetadata(t *testing.T) {
	src := testenv.Path(t, "records/C-9100725A.xml")
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), src, "-o", out, "-src", "cs", "--vocabulary", "",
		"--xpaths", "../../setup/translate/amcr-fields.txt", "--output-mode", "alternative")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	outs, _ := filepath.Glob(filepath.Join(out, "C-9100725A_en*.xml"))
	if len(outs) != 1 {
		t.Fatalf("outputs %v, want one", outs)
	}
	got, err := os.ReadFile(outs[0])
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(got, []byte(`xml:lang="en-t-cs-t0-und"`)); n == 0 {
		t.Error("no sibling labelled en-t-cs-t0-und")
	}
	if bytes.Count(got, []byte(`xml:lang="cs"`)) != bytes.Count(orig, []byte(`xml:lang="cs"`)) {
		t.Error("the originals were labelled with their language (append), not left as they were")
	}
	if back, err := metadata.Remove(got); err != nil || !bytes.Equal(back, orig) {
		t.Errorf("removing the translations does not give the input back (%v)", err)
	}
	if d := readParadata(t, out); fmt.Sprint(d.Config["output_mode_by_format"]) == "" ||
		!strings.Contains(fmt.Sprint(d.Config["output_mode_by_format"]), "metadata:alternative") {
		t.Errorf("run metadata: output_mode_by_format %v, want metadata alternative", d.Config["output_mode_by_format"])
	}
}
