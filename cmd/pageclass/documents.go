package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"archivekit/internal/docrecord"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/paradata"
)

// documents collects the Top-1 prediction of every page per document and
// writes the updated document records (spec 4.1 --document-json*).
//
// A document is one FILE of the output tables: a PDF, or the page images
// sharing a stem before their page suffix (scan-1.png, scan-2.png). Its
// doc_id is FILE with "/" replaced by "_" (docID), unless the baseline
// record supplies its own.
// The adapter does nothing unless --document-json-out or
// --document-json-out-dir is set.
type documents struct {
	r     *runner
	set   *inputSet
	pages map[string][]docrecord.PagePrediction // by FILE
	// labels are the pages' PDF page labels, by FILE, in pages' order.
	labels map[string][]string
	order  []string
	// files are the input files of each FILE, by name: a document of one
	// file (a PDF, a TIFF, an image) names it as the record's source.
	files map[string]map[string]docFile
}

// docFile is an input file of a document: its digest (SHA-256 in hex, ""
// when unknown), page count and whether it is a PDF.
type docFile struct {
	digest string
	pages  int
	pdf    bool
}

// source is the record's source block of the document FILE file when it
// is one file whose digest is known; nil otherwise.
func (d *documents) source(file string) *docrecord.Source {
	if len(d.files[file]) != 1 {
		return nil
	}
	for name, f := range d.files[file] {
		if f.digest == "" {
			return nil
		}
		return docrecord.NewSource(f.digest, name, f.pages, f.pdf)
	}
	return nil
}

// docID is the doc_id of a document without a baseline: its FILE key with
// "/" replaced by "_" ("scan" for scan-1.png at the input root, "box2_scan"
// for box2/scan-1.png), so documents of the same stem in different folders
// stay apart and the id is a valid file name.
func docID(file string) string { return strings.ReplaceAll(file, "/", "_") }

func newDocuments(r *runner, set *inputSet) *documents {
	return &documents{r: r, set: set, pages: map[string][]docrecord.PagePrediction{}, labels: map[string][]string{}, files: map[string]map[string]docFile{}}
}

func (d *documents) enabled() bool {
	return d.r.cli.DocumentJSONOut != "" || d.r.cli.DocumentJSONOutDir != ""
}

// add records a classified page.
func (d *documents) add(k results.Key, p classify.Page, rv *review.Page) {
	if !d.enabled() {
		return
	}
	top := p.Top(1)[0]
	page := k.Page
	if page == 0 {
		page = 1
	}
	if _, ok := d.pages[k.File]; !ok {
		d.order = append(d.order, k.File)
	}
	d.labels[k.File] = append(d.labels[k.File], p.Label)
	if d.files[k.File] == nil {
		d.files[k.File] = map[string]docFile{}
	}
	d.files[k.File][p.Name] = docFile{digest: p.Digest, pages: p.Pages, pdf: p.PDF}
	d.pages[k.File] = append(d.pages[k.File], docrecord.PagePrediction{
		Label: strconv.Itoa(page), Index: page, Category: top.Label, Confidence: top.Score, Review: rv.Record(),
	})
}

