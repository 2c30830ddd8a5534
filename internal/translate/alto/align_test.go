package alto

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

type pyVectors struct {
	IsSpace []rune `json:"isspace"`
	Split   []struct {
		Text   string
		Fields []string
	}
	Round []struct {
		N, W, Total int
		Round       int
	}
}

func loadPy(t *testing.T) pyVectors {
	raw, err := os.ReadFile("testdata/python_split.json")
	if err != nil {
		t.Fatal(err)
	}
	var v pyVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPythonWhitespace compares IsPySpace with str.isspace() over every code
// point and Fields with str.split() (vectors from test/gen_difflib_vectors.py).
func TestPythonWhitespace(t *testing.T) {
	v := loadPy(t)
	want := map[rune]bool{}
	for _, r := range v.IsSpace {
		want[r] = true
	}
	if len(want) < 25 {
		t.Fatalf("only %d whitespace code points in vectors", len(want))
	}
	for r := rune(0); r <= 0x10ffff; r++ {
		if IsPySpace(r) != want[r] {
			t.Errorf("IsPySpace(%U) = %v, Python says %v", r, IsPySpace(r), want[r])
		}
	}
	for _, c := range v.Split {
		got := Fields(c.Text)
		if strings.Join(got, "\x00") != strings.Join(c.Fields, "\x00") || len(got) != len(c.Fields) {
			t.Errorf("Fields(%q) = %q, Python %q", c.Text, got, c.Fields)
		}
	}
}

// TestProportionalRounding checks round-half-to-even against Python's round().
func TestProportionalRounding(t *testing.T) {
	v := loadPy(t)
	for _, c := range v.Round {
		// A two-line split: the first line's share is Python's round(), capped
		// at the total.
		got := proportional(c.N, []int{c.W, c.Total - c.W})
		if want := min(c.Round, c.N); got[0] != want || got[0]+got[1] != c.N {
			t.Errorf("proportional(%d, [%d %d]) = %v, want first %d", c.N, c.W, c.Total-c.W, got, want)
		}
	}
	cases := []struct {
		n     int
		words []int
		want  []int
	}{
		{5, []int{1, 1}, []int{2, 3}},       // 2.5 rounds to 2
		{3, []int{1, 1}, []int{2, 1}},       // 1.5 rounds to 2
		{7, []int{1, 1}, []int{4, 3}},       // 3.5 rounds to 4
		{2, []int{3, 3, 3}, []int{1, 1, 0}}, // 0.67 -> 1 each, remainder 0
		{0, []int{2, 2}, []int{0, 0}},
		{4, []int{0, 0}, []int{0, 4}},
		{10, []int{5}, []int{10}},
	}
	for _, c := range cases {
		got := proportional(c.n, c.words)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("proportional(%d, %v) = %v, want %v", c.n, c.words, got, c.want)
		}
	}
}

func TestWindow(t *testing.T) {
	cases := []struct{ e, avail, lo, hi int }{
		{0, 10, 0, 1}, {1, 10, 0, 2}, {2, 10, 1, 3}, {3, 10, 1, 5}, {4, 10, 2, 6},
		{10, 100, 5, 15}, {10, 7, 5, 7}, {10, 3, 3, 3}, {5, 0, 0, 0},
	}
	for _, c := range cases {
		if lo, hi := window(c.e, c.avail); lo != c.lo || hi != c.hi {
			t.Errorf("window(%d, %d) = %d..%d, want %d..%d", c.e, c.avail, lo, hi, c.lo, c.hi)
		}
	}
}

func TestAlignByAnchors(t *testing.T) {
	cases := []struct {
		name    string
		pass1   string
		anchors []string
		want    []int
	}{
		{"exact anchors", "Municipality of Crow Crow 37 592 31 Crow",
			[]string{"Municipality of", "Crow Crow 37", "592 31 Crow"}, []int{2, 3, 3}},
		// The first line's anchor asks for all the tokens, but the second
		// keeps one: a line is left without a word only when there are
		// fewer tokens than lines (it was [3 0], the second written empty).
		{"anchor says more words than fit", "a b c", []string{"a b c d e", "x"}, []int{2, 1}},
		{"fewer tokens than lines", "a b", []string{"a", "b", "c"}, []int{1, 1, 0}},
		// A block translated in fewer words than its lines' anchors: the
		// last line keeps one (before: [3 2 0], the last written empty).
		{"block shorter than its lines", "a b c d e", []string{"a b c", "d e", "f"}, []int{3, 1, 1}},
		{"fluent block differs from lines", "the finds come from the upper layer of the pit",
			[]string{"finds come", "from the top layer", "of the pit"}, []int{3, 4, 3}},
		{"no tokens", "", []string{"a", "b"}, []int{0, 0}},
		{"single line takes all", "a b c", []string{"x"}, []int{3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, over := alignByAnchors(Fields(c.pass1), c.anchors)
			if fmt.Sprint(got) != fmt.Sprint(c.want) || over != 0 {
				t.Errorf("counts %v (%d over the limits), want %v", got, over, c.want)
			}
		})
	}
}

