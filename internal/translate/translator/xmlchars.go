package translator

import (
	"fmt"
	"slices"
	"strings"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/xmlsplice"
)

// written reports whether a log row of status st had its translation
// written (its Target is in the output): ok, retried, vocabulary, or no
// status.
func written(st backend.Status) bool {
	switch st {
	case "", backend.OK, backend.Retried, backend.Vocabulary:
		return true
	}
	return false
}

// notAllowedWarning is the document's warning about the characters of its
// written translations (the targets of rows) that XML does not allow
// (xmlsplice.IsChar): every format's escaping writes U+FFFD for each, so
// the output stays well-formed, and the warning says how many were
// replaced and which (up to five). It is "" when there were none.
func notAllowedWarning(rows []alto.LogRow) string {
	n := 0
	var chars []rune
	for _, r := range rows {
		if !written(r.Status) {
			continue
		}
		for _, c := range r.Target {
			if xmlsplice.IsChar(c) {
				continue
			}
			n++
			if !slices.Contains(chars, c) {
				chars = append(chars, c)
			}
		}
	}
	if n == 0 {
		return ""
	}
	slices.Sort(chars)
	names := make([]string, len(chars))
	for i, c := range chars {
		names[i] = fmt.Sprintf("%U", c)
	}
	what, were := "characters", "were"
	if n == 1 {
		what, were = "character", "was"
	}
	return fmt.Sprintf("%d %s of the translation that XML does not allow (%s) %s replaced by U+FFFD",
		n, what, strings.Join(firstN(names, 5), ", "), were)
}
