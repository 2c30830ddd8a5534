// Package vocab loads the domain vocabulary (spec 2.5) and applies it (spec
// 4.6): tag-and-protect for the hosted MT backend, and a glossary list for
// LLM backends.
package vocab

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"archivekit/internal/regularfile"
)

// Entry is one vocabulary row.
type Entry struct {
	Source   string // source_lemma
	Target   string // target_translation
	Origin   string // source: which harvest the term came from (five-column form)
	SourceID string // source_id
	URI      string // uri of the concept
	Line     int    // line in the CSV file
}

// Vocabulary is a loaded vocabulary file.
type Vocabulary struct {
	// Path is the file it was loaded from.
	Path string
	// Entries holds the accepted rows in file order.
	Entries []Entry
	// Skipped holds one error per rejected row, each naming file and line.
	Skipped []error
	// Lang is the ISO 639-1 language of the source terms: the value of a
	// "# source_lang=xx" line before the header, otherwise DefaultLang.
	// The vocabulary applies only to text in this language.
	Lang string
	// LangDeclared reports that the file declared Lang.
	LangDeclared bool

	phrases []*Entry          // surface-matched entries, longest first
	words   map[string]*Entry // single-word entries by folded lemma
	whole   map[string]*Entry // every entry by its folded, space-normalised source
}

var (
	twoColumns  = []string{"source_lemma", "target_translation"}
	fiveColumns = []string{"source_lemma", "target_translation", "source", "source_id", "uri"}
)

// DefaultLang is the source language of a vocabulary that does not declare
// one: the spec's vocabulary is harvested from Czech records and a Czech
// thesaurus.
const DefaultLang = "cs"

var langLine = regexp.MustCompile(`^#\s*source_lang\s*[=:]\s*([A-Za-z]{2,3})\s*$`)

// maxSkipped stops reading a file that is mostly broken.
const maxSkipped = 1000

// Load reads a vocabulary CSV (two or five columns, header row, UTF-8 with
// or without BOM). Lines starting with '#' before the header are comments;
// "# source_lang=cs" declares the language of the source terms. A missing file or a wrong header is an error; a bad row
// is skipped and recorded in Skipped.
func Load(path string) (*Vocabulary, error) {
	data, err := regularfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	return Parse(bytes.NewReader(data), path)
}

// Parse reads a vocabulary from r; name is used in messages.
func Parse(r io.Reader, name string) (*Vocabulary, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not UTF-8 text", name)
	}
	v := &Vocabulary{Path: name, Lang: DefaultLang}
	// Comment lines before the header; one may declare the source language.
	skippedLines := 0
	for bytes.HasPrefix(data, []byte("#")) {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		if m := langLine.FindSubmatch(bytes.TrimRight(line, "\r")); m != nil {
			v.Lang, v.LangDeclared = strings.ToLower(string(m[1])), true
		}
		data = rest
		skippedLines++
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, want a header row %s", name, strings.Join(twoColumns, ","))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: header: %v", name, err)
	}
	for i := range header {
		header[i] = strings.ToLower(strings.TrimSpace(header[i]))
	}
	if !equal(header, twoColumns) && !equal(header, fiveColumns) {
		return nil, fmt.Errorf("%s:%d: %s, want %s or %s", name, 1+skippedLines, describeHeader(header),
			strings.Join(twoColumns, ","), strings.Join(fiveColumns, ","))
	}
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				v.Skipped = append(v.Skipped, fmt.Errorf("%s:%d: %v", name, pe.StartLine+skippedLines, pe.Err))
			} else {
				v.Skipped = append(v.Skipped, fmt.Errorf("%s: %v", name, err))
			}
			if len(v.Skipped) >= maxSkipped {
				return nil, fmt.Errorf("%s: more than %d bad rows, giving up (first: %v)", name, maxSkipped, v.Skipped[0])
			}
			continue
		}
		line, _ := cr.FieldPos(0)
		line += skippedLines
		if len(rec) != len(header) {
			v.Skipped = append(v.Skipped, fmt.Errorf("%s:%d: %d columns, want %d", name, line, len(rec), len(header)))
			continue
		}
		e := Entry{Source: strings.TrimSpace(rec[0]), Target: strings.TrimSpace(rec[1]), Line: line}
		if len(rec) == 5 {
			e.Origin, e.SourceID, e.URI = strings.TrimSpace(rec[2]), strings.TrimSpace(rec[3]), strings.TrimSpace(rec[4])
		}
		switch key := fold(e.Source); {
		case e.Source == "":
			v.Skipped = append(v.Skipped, fmt.Errorf("%s:%d: empty source_lemma", name, line))
		case e.Target == "":
			v.Skipped = append(v.Skipped, fmt.Errorf("%s:%d: empty target_translation for %q", name, line, e.Source))
		case seen[key] > 0:
			v.Skipped = append(v.Skipped, fmt.Errorf("%s:%d: %q already defined on line %d", name, line, e.Source, seen[key]))
		default:
			seen[key] = line
			v.Entries = append(v.Entries, e)
		}
	}
	v.index()
	return v, nil
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// fold lower-cases rune by rune, as the matcher does.
func fold(s string) string { return strings.Map(unicode.ToLower, s) }

// isSingleWord reports whether an entry is matched by lemma: letters and
// combining marks only. Everything else (several words, hyphens, slashes,
// digits, brackets) is matched on the surface like a phrase.
func isSingleWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			return false
		}
	}
	return true
}

