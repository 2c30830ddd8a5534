// Package golden compares command outputs with golden files so that the
// comparison holds on any CPU: the layout and every word must be identical,
// while model numbers (decimal numbers such as scores and confidences) may
// differ by at most Tolerance. It is the one place where golden numbers are
// rounded or compared; tests never compare model digits themselves.
//
// Why a tolerance: libtorch picks its kernels by CPU (AVX2, AVX-512, AMX),
// so the same model gives probabilities that differ in the sixth or seventh
// decimal between an Intel and an AMD machine; a score printed with four
// decimals then flips its last digit when it lies near a rounding boundary
// (0.28665 → 0.2866 or 0.2867), and a confidence stored with 17 digits never
// matches. Tolerance allows one such flip plus the noise.
//
// In a Top-N table (columns CLASS-k and SCORE-k) two categories whose golden
// scores lie within Tolerance of each other may come out in either order.
package golden

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Tolerance is the largest absolute difference allowed between a model
// number of a run and the golden one: two units of the fourth decimal (the
// precision of the result tables).
const Tolerance = 2e-4

// number matches a decimal number with a fraction (integers such as page
// numbers and counts must match exactly).
var number = regexp.MustCompile(`-?[0-9]+\.[0-9]+(?:[eE][-+]?[0-9]+)?`)

// Compare reports how got differs from want beyond tol, nil when it does not.
func Compare(got, want []byte, tol float64) error {
	gl := strings.Split(strings.TrimRight(string(got), "\n"), "\n")
	wl := strings.Split(strings.TrimRight(string(want), "\n"), "\n")
	if len(gl) != len(wl) {
		return fmt.Errorf("%d lines, want %d", len(gl), len(wl))
	}
	if bytes.HasSuffix(got, []byte("\n")) != bytes.HasSuffix(want, []byte("\n")) {
		return fmt.Errorf("final newline differs")
	}
	var header []string
	if strings.Contains(wl[0], "CLASS-") && strings.Contains(wl[0], "SCORE-") {
		header = strings.Split(wl[0], ",")
	}
	for i := range wl {
		var err error
		if header != nil && i > 0 {
			err = compareTopN(header, gl[i], wl[i], tol)
		} else {
			err = compareLine(gl[i], wl[i], tol)
		}
		if err != nil {
			return fmt.Errorf("line %d: %v\n got: %s\nwant: %s", i+1, err, gl[i], wl[i])
		}
	}
	return nil
}

// compareLine compares the text of two lines exactly and their decimal
// numbers within tol.
func compareLine(got, want string, tol float64) error {
	gi := number.FindAllStringIndex(got, -1)
	wi := number.FindAllStringIndex(want, -1)
	if len(gi) != len(wi) {
		return fmt.Errorf("%d numbers, want %d", len(gi), len(wi))
	}
	gp, wp := 0, 0
	for k := range wi {
		if got[gp:gi[k][0]] != want[wp:wi[k][0]] {
			return fmt.Errorf("text %q, want %q", got[gp:gi[k][0]], want[wp:wi[k][0]])
		}
		if err := closeEnough(got[gi[k][0]:gi[k][1]], want[wi[k][0]:wi[k][1]], tol); err != nil {
			return err
		}
		gp, wp = gi[k][1], wi[k][1]
	}
	if got[gp:] != want[wp:] {
		return fmt.Errorf("text %q, want %q", got[gp:], want[wp:])
	}
	return nil
}

func closeEnough(g, w string, tol float64) error {
	a, err1 := strconv.ParseFloat(g, 64)
	b, err2 := strconv.ParseFloat(w, 64)
	if err1 != nil || err2 != nil || !within(a, b, tol) {
		return fmt.Errorf("number %s, want %s (tolerance %g)", g, w, tol)
	}
	return nil
}

// within reports |a-b| <= tol, forgiving the binary representation of
// decimals (0.1013-0.1011 is 2.0000000000000573e-4).
func within(a, b, tol float64) bool { return math.Abs(a-b) <= tol+1e-12 }

// compareTopN compares one row of a Top-N table: scores within tol, class
// names exactly, except that CLASS-k may hold a class whose golden score is
// within tol of the golden SCORE-k (a tie broken the other way).
func compareTopN(header []string, got, want string, tol float64) error {
	g, err1 := csv.NewReader(strings.NewReader(got)).Read()
	w, err2 := csv.NewReader(strings.NewReader(want)).Read()
	if err1 != nil || err2 != nil || len(g) != len(header) || len(w) != len(header) {
		return compareLine(got, want, tol)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	score := func(cells []string, k string) (float64, bool) {
		i, ok := col["SCORE-"+k]
		if !ok {
			return 0, false
		}
		v, err := strconv.ParseFloat(cells[i], 64)
		return v, err == nil
	}
	for i, h := range header {
		switch {
		case g[i] == w[i]:
		case number.MatchString(w[i]) && number.FindString(w[i]) == w[i]:
			if err := closeEnough(g[i], w[i], tol); err != nil {
				return fmt.Errorf("%s: %v", h, err)
			}
		case strings.HasPrefix(h, "CLASS-") || h == "CATEGORY":
			k := strings.TrimPrefix(h, "CLASS-")
			if h == "CATEGORY" {
				k = "1"
			}
			if !tied(header, w, g[i], k, tol, score) {
				return fmt.Errorf("%s %q, want %q (not a tie within %g)", h, g[i], w[i], tol)
			}
		default:
			return fmt.Errorf("%s %q, want %q", h, g[i], w[i])
		}
	}
	return nil
}

// tied reports whether class c sits in the golden row at some CLASS-m whose
// score is within tol of the golden SCORE-k.
func tied(header, w []string, c, k string, tol float64, score func([]string, string) (float64, bool)) bool {
	sk, ok := score(w, k)
	if !ok {
		return false
	}
	for i, h := range header {
		m, isClass := strings.CutPrefix(h, "CLASS-")
		if !isClass || w[i] != c {
			continue
		}
		if sm, ok := score(w, m); ok && within(sm, sk, tol) {
			return true
		}
	}
	return false
}

// Perturb returns data with every decimal number moved by a pseudo-random
// amount of at most amount (seeded, so reproducible) and written with the
// same number of decimals: what the same run on another CPU may print.
func Perturb(data []byte, amount float64, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	return number.ReplaceAllFunc(data, func(b []byte) []byte {
		s := string(b)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || strings.ContainsAny(s, "eE") {
			return b
		}
		decimals := len(s) - strings.IndexByte(s, '.') - 1
		q := math.Pow(10, -float64(decimals))
		// Move by at most amount, then round to the printed precision
		// without leaving amount (a flip of the last digit at most).
		d := (rng.Float64()*2 - 1) * amount
		p := math.Round((v+d)/q) * q
		if !within(p, v, amount) {
			p = v
		}
		if v >= 0 && p < 0 {
			p = 0
		}
		return []byte(strconv.FormatFloat(p, 'f', decimals, 64))
	})
}

// Check compares got with the golden file path and fails t on a difference
// beyond Tolerance. It also checks that got, perturbed within the tolerance
// as another CPU would print it, still passes, so no golden test depends on
// exact digits. With update set, the file is rewritten with got first.
func Check(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if err := Compare(got, want, Tolerance); err != nil {
		t.Errorf("%s differs from the golden file beyond the tolerance: %v", path, err)
		return
	}
	if err := Compare(Perturb(got, Tolerance/2, 1), want, Tolerance); err != nil {
		t.Errorf("%s: the output perturbed within the tolerance no longer matches, so the comparison depends on exact digits: %v", path, err)
	}
}
