package translator

import (
	"context"
	"strings"
	"testing"

	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/transport"
	"archivekit/internal/translate/vocab"
)

// TestVocabularyOnlyForItsLanguage: the Czech vocabulary does not turn the
// German "man" into "Isle of Man"; it is skipped for German text with one
// warning, and still applies to Czech text.
func TestVocabularyOnlyForItsLanguage(t *testing.T) {
	csv := "# source_lang=cs\nsource_lemma,target_translation\nman,Isle of Man\nlinie,linear feature\nkostel,church\n"
	v, err := vocab.Parse(strings.NewReader(csv), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	if v.Lang != "cs" || !v.LangDeclared {
		t.Fatalf("declared language %q (%v)", v.Lang, v.LangDeclared)
	}
	page := func(words ...string) []byte {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace>`)
		for i, w := range words {
			b.WriteString(`<TextBlock ID="b` + string(rune('a'+i)) + `"><TextLine><String CONTENT="` + w + `"/></TextLine></TextBlock>`)
		}
		b.WriteString("</PrintSpace></Page></Layout></alto>\n")
		return []byte(b.String())
	}
	lem := lemmatizertest.New(nil, "czech-pdt-ud-2.15-241121", "german-gsd-ud-2.15-241121")
	defer lem.Close()
	lc := lemmatizer.New(lem.URL, transport.New(transport.Policy{}, nil))
	for _, c := range []struct {
		src, text  string
		want, not  string
		warnings   int
		protection bool
	}{
		{"de", "man sieht die Linie man", "MAN", "Isle", 1, false},
		{"cs", "kostel man", "church", "", 0, true},
	} {
		be, _ := newMT(t, translatortest.Config{})
		var warned []string
		out, err := Translate(context.Background(), page(c.text, c.text), "p.alto.xml", Options{Backend: be, Source: c.src, Target: "en",
			Vocabulary: v, Lemmatizer: lc, FastAlign: true, Warn: func(m string) { warned = append(warned, m) }})
		if err != nil {
			t.Fatal(err)
		}
		got := string(out.Data)
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("%s: output %q should have %q and not %q", c.src, got, c.want, c.not)
		}
		n := 0
		for _, w := range warned {
			if strings.Contains(w, "is for cs source text") {
				n++
			}
		}
		if n != c.warnings {
			t.Errorf("%s: %d language warnings, want %d: %v", c.src, n, c.warnings, warned)
		}
		if (out.Stats.ProtectedTerms > 0) != c.protection {
			t.Errorf("%s: %d protected terms", c.src, out.Stats.ProtectedTerms)
		}
	}
	// A vocabulary that declares nothing is taken as Czech.
	u, _ := vocab.Parse(strings.NewReader("source_lemma,target_translation\nkostel,church\n"), "u.csv")
	if u.Lang != vocab.DefaultLang || u.LangDeclared {
		t.Errorf("undeclared vocabulary language %q (%v)", u.Lang, u.LangDeclared)
	}
}
