package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"archivekit/bindings/torch"
	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/version"
)

// LedgerFolder is the folder of the run ledgers inside the results folder.
const LedgerFolder = ledger.Folder

// ledgerConfig is everything that decides what the ledger keeps of a page:
// the models (names and digests of model.json + model.pt, in ensemble
// order), the orientation model of --rotation-model (its digest: the
// rotation evidence is kept with the page) and the program (its
// preprocessing and decoding). Table options (top-N, raw, the --best
// tables) and the review calibration only decide how that is written, so
// runs that differ in them share a ledger.
type ledgerConfig struct {
	Tool     string   `json:"tool"`
	Version  string   `json:"version"`
	Models   []string `json:"models"`
	Digests  []string `json:"digests"`
	Rotation string   `json:"rotation_model_digest,omitempty"`
	// Precision is the forward passes' arithmetic when it is not fp32
	// (precisionKey): a bf16 run's probabilities are not kept by an fp32
	// run's --resume. Absent for fp32, so ledgers written before it was
	// recorded (all fp32 on the CPU) keep their key.
	Precision string `json:"precision,omitempty"`
}

// precisionKey is p as the ledger's and the chunked tables' keys record it:
// "" for fp32 (keys made before precision was recorded stay the same),
// else its name.
func precisionKey(p torch.Precision) string {
	if p == torch.FP32 {
		return ""
	}
	return p.String()
}

// itemData is a ledger entry's data: the probabilities of every page of one
// input file (per model, in ensemble order), and the pages that failed.
type itemData struct {
	Pages  []pageData  `json:"pages,omitempty"`
	Errors []pageError `json:"errors,omitempty"`
	// Count is the file's page count when it has several (a PDF, a
	// multi-page TIFF), so a resumed run keys its rows as the run that
	// classified it did, and for every TIFF (1 for one page); absent (0)
	// for other single pages and in entries written before it was
	// recorded, which for a TIFF means that only its first page was read.
	Count int `json:"page_count,omitempty"`
	// Renderer is the PDF renderer that drew the pages of a PDF
	// (--pdf-renderer), absent for other files and in entries written
	// before it was recorded (2026-11-28). It is not in the ledger's key:
	// a --retry-failed with the other renderer keeps the rows of the
	// first, and this tells them apart.
	Renderer string `json:"pdf_renderer,omitempty"`
	// Decoding is how the file was decoded (decodedInProcesses or
	// decodedInProcess), absent in entries written before it was recorded.
	Decoding string `json:"decoding,omitempty"`
}

type pageData struct {
	Page int `json:"page"`
	// Probs are float32 as the models give them, so a page read back from
	// the ledger writes exactly the row it wrote when it was classified.
	Probs [][]float32 `json:"probs"`
	// Condition is the page-condition evidence (ink, rotation) measured on
	// the decoded page, so a resumed page keeps its review.
	Condition review.Condition `json:"condition"`
	// Label is the page's PDF page label (absent when it has none), so a
	// resumed page keeps it in the tables and the record.
	Label string `json:"label,omitempty"`
}

type pageError struct {
	Page  int    `json:"page"`
	Error string `json:"error"`
}

// openLedger reads the ledger folder of the run's configuration,
// <results>/ledger/pageclass_<key>, and starts this run's file in it,
// <stamp>.jsonl (a shard's stamp ends -shard-<i>-of-<n>): the stamp
// is the run's own, so runs at the same time never share a file.
func (r *classifier) openLedger(names, digests []string) (*ledger.Ledger, string, error) {
	cfg, err := r.ledgerConfig(names, digests)
	if err != nil {
		return nil, "", err
	}
	return ledger.OpenRun(ledger.Run{Output: r.cli.Results, Tool: "pageclass", Config: cfg,
		Name: r.stamp, Redo: "that file is classified again", Resume: r.cli.Resume}, r.log)
}

// ledgerConfig is the run's ledger configuration (its Key names the
// ledger folder).
func (r *classifier) ledgerConfig(names, digests []string) (ledgerConfig, error) {
	cfg := ledgerConfig{Tool: "pageclass", Version: version.String(), Models: names, Digests: digests, Precision: precisionKey(r.precision)}
	if dir := r.cli.RotationModel; dir != "" {
		d, err := r.digests.Of(dir)
		if err != nil {
			return cfg, fmt.Errorf("--rotation-model: %w", err)
		}
		cfg.Rotation = d
	}
	return cfg, nil
}

// turnWaitHook, when set (tests), is called with the lock's path when a
// resuming run finds another resuming the same inputs and starts to wait.
var turnWaitHook func(lock string)

