// Package backendtest holds what the local stand-ins of the translation
// backends share (translatortest for the mtapi protocol, chattest for
// chat_compatible): one deterministic fake translation, so that a test
// knows the answer of every stand-in.
package backendtest

import (
	"strings"
	"unicode"
)

// Dict is the stand-in's vocabulary: these lower-case Czech words get an
// English translation; every other word with a lower-case letter is
// upper-cased, and words without one (numbers, abbreviations, placeholders)
// are copied, as the hosted models do.
var Dict = map[string]string{
	"hrob": "grave", "jáma": "pit", "sonda": "trench", "a": "and", "v": "in",
	"výzkum": "research", "archeologický": "archaeological", "záchranný": "rescue",
}

// Translate is the stand-in's translation of text, line by line (line
// breaks and the number of lines are kept).
func Translate(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		words := strings.Fields(line)
		for j, wd := range words {
			if t, ok := Dict[strings.ToLower(wd)]; ok {
				words[j] = t
			} else if strings.IndexFunc(wd, unicode.IsLower) >= 0 {
				words[j] = strings.ToUpper(wd)
			}
		}
		lines[i] = strings.Join(words, " ")
	}
	return strings.Join(lines, "\n")
}
