package results

import (
	"archivekit/internal/utf8name"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/review"
)

// Row is one classified page.
type Row struct {
	Key
	// Scores are the probabilities of the eleven categories in canonical
	// order (modelmeta.Categories); for the BEST tables, the averaged ones.
	Scores []float64
	// PerModel holds each model's canonical probability vector, in the
	// order of the revisions given to BestTop1 / BestAvg.
	PerModel [][]float64
	// True is the gold category of evaluation rows.
	True string
	// Review is the page's review (ReviewLayout); nil for other tables.
	Review *review.Page
	// Source is the input's path relative to the input root, as on disk
	// (WithSource).
	Source string
	// Book holds the identifiers of a page of a book (WithBook); zero for
	// a page of a file.
	Book BookPage
	// PageLabel is the page's label in its PDF or its book (WithPageLabel),
	// "" when it has none or the input is neither.
	PageLabel string
}

// PageLabelColumn is the column WithPageLabel appends.
const PageLabelColumn = "PAGE_LABEL"

type labelled struct{ Layout }

// WithPageLabel is l with one more column at the end, PAGE_LABEL (pageclass
// puts it before SOURCE, which stays last in a run of files): the
// page's label in its PDF, as a PDF reader shows it ("iv", "12a"; Row.
// PageLabel; pageclass gives a book's page its label in the book),
// beside the page's number in PAGE; empty for a page of a PDF without page
// labels and for other inputs. A run writes it when its input holds a PDF
// or a book.
func WithPageLabel(l Layout) Layout { return labelled{l} }

func (l labelled) Header() []string { return append(l.Layout.Header(), PageLabelColumn) }

func (l labelled) Cells(r Row) ([]string, error) {
	c, err := l.Layout.Cells(r)
	if err != nil {
		return nil, err
	}
	return append(c, utf8name.Escape(r.PageLabel)), nil
}

// BookPage identifies a row's page in its book (a METS file or a IIIF
// manifest), so that the row joins back to the catalogue.
type BookPage struct {
	// ID is the METS physical div's ID, or the canvas id.
	ID string
	// Order is the METS div's ORDER; empty for IIIF.
	Order string
	// Label is the METS div's ORDERLABEL (or LABEL), or the canvas label.
	Label string
}

// BookColumns are the columns WithBook appends.
var BookColumns = []string{"BOOK_PAGE_ID", "BOOK_ORDER", "BOOK_LABEL"}

type booked struct{ Layout }

// WithBook is l with three more columns at the end, BookColumns: the
// identifiers of the row's page in its book (Row.Book: the METS div ID,
// ORDER and ORDERLABEL, or the canvas id and label), empty for a row of a
// file. Like SOURCE they are beyond the spec's columns, after them, so a
// reader of the spec's columns reads the table as before; a run writes
// them when its input holds a book (pageclass WithSource then WithBook).
func WithBook(l Layout) Layout { return booked{l} }

func (l booked) Header() []string { return append(l.Layout.Header(), BookColumns...) }

func (l booked) Cells(r Row) ([]string, error) {
	c, err := l.Layout.Cells(r)
	if err != nil {
		return nil, err
	}
	return append(c, utf8name.Escape(r.Book.ID), utf8name.Escape(r.Book.Order), utf8name.Escape(r.Book.Label)), nil
}

// SourceColumn is the column WithSource appends.
const SourceColumn = "SOURCE"

type sourced struct{ Layout }

// WithSource is l with one more column at the end, SOURCE: the row's input
// file relative to the input root, as on disk with its extension (Row.Source,
// made valid UTF-8 by utf8name.Escape). It is beyond the spec's columns and last,
// so a reader of the spec's columns reads the table as before, and a row
// joins to its file whatever its FILE and PAGE.
func WithSource(l Layout) Layout { return sourced{l} }

func (l sourced) Header() []string { return append(l.Layout.Header(), SourceColumn) }

func (l sourced) Cells(r Row) ([]string, error) {
	c, err := l.Layout.Cells(r)
	if err != nil {
		return nil, err
	}
	return append(c, utf8name.Escape(r.Source)), nil
}

// Layout turns rows into CSV records.
type Layout interface {
	// Header is the CSV header.
	Header() []string
	// Cells formats one row; its length equals the header's.
	Cells(r Row) ([]string, error)
}

// Decimals is the number of decimals of every score cell.
const Decimals = 4

// FormatScore writes a score with Decimals decimals.
func FormatScore(s float64) string { return strconv.FormatFloat(s, 'f', Decimals, 64) }

// Ranked is one category with its score.
type Ranked struct {
	Label string
	Score float64
}

// TopN returns the n best categories of a canonical score vector, best
// first; equal scores keep canonical order.
func TopN(scores []float64, n int) []Ranked {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	if n > len(idx) {
		n = len(idx)
	}
	out := make([]Ranked, n)
	for i := 0; i < n; i++ {
		out[i] = Ranked{modelmeta.Categories[idx[i]], scores[idx[i]]}
	}
	return out
}

func checkScores(r Row, v []float64) error {
	if len(v) != len(modelmeta.Categories) {
		return fmt.Errorf("%s: %d scores, want %d", r.Key, len(v), len(modelmeta.Categories))
	}
	return nil
}

type topN struct {
	n          int
	eval       bool
	blankZeros bool
}

// TopNLayout is the TOP-N table: FILE, PAGE, CLASS-1..N, SCORE-1..N, then
// CATEGORY (a copy of CLASS-1) when n is 1, then TRUE when eval is set.
func TopNLayout(n int, eval bool) (Layout, error) {
	if n < 1 || n > len(modelmeta.Categories) {
		return nil, fmt.Errorf("top-N %d: want 1 to %d", n, len(modelmeta.Categories))
	}
	return topN{n: n, eval: eval}, nil
}

