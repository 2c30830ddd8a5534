package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator/translatortest"
)

// TestHyphenSplitWordsCLI: translate sends a word whose hyphen is a String
// of its own (OCR-D's Kant ground truth: "Men" "-" / "ſchen") and a word
// hyphenated across two TextBlocks (dinglehopper's sample: "das ver-" /
// "ſprochene zu") to the MT stand-in once, whole, never in parts; the
// whole word's translation goes where the first part was, the hyphen and
// second-part Strings are emptied, and every other byte is kept.
func TestHyphenSplitWordsCLI(t *testing.T) {
	for _, c := range []struct {
		in            string
		whole         []string // seen once each
		split         []string // never seen
		first, second string   // IDs of the Strings of the first and second part
		word          string   // the whole word
	}{
		{"../../internal/book/testdata/mets/ocrd-kant/OCR-D-GT-ALTO/PAGE_0017_ALTO.xml",
			[]string{"Menſchen aus", "Unmuͤndigkeit . Unmuͤndigkeit", "Mangel des", "alſo der"},
			[]string{"Men -", "Unmuͤn -", "Man -", "al -"},
			"word_1478541370337_826", "w_w1aab1b3b2b7b3ab1", "Menſchen"},
		{filepath.Join(realWorldDir, "v3_minimal.alto.xml"),
			[]string{"das verſprochene"}, []string{"ver-", "ſprochene zu"},
			"string_17", "string_18", "verſprochene"},
	} {
		t.Run(filepath.Base(c.in), func(t *testing.T) {
			src, err := os.ReadFile(c.in)
			if err != nil {
				t.Fatal(err)
			}
			api := startAPI(t, translatortest.Config{})
			out := t.TempDir()
			r := runCLI(t, newEnv(api), c.in, "-o", out, "-src", "de", "--fast-align", "--vocabulary", "")
			if r.code != exitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			sent := strings.Join(api.Inputs(), "\n")
			for _, w := range c.whole {
				if n := strings.Count(sent, w); n != 1 {
					t.Errorf("the MT received %q %d times, want once:\n%s", w, n, sent)
				}
			}
			for _, w := range c.split {
				if strings.Contains(sent, w) {
					t.Errorf("the MT received the split word %q:\n%s", w, sent)
				}
			}
			outs, _ := filepath.Glob(filepath.Join(out, "*_en*.xml"))
			if len(outs) != 1 {
				t.Fatalf("outputs %v", outs)
			}
			got, _ := os.ReadFile(outs[0])
			if !bytes.Equal(alto.MaskTranslatable(got), alto.MaskTranslatable(src)) {
				t.Error("bytes outside the translated text changed")
			}
			for id, want := range map[string]string{c.first: translatortest.Translate(c.word), c.second: ""} {
				re := regexp.MustCompile(`<String ID="` + id + `"[^>]* CONTENT="([^"]*)"`)
				if m := re.FindSubmatch(got); m == nil || string(m[1]) != want {
					t.Errorf("String %s: %q, want CONTENT=%q", id, m, want)
				}
			}
		})
	}
}
