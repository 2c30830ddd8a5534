package translator

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chat"
	"archivekit/internal/translate/chat/chattest"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/vocab"
)

const termsRecord = translatortest.TermsRecord

// TestShortFieldsFromVocabulary: one- and two-word fields that are
// vocabulary entries are filled without a backend call, on every backend;
// the terminology of the document is checked and counted.
func TestShortFieldsFromVocabulary(t *testing.T) {
	v, err := vocab.Parse(strings.NewReader("source_lemma,target_translation\nhrob,grave\nkostrový hrob,inhumation grave\nsídlištní jáma,settlement pit\n"), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	fields, _ := metadata.ParseFields("fields", []byte("//arch:popis\n//arch:poznamka\n//arch:lokalizace\n"))
	mt, mtSrv := newMT(t, translatortest.Config{})
	chatSrv := chattest.New(chattest.Config{})
	t.Cleanup(chatSrv.Close)
	ch, _ := chat.New(chat.Config{BaseURL: chatSrv.BaseURL(), Model: "m"})
	plain := &plainBackend{}
	for _, tc := range []struct {
		be    backend.Backend
		posts func() int32
		hits  int
	}{{mt, mtSrv.Posts.Load, 5}, {ch, chatSrv.Posts.Load, 5}, {plain, plain.calls.Load, 4}} {
		t.Run(tc.be.Name(), func(t *testing.T) {
			before := tc.posts()
			out, err := Translate(context.Background(), []byte(termsRecord), "t.xml", Options{Backend: tc.be, Source: "cs", Fields: fields, Vocabulary: v})
			if err != nil {
				t.Fatal(err)
			}
			if n := tc.posts() - before; n != 1 {
				t.Errorf("%d backend requests, want 1 (only the long field)", n)
			}
			want := map[string][2]string{
				"//arch:popis":      {"Inhumation grave", string(backend.Vocabulary)},
				"//arch:lokalizace": {"Grave", string(backend.Vocabulary)},
			}
			for _, r := range out.Log {
				if w, ok := want[r.Line]; ok && (r.Target != w[0] || string(r.Status) != w[1]) {
					t.Errorf("%s: %q (%s), want %q (%s)", r.Line, r.Target, r.Status, w[0], w[1])
				}
			}
			if !strings.Contains(string(out.Data), "<amcr:popis>Inhumation grave</amcr:popis>") {
				t.Errorf("output:\n%s", out.Data)
			}
			// Terms expected: popis 2 (kostrový hrob, hrob), poznamka 2
			// (kostrový hrob, hrob; "sídlištní jámu" is inflected), lokalizace 1.
			// The plain backend has no vocabulary control: in the long field
			// "kostrový hrob" is missed (the stand-in knows only "hrob"), and the check says so.
			if !out.TermsChecked || out.Terms.Expected != 5 || out.Terms.Hit != tc.hits {
				t.Errorf("terminology %+v", out.Terms)
			}
			t.Logf("%s: terminology %d/%d, missed %v", tc.be.Name(), out.Terms.Hit, out.Terms.Expected, out.Terms.Missed)
		})
	}
}

// plainBackend translates by the stand-in's rules, with no vocabulary
// control at all.
type plainBackend struct{ calls atomic.Int32 }

func (p *plainBackend) Name() string                                   { return "plain" }
func (p *plainBackend) Supports(context.Context, string, string) error { return nil }
func (p *plainBackend) Close() error                                   { return nil }
func (p *plainBackend) Translate(_ context.Context, text, _, _ string) (string, error) {
	p.calls.Add(1)
	return translatortest.Translate(text), nil
}

// A vocabulary of another language than the document's is not applied,
// and then none of its terms is expected: no terminology check, no
// "missing" warning. Before, a German run listed the Czech vocabulary's
// terms found in its (Czech-looking) text as expected and missed.
func TestTermsOnlyOfAnAppliedVocabulary(t *testing.T) {
	v, err := vocab.Parse(strings.NewReader("source_lemma,target_translation\nhrob,grave\nkostrový hrob,inhumation grave\n"), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	fields, _ := metadata.ParseFields("fields", []byte("//arch:popis\n//arch:poznamka\n//arch:lokalizace\n"))
	mt, _ := newMT(t, translatortest.Config{})
	for _, c := range []struct {
		src     string
		checked bool
	}{{"cs", true}, {"de", false}} {
		out, err := Translate(context.Background(), []byte(termsRecord), "t.xml", Options{Backend: mt, Source: c.src, Fields: fields, Vocabulary: v})
		if err != nil {
			t.Fatal(err)
		}
		if out.TermsChecked != c.checked || (!c.checked && out.Terms.Expected != 0) {
			t.Errorf("-src %s: checked %v, terms %+v", c.src, out.TermsChecked, out.Terms)
		}
		for _, w := range out.Warnings {
			if !c.checked && strings.Contains(w, "terminology") {
				t.Errorf("-src %s: %s", c.src, w)
			}
		}
	}
}

// In a document of several languages the vocabulary applies to the units
// in its own language only, and only their terms are expected in the
// translation: a German block that quotes a Czech vocabulary term is
// translated without the vocabulary, so the term's English is not
// missing from it. Before, the check expected every vocabulary term
// found in any unit once the vocabulary was applied to one of them.
func TestTermsOnlyOfItsLanguageUnits(t *testing.T) {
	v, err := vocab.Parse(strings.NewReader("source_lemma,target_translation\nhrobka,tomb\n"), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	v.Lang = "cs"
	block := func(id, lang, text string) string {
		var strs []string
		for i, w := range strings.Fields(text) {
			strs = append(strs, fmt.Sprintf(`<String ID="%s_%d" CONTENT="%s"/>`, id, i, w))
		}
		return fmt.Sprintf(`<TextBlock ID="%s" LANG="%s"><TextLine ID="%s_l">%s</TextLine></TextBlock>`, id, lang, id, strings.Join(strs, "<SP/>"))
	}
	doc := `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="P1" PHYSICAL_IMG_NR="1"><PrintSpace>` +
		block("b1", "cs", "hrobka") + `</PrintSpace></Page><Page ID="P2" PHYSICAL_IMG_NR="2"><PrintSpace>` +
		block("b2", "de", "Die hrobka") + `</PrintSpace></Page></Layout></alto>`
	mt, _ := newMT(t, translatortest.Config{})
	out, err := Translate(context.Background(), []byte(doc), "two.xml", Options{Backend: mt, Source: "auto", Vocabulary: v})
	if err != nil {
		t.Fatal(err)
	}
	langs := map[string]bool{}
	for _, r := range out.Log {
		langs[r.Lang] = true
	}
	if !langs["cs"] || !langs["de"] {
		t.Fatalf("units in %v, want cs and de (the blocks' LANG)", langs)
	}
	if !out.TermsChecked || out.Terms.Expected != 1 || out.Terms.Hit != 1 || len(out.Terms.Missed) != 0 {
		t.Errorf("terms %+v (checked %v), want the Czech block's one term expected and hit; log %+v", out.Terms, out.TermsChecked, out.Log)
	}
	for _, w := range out.Warnings {
		if strings.Contains(w, "terminology") {
			t.Error(w)
		}
	}
}
