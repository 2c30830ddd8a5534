package langid

import (
	"testing"

	"golang.org/x/text/language"
)

func TestForeignScript(t *testing.T) {
	tests := []struct {
		name, text string
		script     string // "" when not foreign
	}{
		{"Arabic", "كتاب الأغاني لأبي الفرج الأصفهاني", "Arabic"},
		{"Hebrew", "ספר בראשית פרק ראשון", "Hebrew"},
		{"Chinese", "四庫全書總目提要", "Han"},
		{"Japanese, kana most", "これはにほんごのぶんしょうです漢字", "Hiragana"},
		{"Georgian", "ვეფხისტყაოსანი", "Georgian"},
		{"Armenian", "Հայերեն գրականություն", "Armenian"},
		{"Thai", "ภาษาไทยเป็นภาษาราชการ", "Thai"},
		{"Greek", "Η γλώσσα είναι ελληνική", "Greek"},
		{"Czech", "Zpráva o archeologickém výzkumu v Praze", ""},
		{"Russian", "Отчёт об археологических раскопках", ""},
		{"Hindi", "पुरातात्विक उत्खनन की रिपोर्ट", ""},
		{"Latin sentence with an Arabic name", "Letter from Muhammad Ali (محمد علي) to the consul in Cairo, 1840", ""},
		{"half Arabic, half Latin: not more than half", "abcd ابتث", ""},
		{"one Arabic letter more than Latin", "abcd ابتثج", "Arabic"},
		{"Arabic with Latin digits and punctuation", "١٢ 1840 — كتاب الأغاني، ص. 12", "Arabic"},
		{"Arabic and Hebrew together outweigh Latin", "abc אבגד ابت", "Hebrew"},
		{"no letters", "12 — 1840.", ""},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ForeignScript(tc.text)
			if ok != (tc.script != "") || got != tc.script {
				t.Errorf("ForeignScript(%q) = %q, %v; want %q", tc.text, got, ok, tc.script)
			}
		})
	}
}

// The supported scripts are those CLDR's likely subtags give the twenty
// supported languages, and every one of those languages has one.
func TestSupportedScriptsAreTheLanguages(t *testing.T) {
	used := map[string]bool{}
	for _, l := range Languages() {
		found := false
		for _, s := range SupportedScripts {
			if WrittenIn(l, s) {
				used[s], found = true, true
			}
		}
		if !found {
			s, _ := language.Make(l).Script()
			t.Errorf("%s is written in %s, not among %v", l, s, SupportedScripts)
		}
	}
	for _, s := range SupportedScripts {
		if !used[s] {
			t.Errorf("no supported language is written in %s", s)
		}
	}
}

func TestScriptTag(t *testing.T) {
	tests := []struct{ script, tag, reason string }{
		{"Arabic", "und-Arab", "Arabic script: not a supported source language"},
		{"Hebrew", "und-Hebr", "Hebrew script: not a supported source language"},
		{"Han", "und-Hani", "Han script: not a supported source language"},
		{"Bengali", "und-Beng", "Bengali script: not a supported source language"},
		{"Canadian_Aboriginal", "und-Cans", "Canadian Aboriginal script: not a supported source language"},
		{"Georgian", "und-Geor", "Georgian script: not a supported source language"},
	}
	for _, tc := range tests {
		tag := ScriptTag(tc.script)
		if tag != tc.tag {
			t.Errorf("ScriptTag(%s) = %s, want %s", tc.script, tag, tc.tag)
		}
		if s, ok := ScriptOfTag(tag); !ok || s != tc.script {
			t.Errorf("ScriptOfTag(%s) = %s, %v", tag, s, ok)
		}
		if r := ForeignScriptError(tag); r != tc.reason {
			t.Errorf("ForeignScriptError(%s) = %q", tag, r)
		}
	}
	for _, l := range append(Languages(), "und", "ar", "en-US", "und-Xyzw") {
		if _, ok := ScriptOfTag(l); ok {
			t.Errorf("ScriptOfTag(%q) is a script tag", l)
		}
	}
}

func TestKnownScript(t *testing.T) {
	for lang, want := range map[string]bool{"cs": true, "ar": true, "he": true, "hi": true, "syc": false, "xx": false, "": false, "12": false} {
		if got := KnownScript(lang); got != want {
			t.Errorf("KnownScript(%q) = %v, want %v", lang, got, want)
		}
	}
}

func TestWrittenIn(t *testing.T) {
	tests := []struct {
		lang, script string
		want         bool
	}{
		{"ar", "Arabic", true}, {"fa", "Arabic", true}, {"he", "Hebrew", true},
		{"ja", "Hiragana", true}, {"ja", "Han", true}, {"zh", "Han", true}, {"ko", "Hangul", true},
		{"cs", "Arabic", false}, {"en", "Hebrew", false}, {"ru", "Cyrillic", true}, {"hi", "Devanagari", true},
		{"xx", "Arabic", false}, {"", "Arabic", false},
	}
	for _, tc := range tests {
		if got := WrittenIn(tc.lang, tc.script); got != tc.want {
			t.Errorf("WrittenIn(%q, %s) = %v, want %v", tc.lang, tc.script, got, tc.want)
		}
	}
}
