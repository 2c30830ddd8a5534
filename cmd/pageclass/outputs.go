package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"archivekit/internal/bookout"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
)

// outputSpec says which tables a classification run writes (spec 2.7).
type outputSpec struct {
	Dir   string
	Stamp string
	// Names are the models' names (revisions), in column order.
	Names []string
	TopN  int
	Raw   bool
	// Best is an ensemble run: the BEST tables instead of one TOP-N.
	Best bool
	// Average writes the AVG_TOP-N table of an ensemble run.
	Average bool
	// Intermediates writes each model's own TOP-N (and RAW) table.
	Intermediates bool
	Chunk         int
	// Books adds the book identifiers (results.WithBook) after SOURCE: the
	// run's input holds a METS file or a IIIF manifest.
	Books bool
	// PageLabels adds the PAGE_LABEL column (results.WithPageLabel) before
	// SOURCE: the run's input holds a PDF.
	PageLabels bool
}

// table is one output file and how a page (with its review) fills its row.
type table struct {
	w   *results.Writer
	row rowFunc
}

type rowFunc func(k results.Key, p classify.Page, rv *review.Page) results.Row

// outputs writes every table of a run.
//
// Single model: {stamp}_{rev}_TOP-{N}.csv, and {stamp}_{rev}_RAW.csv with
// --raw. Ensemble (--best): {stamp}_BEST_{n}_models_TOP-1.csv (each model's
// Top-1), {stamp}_BEST_{n}_models_AVG_TOP-{N}.csv (averaged; not with
// --no-average-best), {stamp}_BEST_{n}_models_AVG_RAW.csv (averaged, with
// --raw), and with --save-intermediates each model's {stamp}_{rev}_TOP-{N}.csv
// (and _RAW.csv with --raw). Every run also writes the review table
// {stamp}_{rev}_REVIEW.csv ({stamp}_BEST_{n}_models_AVG_REVIEW.csv for an
// ensemble, not with --no-average-best), which is not one of the spec's
// tables. Every table ends with the column SOURCE (results.WithSource),
// beyond the spec's: the input file as on disk, relative to the input
// folder. A run whose input holds a book (a METS file or a IIIF manifest)
// adds the page's identifiers in its book after SOURCE (results.WithBook),
// and a run whose input holds a PDF or a book the pages' labels (in the
// PDF, or in the book), just before SOURCE (results.WithPageLabel).
type outputs struct {
	tables []table
	// first is the main table (its rows are counted).
	first *results.Writer
	// ranked is the table of the (averaged) top-N classes and scores
	// (TOP-N, or an ensemble's AVG_TOP-N), review the review table; nil
	// when the run writes none (an ensemble run with --no-average-best).
	ranked, review *results.Writer
}

type written struct {
	path string
	rows int
}

func newOutputs(s outputSpec) (*outputs, error) {
	o := &outputs{}
	add := func(name string, l results.Layout, row rowFunc, keep **results.Writer) error {
		// A chunked table starts again: the ledger, not the old file, says
		// which pages are done (by content digest), and their rows are
		// added again from it.
		if s.PageLabels {
			l = results.WithPageLabel(l)
		}
		l = results.WithSource(l)
		if s.Books {
			l = results.WithBook(l)
		}
		w, err := results.Create(filepath.Join(s.Dir, name), l, s.Chunk)
		if err != nil {
			return err
		}
		o.tables = append(o.tables, table{w: w, row: row})
		if o.first == nil {
			o.first = w
		}
		if keep != nil {
			*keep = w
		}
		return nil
	}
	mean := func(k results.Key, p classify.Page, _ *review.Page) results.Row {
		return results.Row{Key: k, Scores: p.Mean, PerModel: p.Probs}
	}
	model := func(i int) rowFunc {
		return func(k results.Key, p classify.Page, _ *review.Page) results.Row {
			return results.Row{Key: k, Scores: p.Probs[i]}
		}
	}
	reviewed := func(k results.Key, p classify.Page, rv *review.Page) results.Row {
		return results.Row{Key: k, Scores: p.Mean, Review: rv}
	}
	topn, err := results.TopNLayout(s.TopN, false)
	if err != nil {
		return nil, err
	}
	raw := results.RawLayout(false)
	var errs []error
	if !s.Best {
		errs = append(errs, add(results.TopNName(s.Stamp, s.Names[0], s.TopN), topn, mean, &o.ranked))
		if s.Raw {
			errs = append(errs, add(results.RawName(s.Stamp, s.Names[0]), raw, mean, nil))
		}
		errs = append(errs, add(results.ReviewName(s.Stamp, s.Names[0]), results.ReviewLayout(false), reviewed, &o.review))
		return o, errors.Join(errs...)
	}
	n := len(s.Names)
	if s.Average {
		avg, err := results.BestAvgLayout(s.Names, s.TopN)
		if err != nil {
			return nil, err
		}
		errs = append(errs, add(results.BestAvgName(s.Stamp, n, s.TopN), avg, mean, &o.ranked))
	}
	errs = append(errs, add(results.BestTop1Name(s.Stamp, n), results.BestTop1Layout(s.Names), mean, nil))
	if s.Raw && s.Average {
		errs = append(errs, add(results.RawName(s.Stamp, fmt.Sprintf("BEST_%d_models_AVG", n)), raw, mean, nil))
	}
	if s.Average {
		// the review is of the averaged Top-1, like the AVG table
		errs = append(errs, add(results.ReviewName(s.Stamp, fmt.Sprintf("BEST_%d_models_AVG", n)), results.ReviewLayout(false), reviewed, &o.review))
	}
	for i, name := range s.Names {
		if s.Intermediates {
			errs = append(errs, add(results.TopNName(s.Stamp, name, s.TopN), topn, model(i), nil))
		}
		// --raw without the averaged table writes each model's RAW table:
		// the raw scores are still asked for.
		if s.Raw && (s.Intermediates || !s.Average) {
			errs = append(errs, add(results.RawName(s.Stamp, name), raw, model(i), nil))
		}
	}
	return o, errors.Join(errs...)
}

