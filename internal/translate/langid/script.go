package langid

import (
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// Scripts: the supported languages are written in three scripts, Latin
// (cs, en, fr, de, pl, sk, hr, sl, lv, lt, et, hu, ro, es, it, nl),
// Cyrillic (ru, uk, bg) and Devanagari (hi). Text mostly in any other
// script (Arabic, Hebrew, Greek, Han, Georgian, Armenian, Thai, ...) is
// in none of them whatever a LANG attribute or a default says, and the
// trigram models, which know only these languages, cannot tell so
// themselves: ForeignScript says it.

// SupportedScripts are the Unicode scripts (names as in unicode.Scripts)
// the supported languages are written in.
var SupportedScripts = []string{"Latin", "Cyrillic", "Devanagari"}

// ScriptOf is the Unicode script (a unicode.Scripts name) a letter
// belongs to; "" for a rune that is no letter or is in no script table
// of its own (Common, Inherited).
func ScriptOf(r rune) string {
	if !unicode.IsLetter(r) {
		return ""
	}
	for _, name := range SupportedScripts {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	for _, name := range scriptNames {
		if unicode.Is(unicode.Scripts[name], r) {
			return name
		}
	}
	return ""
}

// scriptNames are unicode.Scripts' names, sorted, without Common and
// Inherited (letters shared by scripts).
var scriptNames = func() []string {
	var out []string
	for name := range unicode.Scripts {
		if name != "Common" && name != "Inherited" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}()

func supportedScript(name string) bool {
	for _, s := range SupportedScripts {
		if s == name {
			return true
		}
	}
	return false
}

// ForeignScript reports a text most of whose letters (more than half)
// are in scripts no supported language is written in, and names the
// script holding most of those letters ("Arabic", "Han"). Such a text
// cannot be in a supported language. A text with fewer than half of its
// letters foreign (a Latin sentence with an Arabic name) is not foreign;
// nor is a text without letters.
func ForeignScript(text string) (script string, ok bool) {
	counts := map[string]int{}
	letters, foreign := 0, 0
	for _, r := range text {
		s := ScriptOf(r)
		if s == "" {
			if unicode.IsLetter(r) {
				letters++
			}
			continue
		}
		letters++
		if !supportedScript(s) {
			foreign++
			counts[s]++
		}
	}
	if 2*foreign <= letters {
		return "", false
	}
	best := ""
	for s, n := range counts {
		if n > counts[best] || n == counts[best] && s < best {
			best = s
		}
	}
	return best, true
}

// TextScript reports the script (a unicode.Scripts name) more than half
// of text's letters are in, supported or not ("Cyrillic" for "Київ,
// Хрещатик 5"); ok is false for a text without letters or without such a
// script.
func TextScript(text string) (script string, ok bool) {
	counts := map[string]int{}
	letters := 0
	for _, r := range text {
		if !unicode.IsLetter(r) {
			continue
		}
		letters++
		if s := ScriptOf(r); s != "" {
			counts[s]++
		}
	}
	for s, n := range counts {
		if 2*n > letters {
			return s, true
		}
	}
	return "", false
}

// ScriptName is a script's name for messages: unicode.Scripts' name with
// spaces ("Old Italic").
func ScriptName(script string) string {
	return strings.ReplaceAll(script, "_", " ")
}

// ScriptTag is the BCP 47 tag of text in an undetermined language written
// in script (a unicode.Scripts name): "und-" and the script's ISO 15924
// code ("und-Arab", "und-Hani"); "und-Zzzz" (uncoded script) for a script
// golang.org/x/text does not name.
func ScriptTag(script string) string {
	if c, ok := scriptCodes[normScript(script)]; ok {
		return "und-" + c
	}
	return "und-Zzzz"
}

// ScriptOfTag is the script (a unicode.Scripts name) of a tag made by
// ScriptTag, and whether tag is one; "und-Zzzz" gives "" and true. The
// tag of a supported script ("und-Cyrl") is one too: the order gives it
// to text in that script whose language could not be told (alto's
// LangOrder.Choose).
func ScriptOfTag(tag string) (string, bool) {
	rest, ok := strings.CutPrefix(tag, "und-")
	if !ok || len(rest) != 4 {
		return "", false
	}
	if rest == "Zzzz" {
		return "", true
	}
	for _, name := range scriptNames {
		if c, ok := scriptCodes[normScript(name)]; ok && c == rest {
			return name, true
		}
	}
	return "", false
}

// ForeignTag reports whether tag is one ScriptTag gives ("und-Arab",
// "und-Cyrl") and, if so, the reason its units are left untranslated,
// naming the script (ForeignScriptError). The format packages and
// batch.Run share it.
func ForeignTag(tag string) (string, bool) {
	if _, ok := ScriptOfTag(tag); !ok {
		return "", false
	}
	return ForeignScriptError(tag), true
}

// ForeignScriptError is the reason a unit tagged by ScriptTag is left
// untranslated, naming its script. In a script supported languages are
// written in (Cyrillic), the reason is that the unit's language could not
// be told: neither detected nor declared, given or defaulted in that
// script.
func ForeignScriptError(tag string) string {
	name, _ := ScriptOfTag(tag)
	switch {
	case name == "":
		return "a script no supported language uses: not a supported source language"
	case supportedScript(name):
		return ScriptName(name) + " script: its language could not be told (not detected, and the declared, document, default or given language is not written in " + ScriptName(name) + ")"
	}
	return ScriptName(name) + " script: not a supported source language"
}

// WrittenIn reports whether lang (a language code) is written in script
// (a unicode.Scripts name) by default, as CLDR's likely subtags say:
// "ar" in Arabic, "cs" in Latin. An unknown code is written in none.
func WrittenIn(lang, script string) bool {
	t, err := language.Parse(lang)
	if err != nil {
		return false
	}
	s, conf := t.Script()
	if conf == language.No {
		return false
	}
	c, ok := scriptCodes[normScript(script)]
	if !ok {
		return false
	}
	for _, part := range strings.Split(compound[s.String()], "+") {
		if part == c || part == "" && s.String() == c {
			return true
		}
	}
	return false
}

// KnownScript reports whether CLDR's likely subtags (golang.org/x/text)
// name the script lang is written in by default: "cs" and "ar" yes;
// "syc" (Classical Syriac), an unknown or a malformed code no.
func KnownScript(lang string) bool {
	t, err := language.Parse(lang)
	if err != nil {
		return false
	}
	_, conf := t.Script()
	return conf != language.No
}

// compound are the ISO 15924 codes that stand for several scripts.
var compound = map[string]string{
	"Jpan": "Hani+Hira+Kana", "Kore": "Hang+Hani", "Hans": "Hani", "Hant": "Hani",
}

func normScript(s string) string {
	return strings.ToLower(strings.NewReplacer("_", "", " ", "", "-", "").Replace(s))
}

// scriptCodes maps normalised script names (normScript) to ISO 15924
// codes: the English names golang.org/x/text gives its scripts, and the
// Unicode names of the scripts it names otherwise.
var scriptCodes = func() map[string]string {
	m := map[string]string{}
	for _, s := range language.Supported.Scripts() {
		m[normScript(display.English.Scripts().Name(s))] = s.String()
	}
	// Unicode's names where CLDR's English name differs.
	for name, code := range map[string]string{
		"Bengali": "Beng", "Oriya": "Orya", "Nko": "Nkoo", "Canadian_Aboriginal": "Cans", "Han": "Hani",
		"Meetei_Mayek": "Mtei", "Tai_Tham": "Lana", "Mandaic": "Mand", "Miao": "Plrd", "Old_Turkic": "Orkh",
		"Hanifi_Rohingya": "Rohg", "Cuneiform": "Xsux",
	} {
		m[normScript(name)] = code
	}
	return m
}()
