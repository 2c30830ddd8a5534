package docrecord

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"archivekit/internal/pageclass/review"
)

// PagePrediction is the classifier's result for one page of a document.
type PagePrediction struct {
	// Label is the page label, matched against pages[].page; for a PDF or
	// a page image it is the page number as a string.
	Label string
	// Index is the 1-based physical position, written as page_index when
	// the classifier has to add a page entry; 0 when unknown.
	Index int
	// Category is the Top-1 category and Confidence its probability.
	Category   string
	Confidence float64
	// Review, when set, is written as the page entry's category_review
	// (review.Page: agreement, margin, entropy, needs_review, reasons,
	// page-condition evidence, calibration), numbers rounded as in the
	// review table.
	Review *review.Page
}

// AccretePageCategories writes the page classifier's block: the
// page_categories map (label -> category) and the category and
// category_confidence fields of the matching pages[] entries. Other members
// of page_categories and of each page entry, and every other block, are left
// as they were.
//
// A prediction with a Review also sets the entry's category_review, the
// classifier's doubt and page-condition flags for that page.
//
// pages[] is originated by other tools; a predicted page without an entry
// there gets a minimal one ({page, page_index, category,
// category_confidence}) and a warning, or, when strict, an error before
// anything changes.
func (r *Record) AccretePageCategories(preds []PagePrediction, strict bool) error {
	return r.accrete(preds, strict, true)
}

// accrete is AccretePageCategories; without a baseline (hadBaseline false)
// the page entries are this record's own, added without a warning.
func (r *Record) accrete(preds []PagePrediction, strict, hadBaseline bool) error {
	var pages []any
	if v, ok := r.root.Get("pages"); ok {
		arr, isArr := v.([]any)
		if !isArr {
			return fmt.Errorf("pages is %s, not an array", kind(v))
		}
		pages = arr
	}
	byLabel := map[string]*Object{}
	for _, p := range pages {
		if o, ok := p.(*Object); ok {
			if l, ok := o.Get("page"); ok {
				if s, ok := l.(string); ok {
					byLabel[s] = o
				}
			}
		}
	}
	var missing []string
	for _, p := range preds {
		if p.Label == "" {
			return fmt.Errorf("page prediction without a label")
		}
		if p.Category == "" || !(p.Confidence >= 0 && p.Confidence <= 1) {
			return fmt.Errorf("page %s: category %q with confidence %v: want a category and 0..1", p.Label, p.Category, p.Confidence)
		}
		if byLabel[p.Label] == nil {
			missing = append(missing, p.Label)
		}
	}
	if len(missing) > 0 && hadBaseline {
		msg := fmt.Sprintf("pages %v are not in the baseline's pages[]; page-classification adds minimal entries for them", missing)
		if strict {
			return fmt.Errorf("%s (refused: strict)", msg)
		}
		r.Warnings = append(r.Warnings, msg)
	}
	cats := NewObject()
	if v, ok := r.root.Get("page_categories"); ok {
		o, isObj := v.(*Object)
		if !isObj {
			return fmt.Errorf("page_categories is %s, not an object", kind(v))
		}
		cats = o
	}
	for _, p := range preds {
		cats.Set(p.Label, p.Category)
		conf := json.Number(strconv.FormatFloat(p.Confidence, 'f', -1, 64))
		o := byLabel[p.Label]
		if o == nil {
			o = NewObject()
			o.Set("page", p.Label)
			if p.Index > 0 {
				o.Set("page_index", json.Number(strconv.Itoa(p.Index)))
			}
			pages = append(pages, o)
			byLabel[p.Label] = o
		}
		o.Set("category", p.Category)
		o.Set("category_confidence", conf)
		if p.Review != nil {
			o.Set("category_review", p.Review.Rounded())
		}
	}
	r.root.Set("page_categories", cats)
	r.root.Set("pages", pages)
	return nil
}

// BlockStamp is the per-block provenance entry of assembled.blocks.
type BlockStamp struct {
	Program     string `json:"program"`
	RunID       string `json:"run_id"`
	ParadataRef string `json:"paradata_ref,omitempty"`
	UpdatedAt   string `json:"updated_at"`
}

// NoteBlocks records in assembled.blocks which run wrote the named blocks
// and sets assembled.had_baseline; other entries stay as they were.
func (r *Record) NoteBlocks(program, runID, paradataRef string, at time.Time, hadBaseline bool, blocks ...string) error {
	st := BlockStamp{Program: program, RunID: runID, ParadataRef: paradataRef, UpdatedAt: at.UTC().Format(time.RFC3339)}
	for _, b := range blocks {
		if err := r.Set(st, "assembled", "blocks", b); err != nil {
			return err
		}
	}
	return r.Set(hadBaseline, "assembled", "had_baseline")
}
