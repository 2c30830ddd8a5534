// Package guard rejects backend replies that cannot be translations of
// their source (the degeneracy guards of every translation backend):
//
//   - an empty reply to a non-empty source;
//   - a reply shorter or longer than MinRatio / MaxRatio times its source,
//     in characters (spec 8, "Length guard", defaults 0.25 and 4.0);
//   - a reply repeating one token or n-gram far beyond the source (a run of
//     at least RepeatRun consecutive copies where the source's longest run
//     is less than half as long, or one token making more than half of a
//     reply of 12 tokens or more);
//   - a reply copying its source unchanged when the languages differ
//     (only for sources of at least CopyMinWords words of running text,
//     so names, numbers, codes, labels in capitals and OCR noise, which
//     are rightly copied, pass).
//
// Check tests one segment; CheckLines tests a newline-joined batch line by
// line when the line count survived, so one bad line does not condemn its
// neighbours. A rejected reply is returned as a *Rejection error, which the
// pipelines retry once and then leave untranslated (Translate).
package guard

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Defaults of the length guard (spec 8).
const (
	DefaultMinRatio = 0.25
	DefaultMaxRatio = 4.0
	// RepeatRun is the shortest run of consecutive copies of one n-gram
	// (n <= maxGram) that counts as degenerate repetition.
	RepeatRun = 4
	// CopyMinWords is the fewest words a source needs before an unchanged
	// copy of it counts as a failed translation.
	CopyMinWords = 4
	maxGram      = 6
)

// Config is one backend's guard.
type Config struct {
	MinRatio, MaxRatio float64
	// LengthOnly keeps the emptiness and length checks and drops the
	// repetition and copy checks. Only the tests on tiny random-weight
	// models set it: their output is noise by construction.
	LengthOnly bool
}

// Default is the spec's guard: 0.25 to 4.0.
var Default = Config{MinRatio: DefaultMinRatio, MaxRatio: DefaultMaxRatio}

// FromEnv reads <prefix>_GUARD_MIN_RATIO and <prefix>_GUARD_MAX_RATIO
// (getenv nil: the process environment); unset or blank keeps the default.
// A value that is not a positive number, or a minimum not below the
// maximum, is an error naming the variables.
func FromEnv(prefix string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c := Default
	for _, v := range []struct {
		name string
		dst  *float64
	}{{prefix + "_GUARD_MIN_RATIO", &c.MinRatio}, {prefix + "_GUARD_MAX_RATIO", &c.MaxRatio}} {
		s := strings.TrimSpace(getenv(v.name))
		if s == "" {
			continue
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0) || f > 1e6 {
			return Default, fmt.Errorf("%s=%q: want a positive number", v.name, s)
		}
		*v.dst = f
	}
	if c.MinRatio >= c.MaxRatio {
		return Default, fmt.Errorf("%s_GUARD_MIN_RATIO=%g is not below %s_GUARD_MAX_RATIO=%g", prefix, c.MinRatio, prefix, c.MaxRatio)
	}
	return c, nil
}

// Reason says why a reply was rejected.
type Reason string

// Rejection reasons.
const (
	Empty      Reason = "empty"
	TooShort   Reason = "too_short"
	TooLong    Reason = "too_long"
	Repetition Reason = "repetition"
	Copy       Reason = "copy"
	// Truncated: the model stopped at its maximum output length, so the
	// reply is cut (set by backends that know, e.g. ct2 at CT2_MAX_LENGTH).
	Truncated Reason = "truncated"
)

// ErrRejected is wrapped by every *Rejection (errors.Is).
var ErrRejected = errors.New("reply rejected by the degeneracy guard")

// Rejection is a reply that failed the guard.
type Rejection struct {
	Reason Reason
	// Detail describes the failure in numbers.
	Detail string
	// Lines lists the rejected lines (0-based) when a batch was checked
	// line by line; nil means the whole reply.
	Lines []int
	// Output is the whole reply, kept so that the accepted lines of a
	// batch can be used; the rejected lines must never be written.
	Output string
}

func (r *Rejection) Error() string {
	s := fmt.Sprintf("reply rejected (%s): %s", r.Reason, r.Detail)
	if len(r.Lines) > 0 {
		s += fmt.Sprintf(" [%d of the batch's lines]", len(r.Lines))
	}
	return s
}

func (r *Rejection) Unwrap() error { return ErrRejected }

// AsRejection returns the *Rejection in err's chain, or nil.
func AsRejection(err error) *Rejection {
	var r *Rejection
	if errors.As(err, &r) {
		return r
	}
	return nil
}

