package batch

import (
	"strings"
	"testing"
)

// TestGroupByChars: batch limits count characters, not bytes.
func TestGroupByChars(t *testing.T) {
	items := []string{"žžžž", "čččč", "a"} // 4 runes (8 bytes) each
	cases := []struct {
		limit int
		want  string
	}{
		{0, "žžžž,čččč,a"},
		{9, "žžžž,čččč|a"}, // 4+1+4 = 9 characters fit; 8-byte items would not
		{8, "žžžž|čččč,a"}, // 4+1+1 = 6
		{11, "žžžž,čččč,a"},
		{2, "žžžž|čččč|a"},
	}
	for _, c := range cases {
		var parts []string
		for _, g := range groupByChars(items, c.limit) {
			parts = append(parts, strings.Join(g, ","))
		}
		if got := strings.Join(parts, "|"); got != c.want {
			t.Errorf("limit %d: %s, want %s", c.limit, got, c.want)
		}
	}
}

func TestSplitAnswer(t *testing.T) {
	cases := []struct {
		in   string
		want int
		out  string
	}{
		{"a\nb", 2, "a|b"},
		{"a\r\nb\n", 2, "a|b"},
		{"a\n", 2, "a|"},
		{"a\nb\n\n", 2, "a|b"},
		{"a b", 2, "a b"},
	}
	for _, c := range cases {
		if got := strings.Join(splitAnswer(c.in, c.want), "|"); got != c.out {
			t.Errorf("splitAnswer(%q, %d) = %q, want %q", c.in, c.want, got, c.out)
		}
	}
}