// add writes one page of source (the input relative to the input folder,
// the SOURCE column; for a page of a book, the book, with the page's
// identifiers in bp) to every table. A key another file of this run already
// took is not an error of the run: dup then says why the page was skipped.
func (o *outputs) add(k results.Key, source string, bp results.BookPage, p classify.Page, rv *review.Page) (dup string, err error) {
	for _, t := range o.tables {
		row := t.row(k, p, rv)
		row.Source, row.Book, row.PageLabel = source, bp, p.Label
		if err := t.w.Add(row); err != nil {
			if errors.Is(err, results.ErrDuplicate) {
				return fmt.Sprintf("row key %s (FILE %q, PAGE %q) already taken by another input", k, k.File, k.PageCell()), nil
			}
			return "", fmt.Errorf("%s: %w", t.w.Path(), err)
		}
	}
	return "", nil
}

// annotated is what the run's tables say of page k, for its book
// annotations: the classes and scores of its row in the ranked table, in
// its column order (CLASS-1, SCORE-1, ...; a class left blank is left
// out), and, when the review table's NEEDS_REVIEW is "yes", the flag with
// the reasons of its REASONS column. ok is false when the run writes no
// ranked table or it has no row k.
func (o *outputs) annotated(k results.Key) (classes []bookout.PageClass, flag *bookout.ReviewFlag, ok bool, err error) {
	if o.ranked == nil {
		return nil, nil, false, nil
	}
	row, ok := o.ranked.Cells(k)
	if !ok {
		return nil, nil, false, nil
	}
	if classes, err = rankedClasses(row); err != nil {
		return nil, nil, false, fmt.Errorf("%s: %s: %w", o.ranked.Path(), k, err)
	}
	if o.review != nil {
		if rv, found := o.review.Cells(k); found && rv["NEEDS_REVIEW"] == "yes" {
			flag = &bookout.ReviewFlag{}
			if rv["REASONS"] != "" {
				flag.Reasons = strings.Split(rv["REASONS"], ";")
			}
		}
	}
	return classes, flag, true, nil
}

// rankedClasses is the classes of a TOP-N row (its CLASS-i and SCORE-i
// cells), best first, that --book-out annotates: those with a score. A
// class whose score the table writes as 0.0000 (a single model's
// probabilities below 0.00005, as the demo models give for all but their
// top class) is left out: an annotation saying a page is of a class with
// score 0 says nothing a viewer should show.
func rankedClasses(row map[string]string) ([]bookout.PageClass, error) {
	var classes []bookout.PageClass
	for i := 1; ; i++ {
		class, more := row[fmt.Sprintf("CLASS-%d", i)]
		if !more {
			return classes, nil
		}
		if class == "" {
			continue
		}
		cell := row[fmt.Sprintf("SCORE-%d", i)]
		score, err := strconv.ParseFloat(cell, 64)
		if err != nil {
			return nil, fmt.Errorf("SCORE-%d %q: %w", i, cell, err)
		}
		if score > 0 {
			classes = append(classes, bookout.PageClass{Category: class, Score: score})
		}
	}
}

// rows is the number of rows of the main table.
func (o *outputs) rows() int { return o.first.Len() }

// close writes every table and reports what was written.
func (o *outputs) close() ([]written, error) {
	var out []written
	var errs []error
	for _, t := range o.tables {
		if err := t.w.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.w.Path(), err))
			continue
		}
		out = append(out, written{path: t.w.Path(), rows: t.w.Len()})
	}
	return out, errors.Join(errs...)
}
