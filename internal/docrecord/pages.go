package docrecord

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
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
	// Review, when set, is written as the page entry's category_review,
	// as it is (the classifier rounds its numbers as in its review table).
	Review *PageReview
}

// PageReview is a page entry's category_review: the page classifier's
// review of the page, as the record's schema describes it. The classifier
// produces it; the record only carries it.
type PageReview struct {
	// Top1 is the averaged Top-1 category; Agreement of the Models models
	// give it as their own Top-1.
	Top1      string `json:"top1"`
	Agreement int    `json:"agreement"`
	Models    int    `json:"models"`
	// Margin is the averaged probability of Top-1 minus that of Top-2;
	// Entropy that of the averaged distribution, in nats.
	Margin  float64 `json:"margin"`
	Entropy float64 `json:"entropy"`
	// NeedsReview is nil when unknown (no calibration, no condition flag).
	NeedsReview *bool `json:"needs_review"`
	// Reasons lists why the page is flagged (or uncalibrated).
	Reasons []string `json:"reasons"`
	// Ink and Rotation are the page-condition evidence; nil when not
	// measured.
	Ink      *PageInk      `json:"ink,omitempty"`
	Rotation *PageRotation `json:"rotation,omitempty"`
	// Calibration identifies the calibration that set the flag, "none"
	// when there was none.
	Calibration string `json:"calibration"`
}

// PageInk is the near-blank evidence of a page's category_review.
type PageInk struct {
	// Coverage is the share of the page that is ink.
	Coverage float64 `json:"coverage"`
	// NearBlank is set when Coverage is below the classifier's threshold.
	NearBlank bool `json:"near_blank"`
}

// PageRotation is the orientation evidence of a page's category_review.
type PageRotation struct {
	// Angle is the clockwise turn in degrees (0, 90, 180, 270) that most
	// probably makes the page upright.
	Angle int `json:"angle"`
	// Confidence is the probability of each turn (0, 90, 180, 270).
	Confidence [4]float64 `json:"confidence"`
	// Rotated is set when the page is probably not upright.
	Rotated bool `json:"rotated"`
}

// PageLabels returns the record label (pages[].page, the key of
// page_categories) of each page numbered numbers[i] (1-based) whose label
// in its document is labels[i] ("" when it has none, such as a PDF without
// page labels): the document's own labels ("iv", "12a") when every page
// has one and no two pages share one, else the page numbers, so that no
// two pages of a record ever share a key.
func PageLabels(numbers []int, labels []string) []string {
	out := make([]string, len(numbers))
	seen := make(map[string]bool, len(numbers))
	own := len(labels) == len(numbers)
	for i := 0; own && i < len(labels); i++ {
		own = labels[i] != "" && !seen[labels[i]]
		seen[labels[i]] = true
	}
	for i, n := range numbers {
		if own {
			out[i] = labels[i]
		} else {
			out[i] = strconv.Itoa(n)
		}
	}
	return out
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
	byLabel, byIndex := indexPages(pages)
	preds = relabel(preds, byIndex)
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
			o.Set("category_review", p.Review)
		}
	}
	r.root.Set("page_categories", cats)
	r.root.Set("pages", pages)
	return nil
}

// indexPages maps the page entries by their label (page) and by their
// physical position (page_index, when they have one).
func indexPages(pages []any) (map[string]*Object, map[int]*Object) {
	byLabel, byIndex := map[string]*Object{}, map[int]*Object{}
	for _, p := range pages {
		o, ok := p.(*Object)
		if !ok {
			continue
		}
		if l, ok := o.Get("page"); ok {
			if s, ok := l.(string); ok {
				byLabel[s] = o
			}
		}
		if v, ok := o.Get("page_index"); ok {
			if n, ok := v.(json.Number); ok {
				if i, err := strconv.Atoi(n.String()); err == nil && i > 0 {
					byIndex[i] = o
				}
			}
		}
	}
	return byLabel, byIndex
}

// relabel gives each prediction whose physical position is in the baseline
// that entry's own label: the entry is that page, whatever label the
// classifier would give it (the baseline may label pages otherwise, such as
// by number where the document has page labels). preds is not modified.
func relabel(preds []PagePrediction, byIndex map[int]*Object) []PagePrediction {
	out := append([]PagePrediction(nil), preds...)
	for i, p := range out {
		o := byIndex[p.Index]
		if p.Index <= 0 || o == nil {
			continue
		}
		if l, ok := o.Get("page"); ok {
			if s, ok := l.(string); ok && s != "" {
				out[i].Label = s
			}
		}
	}
	return out
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