// takeTurn makes resuming runs (--resume, --retry-failed; --chunk runs take
// turns on their tables' lock, lockChunk) of the same inputs with the same ledger configuration into one results folder
// take turns (ledger.TakeTurn, as translate's runs do): a later one waits,
// then opens the ledger and classifies only what the earlier left. The
// lock is <results>/ledger/pageclass_<key>_<inputs>.lock (<inputs>: 16 hex
// digits of the SHA-256 of the input root, extensions, --inner and -f);
// shards of one run hold it shared and run at once. Runs that do not
// resume, or differ in models or inputs, do not wait: each writes its own
// ledger file and tables.
func (r *classifier) takeTurn(ctx context.Context, names, digests []string) (unlock func(), err error) {
	if !r.resuming() || r.cli.Chunk {
		return func() {}, nil
	}
	cfg, err := r.ledgerConfig(names, digests)
	if err != nil {
		return nil, err
	}
	key, err := ledger.Key(cfg)
	if err != nil {
		return nil, err
	}
	in := sha256.Sum256([]byte(baseInputKey(r.set, r.cli.File, r.cli.Inner)))
	name := fmt.Sprintf("pageclass_%s_%x", key, in[:8])
	return ledger.TakeTurn(ctx, ledger.Turn{Lock: ledger.TurnLock(r.cli.Results, name), Shard: r.set.Shard.FileSuffix(),
		Tool: "pageclass", Output: r.cli.Results, OnWait: turnWaitHook,
		Waiting: "waiting for another run resuming the same inputs into the same results folder to finish; this run then classifies only what it left"}, r.log)
}

// digestFile is ledger.Digest (a variable so tests can count the files
// read for their digest).
var digestFile = ledger.Digest

// digestAll returns the content digest of every file (sha256), read with a
// few workers; a file that cannot be read gets "" and its error (the
// pipeline reports it again when it is opened), and an empty path is not
// read (its digest is "", its error nil).
func digestAll(files []string) ([]string, []error) {
	out := make([]string, len(files))
	errs := make([]error, len(files))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(4, runtime.NumCPU()); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i], errs[i] = digestFile(files[i])
			}
		}()
	}
	for i, f := range files {
		if f != "" {
			work <- i
		}
	}
	close(work)
	wg.Wait()
	return out, errs
}

// itemName is a file's name in the ledger and the failures table: its path
// relative to the input root with "/" (the file name for -f); for a page of
// a book, the book's name, "#" and the page's ID (books.go).
func itemName(set *inputSet, file string) string {
	if bp := set.page(file); bp != nil {
		return bp.name
	}
	if isURL(file) {
		return file // a book of a list, by its URL as written (Rel would clean its "//")
	}
	rel, err := filepath.Rel(set.Root, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(file)
	}
	return filepath.ToSlash(rel)
}

// item collects the pages of one input file as they are emitted, until the
// last one completes it.
type item struct {
	data   itemData
	failed string // the first failure
	// passing is set when a page failed in passing (ledger.Transient):
	// the file is then not recorded.
	passing error
	// stopped is set when a page's decoding was stopped with the run
	// (Ctrl-C: context.Canceled): the file is neither failed nor done,
	// and is not recorded; a --resume classifies it.
	stopped bool
	// refused is set when a book page's image was answered with an HTTP
	// error status (fetch.StatusError): not transient (passing unset), the
	// page is recorded failed under its URL though no bytes were read.
	refused bool
}

func (it *item) add(p classify.Page, reason string) {
	if p.Pages > 1 || (p.Pages == 1 && results.MayHavePages(p.Name)) {
		it.data.Count = p.Pages
	}
	if reason != "" {
		it.data.Errors = append(it.data.Errors, pageError{Page: p.Page, Error: reason})
		if it.failed == "" {
			it.failed = reason
		}
		return
	}
	pd := pageData{Page: p.Page, Probs: make([][]float32, len(p.Probs)), Condition: p.Condition, Label: p.Label}
	for i, v := range p.Probs {
		pd.Probs[i] = make([]float32, len(v))
		for c, x := range v {
			pd.Probs[i][c] = float32(x)
		}
	}
	it.data.Pages = append(it.data.Pages, pd)
}

// entry is the ledger entry of a completed item: done when every page was
// classified, failed (with the first page's reason) otherwise; the pages
// classified are kept in both cases, so a resumed run writes their rows.
func (it *item) entry(name, digest string) (ledger.Entry, error) {
	b, err := json.Marshal(it.data)
	if err != nil {
		return ledger.Entry{}, err
	}
	e := ledger.Entry{Item: name, Digest: digest, State: ledger.Done, Data: b}
	switch {
	case it.failed != "":
		e.State, e.Reason = ledger.Failed, it.failed
	case len(it.data.Pages) == 0:
		e.State, e.Reason = ledger.Skipped, "no page"
	}
	return e, nil
}

// pages turns a ledger entry back into the pages it recorded, with the
// probabilities converted exactly as the classifier converts them.
func (d itemData) pages(name string) []classify.Page {
	out := make([]classify.Page, 0, len(d.Pages))
	for _, pd := range d.Pages {
		p := classify.Page{Name: name, Page: pd.Page, Pages: max(1, d.Count), Probs: make([][]float64, len(pd.Probs)), Condition: pd.Condition, Label: pd.Label}
		for i, v := range pd.Probs {
			p.Probs[i] = make([]float64, len(v))
			for c, x := range v {
				p.Probs[i][c] = float64(x)
			}
		}
		p.Mean = results.Average(p.Probs)
		out = append(out, p)
	}
	return out
}
