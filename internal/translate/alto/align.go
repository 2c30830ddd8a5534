package alto

import (
	"math"
	"strings"
	"unicode/utf8"

	"archivekit/internal/translate/difflib"
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

// Alignment limits: a line whose anchor has more than MaxAlignWords words
// or MaxAlignRunes characters is not searched (the sequence matcher's cost
// grows with the square of the text and the window with the words): it
// gets its proportional share of the tokens instead, and the document's
// warnings say how many lines did. Candidates longer than twice
// MaxAlignRunes are not scored either (one huge token cannot stall it).
// Real OCR lines have tens of words; the limits keep a hostile document
// (two lines of 20,000 words) linear.
const (
	MaxAlignWords = 200
	MaxAlignRunes = 2000
)

// alignByAnchors splits tokens into one bucket per line. For every line but
// the last it tries each count in the window around the anchor's word count
// and keeps the one whose joined tokens have the highest character-level
// sequence-matcher ratio to the anchor (ties: closest to the expected count,
// then fewer tokens). The last line takes the remainder. Lines over the
// alignment limits take their proportional share; over is how many did.
func alignByAnchors(tokens []string, anchors []string) (counts []int, over int) {
	counts = make([]int, len(anchors))
	totalWords := 0
	for _, a := range anchors {
		totalWords += len(Fields(a))
	}
	pos := 0
	for i, anchor := range anchors {
		avail := len(tokens) - pos
		if i == len(anchors)-1 {
			counts[i] = avail
			break
		}
		words := Fields(anchor)
		e := len(words)
		joined := strings.Join(words, " ")
		if e > MaxAlignWords || len(joined) > 4*MaxAlignRunes || utf8.RuneCountInString(joined) > MaxAlignRunes {
			over++
			share := int(math.RoundToEven(float64(len(tokens)) * float64(e) / float64(max(1, totalWords))))
			counts[i] = min(share, avail)
			pos += counts[i]
			continue
		}
		lo, hi := window(e, avail)
		// While there are tokens enough, every line keeps at least one and
		// leaves one for each line after it: a line left without a word
		// is written empty (CONTENT=""), and a later line (the last takes
		// the remainder) gathers what the others took too few of.
		if after := len(anchors) - 1 - i; e > 0 && avail > after {
			lo = max(lo, 1)
			hi = max(lo, min(hi, avail-after))
		}
		m := difflib.NewMatcher(nil, []rune(joined))
		best, bestScore := lo, -1.0
		for k := lo; k <= hi; k++ {
			cand := strings.Join(tokens[pos:pos+k], " ")
			if len(cand) > 8*MaxAlignRunes {
				break // longer candidates only grow
			}
			m.SetA([]rune(cand))
			score := m.Ratio()
			if score > bestScore || (score == bestScore && abs(k-e) < abs(best-e)) {
				best, bestScore = k, score
			}
		}
		counts[i] = best
		pos += best
	}
	return counts, over
}

// fillEmpty gives each line that needs a word (needs) and was given none
// one word from the nearest line given more than one, while there is one:
// the words stay in their order; every line between the two then begins
// (or ends) one word later (earlier), keeping its count. The alignment leaves a line without a word when its anchor
// was rejected (empty) or over the limits, and --fast-align's shares round
// a short line's to 0; such a line was written empty (CONTENT="") though
// the block's translation had words enough for every line. It reports
// whether it moved a word (the placement is then approximate).
func fillEmpty(counts []int, needs func(i int) bool) (moved bool) {
	for i, c := range counts {
		if c > 0 || !needs(i) {
			continue
		}
		donor := -1
		for d := 1; donor < 0 && (i-d >= 0 || i+d < len(counts)); d++ {
			switch {
			case i-d >= 0 && counts[i-d] > 1:
				donor = i - d
			case i+d < len(counts) && counts[i+d] > 1:
				donor = i + d
			}
		}
		if donor < 0 {
			return moved // no line has a word to spare
		}
		counts[donor]--
		counts[i]++
		moved = true
	}
	return moved
}

// Place distributes a line's tokens over its n String elements (or words): one per
// String in order, the last String taking all that remain (joined by a
// space); Strings past the tokens get "".
func Place(tokens []string, n int) []string {
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
