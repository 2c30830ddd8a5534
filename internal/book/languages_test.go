package book

import (
	"context"
	"slices"
	"testing"
)

// The languages a METS file's MODS declares (language/languageTerm inside
// its dmdSecs), as written, from producers' files.
func TestMETSLanguages(t *testing.T) {
	cases := map[string][]string{
		"testdata/mets/goobi-hu-BV048249088.xml":                 {"ger"},
		"testdata/mets/goobi-ulb-74241.xml":                      {"ita"},
		"testdata/mets/europeana-18140402_1/18140402_1-METS.xml": {"French", "fr"},
	}
	for path, want := range cases {
		b, err := Read(context.Background(), path, Options{Text: TextNone})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Logf("%s: %q", path, b.Languages)
		if want != nil && !slices.Equal(b.Languages[:min(len(want), len(b.Languages))], want) {
			t.Errorf("%s: languages %q, want %q first", path, b.Languages, want)
		}
	}
}
