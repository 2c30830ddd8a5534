// Package langtag builds and reads the BCP 47 language tags that say a text
// is a machine translation: the transformed-content extension of RFC 6497
// ("t") with the CLDR field t0, "machine translation", as in
// en-t-cs-t0-und (English, translated from Czech by a machine; "und": the
// engine is not named in the tag).
//
// Tags are built and checked with golang.org/x/text/language. Its parser
// refuses a "t" extension whose source language is followed by a field
// (it takes "t0" for a region: golang/go#54316), so Check parses the
// main tag and the source language with it, each on its own, and checks
// the fields' syntax (RFC 6497 section 2.3) itself.
package langtag

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/text/language"
)

// Unspecified is the t0 value of a machine translation whose engine the
// tag does not name.
const Unspecified = "und"

// Tag is a parsed transformed-content tag.
type Tag struct {
	// Lang is the language of the text (the tag before "-t-"), canonical
	// as x/text writes it ("en", "cs", "zh-Hant").
	Lang string
	// Source is the language it was transformed from ("" when the tag
	// names none).
	Source string
	// Fields are the tag's fields after the source, key to value ("t0" to
	// "und").
	Fields map[string]string
}

// MachineTranslated reports whether the tag carries the t0 field.
func (t Tag) MachineTranslated() bool {
	_, ok := t.Fields["t0"]
	return ok
}

// String writes the tag: lang[-t[-source][-key-value...]], fields sorted by
// key as RFC 6497 requires.
func (t Tag) String() string {
	var sb strings.Builder
	sb.WriteString(t.Lang)
	if t.Source == "" && len(t.Fields) == 0 {
		return sb.String()
	}
	sb.WriteString("-t")
	if t.Source != "" {
		sb.WriteString("-" + strings.ToLower(t.Source))
	}
	for _, k := range sortedKeys(t.Fields) {
		sb.WriteString("-" + k + "-" + t.Fields[k])
	}
	return sb.String()
}

// MT returns the tag of text in language target machine-translated from
// source: target-t-source-t0-und. source may be "" (unknown), giving
// target-t-t0-und. Both must be well-formed language tags
// ("en", "cs", "de-AT").
func MT(target, source string) (string, error) {
	tgt, err := language.Parse(target)
	if err != nil {
		return "", fmt.Errorf("langtag: target %q: %w", target, err)
	}
	t := Tag{Lang: tgt.String(), Fields: map[string]string{"t0": Unspecified}}
	if source != "" {
		src, err := language.Parse(source)
		if err != nil {
			return "", fmt.Errorf("langtag: source %q: %w", source, err)
		}
		if _, ok := src.Extension('t'); ok {
			return "", fmt.Errorf("langtag: source %q has an extension", source)
		}
		t.Source = src.String()
	}
	s := t.String()
	if _, err := Parse(s); err != nil {
		return "", err
	}
	return s, nil
}

// ErrNotTransformed is returned (wrapped) by Parse for a well-formed tag
// without a "t" extension.
var ErrNotTransformed = errors.New("no transformed-content extension")

// Parse checks s and returns its parts. A tag without "-t-" is an
// ErrNotTransformed error.
func Parse(s string) (Tag, error) {
	low := strings.ToLower(s)
	i := strings.Index(low, "-t-")
	if i < 0 {
		if _, err := language.Parse(s); err != nil {
			return Tag{}, fmt.Errorf("langtag: %q: %w", s, err)
		}
		return Tag{}, fmt.Errorf("langtag: %q: %w", s, ErrNotTransformed)
	}
	main, err := language.Parse(s[:i])
	if err != nil {
		return Tag{}, fmt.Errorf("langtag: %q: language %q: %w", s, s[:i], err)
	}
	t := Tag{Lang: main.String(), Fields: map[string]string{}}
	subtags := strings.Split(low[i+3:], "-")
	k := 0
	for k < len(subtags) && !isKey(subtags[k]) {
		k++
	}
	if k > 0 {
		src, err := language.Parse(strings.Join(subtags[:k], "-"))
		if err != nil {
			return Tag{}, fmt.Errorf("langtag: %q: source %q: %w", s, strings.Join(subtags[:k], "-"), err)
		}
		t.Source = src.String()
	}
	if err := parseFields(subtags[k:], t.Fields); err != nil {
		return Tag{}, fmt.Errorf("langtag: %q: %w", s, err)
	}
	if t.Source == "" && len(t.Fields) == 0 {
		return Tag{}, fmt.Errorf("langtag: %q: empty transformed-content extension", s)
	}
	return t, nil
}

// parseFields reads tfield subtags (RFC 6497: a key, a letter and a
// digit, then one or more values of 3 to 8 letters or digits) into fields;
// keys must come in order, each once.
func parseFields(subtags []string, fields map[string]string) error {
	last := ""
	for i := 0; i < len(subtags); {
		key := subtags[i]
		if !isKey(key) {
			return fmt.Errorf("field key %q is not a letter and a digit", key)
		}
		if key <= last {
			return fmt.Errorf("field %q out of order or repeated", key)
		}
		i++
		start := i
		for i < len(subtags) && !isKey(subtags[i]) {
			if !isValue(subtags[i]) {
				return fmt.Errorf("field %s: value %q is not 3 to 8 letters or digits", key, subtags[i])
			}
			i++
		}
		if i == start {
			return fmt.Errorf("field %s has no value", key)
		}
		fields[key] = strings.Join(subtags[start:i], "-")
		last = key
	}
	return nil
}

func isKey(s string) bool {
	return len(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= '0' && s[1] <= '9'
}

func isValue(s string) bool {
	if len(s) < 3 || len(s) > 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// Base returns the ISO 639-1 code of a language tag or ISO 639-2/3 code
// ("eng" and "en-GB" give "en"), or "" when s is not a language x/text
// knows or has no two-letter code.
func Base(s string) string {
	t, err := language.Parse(s)
	if err != nil {
		return ""
	}
	b, conf := t.Base()
	if conf == language.No {
		return ""
	}
	if str := b.String(); len(str) == 2 {
		return str
	}
	return ""
}

// ForSources returns the machine-translation tag into target of each
// source language of counts (source language to segments), and the tag
// of the most frequent one (ties to the first in alphabetical order);
// "" when counts is empty.
func ForSources(target string, counts map[string]int) (tags map[string]string, main string, err error) {
	tags = map[string]string{}
	best := ""
	for lang, n := range counts {
		if tags[lang], err = MT(target, lang); err != nil {
			return nil, "", err
		}
		if best == "" || n > counts[best] || (n == counts[best] && lang < best) {
			best = lang
		}
	}
	return tags, tags[best], nil
}

// Target returns the language of s when s is a machine-translation tag
// (one with the t0 field): its ISO 639-1 code where it has one
// ("en-t-cs-t0-und" gives "en"), else its language as x/text writes it;
// "" for any other value.
func Target(s string) string {
	tag, err := Parse(s)
	if err != nil || !tag.MachineTranslated() {
		return ""
	}
	if b := Base(tag.Lang); b != "" {
		return b
	}
	return tag.Lang
}
