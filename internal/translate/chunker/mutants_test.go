package chunker_test

import (
	"slices"
	"strings"
	"testing"

	"archivekit/internal/translate/chunker"
)

// If broken: a long text is cut after a word or a clause where a sentence
// (or clause) ends a little earlier, so the backend gets half a sentence.
func TestSplitCutPoints(t *testing.T) {
	for _, c := range []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"lone CR is a line break", "aa, bb\rcc dd", 10, []string{"aa, bb\r", "cc dd"}},
		{"ellipsis ends a sentence", "Ab… cd, ef gh", 12, []string{"Ab… ", "cd, ef gh"}},
		{"colon ends a clause", "ab: cd ef", 8, []string{"ab: ", "cd ef"}},
		{"closing apostrophe after full stop", "Ab 'cd.' ef, gh", 14, []string{"Ab 'cd.' ", "ef, gh"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := chunker.Split(c.text, c.limit); !slices.Equal(got, c.want) {
				t.Errorf("Split(%q, %d) = %q, want %q", c.text, c.limit, got, c.want)
			}
		})
	}
}

// If broken: a chunk of whitespace only is sent to the backend as an empty
// call.
func TestMapSkipsWhitespaceChunks(t *testing.T) {
	var sent []string
	out, err := chunker.Map("aaaa      bbbb", 4, func(_ int, s string) (string, error) {
		sent = append(sent, s)
		return strings.ToUpper(s), nil
	})
	if err != nil || out != "AAAA      BBBB" {
		t.Errorf("Map = %q, %v; want AAAA      BBBB", out, err)
	}
	if !slices.Equal(sent, []string{"aaaa", "bbbb"}) {
		t.Errorf("sent %q, want only the two words", sent)
	}
}