func (l topN) Header() []string {
	h := []string{"FILE", "PAGE"}
	for i := 1; i <= l.n; i++ {
		h = append(h, fmt.Sprintf("CLASS-%d", i))
	}
	for i := 1; i <= l.n; i++ {
		h = append(h, fmt.Sprintf("SCORE-%d", i))
	}
	if l.n == 1 {
		h = append(h, "CATEGORY")
	}
	if l.eval {
		h = append(h, "TRUE")
	}
	return h
}

func (l topN) Cells(r Row) ([]string, error) {
	if err := checkScores(r, r.Scores); err != nil {
		return nil, err
	}
	top := TopN(r.Scores, l.n)
	classes := make([]string, l.n)
	scores := make([]string, l.n)
	for i, t := range top {
		classes[i], scores[i] = t.Label, FormatScore(t.Score)
		if l.blankZeros && scores[i] == FormatScore(0) {
			classes[i], scores[i] = "", ""
		}
	}
	c := append([]string{r.File, r.PageCell()}, classes...)
	c = append(c, scores...)
	if l.n == 1 {
		c = append(c, classes[0])
	}
	if l.eval {
		c = append(c, r.True)
	}
	return c, nil
}

type raw struct{ eval bool }

// RawLayout is the RAW table: FILE, PAGE, the eleven categories in
// canonical order, then TRUE when eval is set.
func RawLayout(eval bool) Layout { return raw{eval} }

func (l raw) Header() []string {
	h := append([]string{"FILE", "PAGE"}, modelmeta.Categories...)
	if l.eval {
		h = append(h, "TRUE")
	}
	return h
}

func (l raw) Cells(r Row) ([]string, error) {
	if err := checkScores(r, r.Scores); err != nil {
		return nil, err
	}
	c := []string{r.File, r.PageCell()}
	for _, s := range r.Scores {
		c = append(c, FormatScore(s))
	}
	if l.eval {
		c = append(c, r.True)
	}
	return c, nil
}

type bestTop1 struct{ revs []string }

// BestTop1Layout is the per-model table of an ensemble run: FILE, PAGE,
// CLASS-1-{rev} for each revision, from Row.PerModel.
func BestTop1Layout(revs []string) Layout { return bestTop1{revs} }

func (l bestTop1) Header() []string {
	h := []string{"FILE", "PAGE"}
	for _, r := range l.revs {
		h = append(h, "CLASS-1-"+r)
	}
	return h
}

func perModelTop1(r Row, revs []string) ([]string, error) {
	if len(r.PerModel) != len(revs) {
		return nil, fmt.Errorf("%s: %d model results, want %d", r.Key, len(r.PerModel), len(revs))
	}
	out := make([]string, len(revs))
	for i, v := range r.PerModel {
		if err := checkScores(r, v); err != nil {
			return nil, err
		}
		out[i] = TopN(v, 1)[0].Label
	}
	return out, nil
}

func (l bestTop1) Cells(r Row) ([]string, error) {
	top, err := perModelTop1(r, l.revs)
	if err != nil {
		return nil, err
	}
	return append([]string{r.File, r.PageCell()}, top...), nil
}

type bestAvg struct {
	revs []string
	top  topN
}

// BestAvgLayout is the averaged table of an ensemble run: FILE, PAGE, one
// column per revision named in upper case (V1.4 ...) holding that model's
// Top-1 category, then the pairs CLASS-1, SCORE-1, ..., CLASS-N, SCORE-N of
// the averaged scores (Row.Scores), as spec 2.7 lists them. A score that
// formats as zero is left blank and so is its paired CLASS cell. CATEGORY is
// added when n is 1, as in TOP-N.
func BestAvgLayout(revs []string, n int) (Layout, error) {
	t, err := TopNLayout(n, false)
	if err != nil {
		return nil, err
	}
	tn := t.(topN)
	tn.blankZeros = true
	return bestAvg{revs, tn}, nil
}

func (l bestAvg) Header() []string {
	h := []string{"FILE", "PAGE"}
	for _, r := range l.revs {
		h = append(h, strings.ToUpper(r))
	}
	return append(h, l.pairs(l.top.Header()[2:])...)
}

// pairs reorders TOP-N cells (CLASS-1..N, SCORE-1..N[, CATEGORY]) into
// CLASS-1, SCORE-1, ..., CLASS-N, SCORE-N[, CATEGORY].
func (l bestAvg) pairs(c []string) []string {
	n := l.top.n
	out := make([]string, 0, len(c))
	for k := 0; k < n; k++ {
		out = append(out, c[k], c[n+k])
	}
	return append(out, c[2*n:]...)
}

func (l bestAvg) Cells(r Row) ([]string, error) {
	per, err := perModelTop1(r, l.revs)
	if err != nil {
		return nil, err
	}
	avg, err := l.top.Cells(r)
	if err != nil {
		return nil, err
	}
	c := append([]string{r.File, r.PageCell()}, per...)
	return append(c, l.pairs(avg[2:])...), nil
}

// Average returns the element-wise mean of equally long probability vectors.
func Average(vs [][]float64) []float64 {
	if len(vs) == 0 {
		return nil
	}
	out := make([]float64, len(vs[0]))
	for _, v := range vs {
		for i, x := range v {
			out[i] += x
		}
	}
	for i := range out {
		out[i] /= float64(len(vs))
	}
	return out
}