// Check tests one reply against its source. srcLang and tgtLang decide
// whether an unchanged copy is a failure. A nil result means accepted.
func (c Config) Check(src, out, srcLang, tgtLang string) *Rejection {
	s, o := strings.TrimSpace(src), strings.TrimSpace(out)
	if s == "" {
		return nil
	}
	if o == "" {
		return &Rejection{Reason: Empty, Detail: fmt.Sprintf("empty reply to %d characters", utf8.RuneCountInString(s)), Output: out}
	}
	ns, no := utf8.RuneCountInString(s), utf8.RuneCountInString(o)
	r := float64(no) / float64(ns)
	if c.MinRatio > 0 && r < c.MinRatio {
		return &Rejection{Reason: TooShort, Output: out,
			Detail: fmt.Sprintf("%d characters for a source of %d (ratio %.2f, allowed %.2f to %.2f)", no, ns, r, c.MinRatio, c.MaxRatio)}
	}
	if c.MaxRatio > 0 && r > c.MaxRatio {
		return &Rejection{Reason: TooLong, Output: out,
			Detail: fmt.Sprintf("%d characters for a source of %d (ratio %.2f, allowed %.2f to %.2f)", no, ns, r, c.MinRatio, c.MaxRatio)}
	}
	if c.LengthOnly {
		return nil
	}
	st, ot := tokens(s), tokens(o)
	if run, gram := longestRun(ot); run >= RepeatRun {
		if srun, _ := longestRun(st); run > 2*srun+1 {
			return &Rejection{Reason: Repetition, Output: out,
				Detail: fmt.Sprintf("%q repeated %d times in a row (source's longest run: %d)", gram, run, srun)}
		}
	}
	if tok, share := dominant(ot); len(ot) >= 12 && share > 0.5 {
		if _, sshare := dominant(st); sshare <= 0.25 {
			return &Rejection{Reason: Repetition, Output: out,
				Detail: fmt.Sprintf("%q makes %.0f%% of the reply's %d words", tok, 100*share, len(ot))}
		}
	}
	if srcLang != "" && tgtLang != "" && !strings.EqualFold(srcLang, tgtLang) &&
		words(s) >= CopyMinWords && strings.Join(strings.Fields(s), " ") == strings.Join(strings.Fields(o), " ") {
		return &Rejection{Reason: Copy, Output: out,
			Detail: fmt.Sprintf("the reply is the %s source unchanged (%d words), not %s", srcLang, words(s), tgtLang)}
	}
	return nil
}

// CheckLines tests a newline-joined batch. When the reply has as many lines
// as the source, each line is checked against its own source line and the
// rejection lists the failed lines; otherwise the whole reply is checked.
func (c Config) CheckLines(src, out, srcLang, tgtLang string) *Rejection {
	sl := strings.Split(src, "\n")
	ol := strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n")
	for len(ol) > len(sl) && strings.TrimSpace(ol[len(ol)-1]) == "" {
		ol = ol[:len(ol)-1]
	}
	if len(sl) < 2 || len(sl) != len(ol) {
		return c.Check(src, out, srcLang, tgtLang)
	}
	var first *Rejection
	var bad []int
	for i := range sl {
		if r := c.Check(sl[i], ol[i], srcLang, tgtLang); r != nil {
			if first == nil {
				first = r
			}
			bad = append(bad, i)
		}
	}
	if first == nil {
		return nil
	}
	return &Rejection{Reason: first.Reason, Detail: fmt.Sprintf("line %d: %s", bad[0]+1, first.Detail), Lines: bad, Output: out}
}

// tokens lower-cases text and splits it into words without the punctuation
// around them; tokens that are punctuation only are dropped.
func tokens(s string) []string {
	var out []string
	for _, f := range strings.Fields(s) {
		f = strings.TrimFunc(f, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
		if f != "" {
			out = append(out, strings.ToLower(f))
		}
	}
	return out
}

// words counts the words that look like running language: three letters
// or more, one of them lower-case. Codes, abbreviations, labels in
// capitals and OCR noise ("O C CD 9") do not count: a model copies them
// rightly.
func words(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		letters, lower := 0, false
		for _, r := range f {
			if unicode.IsLetter(r) {
				letters++
				lower = lower || unicode.IsLower(r)
			}
		}
		if letters >= 3 && lower {
			n++
		}
	}
	return n
}

// longestRun returns the longest run of consecutive copies of one n-gram
// (n = 1..maxGram) in toks, and that n-gram; a text without any repeat
// gives 1.
func longestRun(toks []string) (int, string) {
	best, gram := 1, ""
	for n := 1; n <= maxGram && 2*n <= len(toks); n++ {
		for i := 0; i+2*n <= len(toks); {
			k := 1
			for i+(k+1)*n <= len(toks) && equal(toks[i:i+n], toks[i+k*n:i+(k+1)*n]) {
				k++
			}
			if k > best {
				best, gram = k, strings.Join(toks[i:i+n], " ")
			}
			if k > 1 {
				i += (k - 1) * n // the run's later starts give shorter runs
			} else {
				i++
			}
		}
	}
	return best, gram
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// dominant returns the most frequent token of three letters or more and
// its share of all tokens.
func dominant(toks []string) (string, float64) {
	if len(toks) == 0 {
		return "", 0
	}
	counts := map[string]int{}
	best, n := "", 0
	for _, t := range toks {
		if utf8.RuneCountInString(t) < 3 {
			continue
		}
		counts[t]++
		if c := counts[t]; c > n || c == n && t < best {
			best, n = t, c
		}
	}
	return best, float64(n) / float64(len(toks))
}
