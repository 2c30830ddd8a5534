// Package chunker splits text into pieces small enough for one backend call
// (spec: at most 4,000 characters per call) without cutting words, preferring
// sentence boundaries, then clause boundaries, then any whitespace.
//
// Lengths are counted in characters (Unicode code points, Go runes), never
// bytes. Concatenating the chunks returned by Split gives back the input
// exactly: whitespace at a cut stays at the end of the earlier chunk.
package chunker

import (
	"strings"
	"unicode"
)

// DefaultLimit is the spec's maximum chunk size in characters.
const DefaultLimit = 4000

// boundary ranks a cut position; a higher rank is preferred.
type boundary int

const (
	noCut boundary = iota
	wordCut
	clauseCut
	sentenceCut
)

// Split cuts text into chunks of at most limit runes. A chunk ends after the
// whitespace that follows a sentence end (. ! ? … possibly followed by closing
// quotes or brackets) or after a line break when one lies within the limit;
// otherwise after the whitespace following a clause mark (, ; :); otherwise
// after any whitespace. Only a single word longer than limit is cut inside
// the word, exactly at the limit. A limit below 1 means DefaultLimit.
// Split("") returns nil.
func Split(text string, limit int) []string {
	if limit < 1 {
		limit = DefaultLimit
	}
	if text == "" {
		return nil
	}
	runes := []rune(text)
	var chunks []string
	for len(runes) > limit {
		cut := bestCut(runes, limit)
		chunks = append(chunks, string(runes[:cut]))
		runes = runes[cut:]
	}
	return append(chunks, string(runes))
}

// bestCut returns the cut position (1..limit) for runes, which is longer
// than limit.
func bestCut(runes []rune, limit int) int {
	best, bestRank := limit, noCut
	for p := limit; p >= 1; p-- {
		rank := classify(runes, p)
		if rank > bestRank {
			best, bestRank = p, rank
			if rank == sentenceCut {
				break
			}
		}
	}
	return best
}

// classify ranks cutting runes before index p (runes[:p] | runes[p:]).
// Only positions right after whitespace can be cut.
func classify(runes []rune, p int) boundary {
	if !unicode.IsSpace(runes[p-1]) {
		return noCut
	}
	// Look back over the whitespace run; a line break inside it is a
	// sentence (paragraph or line) boundary.
	q := p - 1
	for q >= 0 && unicode.IsSpace(runes[q]) {
		if runes[q] == '\n' || runes[q] == '\r' {
			return sentenceCut
		}
		q--
	}
	if q < 0 {
		return wordCut
	}
	// Skip closing quotes and brackets: `end." Next` is a sentence end.
	for q > 0 && isCloser(runes[q]) {
		q--
	}
	switch runes[q] {
	case '.', '!', '?', '…', '。', '！', '？':
		return sentenceCut
	case ',', ';', ':', '，', '；', '：':
		return clauseCut
	}
	return wordCut
}

func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '»', '«', '“', '”', '’', '‘', '„':
		return true
	}
	return false
}

// Map cuts text with Split and replaces each chunk's content (the chunk
// without the whitespace around it) by fn(i, content), keeping that
// whitespace as it was; whitespace-only chunks are kept without calling fn.
// The first error stops it.
func Map(text string, limit int, fn func(i int, content string) (string, error)) (string, error) {
	var out strings.Builder
	for i, chunk := range Split(text, limit) {
		core := strings.TrimFunc(chunk, unicode.IsSpace)
		if core == "" {
			out.WriteString(chunk)
			continue
		}
		start := strings.Index(chunk, core)
		tr, err := fn(i, core)
		if err != nil {
			return "", err
		}
		out.WriteString(chunk[:start])
		out.WriteString(tr)
		out.WriteString(chunk[start+len(core):])
	}
	return out.String(), nil
}
