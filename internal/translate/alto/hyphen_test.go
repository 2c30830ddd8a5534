package alto

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

var subsRE = regexp.MustCompile(`\s+SUBS_(TYPE|CONTENT)="[^"]*"`)

// TestHyphenatedWordsJoined: a pair marked with SUBS_TYPE/SUBS_CONTENT and
// a pair marked only by HYP reach the backend as whole words; the second
// part's box is emptied, the translated Strings lose SUBS_TYPE and
// SUBS_CONTENT, the joined pairs' HYP elements go, and nothing else changes.
func TestHyphenatedWordsJoined(t *testing.T) {
	src := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#"><Layout><Page ID="P1"><PrintSpace>
<TextBlock ID="TB1">
<TextLine ID="L1"><String CONTENT="la" HPOS="1"/><SP/><String CONTENT="nais" HPOS="9" SUBS_TYPE="HypPart1" SUBS_CONTENT="naissance"/><HYP CONTENT="-"/></TextLine>
<TextLine ID="L2"><String CONTENT="sance," HPOS="1" SUBS_TYPE="HypPart2" SUBS_CONTENT="naissance"/><SP/><String CONTENT="la" HPOS="9"/><SP/><String CONTENT="con" HPOS="12"/><HYP CONTENT="¬"/></TextLine>
<TextLine ID="L3"><String CONTENT="servation" HPOS="1"/><SP/><String CONTENT="du" HPOS="9"/><SP/><String CONTENT="monde" HPOS="12"/><SP/><String CONTENT="Despo-" HPOS="20"/></TextLine>
<TextLine ID="L4"><String CONTENT="tism" HPOS="1"/><SP/><String CONTENT="Prague-" HPOS="9"/></TextLine>
<TextLine ID="L5"><String CONTENT="Brno" HPOS="1"/></TextLine>
</TextBlock>
</PrintSpace></Page></Layout></alto>
`)
	be := upper()
	res, err := Translate(context.Background(), src, Options{Backend: be, Source: "fr", Target: "en", File: "h"})
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Join(be.calls, "\n")
	for _, want := range []string{"la naissance, la conservation du monde Despotism Prague- Brno", "la naissance,\nla conservation\ndu monde Despotism\nPrague-\nBrno"} {
		if !strings.Contains(calls, want) {
			t.Errorf("backend never saw %q; it saw:\n%s", want, calls)
		}
	}
	for _, bad := range []string{"nais sance", "con servation", "nais\n", "Despo-"} {
		if strings.Contains(calls, bad) {
			t.Errorf("backend saw the split word %q", bad)
		}
	}
	out := res.Output
	if subsRE.Match(out) {
		t.Errorf("SUBS_ attributes left on translated Strings:\n%s", out)
	}
	if !bytes.Equal(MaskTranslatable(out), MaskTranslatable(src)) {
		t.Errorf("more than CONTENT and SUBS_ changed:\n%s", out)
	}
	for _, want := range []string{`CONTENT="NAISSANCE,"`, `<String CONTENT="" HPOS="1"/>`, `CONTENT="CONSERVATION"`} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	// The HYP marks of the two joined pairs go with them: the translation
	// has no hyphenated word there (before, a viewer drew "NAISSANCE,-").
	if bytes.Contains(out, []byte("<HYP")) {
		t.Errorf("HYP left after a joined pair:\n%s", out)
	}
	// No token is lost: the pass-1 tokens are what the Strings hold.
	var words []string
	for _, m := range regexp.MustCompile(`<String CONTENT="([^"]*)"`).FindAllSubmatch(out, -1) {
		words = append(words, Fields(string(m[1]))...)
	}
	if strings.Join(words, " ") != "LA NAISSANCE, LA CONSERVATION DU MONDE DESPOTISM PRAGUE- BRNO" {
		t.Errorf("written words %q", words)
	}
}

// TestSourceOCRDescriptionsRemoved: in a translated block, a String's
// ALTERNATIVE readings, Glyph elements and CC confidences, which describe the
// source word, go (before, an index reading ALTERNATIVE found the Czech word
// on the English page); in append mode the original block keeps them and
// its copy has none; nothing else changes.
func TestSourceOCRDescriptionsRemoved(t *testing.T) {
	src := []byte(`<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="P1"><PrintSpace>
<TextBlock ID="B1"><TextLine ID="L1"><String CONTENT="hrob" WC="0.9" CC="0 1 0 2">
  <ALTERNATIVE PURPOSE="OCR">hrab</ALTERNATIVE>
  <Glyph CONTENT="h" HPOS="1"><Variant CONTENT="b" VC="0.1"/></Glyph><Glyph CONTENT="r"/>
</String><SP/><String CONTENT="jáma"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`)
	res, err := Translate(context.Background(), src, Options{Backend: upper(), Source: "cs", Target: "en", File: "g"})
	if err != nil {
		t.Fatal(err)
	}
	want := `<TextBlock ID="B1"><TextLine ID="L1"><String CONTENT="HROB" WC="0.9">
  
  
</String><SP/><String CONTENT="JÁMA"/></TextLine></TextBlock>`
	if !bytes.Contains(res.Output, []byte(want)) {
		t.Errorf("got\n%s\nwant the block\n%s", res.Output, want)
	}
	if !bytes.Equal(MaskTranslatable(res.Output), MaskTranslatable(src)) {
		t.Errorf("more than what MaskTranslatable masks changed:\n%s", res.Output)
	}
	// Append: the original block keeps them, its translated copy has none.
	res, err = Translate(context.Background(), src, Options{Backend: upper(), Source: "cs", Target: "en", Mode: Append, File: "g"})
	if err != nil {
		t.Fatal(err)
	}
	orig, cp, _ := bytes.Cut(res.Output, []byte(`<TextBlock ID="B1_en"`))
	if !bytes.Contains(orig, []byte(`<ALTERNATIVE PURPOSE="OCR">hrab</ALTERNATIVE>`)) || !bytes.Contains(orig, []byte(`CC="0 1 0 2"`)) {
		t.Errorf("append changed the original block:\n%s", res.Output)
	}
	if bytes.Contains(cp, []byte("ALTERNATIVE")) || bytes.Contains(cp, []byte("Glyph")) || bytes.Contains(cp, []byte("CC=")) {
		t.Errorf("append copy keeps source OCR descriptions:\n%s", res.Output)
	}
}
