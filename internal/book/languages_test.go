package book

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// A METS file whose MODS record is a file of its own (dmdSec mdRef
// MDTYPE="MODS", as some digitisation workflows write it) declares the
// record's languages, when the reader lists text files; a classifier's
// reader (TextNone) does not read it. A record that cannot be read is a
// problem of the book, which is still read.
func TestMETSReferencedLanguages(t *testing.T) {
	dir := t.TempDir()
	mets := func(name, href string) string {
		p := filepath.Join(dir, name)
		doc := `<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
 <mets:dmdSec ID="dmd1"><mets:mdRef LOCTYPE="URL" MDTYPE="OTHER" OTHERMDTYPE="MARCXML" xlink:type="simple" xlink:href="marc.xml"/></mets:dmdSec>
 <mets:dmdSec ID="dmd2"><mets:mdRef LOCTYPE="URL" MDTYPE="MODS" xlink:type="simple" xlink:href="` + href + `"/></mets:dmdSec>
 <mets:fileSec><mets:fileGrp USE="MASTER"><mets:file ID="IMG1" MIMETYPE="image/tiff"><mets:FLocat LOCTYPE="URL" xlink:href="1.tif"/></mets:file></mets:fileGrp>
 <mets:fileGrp USE="FULLTEXT"><mets:file ID="TXT1" MIMETYPE="text/xml"><mets:FLocat LOCTYPE="URL" xlink:href="1.xml"/></mets:file></mets:fileGrp></mets:fileSec>
 <mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence"><mets:div ID="p1" TYPE="page" ORDER="1"><mets:fptr FILEID="IMG1"/><mets:fptr FILEID="TXT1"/></mets:div></mets:div></mets:structMap>
</mets:mets>`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mods := `<mods xmlns="http://www.loc.gov/mods/v3"><titleInfo><title>Ein Buch</title></titleInfo>` +
		`<language><languageTerm authority="iso639-2b" type="code">ger</languageTerm></language></mods>`
	if err := os.WriteFile(filepath.Join(dir, "mods.xml"), []byte(mods), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "marc.xml"), []byte(`<record><datafield tag="041"><subfield code="a">fre</subfield></datafield></record>`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, href string
		text       TextMode
		want       []string
		problem    string
	}{
		{"referenced", "mods.xml", TextDeclared, []string{"ger"}, ""},
		{"classifier", "mods.xml", TextNone, nil, ""},
		{"missing", "gone.xml", TextDeclared, nil, "gone.xml: its MODS record (dmdSec mdRef) cannot be read"},
	} {
		b, err := Read(context.Background(), mets(tc.name+".xml", tc.href), Options{Text: tc.text})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var problems []string
		for _, p := range b.Problems {
			problems = append(problems, p.String())
		}
		found := tc.problem != "" && slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.problem) })
		if !slices.Equal(b.Languages, tc.want) || found != (tc.problem != "") {
			t.Errorf("%s: languages %q, problems %q; want %q and a problem %q", tc.name, b.Languages, problems, tc.want, tc.problem)
		}
	}
}

// A METS file without a MODS language declares those of its Dublin Core
// record (dc:language) or MARCXML record (field 008's language, then 041
// $a, several codes run together split) written inside it.
func TestMETSOtherRecordLanguages(t *testing.T) {
	page := ` <mets:fileSec><mets:fileGrp USE="MASTER"><mets:file ID="IMG1" MIMETYPE="image/tiff"><mets:FLocat LOCTYPE="URL" xlink:href="1.tif"/></mets:file></mets:fileGrp></mets:fileSec>
 <mets:structMap TYPE="PHYSICAL"><mets:div TYPE="physSequence"><mets:div ID="p1" TYPE="page" ORDER="1"><mets:fptr FILEID="IMG1"/></mets:div></mets:div></mets:structMap>`
	for _, tc := range []struct {
		name, dmd string
		want      []string
	}{
		{"dc", `<mets:mdWrap MDTYPE="DC"><mets:xmlData><oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/">` +
			`<dc:title>Ein Buch</dc:title><dc:language>deu</dc:language></oai_dc:dc></mets:xmlData></mets:mdWrap>`, []string{"deu"}},
		{"marc", `<mets:mdWrap MDTYPE="MARC"><mets:xmlData><marc:record xmlns:marc="http://www.loc.gov/MARC21/slim">` +
			`<marc:controlfield tag="008">850101s1850    gw            000 0 ger d</marc:controlfield>` +
			`<marc:datafield tag="041" ind1="1" ind2=" "><marc:subfield code="a">gerlat</marc:subfield><marc:subfield code="h">lat</marc:subfield></marc:datafield>` +
			`</marc:record></mets:xmlData></mets:mdWrap>`, []string{"ger", "lat"}},
		{"mods first", `<mets:mdWrap MDTYPE="MODS"><mets:xmlData><mods:mods xmlns:mods="http://www.loc.gov/mods/v3"><mods:language><mods:languageTerm>ita</mods:languageTerm></mods:language></mods:mods></mets:xmlData></mets:mdWrap>` +
			`</mets:dmdSec><mets:dmdSec ID="dmd2"><mets:mdWrap MDTYPE="DC"><mets:xmlData><oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:language>deu</dc:language></oai_dc:dc></mets:xmlData></mets:mdWrap>`, []string{"ita"}},
	} {
		p := filepath.Join(t.TempDir(), "mets.xml")
		doc := `<?xml version="1.0" encoding="UTF-8"?>
<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink">
 <mets:dmdSec ID="dmd1">` + tc.dmd + `</mets:dmdSec>
` + page + `
</mets:mets>`
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := Read(context.Background(), p, Options{Text: TextNone})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(b.Languages, tc.want) {
			t.Errorf("%s: languages %q, want %q", tc.name, b.Languages, tc.want)
		}
	}
}
