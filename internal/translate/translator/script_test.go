package translator

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"unicode"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/translator/translatortest"
)

// A block in Arabic script is in none of the supported languages, whatever
// its LANG (cs here, as an OCR engine set up for Czech writes it), the
// document's language or the default say, and whether the source is
// detected or given: it is left as it was, logged unsupported_lang with
// the script named, counted as unsupported, and never sent to the
// backend. A Czech sentence holding an Arabic name is translated.
func TestForeignScriptBlocks(t *testing.T) {
	src, err := os.ReadFile("testdata/arabic-script.alto.xml")
	if err != nil {
		t.Fatal(err)
	}
	for _, source := range []string{"auto", "cs"} {
		t.Run("source "+source, func(t *testing.T) {
			be, srv := newMT(t, translatortest.Config{})
			out, err := Translate(context.Background(), src, "arabic-script.alto.xml", Options{Backend: be, Source: source, FastAlign: true})
			if err != nil {
				t.Fatal(err)
			}
			// Only the mixed block's name is Arabic among what was sent.
			for _, in := range srv.Inputs() {
				for _, l := range strings.Split(in, "\n") {
					if strings.IndexFunc(l, func(r rune) bool { return unicode.Is(unicode.Arabic, r) && unicode.IsLetter(r) }) >= 0 &&
						!strings.Contains(l, "Muhammad") {
						t.Errorf("Arabic text sent to the backend: %q", l)
					}
				}
			}
			byBlock := map[string][]alto.LogRow{}
			for _, r := range out.Log {
				id := r.Line[:strings.LastIndex(r.Line, "_L")]
				byBlock[id] = append(byBlock[id], r)
			}
			for _, id := range []string{"P1_TB2", "P1_TB4"} {
				rows := byBlock[id]
				if len(rows) == 0 {
					t.Fatalf("%s: no log rows", id)
				}
				for _, r := range rows {
					if r.Status != backend.UnsupportedLang || r.Lang != "und-Arab" || r.LangSource != alto.FromScript || r.Target != "" {
						t.Errorf("%s %s: status %q, lang %q from %q, target %q; want unsupported_lang, und-Arab from script",
							id, r.Line, r.Status, r.Lang, r.LangSource, r.Target)
					}
				}
			}
			for _, id := range []string{"P1_TB1", "P1_TB3"} {
				for _, r := range byBlock[id] {
					if r.Status != backend.OK || r.Lang != "cs" || r.Target == "" {
						t.Errorf("%s %s: status %q, lang %q, target %q; want translated from cs", id, r.Line, r.Status, r.Lang, r.Target)
					}
				}
			}
			if n := out.Stats.Unsupported; n != 2 {
				t.Errorf("%d units counted unsupported, want 2", n)
			}
			if n := out.Statuses[string(backend.UnsupportedLang)]; n != 4 {
				t.Errorf("%d lines unsupported_lang, want 4", n)
			}
			if n := out.LangSources[string(alto.FromScript)]; n != 2 {
				t.Errorf("lang_sources %v, want 2 from script", out.LangSources)
			}
			if w := strings.Join(out.Warnings, "\n"); !strings.Contains(w, "Arabic script: not a supported source language") {
				t.Errorf("warnings %q do not name the script", w)
			}
			// The Arabic blocks' bytes are kept as they were.
			for _, id := range []string{"P1_TB2", "P1_TB4"} {
				if a, b := blockBytes(t, src, id), blockBytes(t, out.Data, id); a != b {
					t.Errorf("%s changed:\n%s\nwant\n%s", id, b, a)
				}
			}
			if blockBytes(t, src, "P1_TB3") == blockBytes(t, out.Data, "P1_TB3") {
				t.Error("mixed block P1_TB3 not translated")
			}
		})
	}
}

// blockBytes is the text of the TextBlock with ID id in an ALTO document.
func blockBytes(t *testing.T, doc []byte, id string) string {
	t.Helper()
	start := bytes.Index(doc, []byte(`<TextBlock ID="`+id+`"`))
	if start < 0 {
		t.Fatalf("no block %s", id)
	}
	end := bytes.Index(doc[start:], []byte("</TextBlock>"))
	if end < 0 {
		t.Fatalf("block %s not closed", id)
	}
	return string(doc[start : start+end])
}

// PAGE-XML with source auto: a region in Hebrew script declared Czech
// (primaryLanguage) is left as it was, logged unsupported_lang with the
// script named; the Czech region is translated.
func TestForeignScriptPAGE(t *testing.T) {
	const hebrew = "ספר בראשית פרק ראשון בראשית ברא אלהים את השמים ואת הארץ"
	src := `<?xml version="1.0" encoding="UTF-8"?>
<PcGts xmlns="http://schema.primaresearch.org/PAGE/gts/pagecontent/2019-07-15">
  <Metadata><Creator>test</Creator><Created>2026-11-27T00:00:00</Created><LastChange>2026-11-27T00:00:00</LastChange></Metadata>
  <Page imageFilename="p.png" imageWidth="100" imageHeight="100">
    <TextRegion id="r1" primaryLanguage="Czech"><Coords points="0,0 10,0 10,10 0,10"/>
      <TextLine id="l1"><Coords points="0,0 10,0 10,5 0,5"/><TextEquiv><Unicode>Záchranný archeologický výzkum proběhl v obci Vraní během roku 2014.</Unicode></TextEquiv></TextLine>
    </TextRegion>
    <TextRegion id="r2" primaryLanguage="Czech"><Coords points="0,20 10,20 10,30 0,30"/>
      <TextLine id="l2"><Coords points="0,20 10,20 10,25 0,25"/><TextEquiv><Unicode>` + hebrew + `</Unicode></TextEquiv></TextLine>
    </TextRegion>
  </Page>
</PcGts>
`
	be, srv := newMT(t, translatortest.Config{})
	out, err := Translate(context.Background(), []byte(src), "p.page.xml", Options{Backend: be, Source: "auto", Mode: alto.Replace})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range srv.Inputs() {
		if strings.Contains(in, "בראשית") {
			t.Errorf("Hebrew text sent to the backend: %q", in)
		}
	}
	got := map[string]alto.LogRow{}
	for _, r := range out.Log {
		got[r.Line] = r
	}
	if r := got["l2"]; r.Status != backend.UnsupportedLang || r.Lang != "und-Hebr" || r.LangSource != alto.FromScript {
		t.Errorf("Hebrew line: %+v", r)
	}
	if r := got["l1"]; r.Status != backend.OK || r.Lang != "cs" {
		t.Errorf("Czech line: %+v", r)
	}
	if !strings.Contains(string(out.Data), hebrew) {
		t.Error("the Hebrew line's text is gone")
	}
	if w := strings.Join(out.Warnings, "\n"); !strings.Contains(w, "Hebrew script: not a supported source language") {
		t.Errorf("warnings %q do not name the script", w)
	}
}
