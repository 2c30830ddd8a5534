// Package mteval scores machine translation: sentence chrF and BLEU computed
// exactly as sacrebleu 2.x computes sentence_chrf and sentence_bleu with their
// defaults (a test compares them with the PyPI package on the same strings),
// and the reference-free checks of the backend bake-off: length ratio,
// number preservation and terminology hits.
package mteval

import (
	"math"
	"regexp"
	"strings"
	"unicode"

	"archivekit/internal/translate/alto"
)

// pySplit is Python's str.split(): fields separated by Python white space.
func pySplit(s string) []string { return alto.Fields(s) }

// ChrF is sacrebleu's sentence_chrf(hyp, [ref]) with the defaults: character
// n-grams of order 1 to 6, no word n-grams, beta 2, white space removed, no
// epsilon smoothing. The result is in [0, 100].
func ChrF(hyp, ref string) float64 {
	const order, beta = 6, 2.0
	h := []rune(strings.Join(pySplit(hyp), ""))
	r := []rune(strings.Join(pySplit(ref), ""))
	factor := beta * beta
	var avgPrec, avgRec float64
	eff := 0
	for n := 1; n <= order; n++ {
		hc, rc := charNgrams(h, n), charNgrams(r, n)
		nHyp, nRef, nMatch := 0, 0, 0
		for g, c := range hc {
			nHyp += c
			if rcount, ok := rc[g]; ok {
				nMatch += min(c, rcount)
			}
		}
		for _, c := range rc {
			nRef += c
		}
		if nHyp > 0 && nRef > 0 {
			avgPrec += float64(nMatch) / float64(nHyp)
			avgRec += float64(nMatch) / float64(nRef)
			eff++
		}
	}
	if eff == 0 {
		return 0
	}
	avgPrec /= float64(eff)
	avgRec /= float64(eff)
	if avgPrec+avgRec == 0 {
		return 0
	}
	return 100 * (1 + factor) * avgPrec * avgRec / (factor*avgPrec + avgRec)
}

func charNgrams(s []rune, n int) map[string]int {
	m := map[string]int{}
	for i := 0; i+n <= len(s); i++ {
		m[string(s[i:i+n])]++
	}
	return m
}

// The 13a tokenizer of sacrebleu (mteval-v13a): language-independent
// replacements, then these regular expressions in order.
var tok13a = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile("([\\{-\\~\\[-\\` -\\&\\(-\\+\\:-\\@\\/])"), " ${1} "},
	{regexp.MustCompile(`([^0-9])([\.,])`), "${1} ${2} "},
	{regexp.MustCompile(`([\.,])([^0-9])`), " ${1} ${2}"},
	{regexp.MustCompile(`([0-9])(-)`), "${1} ${2} "},
}

// Tokenize13a tokenizes a line as sacrebleu's default BLEU tokenizer does.
func Tokenize13a(line string) string {
	line = strings.ReplaceAll(line, "<skipped>", "")
	line = strings.ReplaceAll(line, "-\n", "")
	line = strings.ReplaceAll(line, "\n", " ")
	if strings.Contains(line, "&") {
		line = strings.ReplaceAll(line, "&quot;", `"`)
		line = strings.ReplaceAll(line, "&amp;", "&")
		line = strings.ReplaceAll(line, "&lt;", "<")
		line = strings.ReplaceAll(line, "&gt;", ">")
	}
	line = " " + line + " "
	for _, t := range tok13a {
		line = t.re.ReplaceAllString(line, t.repl)
	}
	return strings.Join(pySplit(line), " ")
}

// pyRstrip is Python's str.rstrip().
func pyRstrip(s string) string { return strings.TrimRightFunc(s, alto.IsPySpace) }

// BLEU is sacrebleu's sentence_bleu(hyp, [ref]) with the defaults: 13a
// tokenization, case-sensitive, n-grams up to 4, "exp" smoothing, effective
// order. The result is in [0, 100].
func BLEU(hyp, ref string) float64 {
	const maxOrder = 4
	ht := pySplit(Tokenize13a(pyRstrip(hyp)))
	rt := pySplit(Tokenize13a(pyRstrip(ref)))
	rg := wordNgrams(rt, maxOrder)
	sysLen, refLen := len(ht), len(rt)
	correct := make([]int, maxOrder)
	total := make([]int, maxOrder)
	for g, c := range wordNgrams(ht, maxOrder) {
		n := strings.Count(g, "\x00")
		total[n] += c
		if rc, ok := rg[g]; ok {
			correct[n] += min(c, rc)
		}
	}
	bp := 1.0
	if sysLen < refLen {
		if sysLen > 0 {
			bp = math.Exp(1 - float64(refLen)/float64(sysLen))
		} else {
			bp = 0
		}
	}
	any := false
	for _, c := range correct {
		any = any || c > 0
	}
	if !any {
		return 0
	}
	precisions := make([]float64, maxOrder)
	smooth := 1.0
	eff := maxOrder
	for n := 1; n <= maxOrder; n++ {
		if total[n-1] == 0 {
			break
		}
		eff = n
		if correct[n-1] == 0 {
			smooth *= 2
			precisions[n-1] = 100 / (smooth * float64(total[n-1]))
		} else {
			precisions[n-1] = 100 * float64(correct[n-1]) / float64(total[n-1])
		}
	}
	sum := 0.0
	for _, p := range precisions[:eff] {
		sum += myLog(p)
	}
	return bp * math.Exp(sum/float64(eff))
}

func myLog(x float64) float64 {
	if x == 0 {
		return -9999999999
	}
	return math.Log(x)
}

// wordNgrams counts the n-grams of order 1..max, tokens joined by NUL.
func wordNgrams(tokens []string, max int) map[string]int {
	m := map[string]int{}
	for n := 1; n <= max; n++ {
		for i := 0; i+n <= len(tokens); i++ {
			m[strings.Join(tokens[i:i+n], "\x00")]++
		}
	}
	return m
}

// LengthRatio is the hypothesis length over the source length, in
// characters (0 for an empty source).
func LengthRatio(src, hyp string) float64 {
	n := len([]rune(src))
	if n == 0 {
		return 0
	}
	return float64(len([]rune(hyp))) / float64(n)
}

var numberRE = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// normaliseNumber makes "1,5" and "1.5" equal (decimal commas), and drops
// thousands separators written as spaces inside the match (none match).
func normaliseNumber(s string) string { return strings.ReplaceAll(s, ",", ".") }

// Numbers counts the numbers of src and how many of them hyp keeps (as a
// multiset; a decimal comma equals a decimal point).
func Numbers(src, hyp string) (total, kept int) {
	have := map[string]int{}
	for _, n := range numberRE.FindAllString(hyp, -1) {
		have[normaliseNumber(n)]++
	}
	for _, n := range numberRE.FindAllString(src, -1) {
		total++
		k := normaliseNumber(n)
		if have[k] > 0 {
			have[k]--
			kept++
		}
	}
	return total, kept
}

// TermHits counts the expected target terms (from vocabulary entries found
// in the source) that occur in hyp, case-insensitively.
func TermHits(terms [][2]string, hyp string) (total, hit int) {
	h := strings.Map(unicode.ToLower, hyp)
	for _, t := range terms {
		total++
		if strings.Contains(h, strings.Map(unicode.ToLower, t[1])) {
			hit++
		}
	}
	return total, hit
}