func (v *Vocabulary) index() {
	v.words = map[string]*Entry{}
	v.whole = map[string]*Entry{}
	v.phrases = nil
	for i := range v.Entries {
		e := &v.Entries[i]
		if k := wholeKey(e.Source); v.whole[k] == nil {
			v.whole[k] = e
		}
		if isSingleWord(e.Source) {
			v.words[fold(e.Source)] = e
		} else {
			v.phrases = append(v.phrases, e)
		}
	}
	sortLongestFirst(v.phrases)
}

func sortLongestFirst(es []*Entry) {
	sort.SliceStable(es, func(i, j int) bool {
		li, lj := utf8.RuneCountInString(es[i].Source), utf8.RuneCountInString(es[j].Source)
		if li != lj {
			return li > lj
		}
		return fold(es[i].Source) < fold(es[j].Source)
	})
}

// Len returns the number of entries.
func (v *Vocabulary) Len() int { return len(v.Entries) }

// Counts returns how many entries are matched on the surface (phrases and
// other non-letter entries) and how many by lemma (single words).
func (v *Vocabulary) Counts() (phrases, words int) { return len(v.phrases), len(v.words) }

// span is a matched vocabulary entry at text[start:end] (byte offsets).
type span struct {
	start, end int
	entry      *Entry
}

// foldedText is text lower-cased rune by rune with, for every byte of the
// folded string, the byte offset of its rune in the original.
type foldedText struct {
	orig string
	s    string
	off  []int // len(s)+1 entries
}

func newFolded(text string) foldedText {
	var b strings.Builder
	off := make([]int, 0, len(text)+1)
	for i, r := range text {
		n, _ := b.WriteRune(unicode.ToLower(r))
		for k := 0; k < n; k++ {
			off = append(off, i)
		}
	}
	off = append(off, len(text))
	return foldedText{orig: text, s: b.String(), off: off}
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// find returns every whole-word, case-insensitive occurrence of the folded
// needle as original byte spans. The boundary rule applies on a side only
// when the needle starts (ends) with a word character.
func (f foldedText) find(needle string) [][2]int {
	if needle == "" {
		return nil
	}
	first, _ := utf8.DecodeRuneInString(needle)
	last, _ := utf8.DecodeLastRuneInString(needle)
	var out [][2]int
	for from := 0; from <= len(f.s); {
		i := strings.Index(f.s[from:], needle)
		if i < 0 {
			break
		}
		i += from
		j := i + len(needle)
		start, end := f.off[i], f.off[j]
		ok := true
		if isWordRune(first) && start > 0 {
			r, _ := utf8.DecodeLastRuneInString(f.orig[:start])
			ok = !isWordRune(r)
		}
		if ok && isWordRune(last) && end < len(f.orig) {
			r, _ := utf8.DecodeRuneInString(f.orig[end:])
			ok = !isWordRune(r)
		}
		if ok {
			out = append(out, [2]int{start, end})
		}
		_, size := utf8.DecodeRuneInString(f.s[i:])
		from = i + size
	}
	return out
}

// overlaps reports whether [start,end) intersects a taken span.
func overlaps(taken []span, start, end int) bool {
	for _, s := range taken {
		if start < s.end && s.start < end {
			return true
		}
	}
	return false
}

// phraseSpans finds surface entries, longest first, every occurrence,
// skipping occurrences that overlap a longer match.
func (v *Vocabulary) phraseSpans(f foldedText) []span {
	var taken []span
	for _, e := range v.phrases {
		for _, m := range f.find(fold(e.Source)) {
			if !overlaps(taken, m[0], m[1]) {
				taken = append(taken, span{m[0], m[1], e})
			}
		}
	}
	return taken
}

// DefaultGlossaryTerms is the default of LLM_MAX_GLOSSARY_TERMS.
const DefaultGlossaryTerms = 40

// MaxGlossaryTermsFromEnv reads LLM_MAX_GLOSSARY_TERMS (default 40); a value
// that is not a whole number >= 0 is an error naming the variable.
func MaxGlossaryTermsFromEnv(getenv func(string) string) (int, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	s := strings.TrimSpace(getenv("LLM_MAX_GLOSSARY_TERMS"))
	if s == "" {
		return DefaultGlossaryTerms, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("LLM_MAX_GLOSSARY_TERMS=%q: want a whole number >= 0", s)
	}
	return n, nil
}

// Glossary returns the entries whose source occurs in text (whole words,
// case-insensitive), as source/target pairs, longest source first, at most
// max of them (the glossary for LLM backends, spec 4.6).
func (v *Vocabulary) Glossary(text string, max int) [][2]string {
	if v == nil || max <= 0 || strings.TrimSpace(text) == "" {
		return nil
	}
	f := newFolded(text)
	var found []*Entry
	for i := range v.Entries {
		e := &v.Entries[i]
		if len(f.find(fold(e.Source))) > 0 {
			found = append(found, e)
		}
	}
	sortLongestFirst(found)
	if len(found) > max {
		found = found[:max]
	}
	out := make([][2]string, len(found))
	for i, e := range found {
		out[i] = [2]string{e.Source, e.Target}
	}
	return out
}

// describeHeader quotes a wrong header only when it looks like one (a
// few short words): a mis-set path may point at a file of secrets, whose
// first line must not reach a log or an answer.
func describeHeader(header []string) string {
	for _, h := range header {
		if len(h) > 32 || strings.IndexFunc(h, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '_' || r == ' ' || r == '-') }) >= 0 {
			return fmt.Sprintf("the first row (%d columns, not shown) is not a header", len(header))
		}
	}
	return fmt.Sprintf("header %q", strings.Join(header, ","))
}
