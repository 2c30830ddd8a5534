package book

import (
	"context"
	"encoding/json"
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

// The languages a IIIF manifest's or collection's metadata declares, from
// published manifests (v2: Mirador's and the EAP text-overlay sample; v3:
// the IIIF cookbook's newspaper), and the label and value forms of both
// versions.
func TestIIIFLanguages(t *testing.T) {
	files := map[string][]string{
		"testdata/iiif/mirador-001.json":                                        {"English"},
		"testdata/iiif/mirador-gau.json":                                        {"Latin"},
		"testdata/iiif/textoverlay-EAP119-1-8-1_issue1.json":                    {"Arabic", "French"},
		"testdata/iiif/cookbook/0068-newspaper/newspaper_issue_1-manifest.json": {"de", "German"},
		"testdata/iiif/albany-bad4b7c7.json":                                    nil,
	}
	for path, want := range files {
		b, err := Read(context.Background(), path, Options{Text: TextNone})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !slices.Equal(b.Languages, want) {
			t.Errorf("%s: languages %q, want %q", path, b.Languages, want)
		}
	}
	for _, tt := range []struct {
		name, metadata string
		want           []string
	}{
		{"v2 plain", `[{"label": "Language", "value": "German"}]`, []string{"German"}},
		{"v2 @value objects", `[{"label": [{"@value": "Sprache", "@language": "de"}], "value": [{"@value": "Deutsch"}, {"@value": "ger"}]}]`, []string{"Deutsch", "ger"}},
		{"v3 none and en first", `[{"label": {"fr": ["Langue"]}, "value": {"fr": ["allemand"], "en": ["German"], "none": ["de"]}}]`, []string{"de", "German", "allemand"}},
		{"semicolons, repeats", `[{"label": "Languages", "value": "Latin; German"}, {"label": "Text language", "value": "German"}]`, []string{"Latin", "German"}},
		{"cataloguing language", `[{"label": "Language of cataloging", "value": "English"}]`, nil},
		{"other labels", `[{"label": "Title", "value": "Language and mind"}, {"label": "Languedoc", "value": "x"}]`, nil},
	} {
		var doc map[string]any
		if err := json.Unmarshal([]byte(`{"metadata": `+tt.metadata+`}`), &doc); err != nil {
			t.Fatal(err)
		}
		if got := metadataLanguages(doc); !slices.Equal(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