func TestPlace(t *testing.T) {
	cases := []struct {
		tokens []string
		n      int
		want   []string
	}{
		{[]string{"a", "b", "c"}, 3, []string{"a", "b", "c"}},
		{[]string{"a", "b", "c", "d"}, 2, []string{"a", "b c d"}},
		{[]string{"a"}, 3, []string{"a", "", ""}},
		{nil, 2, []string{"", ""}},
	}
	for _, c := range cases {
		if got := Place(c.tokens, c.n); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Place(%q, %d) = %q, want %q", c.tokens, c.n, got, c.want)
		}
	}
}

// TestAlignmentBounded: a block of two lines of 20,000 words (127 s before
// the limits) is split proportionally at once, every token kept; a line
// of one huge token does not stall the matcher either.
func TestAlignmentBounded(t *testing.T) {
	words := make([]string, 20000)
	for i := range words {
		words[i] = fmt.Sprintf("slovo%d", i%97)
	}
	line := strings.Join(words, " ")
	tokens := Fields(line + " " + line)
	start := time.Now()
	counts, over := alignByAnchors(tokens, []string{line, line})
	took := time.Since(start)
	if over != 1 || counts[0]+counts[1] != len(tokens) || counts[0] != 20000 {
		t.Errorf("counts %v, %d over the limit; want 20000 each, 1 over", counts, over)
	}
	huge := strings.Repeat("x", 1<<20)
	counts, over = alignByAnchors([]string{huge, "a", huge}, []string{huge, "a b"})
	if over != 1 || counts[0]+counts[1] != 3 {
		t.Errorf("huge token: counts %v, over %d", counts, over)
	}
	// A line just within the limits is still aligned by the matcher.
	within := strings.Join(words[:MaxAlignWords], " ")
	counts, over = alignByAnchors(Fields(within+" tail words"), []string{within, "tail words"})
	if over != 0 || counts[0] != MaxAlignWords {
		t.Errorf("within the limit: counts %v, over %d", counts, over)
	}
	t.Logf("two lines of 20,000 words aligned in %v; total %v", took, time.Since(start))
}

func TestFillEmpty(t *testing.T) {
	for _, c := range []struct {
		counts, want []int
		blank        int // a line with no source text (-1: none)
		moved        bool
	}{
		{[]int{3, 0, 1}, []int{2, 1, 1}, -1, true},
		{[]int{0, 0, 4}, []int{1, 1, 2}, -1, true},
		{[]int{0, 5}, []int{1, 4}, -1, true},
		{[]int{2, 0, 0, 0}, []int{1, 1, 0, 0}, -1, true}, // words for two lines only
		{[]int{1, 0}, []int{1, 0}, -1, false},            // no word to spare
		{[]int{3, 0, 1}, []int{3, 0, 1}, 1, false},       // a blank line needs none
		{[]int{1, 1, 1}, []int{1, 1, 1}, -1, false},
	} {
		got := slices.Clone(c.counts)
		moved := fillEmpty(got, func(i int) bool { return i != c.blank })
		if !slices.Equal(got, c.want) || moved != c.moved {
			t.Errorf("fillEmpty(%v), blank %d: %v moved %v, want %v moved %v", c.counts, c.blank, got, moved, c.want, c.moved)
		}
		if sum(got) != sum(c.counts) {
			t.Errorf("fillEmpty(%v): %v has %d words, want %d", c.counts, got, sum(got), sum(c.counts))
		}
	}
}

func sum(xs []int) (n int) {
	for _, x := range xs {
		n += x
	}
	return n
}
