package alto

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/translate/guard"
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

// hyphenDoc is an ALTO page whose TextBlocks hold the given TextLines.
func hyphenDoc(blocks ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Layout><Page ID="P1"><PrintSpace>
`)
	for i, lines := range blocks {
		fmt.Fprintf(&b, "<TextBlock ID=\"B%d\">\n%s\n</TextBlock>\n", i+1, lines)
	}
	b.WriteString("</PrintSpace></Page></Layout></alto>\n")
	return []byte(b.String())
}

// TestHyphenSplitWordsJoined: a word whose hyphen is a String of its own,
// and a word hyphenated across two TextBlocks, reach the backend whole,
// once; the whole word's translation is written where the first part was,
// the Strings that held the hyphen and the second part are emptied (their
// boxes stay), and nothing outside the CONTENT values (and the joined
// pairs' HYP and SUBS_*) changes. Before, the backend saw "Be -" /
// "drükkung" and "ver-" / "ſprochene" as separate words.
func TestHyphenSplitWordsJoined(t *testing.T) {
	const next = `<TextLine ID="L2"><String ID="s3" CONTENT="drükkung" HPOS="1"/><SP/><String ID="s4" CONTENT="kam" HPOS="9"/></TextLine>`
	for _, c := range []struct {
		name   string
		src    []byte
		whole  string   // the joined word the backend must see once
		split  []string // what it must never see
		writes []string // the output's Strings
	}{
		{"hyphen String", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="die" HPOS="1"/><SP/><String ID="s2" CONTENT="Be" HPOS="5"/><String ID="h" CONTENT="-" HPOS="9"/></TextLine>
` + next), "Bedrükkung", []string{"Be -", "Be\n", "Be-"},
			[]string{`<String ID="s2" CONTENT="BEDRÜKKUNG" HPOS="5"/><String ID="h" CONTENT="" HPOS="9"/>`, `<String ID="s3" CONTENT="" HPOS="1"/><SP/><String ID="s4" CONTENT="KAM" HPOS="9"/>`}},
		{"not sign String", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="die" HPOS="1"/><SP/><String ID="s2" CONTENT="Be" HPOS="5"/><String ID="h" CONTENT="¬" HPOS="9"/></TextLine>
` + next), "Bedrükkung", []string{"Be ¬", "Be¬"},
			[]string{`<String ID="s2" CONTENT="BEDRÜKKUNG" HPOS="5"/><String ID="h" CONTENT="" HPOS="9"/>`}},
		{"double oblique hyphen String, HYP", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="die" HPOS="1"/><SP/><String ID="s2" CONTENT="Be" HPOS="5"/><String ID="h" CONTENT="⸗" HPOS="9"/><HYP CONTENT="⸗"/></TextLine>
` + next), "Bedrükkung", []string{"Be ⸗", "Be⸗", "⸗drükkung"},
			[]string{`<String ID="s2" CONTENT="BEDRÜKKUNG" HPOS="5"/><String ID="h" CONTENT="" HPOS="9"/></TextLine>`}},
		{"hyphen String, marked parts", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="die" HPOS="1"/><SP/><String ID="s2" CONTENT="Be" HPOS="5" SUBS_TYPE="HypPart1" SUBS_CONTENT="Bedrükkung"/><String ID="h" CONTENT="=" HPOS="9"/></TextLine>
<TextLine ID="L2"><String ID="s3" CONTENT="Drükkung" HPOS="1" SUBS_TYPE="HypPart2" SUBS_CONTENT="Bedrükkung"/><SP/><String ID="s4" CONTENT="kam" HPOS="9"/></TextLine>`), "BeDrükkung", []string{"Be =", "Be="},
			[]string{`<String ID="s2" CONTENT="BEDRÜKKUNG" HPOS="5"/><String ID="h" CONTENT="" HPOS="9"/>`, `<String ID="s3" CONTENT="" HPOS="1"/>`}},
		{"across blocks, unmarked", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="das" HPOS="1"/><SP/><String ID="s2" CONTENT="ver-" HPOS="5"/></TextLine>`,
			`<TextLine ID="L2"><String ID="s3" CONTENT="ſprochene" HPOS="1"/><SP/><String ID="s4" CONTENT="Buch" HPOS="9"/></TextLine>`),
			"verſprochene", []string{"ver-", "\nſprochene", "ſprochene Buch"},
			[]string{`<String ID="s2" CONTENT="VERSPROCHENE" HPOS="5"/>`, `<String ID="s3" CONTENT="" HPOS="1"/><SP/><String ID="s4" CONTENT="BUCH" HPOS="9"/>`}},
		{"across blocks, HYP and SUBS_*", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="das" HPOS="1"/><SP/><String ID="s2" CONTENT="ver" HPOS="5" SUBS_TYPE="HypPart1" SUBS_CONTENT="verſprochene"/><HYP CONTENT="-"/></TextLine>`,
			`<TextLine ID="L2"><String ID="s3" CONTENT="ſprochene" HPOS="1" SUBS_TYPE="HypPart2" SUBS_CONTENT="verſprochene"/><SP/><String ID="s4" CONTENT="Buch" HPOS="9"/></TextLine>`),
			"verſprochene", []string{"ver\n", "ver ", "\nſprochene"},
			[]string{`<String ID="s2" CONTENT="VERSPROCHENE" HPOS="5"/></TextLine>`, `<String ID="s3" CONTENT="" HPOS="1"/><SP/><String ID="s4" CONTENT="BUCH" HPOS="9"/>`}},
		{"across blocks, hyphen String", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="die" HPOS="1"/><SP/><String ID="s2" CONTENT="Be" HPOS="5"/><String ID="h" CONTENT="-" HPOS="9"/></TextLine>`, next),
			"Bedrükkung", []string{"Be -", "Be\n", "\ndrükkung"},
			[]string{`<String ID="s2" CONTENT="BEDRÜKKUNG" HPOS="5"/><String ID="h" CONTENT="" HPOS="9"/>`, `<String ID="s3" CONTENT="" HPOS="1"/><SP/><String ID="s4" CONTENT="KAM" HPOS="9"/>`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, fast := range []bool{true, false} {
				be := upper()
				res, err := Translate(context.Background(), c.src, Options{Backend: be, Source: "de", Target: "en", File: "h", FastAlign: fast})
				if err != nil {
					t.Fatal(err)
				}
				calls := strings.Join(be.calls, "\n")
				if n := strings.Count(calls, c.whole); fast && n != 1 {
					t.Errorf("the backend saw %q %d times, want once:\n%s", c.whole, n, calls)
				}
				for _, bad := range c.split {
					if strings.Contains(calls, bad) {
						t.Errorf("the backend saw the split word %q:\n%s", bad, calls)
					}
				}
				for _, want := range c.writes {
					if !bytes.Contains(res.Output, []byte(want)) {
						t.Errorf("fast=%v: output lacks\n%s\nin\n%s", fast, want, res.Output)
					}
				}
				if !bytes.Equal(MaskTranslatable(res.Output), MaskTranslatable(c.src)) {
					t.Errorf("more than what MaskTranslatable masks changed:\n%s", res.Output)
				}
				if bytes.Contains(res.Output, []byte("SUBS_")) || bytes.Contains(res.Output, []byte("<HYP")) {
					t.Errorf("SUBS_* or HYP left after a joined pair:\n%s", res.Output)
				}
			}
		})
	}
}

