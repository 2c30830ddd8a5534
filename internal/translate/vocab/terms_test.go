package vocab

import (
	"context"
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
