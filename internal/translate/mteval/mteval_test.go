package mteval

import (
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pairs are hypothesis/reference pairs covering what the metrics treat
// specially: punctuation, digits around '.', ',' and '-', HTML entities,
// Unicode white space (Python's str.split splits on \x1c-\x1f and U+00A0,
// Go's strings.Fields does not), diacritics, empty strings.
func pairs() [][2]string {
	p := [][2]string{
		{"The cat sat on the mat.", "The cat sat on the mat."},
		{"The cat is on the mat.", "There is a cat on the mat."},
		{"Výzkum proběhl v roce 1995, nalezeno 12 hrobů.", "The research took place in 1995; 12 graves were found."},
		{"Excavation in 1995-1996 found 3.5 m deep pit, 2,5 m wide.", "The 1995-1996 excavation found a pit 3.5 m deep and 2,5 m wide."},
		{"a &amp; b &lt;c&gt; &quot;d&quot;", "a & b <c> \"d\""},
		{"word-\nbreak and\nnew line <skipped>", "wordbreak and new line"},
		{"non\u00a0breaking\x1cspace\x1funit", "non breaking space unit"},
		{"", "reference only"},
		{"hypothesis only", ""},
		{"", ""},
		{"pit", "grave"},
		{"Settlement of the Únětice culture (Early Bronze Age).", "Únětice culture settlement, Early Bronze Age."},
		{"{braces} [brackets] ~tilde~ `tick` @at /slash/ +plus+ ?q? !e!", "{braces} [brackets] ~tilde~ `tick` @at /slash/ +plus+ ?q? !e!"},
		{"trailing spaces   \t", "trailing spaces"},
		{"1.000,50 Kč", "1,000.50 CZK"},
	}
	r := rand.New(rand.NewSource(7))
	words := strings.Fields("the a pit grave 1995 3.5 , . - ( ) hrob jáma sídliště of in and was were found Únětice culture 12 2,5 \" '")
	gen := func() string {
		n := r.Intn(14)
		var b []string
		for i := 0; i < n; i++ {
			b = append(b, words[r.Intn(len(words))])
		}
		return strings.Join(b, " ")
	}
	for i := 0; i < 200; i++ {
		p = append(p, [2]string{gen(), gen()})
	}
	return p
}

func TestAgainstSacrebleu(t *testing.T) {
	py := os.Getenv("ARCHIVEKIT_PYTOOLS")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTOOLS not set (make test sets it): sacrebleu reference not available")
	}
	ps := pairs()
	in := filepath.Join(t.TempDir(), "pairs.json")
	b, _ := json.Marshal(ps)
	os.WriteFile(in, b, 0o644)
	script := `
import json, sys, sacrebleu
pairs = json.load(open(sys.argv[1]))
print(json.dumps([[sacrebleu.sentence_chrf(h, [r]).score, sacrebleu.sentence_bleu(h, [r]).score] for h, r in pairs]))
`
	out, err := exec.Command(py, "-c", script, in).Output()
	if err != nil {
		t.Fatalf("sacrebleu: %v", err)
	}
	var want [][2]float64
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	const tol = 1e-9
	for i, p := range ps {
		if c := ChrF(p[0], p[1]); math.Abs(c-want[i][0]) > tol {
			t.Errorf("chrF(%q, %q) = %.12f, sacrebleu %.12f", p[0], p[1], c, want[i][0])
		}
		if b := BLEU(p[0], p[1]); math.Abs(b-want[i][1]) > tol {
			t.Errorf("BLEU(%q, %q) = %.12f, sacrebleu %.12f (tokens %q / %q)", p[0], p[1], b, want[i][1], Tokenize13a(p[0]), Tokenize13a(p[1]))
		}
	}
}

// TestKnownValues holds without Python: identical strings score 100, a
// disjoint pair 0.
func TestKnownValues(t *testing.T) {
	s := "The research took place in 1995."
	if c, b := ChrF(s, s), BLEU(s, s); math.Abs(c-100) > 1e-9 || math.Abs(b-100) > 1e-9 {
		t.Errorf("identical: chrF %g BLEU %g", c, b)
	}
	if c, b := ChrF("xyz", "abc"), BLEU("xyz", "abc"); c != 0 || b != 0 {
		t.Errorf("disjoint: chrF %g BLEU %g", c, b)
	}
	if got := Tokenize13a("In 1995-1996, 3.5 m (deep)."); got != "In 1995 - 1996 , 3.5 m ( deep ) ." {
		t.Errorf("13a: %q", got)
	}
}

func TestReferenceFree(t *testing.T) {
	if r := LengthRatio("čtyři", "four four"); math.Abs(r-9.0/5) > 1e-12 {
		t.Errorf("length ratio %g (characters, not bytes)", r)
	}
	for _, c := range []struct {
		src, hyp    string
		total, kept int
	}{
		{"hroby 12 a 13, hloubka 2,5 m, rok 1995", "graves 12 and 13, depth 2.5 m, year 1995", 4, 4},
		{"12 12 13", "12 13 13", 3, 2},
		{"bez čísel", "no numbers", 0, 0},
		{"rok 1995", "year 1959", 1, 0},
	} {
		if total, kept := Numbers(c.src, c.hyp); total != c.total || kept != c.kept {
			t.Errorf("Numbers(%q, %q) = %d, %d; want %d, %d", c.src, c.hyp, total, kept, c.total, c.kept)
		}
	}
	terms := [][2]string{{"hrob", "grave"}, {"sídliště", "settlement"}}
	if total, hit := TermHits(terms, "A Grave near the village"); total != 2 || hit != 1 {
		t.Errorf("term hits %d/%d", hit, total)
	}
}