// TestHyphenLookalikesKept: what is not a hyphenated word stays as it was,
// byte for byte what the translator wrote before these joins: a dash
// String after an SP (the shared sample's "Pueblo -" at a line end), a
// hyphen String before a capitalised line, a block whose only word would
// be the second part, unmarked (hyphenlone_test.go), and KeepHyphens.
func TestHyphenLookalikesKept(t *testing.T) {
	for _, c := range []struct {
		name string
		src  []byte
		keep bool
		sees []string // what the backend must see
		want string   // the output's first block
	}{
		{"dash after SP", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="Pueblo" HPOS="1"/><SP/><String ID="h" CONTENT="-" HPOS="9"/></TextLine>
<TextLine ID="L2"><String ID="s3" CONTENT="archeologická" HPOS="1"/><SP/><String ID="s4" CONTENT="společnost" HPOS="9"/></TextLine>`), false,
			[]string{"Pueblo - archeologická společnost"},
			`<TextLine ID="L1"><String ID="s1" CONTENT="PUEBLO" HPOS="1"/><SP/><String ID="h" CONTENT="-" HPOS="9"/></TextLine>
<TextLine ID="L2"><String ID="s3" CONTENT="ARCHEOLOGICKÁ" HPOS="1"/><SP/><String ID="s4" CONTENT="SPOLEČNOST" HPOS="9"/></TextLine>`},
		{"hyphen String before a capital", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="Prag" HPOS="1"/><String ID="h" CONTENT="-" HPOS="9"/></TextLine>
<TextLine ID="L2"><String ID="s3" CONTENT="Brünn" HPOS="1"/></TextLine>`), false,
			[]string{"Prag - Brünn"},
			`<TextLine ID="L1"><String ID="s1" CONTENT="PRAG" HPOS="1"/><String ID="h" CONTENT="-" HPOS="9"/></TextLine>
<TextLine ID="L2"><String ID="s3" CONTENT="BRÜNN" HPOS="1"/></TextLine>`},
		{"second block would be empty", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="das" HPOS="1"/><SP/><String ID="s2" CONTENT="ver-" HPOS="5"/></TextLine>`,
			`<TextLine ID="L2"><String ID="s3" CONTENT="ſprochene." HPOS="1"/></TextLine>`), false,
			[]string{"das ver-", "ſprochene."},
			`<TextLine ID="L1"><String ID="s1" CONTENT="DAS" HPOS="1"/><SP/><String ID="s2" CONTENT="VER-" HPOS="5"/></TextLine>`},
		{"KeepHyphens", hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="die" HPOS="1"/><SP/><String ID="s2" CONTENT="Be" HPOS="5"/><String ID="h" CONTENT="-" HPOS="9"/></TextLine>`,
			`<TextLine ID="L2"><String ID="s3" CONTENT="drükkung" HPOS="1"/><SP/><String ID="s4" CONTENT="kam" HPOS="9"/></TextLine>`), true,
			[]string{"die Be -", "drükkung kam"},
			`<TextLine ID="L1"><String ID="s1" CONTENT="DIE" HPOS="1"/><SP/><String ID="s2" CONTENT="BE" HPOS="5"/><String ID="h" CONTENT="-" HPOS="9"/></TextLine>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			be := upper()
			res, err := Translate(context.Background(), c.src, Options{Backend: be, Source: "de", Target: "en", File: "h", FastAlign: true, KeepHyphens: c.keep})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.sees {
				if !strings.Contains(strings.Join(be.calls, "\n"), s) {
					t.Errorf("the backend never saw %q: %q", s, be.calls)
				}
			}
			if !bytes.Contains(res.Output, []byte(c.want)) {
				t.Errorf("got\n%s\nwant the block\n%s", res.Output, c.want)
			}
			if !bytes.Equal(MaskTranslatable(res.Output), MaskTranslatable(c.src)) {
				t.Errorf("more than what MaskTranslatable masks changed:\n%s", res.Output)
			}
		})
	}
}

// TestHyphenAcrossBlocksPartial: the second part of a word hyphenated
// across blocks is emptied only where the first block's translation holds
// the whole word. When the guard rejects the first block, it stays as it
// was and the second block's String keeps its source word (before this
// rule it would have been emptied and lost); in append mode the original
// blocks stay as they were and the copies carry the join.
func TestHyphenAcrossBlocksPartial(t *testing.T) {
	src := hyphenDoc(`<TextLine ID="L1"><String ID="s1" CONTENT="nein" HPOS="1"/><SP/><String ID="s2" CONTENT="ver-" HPOS="5"/></TextLine>`,
		`<TextLine ID="L2"><String ID="s3" CONTENT="ſprochene" HPOS="1"/><SP/><String ID="s4" CONTENT="Buch" HPOS="9"/></TextLine>`)
	res, err := Translate(context.Background(), src, Options{Backend: rejecting{upper()}, Source: "de", Target: "en", File: "h", FastAlign: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<String ID="s1" CONTENT="nein" HPOS="1"/><SP/><String ID="s2" CONTENT="ver-" HPOS="5"/>`,
		`<String ID="s3" CONTENT="ſprochene" HPOS="1"/><SP/><String ID="s4" CONTENT="BUCH" HPOS="9"/>`,
	} {
		if !bytes.Contains(res.Output, []byte(want)) {
			t.Errorf("first block rejected: output lacks\n%s\nin\n%s", want, res.Output)
		}
	}
	if res.Stats.Untranslated != 1 || res.Stats.Translated != 1 {
		t.Errorf("stats %+v, want one block translated, one untranslated", res.Stats)
	}

	res, err = Translate(context.Background(), src, Options{Backend: upper(), Source: "de", Target: "en", Mode: Append, File: "h", FastAlign: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`<TextBlock ID="B1" LANG="de">
<TextLine ID="L1"><String ID="s1" CONTENT="nein" HPOS="1"/><SP/><String ID="s2" CONTENT="ver-" HPOS="5"/></TextLine>
</TextBlock>
<TextBlock ID="B1_en" LANG="en">
<TextLine ID="L1_en"><String ID="s1_en" CONTENT="NEIN" HPOS="1"/><SP/><String ID="s2_en" CONTENT="VERSPROCHENE" HPOS="5"/></TextLine>
</TextBlock>`,
		`<TextBlock ID="B2" LANG="de">
<TextLine ID="L2"><String ID="s3" CONTENT="ſprochene" HPOS="1"/><SP/><String ID="s4" CONTENT="Buch" HPOS="9"/></TextLine>
</TextBlock>
<TextBlock ID="B2_en" LANG="en">
<TextLine ID="L2_en"><String ID="s3_en" CONTENT="" HPOS="1"/><SP/><String ID="s4_en" CONTENT="BUCH" HPOS="9"/></TextLine>
</TextBlock>`,
	} {
		if !bytes.Contains(res.Output, []byte(want)) {
			t.Errorf("append: output lacks\n%s\nin\n%s", want, res.Output)
		}
	}
}

