package docrecord

import (
	"errors"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"time"
)

// ConfidenceDecimals is the number of decimals of category_confidence in
// every record the page classifier writes (the command line and the service
// alike), as in its output tables.
const ConfidenceDecimals = 4

// SchemaErrorKey is the top-level member noting that the baseline did not
// follow the record schema (spec page-classification 2.2, 7): the record
// was still updated, and the member says why it is not valid.
const SchemaErrorKey = "document_json_schema_error"

// PageClassifierPrograms are the programs that write the page_categories
// block: the command line (its run metadata's program name) and the HTTP
// service.
var PageClassifierPrograms = []string{"page-classification", "pageclass-api"}

// PageUpdate is one page classifier run's update of a document record.
type PageUpdate struct {
	// Baseline is the record to update; nil starts a new one named DocID.
	Baseline *Record
	DocID    string
	// Pages are the Top-1 predictions; confidences are rounded to
	// ConfidenceDecimals.
	Pages []PagePrediction
	// Program, RunID, ParadataRef and At stamp the page_categories block.
	Program, RunID, ParadataRef string
	At                          time.Time
	// Owners are the program names of this tool (the command line and the
	// service): a page_categories block stamped by any other program is
	// overwritten only with a warning.
	Owners []string
	// Strict turns every warning (invalid baseline, another program's
	// block, pages missing from the baseline) into an error, before
	// anything is written.
	Strict bool
	// Source describes the file classified when the document is one file
	// (a PDF, a TIFF, one image); nil when it is several.
	Source *Source
}

// Source is a record's source block as a tool that read the original
// writes it: the durable key's sha256 (with doc_id), its file name, media
// type and page count. The first writer wins: a record that has a source
// keeps it, and one whose sha256 differs is warned of (another file's
// record given as the baseline).
type Source struct {
	SHA256    string `json:"sha256"`
	Filename  string `json:"filename"`
	MediaType string `json:"media_type,omitempty"`
	PageCount int    `json:"page_count,omitempty"`
}

// NewSource is the source block of the file name (a path or URL: its last
// element is kept) whose SHA-256 in hex is sha256, of pages pages, a PDF
// when pdf.
func NewSource(sha256, name string, pages int, pdf bool) *Source {
	s := &Source{SHA256: sha256, Filename: path.Base(filepath.ToSlash(name)), PageCount: pages}
	if pdf {
		s.MediaType = "application/pdf"
	}
	return s
}

// applySource sets rec's source from src when it has none, and says when
// the one it has names another file (by sha256).
func applySource(rec *Record, src *Source, warn func(string) error) error {
	if src == nil || src.SHA256 == "" {
		return nil
	}
	if _, ok := rec.Get("source"); !ok {
		return rec.Set(src, "source")
	}
	if had, ok := rec.Get("source", "sha256"); ok {
		if h, _ := had.(string); h != "" && h != src.SHA256 {
			return warn(fmt.Sprintf("the baseline's source.sha256 %s is not that of the file classified, %s (%s): is it this document's record?", h, src.Filename, src.SHA256))
		}
	}
	return nil
}

// ApplyPages builds the updated record of u, checked against s.
//
//   - A baseline that fails the schema but can still be handled gives a
//     record with SchemaErrorKey set to the validation error, and a warning;
//     its own violations pass through (Record.WriteFile then writes it). A
//     record made invalid by this update is an error.
//   - A page_categories block stamped by a program outside u.Owners is
//     overwritten with a warning.
//   - Without a baseline the pages entries are originated here: no warning.
//
// With u.Strict each warning is an error instead.
func ApplyPages(s *Schema, u PageUpdate) (*Record, error) {
	if s == nil {
		return nil, fmt.Errorf("document record %s: no schema", u.DocID)
	}
	rec := u.Baseline
	var baseErr error
	if rec == nil {
		var err error
		if rec, err = New(u.DocID); err != nil {
			return nil, err
		}
	} else {
		rec.Delete(SchemaErrorKey) // noted by an earlier run: checked afresh
		baseErr = s.Validate(rec)
	}
	warn := func(msg string) error {
		if u.Strict {
			return fmt.Errorf("%s (refused: --strict-document-json)", msg)
		}
		rec.Warnings = append(rec.Warnings, msg)
		return nil
	}
	if baseErr != nil {
		if err := warn("the baseline does not follow the record schema; the record is updated anyway and notes why: " + baseErr.Error()); err != nil {
			return nil, err
		}
	}
	if err := applySource(rec, u.Source, warn); err != nil {
		return nil, err
	}
	if owner := rec.blockProgram("page_categories"); owner != "" && !slices.Contains(u.Owners, owner) {
		if err := warn(fmt.Sprintf("block page_categories was written by %q and is overwritten by %s", owner, u.Program)); err != nil {
			return nil, err
		}
	}
	preds := make([]PagePrediction, len(u.Pages))
	p := math.Pow(10, ConfidenceDecimals)
	for i, pr := range u.Pages {
		pr.Confidence = math.Round(pr.Confidence*p) / p
		preds[i] = pr
	}
	if err := rec.accrete(preds, u.Strict, u.Baseline != nil); err != nil {
		return nil, baselineErr(u.Baseline != nil, err)
	}
	if err := rec.NoteBlocks(u.Program, u.RunID, u.ParadataRef, u.At, u.Baseline != nil, "page_categories"); err != nil {
		return nil, baselineErr(u.Baseline != nil, err)
	}
	if err := s.Validate(rec); err != nil {
		if baseErr == nil {
			return nil, fmt.Errorf("the updated record fails the schema and is not written: %w", err)
		}
		rec.root.Set(SchemaErrorKey, baseErr.Error())
		rec.baselineInvalid = true
	}
	return rec, nil
}

// ErrBaseline is wrapped by the errors of an update that the baseline's
// own structure stops (its pages a string, its provenance a number): the
// baseline is at fault, not the program, and a service answers 422.
var ErrBaseline = errors.New("the baseline record cannot take the update")

// baselineErr wraps err in ErrBaseline when the record came from a
// baseline.
func baselineErr(fromBaseline bool, err error) error {
	if !fromBaseline {
		return err
	}
	return fmt.Errorf("%w: %w", ErrBaseline, err)
}

// SchemaError is the note of a record updated from a baseline that did not
// follow the schema ("" when the record is valid).
func (r *Record) SchemaError() string {
	v, _ := r.root.Get(SchemaErrorKey)
	s, _ := v.(string)
	return s
}

// Delete removes a top-level member.
func (r *Record) Delete(key string) { r.root.Delete(key) }

// blockProgram is the program stamped on assembled.blocks.<block>, if any.
func (r *Record) blockProgram(block string) string {
	v, ok := r.Get("assembled", "blocks", block, "program")
	if !ok {
		return ""
	}
	s, _ := v.(string)
	return s
}
