package chunker

import (
	"errors"
	"math/rand"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestSplitTable(t *testing.T) {
	tests := []struct {
		name  string
		text  string
		limit int
		want  []string
	}{
		{"empty", "", 10, nil},
		{"fits", "Krátký text.", 12, []string{"Krátký text."}},
		{"sentence preferred over later comma", "Ab cd. Ef, gh ij", 14, []string{"Ab cd. ", "Ef, gh ij"}},
		{"clause when no sentence end", "Ab cd, ef gh ij", 12, []string{"Ab cd, ", "ef gh ij"}},
		{"whitespace when no punctuation", "aaa bbb ccc ddd", 9, []string{"aaa bbb ", "ccc ddd"}},
		{"line break is a sentence boundary", "aaa\nbbb, ccc ddd", 12, []string{"aaa\n", "bbb, ccc ddd"}},
		{"closing quote after full stop", `Řekl „ano.“ Pak odešel`, 14, []string{`Řekl „ano.“ `, "Pak odešel"}},
		{"long word cut at limit", "abcdefghij kl", 4, []string{"abcd", "efgh", "ij ", "kl"}},
		{"runes not bytes", "čččč šššš", 5, []string{"čččč ", "šššš"}},
		{"zero limit means default", "short", 0, []string{"short"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Split(tc.text, tc.limit)
			if len(got) != len(tc.want) {
				t.Fatalf("Split(%q, %d) = %q, want %q", tc.text, tc.limit, got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("Split(%q, %d) = %q, want %q", tc.text, tc.limit, got, tc.want)
				}
			}
		})
	}
}

func TestSplitDefaultLimitCountsRunes(t *testing.T) {
	// 3,000 two-byte letters in words: 6,000+ bytes but under 4,000 runes.
	text := strings.Repeat("žluť ", 700)
	if got := Split(text, DefaultLimit); len(got) != 1 {
		t.Fatalf("text of %d runes split into %d chunks, want 1", utf8.RuneCountInString(text), len(got))
	}
	long := strings.Repeat("Věta o pěti slovech tady. ", 400) // 10,400 runes
	chunks := Split(long, DefaultLimit)
	for i, c := range chunks {
		if n := utf8.RuneCountInString(c); n > DefaultLimit {
			t.Errorf("chunk %d has %d runes", i, n)
		}
		if i < len(chunks)-1 && !strings.HasSuffix(c, ". ") {
			t.Errorf("chunk %d does not end at a sentence boundary: %q", i, c[len(c)-20:])
		}
	}
}

// randomText builds text from words, punctuation and whitespace, including
// multi-byte letters and occasional very long words.
func randomText(rng *rand.Rand) string {
	words := []string{"a", "slovo", "čtyři", "žluťoučký", "kůň", "x", "Ωμέγα", "日本語", strings.Repeat("dlouhé", 5)}
	seps := []string{" ", " ", " ", ", ", ". ", "; ", ": ", "\n", "  ", "\t", "! ", "?\n\n", "… "}
	var b strings.Builder
	n := rng.Intn(200)
	for i := 0; i < n; i++ {
		b.WriteString(words[rng.Intn(len(words))])
		b.WriteString(seps[rng.Intn(len(seps))])
	}
	if rng.Intn(2) == 0 {
		b.WriteString(strings.Repeat("w", rng.Intn(60)))
	}
	return b.String()
}

func TestSplitProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	for iter := 0; iter < 3000; iter++ {
		text := randomText(rng)
		limit := 1 + rng.Intn(50)
		chunks := Split(text, limit)
		if strings.Join(chunks, "") != text {
			t.Fatalf("join differs for %q limit %d: %q", text, limit, chunks)
		}
		for i, c := range chunks {
			n := utf8.RuneCountInString(c)
			if n == 0 || n > limit {
				t.Fatalf("chunk %d of %q has %d runes (limit %d)", i, text, n, limit)
			}
			if i == len(chunks)-1 {
				continue
			}
			last, _ := utf8.DecodeLastRuneInString(c)
			if unicode.IsSpace(last) {
				continue
			}
			// A mid-word cut is allowed only when the word does not fit:
			// the chunk is exactly limit runes with no whitespace at all.
			if n != limit || strings.IndexFunc(c, unicode.IsSpace) >= 0 {
				t.Fatalf("chunk %d of %q (limit %d) cuts mid-word: %q", i, text, limit, chunks)
			}
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("Jedna věta. Druhá, delší věta; třetí: konec.", 7)
	f.Add("bez mezer", 3)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if !utf8.ValidString(text) || limit < 1 || limit > 10000 {
			t.Skip()
		}
		chunks := Split(text, limit)
		if strings.Join(chunks, "") != text {
			t.Fatalf("join differs")
		}
		for _, c := range chunks {
			if utf8.RuneCountInString(c) > limit {
				t.Fatalf("chunk over limit")
			}
		}
	})
}

func TestMap(t *testing.T) {
	text := "  První věta. " + strings.Repeat("slovo ", 10) + "\n\n"
	var got []string
	out, err := Map(text, 20, func(i int, c string) (string, error) {
		got = append(got, c)
		return "<" + c + ">", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range got {
		if c != strings.TrimSpace(c) || c == "" {
			t.Errorf("content %q carries whitespace", c)
		}
	}
	if strings.ReplaceAll(strings.ReplaceAll(out, "<", ""), ">", "") != text {
		t.Fatalf("whitespace not kept: %q", out)
	}
	if _, err := Map(text, 20, func(int, string) (string, error) { return "", errTest }); err != errTest {
		t.Fatalf("error not returned: %v", err)
	}
}

var errTest = errors.New("test")
