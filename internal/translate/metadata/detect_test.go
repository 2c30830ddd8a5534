package metadata

import (
	"archivekit/internal/testenv"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/langid"
	"os"
	"path/filepath"
	"testing"
)

// TestRecordLanguageAccuracy measures field-level identification on the
// 15 shared Czech records: each field alone, as the original tool does,
// and with the document's language as prior (short fields inherit it).
// Run: go test -v -run RecordLanguageAccuracy ./internal/translate/metadata
func TestRecordLanguageAccuracy(t *testing.T) {
	fs, err := LoadFields(testenv.Path(t, "fields.txt"))
	if err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(testenv.Path(t, "records"), "*.xml"))
	d := langid.Shared()
	n, alone, prior := 0, 0, 0
	others := map[string]int{}
	for _, name := range names {
		src, _ := os.ReadFile(name)
		fts, err := FieldTexts(src, fs, nil)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, f := range fts {
			texts = append(texts, f.Text)
		}
		doc := alto.DocumentLanguage(d, texts, alto.DefaultMinConfidence)
		for _, f := range fts {
			n++
			if alto.DetectLang(d, f.Text, alto.DefaultMinConfidence) == "cs" {
				alone++
			}
			if l := alto.DetectWithPrior(d, f.Text, doc, alto.DefaultMinConfidence); l == "cs" {
				prior++
			} else {
				others[l]++
				t.Logf("%s: %q identified as %s", filepath.Base(name), f.Text, l)
			}
		}
	}
	t.Logf("fields: %d; each alone %d Czech (%.1f%%); with the document prior %d (%.1f%%); others %v",
		n, alone, 100*float64(alone)/float64(n), prior, 100*float64(prior)/float64(n), others)
	if n == 0 || float64(prior)/float64(n) < 0.98 {
		t.Errorf("Czech fields identified as Czech: %d/%d, want >= 98%%", prior, n)
	}
}
