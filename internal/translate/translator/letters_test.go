package translator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/translator/translatortest"
)

// altoOfBlocks is a one-page ALTO document with a TextBlock a text, one
// line each, its words as Strings.
func altoOfBlocks(blocks ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page ID="P1" HEIGHT="3508" WIDTH="2480"><PrintSpace>`)
	for i, text := range blocks {
		fmt.Fprintf(&b, `<TextBlock ID="P1_TB%d"><TextLine ID="P1_TB%d_L1">`, i+1, i+1)
		for j, w := range strings.Fields(text) {
			if j > 0 {
				b.WriteString(`<SP/>`)
			}
			fmt.Fprintf(&b, `<String ID="P1_TB%d_L1_S%d" CONTENT="%s"/>`, i+1, j+1, w)
		}
		b.WriteString("</TextLine></TextBlock>\n")
	}
	b.WriteString(`</PrintSpace></Page></Layout></alto>`)
	return []byte(b.String())
}

// With the source detected, a Turkish and a Serbian block in a Czech
// document are named as the languages they are (by the letters no
// supported language writes) and left untranslated, unsupported_lang;
// before, the models of the supported languages scored them as one of
// those (Turkish as Estonian, Serbian as Russian) and they were sent.
func TestForeignLetterBlocks(t *testing.T) {
	src := altoOfBlocks(
		"Záchranný archeologický výzkum proběhl v obci Vraní během roku 2014 na ploše budoucí stavby rodinného domu.",
		"Bu kitabın sayfaları yıllar içinde sararmış ve bazıları yırtılmıştır, ancak metin hâlâ okunabilir durumdadır.",
		"Ова књига је штампана у Београду и чува се у народној библиотеци као једна од најстаријих књига.",
		"Při výzkumu byly nalezeny zlomky keramiky, kamenné nástroje a zbytky dřevěné konstrukce obydlí.",
	)
	be, srv := newMT(t, translatortest.Config{})
	out, err := Translate(context.Background(), src, "foreign-letters.alto.xml", Options{Backend: be, Source: "auto", FastAlign: true})
	if err != nil {
		t.Fatal(err)
	}
	sent := strings.Join(srv.Inputs(), "\n")
	if !strings.Contains(sent, "Záchranný") {
		t.Errorf("the Czech block was not sent: %q", sent)
	}
	if strings.Contains(sent, "kitabın") || strings.Contains(sent, "књига") {
		t.Errorf("text of a language outside the supported set sent to the backend: %q", sent)
	}
	want := map[string]string{"P1_TB1": "cs", "P1_TB2": "tr", "P1_TB3": "sr", "P1_TB4": "cs"}
	for _, r := range out.Log {
		id := r.Line[:strings.LastIndex(r.Line, "_L")]
		switch lang := want[id]; {
		case r.Lang != lang:
			t.Errorf("%s: language %q, want %q", r.Line, r.Lang, lang)
		case lang == "cs" && (r.Status != backend.OK || r.Target == ""):
			t.Errorf("%s: status %q, target %q; want translated", r.Line, r.Status, r.Target)
		case lang != "cs" && (r.Status != backend.UnsupportedLang || r.Target != "" || r.LangSource != alto.FromDetected):
			t.Errorf("%s: status %q from %q, target %q; want unsupported_lang, detected, untranslated", r.Line, r.Status, r.LangSource, r.Target)
		}
	}
	if n := out.Stats.Unsupported; n != 2 {
		t.Errorf("%d units counted unsupported, want 2", n)
	}
	for _, id := range []string{"P1_TB2", "P1_TB3"} {
		if a, b := blockBytes(t, src, id), blockBytes(t, out.Data, id); a != b {
			t.Errorf("%s changed:\n%s\nwant\n%s", id, b, a)
		}
	}
}
