package alto

import (
	"math"
	"strings"

	"archivekit/pkg/difflib"
)

// IsPySpace reports whether Python's str.isspace() is true for r. It differs
// from unicode.IsSpace by also counting the information separators
// U+001C..U+001F.
func IsPySpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, ' ', 0x85, 0xa0,
		0x1680, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000:
		return true
	}
	return r >= 0x2000 && r <= 0x200a
}

// Fields splits s like Python's str.split() with no argument: on runs of
// IsPySpace characters, with no empty fields.
func Fields(s string) []string { return strings.FieldsFunc(s, IsPySpace) }

// proportional gives each line a share of n tokens proportional to its
// source word count: round(n*w/total) with Python's round-half-to-even,
// never more than what remains; the last line takes the remainder.
func proportional(n int, words []int) []int {
	counts := make([]int, len(words))
	total := 0
	for _, w := range words {
		total += w
	}
	rem := n
	for i := range words {
		if i == len(words)-1 {
			counts[i] = rem
			break
		}
		c := 0
		if total > 0 {
			c = int(math.RoundToEven(float64(n*words[i]) / float64(total)))
		}
		c = min(c, rem)
		counts[i] = c
		rem -= c
	}
	return counts
}

// window returns the candidate token counts for a line whose anchor has e
// words: e plus or minus half of e (rounded up, at least 1), clamped to
// [0, avail].
func window(e, avail int) (lo, hi int) {
	d := max(1, (e+1)/2)
	lo, hi = max(0, e-d), min(avail, e+d)
	if lo > hi {
		lo = hi
	}
	return lo, hi
}

// alignByAnchors splits tokens into one bucket per line. For every line but
// the last it tries each count in the window around the anchor's word count
// and keeps the one whose joined tokens have the highest character-level
// sequence-matcher ratio to the anchor (ties: closest to the expected count,
// then fewer tokens). The last line takes the remainder.
func alignByAnchors(tokens []string, anchors []string) []int {
	counts := make([]int, len(anchors))
	pos := 0
	for i, anchor := range anchors {
		avail := len(tokens) - pos
		if i == len(anchors)-1 {
			counts[i] = avail
			break
		}
		e := len(Fields(anchor))
		lo, hi := window(e, avail)
		m := difflib.NewMatcher(nil, []rune(strings.Join(Fields(anchor), " ")))
		best, bestScore := lo, -1.0
		for k := lo; k <= hi; k++ {
			m.SetA([]rune(strings.Join(tokens[pos:pos+k], " ")))
			score := m.Ratio()
			if score > bestScore || (score == bestScore && abs(k-e) < abs(best-e)) {
				best, bestScore = k, score
			}
		}
		counts[i] = best
		pos += best
	}
	return counts
}

// place distributes a line's tokens over its n String elements: one per
// String in order, the last String taking all that remain (joined by a
// space); Strings past the tokens get "".
func place(tokens []string, n int) []string {
	out := make([]string, n)
	for i := 0; i < n && i < len(tokens); i++ {
		if i == n-1 {
			out[i] = strings.Join(tokens[i:], " ")
		} else {
			out[i] = tokens[i]
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
