package alto

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/language"
)

// Every language name PAGE-XML's 2019 schema allows for primaryLanguage
// (LanguageSimpleType) is read as its language's code, non-Latin scripts'
// languages (Greek, Georgian, Arabic, ...) too.
func TestElementLangPageNames(t *testing.T) {
	xsd, err := os.ReadFile("../pagexml/testdata/schema/pagecontent-2019-07-15.xsd")
	if err != nil {
		t.Fatal(err)
	}
	s := string(xsd)
	start := strings.Index(s, `name="LanguageSimpleType"`)
	end := strings.Index(s[start:], "</simpleType>")
	if start < 0 || end < 0 {
		t.Fatal("no LanguageSimpleType in the schema")
	}
	names := regexp.MustCompile(`enumeration value="([^"]+)"`).FindAllStringSubmatch(s[start:start+end], -1)
	if len(names) != 188 {
		t.Fatalf("%d names in LanguageSimpleType, want 188", len(names))
	}
	for _, m := range names {
		name := m[1]
		got := ElementLang(name)
		if name == "other" {
			if got != "" {
				t.Errorf("ElementLang(%q) = %q, want none", name, got)
			}
			continue
		}
		if _, err := language.ParseBase(got); err != nil || got == "" || len(got) > 3 {
			t.Errorf("ElementLang(%q) = %q, want an ISO 639 code", name, got)
		}
	}
	for name, want := range map[string]string{
		"Greek": "el", "Georgian": "ka", "Armenian": "hy", "Arabic": "ar", "Hebrew": "he",
		"Ukrainian": "uk", "Russian": "ru", "Czech": "cs", "German": "de", "Abkhaz": "ab", "Zulu": "zu",
		"Old Church Slavonic": "cu", "Cantonese": "yue", "Norwegian": "nb", "Slovene": "sl",
		"Māori": "mi", "maori": "mi", "GUARANI": "gn", "Akan": "ak", "Javanese": "jv",
	} {
		if got := ElementLang(name); got != want {
			t.Errorf("ElementLang(%q) = %q, want %q", name, got, want)
		}
	}
}
