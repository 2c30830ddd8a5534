package vocab

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/transport"
)

func TestFill(t *testing.T) {
	v, err := Parse(strings.NewReader(smallVocab), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	srv := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	t.Cleanup(srv.Close)
	lem := lemmatizer.New(srv.URL, transport.New(transport.Policy{}, nil))
	ctx := context.Background()
	for _, tt := range []struct {
		text  string
		lem   bool
		want  string
		ok    bool
		lemma bool
	}{
		{"hrob", false, "grave", true, false},
		{"Hrob.", false, "Grave.", true, false},
		{"  zlomek   Keramiky ", false, "  pottery sherd ", true, false},
		{"doba bronzová", false, "Bronze Age", true, false},
		{"hrobu", false, "", false, false},               // inflected: needs the lemmatiser
		{"hrobu", true, "grave", true, true},             // singular locative -> lemma hrob
		{"hroby", true, "", false, true},                 // plural: left to the model
		{"kostrový hrob v jámě", true, "", false, false}, // more than two words
		{"jáma hrob", false, "", false, false},           // two words that are no entry
		{"", false, "", false, false},
	} {
		var l Lemmatizer
		if tt.lem {
			l = lem
		}
		got, used, ok := v.Fill(ctx, tt.text, "cs", l)
		if got != tt.want || ok != tt.ok || used != tt.lemma {
			t.Errorf("Fill(%q, lemmatiser %v) = %q, %v, %v; want %q, %v, %v", tt.text, tt.lem, got, used, ok, tt.want, tt.lemma, tt.ok)
		}
	}
}

func TestCheckTerms(t *testing.T) {
	v, err := Parse(strings.NewReader(smallVocab), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	c := v.CheckTerms("Kostrový hrob a zlomek keramiky v jámě", "An inhumation grave and a pottery fragment in the pit")
	// expected: kostrový hrob, zlomek keramiky, hrob (jámě is inflected: not a surface match)
	if c.Expected != 3 || c.Hit != 2 || len(c.Missed) != 1 || c.Missed[0] != "zlomek keramiky = pottery sherd" {
		t.Fatalf("%+v", c)
	}
	if c := v.CheckTerms("", "x"); c.Expected != 0 {
		t.Fatalf("%+v", c)
	}
}

// TestLemmaLines: the lines Fill and Protect will ask the lemmatiser
// about: short segments that are no entry as they stand (their core,
// without the punctuation around it), and every line of every segment,
// each once, in order of first use.
func TestLemmaLines(t *testing.T) {
	v, err := Parse(strings.NewReader("source_lemma,target_translation\nhrob,grave\nkostrový hrob,inhumation grave\n"), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	segs := []string{"(Hroby.)", "Kostrový hrob", "V jámě byly hroby\nu cesty", "(Hroby.)", "tři slova zde", " "}
	for _, c := range []struct {
		fill, protect bool
		want          []string
	}{
		{true, true, []string{"Hroby", "(Hroby.)", "Kostrový hrob", "V jámě byly hroby", "u cesty", "tři slova zde"}},
		{true, false, []string{"Hroby"}},
		{false, true, []string{"(Hroby.)", "Kostrový hrob", "V jámě byly hroby", "u cesty", "tři slova zde"}},
		{false, false, nil},
	} {
		if got := v.LemmaLines(segs, c.fill, c.protect); !reflect.DeepEqual(got, c.want) {
			t.Errorf("fill %v protect %v: %q, want %q", c.fill, c.protect, got, c.want)
		}
	}
	phrases, _ := Parse(strings.NewReader("source_lemma,target_translation\nkostrový hrob,inhumation grave\n"), "p.csv")
	if got := phrases.LemmaLines(segs, false, true); got != nil {
		t.Errorf("a vocabulary without single words asks about %q", got)
	}
}
