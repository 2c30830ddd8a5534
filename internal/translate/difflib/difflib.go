// Package difflib computes the similarity ratio of Python's
// difflib.SequenceMatcher (with isjunk=None and autojunk=True, the defaults)
// with exact parity: the same matching blocks and so the same float64 ratio.
//
// The autojunk heuristic is part of the parity: when the second sequence has
// at least 200 elements, every element occurring more than 1 + len(b)/100
// times is "popular" and cannot start a match (it can still extend one).
package difflib

// Matcher compares sequence a against sequence b.
type Matcher[T comparable] struct {
	a, b []T
	b2j  map[T][]int
	// scratch space reused across longest-match searches
	j2len, newj2len     []int
	touched, newTouched []int
}

// NewMatcher prepares the comparison of a against b, indexing b as Python's
// SequenceMatcher(None, a, b) does.
func NewMatcher[T comparable](a, b []T) *Matcher[T] {
	m := &Matcher[T]{a: a, b: b, b2j: make(map[T][]int)}
	for j, x := range b {
		m.b2j[x] = append(m.b2j[x], j)
	}
	if n := len(b); n >= 200 {
		ntest := n/100 + 1
		for x, idx := range m.b2j {
			if len(idx) > ntest {
				delete(m.b2j, x)
			}
		}
	}
	return m
}

// SetA replaces the first sequence, keeping b's index (Python's set_seq1):
// comparing many sequences against one b is then cheaper.
func (m *Matcher[T]) SetA(a []T) { m.a = a }

// Match is a matching block: a[A:A+Size] == b[B:B+Size].
type Match struct{ A, B, Size int }

// longest finds the longest matching block in a[alo:ahi] and b[blo:bhi],
// with SequenceMatcher.find_longest_match's tie-breaking (earliest in a,
// then earliest in b). Junk (isjunk) is always empty here, so only the
// extension over equal non-junk elements applies.
func (m *Matcher[T]) longest(alo, ahi, blo, bhi int) Match {
	besti, bestj, bestsize := alo, blo, 0
	// j2len[j+1] is the length of the match ending at a[i-1], b[j]; Python
	// keeps it in a dict, here two slices are swapped and the entries set in
	// the previous row are cleared.
	if cap(m.j2len) < len(m.b)+1 {
		m.j2len = make([]int, len(m.b)+1)
		m.newj2len = make([]int, len(m.b)+1)
	}
	j2len, newj2len := m.j2len[:len(m.b)+1], m.newj2len[:len(m.b)+1]
	touched, newTouched := m.touched[:0], m.newTouched[:0]
	for i := alo; i < ahi; i++ {
		for _, j := range m.b2j[m.a[i]] {
			if j < blo {
				continue
			}
			if j >= bhi {
				break
			}
			k := j2len[j] + 1
			newj2len[j+1] = k
			newTouched = append(newTouched, j+1)
			if k > bestsize {
				besti, bestj, bestsize = i-k+1, j-k+1, k
			}
		}
		for _, j := range touched {
			j2len[j] = 0
		}
		j2len, newj2len = newj2len, j2len
		touched, newTouched = newTouched, touched[:0]
	}
	for _, j := range touched {
		j2len[j] = 0
	}
	m.touched, m.newTouched = touched[:0], newTouched[:0]
	for besti > alo && bestj > blo && m.a[besti-1] == m.b[bestj-1] {
		besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
	}
	for besti+bestsize < ahi && bestj+bestsize < bhi && m.a[besti+bestsize] == m.b[bestj+bestsize] {
		bestsize++
	}
	return Match{besti, bestj, bestsize}
}

// MatchingBlocks returns the matching blocks in order of A, without
// Python's trailing zero-size sentinel and without merging adjacent blocks
// (merging changes no sizes, so it does not affect the ratio).
func (m *Matcher[T]) MatchingBlocks() []Match {
	type span struct{ alo, ahi, blo, bhi int }
	queue := []span{{0, len(m.a), 0, len(m.b)}}
	var blocks []Match
	for len(queue) > 0 {
		s := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		x := m.longest(s.alo, s.ahi, s.blo, s.bhi)
		if x.Size == 0 {
			continue
		}
		blocks = append(blocks, x)
		if s.alo < x.A && s.blo < x.B {
			queue = append(queue, span{s.alo, x.A, s.blo, x.B})
		}
		if x.A+x.Size < s.ahi && x.B+x.Size < s.bhi {
			queue = append(queue, span{x.A + x.Size, s.ahi, x.B + x.Size, s.bhi})
		}
	}
	// Insertion sort by A: blocks never overlap, so A orders them fully.
	for i := 1; i < len(blocks); i++ {
		for j := i; j > 0 && blocks[j].A < blocks[j-1].A; j-- {
			blocks[j], blocks[j-1] = blocks[j-1], blocks[j]
		}
	}
	return blocks
}

// Ratio returns 2*M/T where M is the number of matched elements and T the
// total number of elements in both sequences; 1.0 when both are empty.
func (m *Matcher[T]) Ratio() float64 {
	matches := 0
	for _, b := range m.MatchingBlocks() {
		matches += b.Size
	}
	if l := len(m.a) + len(m.b); l > 0 {
		return 2.0 * float64(matches) / float64(l)
	}
	return 1.0
}

// Ratio is SequenceMatcher(None, a, b).ratio() over two sequences.
func Ratio[T comparable](a, b []T) float64 { return NewMatcher(a, b).Ratio() }

// StringRatio is SequenceMatcher(None, a, b).ratio() over two Python str
// values: the sequences are the strings' code points (runes).
func StringRatio(a, b string) float64 { return Ratio([]rune(a), []rune(b)) }