// rejecting is a backend whose guard rejects every line holding "nein"
// (its reply is the upper-cased text, as upper's).
type rejecting struct{ *fake }

func (r rejecting) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	out, _ := r.fake.Translate(ctx, text, src, tgt)
	var bad []int
	for i, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "nein") {
			bad = append(bad, i)
		}
	}
	if bad == nil {
		return out, nil
	}
	if !strings.Contains(text, "\n") {
		bad = nil // a single reply is rejected whole
	}
	return "", &guard.Rejection{Reason: guard.Empty, Lines: bad, Output: out}
}

// TestHyphenSplitWordsReal: real files with these splits. OCR-D's ground
// truth of Kant's "Aufklärung" (ALTO 2, two pages) writes the hyphen as a
// String of its own ("Men" "-" / "ſchen", "Unmuͤn" "-" / "digkeit"), dinglehopper's
// ALTO 3 sample one block a line ("das ver-" / "ſprochene zu"): the
// backend sees the whole words and never their parts, and only what
// MaskTranslatable masks changes.
func TestHyphenSplitWordsReal(t *testing.T) {
	for _, c := range []struct {
		path         string
		whole, split []string
	}{
		{"../../book/testdata/mets/ocrd-kant/OCR-D-GT-ALTO/PAGE_0017_ALTO.xml",
			[]string{"Menſchen", "Unmuͤndigkeit .", "Unmuͤndigkeit ,", "Mangel", "alſo"},
			[]string{"Men -", "Unmuͤn -", "Man -", "al -", "\nſchen", "\ndigkeit", "\ngel"}},
		// The example of issue 12, "Be" "-" / "druͤkkung"; the catchword
		// "Stan" "-" ending the page has nothing after it and stays.
		{"../../book/testdata/mets/ocrd-kant/OCR-D-GT-ALTO/PAGE_0020_ALTO.xml",
			[]string{"Bedruͤkkung", "Denkungsart", "Vorgaͤnger", "Offizier", "Stan -"},
			[]string{"Be -", "Den -", "Vor -", "Offi -", "Frei -", "Aufklaͤ -"}},
		{"../../../testdata/realworld/v3_minimal.alto.xml",
			[]string{"das verſprochene\nzu überliefern."},
			[]string{"ver-", "ſprochene zu"}},
	} {
		t.Run(filepath.Base(c.path), func(t *testing.T) {
			src, err := os.ReadFile(c.path)
			if err != nil {
				t.Fatal(err)
			}
			be := upper()
			res, err := Translate(context.Background(), src, Options{Backend: be, Source: "de", Target: "en", File: "h", FastAlign: true})
			if err != nil {
				t.Fatal(err)
			}
			calls := strings.Join(be.calls, "\n")
			for _, w := range c.whole {
				if !strings.Contains(calls, w) {
					t.Errorf("the backend never saw %q:\n%s", w, calls)
				}
			}
			for _, w := range c.split {
				if strings.Contains(calls, w) {
					t.Errorf("the backend saw the split word %q:\n%s", w, calls)
				}
			}
			if !bytes.Equal(MaskTranslatable(res.Output), MaskTranslatable(src)) {
				t.Errorf("more than what MaskTranslatable masks changed")
			}
		})
	}
}