// write writes the records; a record that is invalid or, with
// --strict-document-json, has warnings is not written and fails the run.
func (d *documents) write() error {
	if !d.enabled() {
		return nil
	}
	c := d.r.cli
	schema, err := docrecord.ProjectSchema()
	if err != nil {
		return err
	}
	var errs []error
	if c.DocumentJSONOut != "" {
		switch len(d.order) {
		case 0:
			errs = append(errs, errors.New("--document-json-out: no page was classified, no record written"))
		case 1:
			errs = append(errs, d.one(d.order[0], c.DocumentJSON, c.DocumentJSONOut, "", schema, nil))
		default:
			errs = append(errs, fmt.Errorf("--document-json-out takes a single-document run, this run classified %d documents: use --document-json-out-dir", len(d.order)))
		}
	}
	if c.DocumentJSONOutDir != "" {
		if err := os.MkdirAll(c.DocumentJSONOutDir, 0o777); err != nil {
			return err
		}
		taken := map[string]string{}
		for _, file := range d.order {
			base := ""
			if c.DocumentJSONDir != "" {
				base = filepath.Join(c.DocumentJSONDir, docrecord.FileName(docID(file)))
				if _, err := os.Stat(base); err != nil {
					base = ""
				}
			}
			if err := d.one(file, base, "", c.DocumentJSONOutDir, schema, taken); errors.Is(err, syscall.ENAMETOOLONG) {
				// One document's name is over the file system's limit
				// with the record's suffix: said, and the others written;
				// it failed the run, its tables written and exit 3.
				w := fmt.Sprintf("%v (its doc_id with .document.json is over the file system's name limit)", err)
				d.r.log.Warn(w, "file", file)
				d.r.para.Warn(w)
			} else if err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// one builds and writes the record of the document FILE file from the
// baseline (when not empty) to out, or to outDir/<doc_id>.document.json.
func (d *documents) one(file, baseline, out, outDir string, schema *docrecord.Schema, taken map[string]string) error {
	c := d.r.cli
	var base *docrecord.Record
	if baseline != "" {
		var err error
		if base, err = docrecord.Load(baseline); err != nil {
			return fmt.Errorf("document record of %s: %w", file, err)
		}
		if c.StrictDocumentJSON && len(base.Warnings) > 0 {
			return fmt.Errorf("document record of %s not written (--strict-document-json): %s", file, strings.Join(base.Warnings, "; "))
		}
	}
	// A PDF's page labels ("iv", "12a") are the record's page labels when
	// every page has one and no two share one (docrecord.PageLabels).
	preds, labels := d.pages[file], d.labels[file]
	numbers := make([]int, len(preds))
	for i, p := range preds {
		numbers[i] = p.Index
	}
	for i, l := range docrecord.PageLabels(numbers, labels) {
		preds[i].Label = l
	}
	sort.Slice(preds, func(i, j int) bool { return preds[i].Index < preds[j].Index })
	// The run metadata as the record's folder reaches it (its name alone
	// did not lead there from --document-json-out-dir DIR).
	dir := outDir
	if out != "" {
		dir = filepath.Dir(out)
	}
	ref := docrecord.Ref(dir, d.r.para.Path())
	snap := d.r.para.Snapshot()
	rec, err := docrecord.ApplyPages(schema, docrecord.PageUpdate{
		Baseline: base, DocID: docID(file), Pages: preds,
		Program: paradata.Program, RunID: snap.RunID, ParadataRef: ref, At: d.r.start,
		Owners: docrecord.PageClassifierPrograms, Strict: c.StrictDocumentJSON, Source: d.source(file),
	})
	if err != nil {
		return fmt.Errorf("document record of %s: %w", file, err)
	}
	pc := docrecord.NewContributor(paradata.Program, snap.ToolVersion, snap.RunID, d.r.start, snap.LicenseDetail, "page_categories")
	pc.ParadataRef, pc.ContainerImage, pc.RunnerRef = ref, snap.DockerImage, snap.RunnerRef
	if err := rec.AddProvenance(pc); err != nil {
		return fmt.Errorf("document record of %s: %w", file, err)
	}
	for _, w := range rec.Warnings {
		d.r.log.Warn("document record", "file", file, "warning", w)
		d.r.para.Warn(fmt.Sprintf("document record of %s: %s", file, w))
	}
	if outDir != "" {
		id := rec.DocID()
		if other, ok := taken[id]; ok {
			return fmt.Errorf("document record of %s not written: doc_id %q is already used by %s", file, id, other)
		}
		taken[id] = file
		out = filepath.Join(outDir, docrecord.FileName(id))
	}
	if _, err := os.Stat(out); err == nil && !sameFile(out, baseline) {
		// A record of an earlier run (or of another tool) is replaced, not
		// added to: its pages and contributors are gone from the new one.
		hint := "give it as the baseline (--document-json) to add to it"
		if outDir != "" {
			hint = "give its folder as --document-json-dir to add to it"
		}
		w := fmt.Sprintf("document record %s replaces the record there, which was not this run's baseline (%s)", out, hint)
		d.r.log.Warn(w, "file", file)
		d.r.para.Warn(w)
	}
	if err := rec.WriteFile(out, schema); err != nil {
		return fmt.Errorf("document record of %s not written: %w", file, err)
	}
	d.r.para.AddOutputFile(out)
	d.r.para.CountOutput("json", 1)
	d.r.log.Info("document record written", "path", out, "doc_id", rec.DocID(), "pages", len(preds))
	return nil
}

// sameFile reports whether a and b name one existing file (b may be "").
func sameFile(a, b string) bool {
	if b == "" {
		return false
	}
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(ia, ib)
}
