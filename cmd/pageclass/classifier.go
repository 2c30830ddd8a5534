package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"archivekit/internal/book"
	"archivekit/internal/cliflags"
	"archivekit/internal/fetch"
	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/pipeline"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/pageclass/summary"
	"archivekit/internal/paradata"
	"archivekit/internal/progress"
	"archivekit/internal/shard"
	"archivekit/internal/utf8name"
)

// classifier is the classification mode (the default): it classifies the
// input files with the selected models, continues from the ledger with
// --resume, --retry-failed and --chunk, and writes the tables, the
// failures table and the document records.
type classifier struct {
	*models
	// calibration is the doubt calibration of the run's models; nil when
	// there is none (then needs_review is only set by page conditions).
	calibration *review.Applied
	set         *inputSet
	// classes are the book pages classified, by input name, for
	// --book-out: each page's row key in the tables and its top class.
	classes map[string]classedPage
	// failedKept counts the files --resume kept failed from earlier runs
	// (not tried again without --retry-failed).
	failedKept int
	// ens runs the models (nil with --parallel, which loads them group by
	// group); orient is the orientation model of --parallel, run with the
	// first group.
	ens *classify.Ensemble
	// stopped reports whether the run's context is done (predict sets
	// it): a page that failed with its cancellation is then left to do.
	stopped func() bool
	// decoders are the decoder processes (imageio.Isolation); nil with
	// --decode-in-process.
	decoders *imageio.Isolation
	orient   *classify.Orientation
	// warm is closed when the warm-up started after loading (startWarmUp)
	// has ended, warmErr then its error; nil when none was started.
	warm    chan struct{}
	warmErr error
	// groupBatch is the batch of each --parallel group, sized by the
	// device's free memory (GPUProfile.GroupBatches); nil: the configured
	// batch.
	groupBatch []int
	// names are the inputs' names as the tables give them (itemName), in
	// input order: the progress bar names the next one to come.
	names []string
	// batch is the batch of a plain run (chooseBatch): the configured
	// one, or on a GPU one sized by its free memory; 0: the configured.
	batch int
	out   *outputs
	docs  *documents
	// failures are the rows of the failures table.
	failures []ledger.Failure
	bar      *progress.Bar
	// open holds the files whose pages are being emitted, until their last
	// page completes them; recorded counts the files recorded in the
	// ledger.
	open     map[string]*item
	recorded int
	// undone counts the files left to do after a passing failure (a page
	// that could not be read on an I/O error, say): not recorded in the
	// ledger, so a --resume classifies them; lastPassing is the last such
	// failure.
	undone      int
	lastPassing error
	// toDo counts the files this run was to classify (not kept from the
	// ledger), finished those it finished (recorded, or failed unread).
	toDo, finished int
	// sum counts what the run found (the run summary).
	sum summary.Summary
	// decodedBy counts the renderers and decoding modes of the rows in the
	// tables, kept from the ledger or classified now.
	decodedBy decodedBy
	// checkpointed is when the run metadata was last written (checkpoint).
	checkpointed time.Time
	cpMu         sync.Mutex
}

// checkpointEvery is how often the run metadata is written while pages are
// classified (a variable so tests can write it after every page).
var checkpointEvery = 10 * time.Second

// testHookCheckpoint, when set (tests), is called after each checkpoint
// write with the run-metadata file.
var testHookCheckpoint func(path string)

// checkpoint writes the run metadata, still "running", when checkpointEvery
// has passed since it was last written: a run killed with SIGKILL, or on a
// machine lost, leaves the counts of its last seconds (pages classified,
// inputs, files skipped), not the zeros of its start. It is called as each
// page is classified.
func (r *classifier) checkpoint() {
	now := time.Now()
	r.cpMu.Lock()
	due := now.Sub(r.checkpointed) >= checkpointEvery
	if due {
		r.checkpointed = now
	}
	r.cpMu.Unlock()
	if !due {
		return
	}
	if err := r.para.Flush(); err != nil {
		r.log.Warn("run metadata not written", "path", r.para.Path(), "error", err.Error())
		return
	}
	if testHookCheckpoint != nil {
		testHookCheckpoint(r.para.Path())
	}
}

// classify is the prediction run.
func (r *classifier) classify(ctx context.Context) error {
	set, err := r.inputs(ctx)
	if err != nil {
		return err
	}
	r.recordBooks(set)
	if nothing := r.recordInputs(set); nothing {
		// Another shard classifies them: nothing to do here is success.
		return nil
	}
	r.set = set
	if r.decoders, err = r.newDecoders(); err != nil {
		return err
	}
	defer closeDecoders(r.decoders)
	folders, err := r.folders(ctx)
	if err != nil {
		return err
	}
	if !r.cli.Parallel {
		// Before the models load: a batch sized by memory takes the
		// free memory with none of them on the device.
		r.chooseBatch(folders)
	}
	if err := r.load(folders); err != nil {
		return err
	}
	defer r.closeModels()
	r.startWarmUp(ctx)
	if set.books != nil {
		size, err := r.inputSize(folders)
		if err != nil {
			return err
		}
		set.target(size)
	}
	names, digests, err := r.identify(folders)
	if err != nil {
		return err
	}
	if err := r.resolveCalibration(folders, names, digests); err != nil {
		return err
	}
	unturn, err := r.takeTurn(ctx, names, digests)
	if err != nil {
		return err
	}
	defer unturn()
	tables, chunk, unlock, err := r.lockChunk(ctx, names, digests)
	if err != nil {
		return err
	}
	defer unlock()
	if err := r.startLedger(names, digests); err != nil {
		return err
	}
	var groups [][]int
	if r.cli.Parallel {
		if groups, err = r.gpuGroups(folders); err != nil {
			return err
		}
	}
	c := r.cli
	r.out, err = newOutputs(outputSpec{
		Dir: c.Results, Stamp: tables, Names: names, TopN: c.TopN, Raw: c.Raw, Best: c.Best,
		Average: !c.NoAverageBest, Intermediates: c.SaveIntermediates, Chunk: chunk, Books: set.books != nil && set.books.any,
		PageLabels: set.PDF || set.books != nil && set.books.any,
	})
	if err != nil {
		return err
	}
	r.docs = newDocuments(r.runner, set)
	files, err := r.restore()
	if err != nil {
		return err
	}
	if err := r.waitWarmUp(); err != nil {
		return err
	}
	runErr := r.predict(ctx, files, folders, groups)
	r.recordFetched()
	if ctx.Err() != nil || r.undone > 0 {
		// Said in the summary and its table, not only in the log.
		r.sum.FilesLeft = max(r.toDo-r.finished, r.undone)
	}
	err = r.closeTables(tables, runErr)
	if r.undone > 0 {
		// Also when no page at all was classified: the files are to do.
		return cliflags.IncompleteError{Undone: r.undone, Err: errors.Join(r.lastPassing, err)}
	}
	return err
}

// predictOptions are the pipeline settings of the run.
func (r *classifier) predictOptions() classify.Options {
	dec := r.decodeOptions(r.decoders)
	var warned sync.Map // --parallel opens each input once per group: warn once
	dec.OnLabelError = func(name string, err error) {
		if _, again := warned.LoadOrStore(name, true); !again {
			r.log.Warn("the PDF's page labels cannot be read: its pages are numbered only", "file", name, "error", err.Error())
		}
	}
	var brokenWarned sync.Map
	dec.OnBrokenPages = func(name string, err error) {
		// In the run's log and its run metadata (it went to the default
		// logger, plain text on stderr).
		if _, again := brokenWarned.LoadOrStore(name, true); !again {
			r.log.Warn("a PDF's page tree has broken pages", "file", name, "error", err.Error())
			r.para.Warn(name + ": " + err.Error())
		}
	}
	o := classify.Options{Batch: r.settings.Setup.Batch, Decode: dec, Upload: r.upload()}
	if r.batch > 0 {
		o.Batch = r.batch // chooseBatch's
	}
	if r.set != nil && r.set.remote() {
		// A book's pages are fetched --fetch-workers at once, so that a
		// slow server does not pace the run (the fetcher holds each host
		// to as many requests at once).
		o.Openers = r.cli.FetchWorkers
	}
	return o
}

// inputs collects the files of the run, and the pages of its books (a
// METS file or a IIIF manifest or collection given to -f, as a file or a
// URL, or listed in a list of books given to -f (book.IsList), or found in the -d folder by
// its content).
func (r *classifier) inputs(ctx context.Context) (*inputSet, error) {
	c := r.cli
	exts, err := parseExts(c.FileFormat)
	if err != nil {
		return nil, cliflags.Usage(err)
	}
	spec, err := shard.Parse(c.Shard)
	if err != nil {
		return nil, cliflags.Usage(fmt.Errorf("--shard: %w", err))
	}
	var set *inputSet
	if c.File != "" && !isURL(c.File) && book.IsList(c.File) {
		set, err = r.collectList(ctx, c.File)
	} else if c.File != "" && (isURL(c.File) || isBookFile(c.File)) {
		set, err = r.collectBook(ctx, c.File)
	} else if set, err = collect(c.File, r.inputDir(), exts, c.Inner, r.pageFromName()); err == nil {
		err = r.addBooks(ctx, set)
	}
	if err != nil {
		return nil, err
	}
	if err := bookFlagsWithoutBook(c, set); err != nil {
		return nil, err
	}
	set.share(spec)
	return set, nil
}

// bookFlagsWithoutBook refuses --book-pages and --image-group for a run
// none of whose inputs is a book (a METS file or IIIF manifest): they
// select a book's pages, and a folder of images given --book-pages was
// classified whole without a word.
func bookFlagsWithoutBook(c *CLI, set *inputSet) error {
	if set.books != nil {
		return nil
	}
	var given []string
	if c.BookPages != "" {
		given = append(given, "--book-pages")
	}
	if c.ImageGroup != "" {
		given = append(given, "--image-group")
	}
	if err := book.SelectionWithoutBook(given, "classify"); err != nil {
		return cliflags.Usage(err)
	}
	return nil
}

// pageFromName tells whether images are keyed by the page number at the end
// of their name: with --page-from-name, and for document records
// (--document-json-out, --document-json-out-dir), whose documents are the
// page images sharing a stem before their page suffix (documents).
func (r *classifier) pageFromName() bool {
	c := r.cli
	return c.PageFromName || c.DocumentJSONOut != "" || c.DocumentJSONOutDir != ""
}

// recordInputs logs the files collected, records the run's shard and the
// folders that could not be read; it reports whether the run's shard holds
// no file.
func (r *classifier) recordInputs(set *inputSet) (nothing bool) {
	r.log.Info("inputs collected", "files", len(set.Files), "root", set.Root)
	r.para.SetConfig("page_from_name", r.pageFromName())
	if !set.Shard.Whole() {
		r.para.SetConfig("shard", set.Shard.String())
		r.para.SetConfig("shard_files_all", set.All)
		r.para.SetConfig(shard.InputsConfig, set.AllDigest)
		r.para.SetConfig(shard.FolderConfig, set.Root)
		r.log.Info("shard", "shard", set.Shard.String(), "files", len(set.Files), "files_all_shards", set.All)
		// Written at once: a shard killed before its end is then told
		// unfinished by --merge, which names the --resume that ends it.
		if err := r.para.Flush(); err != nil {
			r.log.Warn("run metadata not written", "path", r.para.Path(), "error", err.Error())
		}
		if len(set.Files) == 0 {
			return true
		}
	}
	for _, s := range set.Skipped {
		r.log.Warn("folder skipped", "folder", s.File, "error", s.Reason)
		if !strings.HasPrefix(s.Reason, folderNotReadable) {
			// A link to a folder read already: said, not failed, and not
			// among skipped_files (the pages that failed), whose count
			// would then not add up with input_files_total.
			r.para.Warn(fmt.Sprintf("folder %s skipped: %s", s.File, s.Reason))
			continue
		}
		// An unreadable folder is an input that failed, as an unreadable
		// file is: in the failures table and the summary's failed count
		// too (it was only in the run metadata), and counted among the
		// inputs, so the run's figures add up.
		r.para.AddInputs(1)
		r.fail(s.File, itemName(set, s.File), 0, s.Reason)
	}
	if left := set.leftReport(); left != "" {
		// No readable page is left without a word: the default -ff is the
		// spec's png, and a folder of TIFF masters would otherwise give
		// an empty run that looks complete.
		r.log.Warn("files left out: "+left, "root", set.Root)
		r.para.Warn(left)
		r.sum.Left(set.Left)
		if set.Nested > 0 {
			r.sum.Left(map[string]int{NestedLeft: set.Nested})
		}
		for e, n := range set.ByContent {
			r.sum.Left(map[string]int{ContentLeft(e): n})
		}
		for e, n := range set.Unread {
			r.sum.Left(map[string]int{UnreadLeft(e): n})
		}
	}
	return false
}

// load loads the models and the orientation model. The models load first
// (each file read once), so that their digests are those of the bytes
// loaded. --parallel loads them group by group later: each folder is read
// once here (its digest is of those bytes) and its model loads from them.
func (r *classifier) load(folders []classify.Folder) error {
	if !r.cli.Parallel {
		ms, err := r.loadModels(folders)
		if err != nil {
			return err
		}
		r.ens, _ = classify.NewEnsemble(ms...)
		if r.ens.Orientation, err = r.loadOrientation(); err != nil {
			r.ens.Close()
			return err
		}
		return nil
	}
	if err := r.readFolders(folders); err != nil {
		return err
	}
	var err error
	r.orient, err = r.loadOrientation()
	return err
}

// closeModels closes what load loaded, once a warm-up still running has
// ended.
func (r *classifier) closeModels() {
	r.waitWarmUp()
	if r.ens != nil {
		r.ens.Close() // with its orientation model
	}
	if r.orient != nil {
		r.orient.Close()
	}
}

// identify returns the name and the digest of every model folder.
func (r *classifier) identify(folders []classify.Folder) (names, digests []string, err error) {
	names = make([]string, len(folders))
	digests = make([]string, len(folders))
	for i, f := range folders {
		meta, err := f.Meta()
		if err != nil {
			return nil, nil, err
		}
		names[i] = f.Name(meta)
		if digests[i], err = r.digests.Of(f.Dir); err != nil {
			return nil, nil, err
		}
	}
	return names, digests, nil
}

// lockChunk returns the stamp of the run's tables and their chunk size:
// the run's own stamp and 0, or with --chunk the stamp of the chunk key
// and [INPUT] chunk_size, once the lock of those tables is taken (unlock
// releases it).
func (r *classifier) lockChunk(ctx context.Context, names, digests []string) (tables string, chunk int, unlock func(), err error) {
	c, set := r.cli, r.set
	if !c.Chunk {
		return r.stamp, 0, func() {}, nil
	}
	chunk = r.settings.Input.ChunkSize
	if chunk < 1 {
		return "", 0, nil, usagef("[INPUT] chunk_size must be at least 1 with --chunk, got %d", chunk)
	}
	key := chunkKey{Input: inputKey(set, c.File, c.Inner), Renamed: set.Keys.Renamed(), ImageKeys: imageKeys(r.pageFromName()), Models: names, Digests: digests,
		TopN: c.TopN, Raw: c.Raw, Best: c.Best, Average: !c.NoAverageBest, Intermediates: c.SaveIntermediates, Precision: precisionKey(r.precision)}
	tables = key.stamp()
	r.para.SetConfig("chunk_key", key)
	// Runs of one key append to the same tables: they take turns, the
	// later one continuing from the ledger once the earlier is done
	// (before, both appended at once, and a run stopped after the other
	// had finished left its rows twice in the finished tables).
	lock := filepath.Join(c.Results, LedgerFolder, tables+".lock")
	// As --resume's runs (ledger.TakeTurn): the lock file names the run
	// holding it, which a waiting run's log line names.
	unlock, err = ledger.TakeTurn(ctx, ledger.Turn{Lock: lock, Tool: "pageclass", Output: c.Results, OnWait: chunkWaitHook,
		Waiting: "waiting for another run writing the same chunked tables (" + tables + ") to finish; this run then continues from the ledger"}, r.log)
	if err != nil {
		return "", 0, nil, fmt.Errorf("chunked tables %s: %w", tables, err)
	}
	r.log.Info("chunked output", "tables", tables, "note", "a re-run with the same inputs, models, precision, top-N and raw continues these tables; anything else starts new ones")
	return tables, chunk, unlock, nil
}

// resuming tells whether the run continues from the ledger: with --resume
// (also --retry-failed and --chunk, which continue a run) every file whose
// name and content digest the ledger holds is not classified again; its
// rows are written from the probabilities the ledger kept.
func (r *classifier) resuming() bool {
	return r.cli.Resume || r.cli.RetryFailed || r.cli.Chunk
}

// startLedger opens the run's ledger and records it in the run metadata.
// The ledger file stays open (and flocked) until the run metadata is
// written (runner.main's deferred Finish): a resume that starts in between
// must not take this run for one that was killed.
func (r *classifier) startLedger(names, digests []string) error {
	c := r.cli
	led, ledKey, err := r.openLedger(names, digests)
	if err != nil {
		return err
	}
	r.led = led
	if bs := r.set.books; bs != nil {
		bs.led, bs.cache = led, filepath.Join(led.Dir(), "fetched")
	}
	r.para.SetConfig("ledger", led.Path())
	r.para.SetConfig("ledger_key", ledKey)
	r.para.SetConfig("resume", c.Resume)
	r.para.SetConfig("retry_failed", c.RetryFailed)
	if r.resuming() {
		r.markInterrupted(led)
	}
	return nil
}

// fail records a failure of a file (name: its name in the ledger; page 0:
// the whole file) in the failures table and the run metadata.
func (r *classifier) fail(file, name string, page int, reason string) {
	if at := fmt.Sprintf("page %d: ", page); page > 0 && results.IsPDF(file) && !strings.Contains(reason, at) {
		reason = at + reason // a decoder's page error names the page already
	}
	r.failures = append(r.failures, ledger.Failure{File: name, Error: reason})
	r.para.Skip(file, reason)
	r.sum.Fail(name)
}

// counted adds a page written to the tables to the run summary.
func (r *classifier) counted(source string, p classify.Page, rv *review.Page) {
	flagged := rv != nil && rv.NeedsReview != nil && *rv.NeedsReview
	var reasons []string
	if rv != nil {
		reasons = rv.Reasons
	}
	r.sum.Page(source, results.TopN(p.Mean, 1)[0].Label, flagged, reasons)
}

// reviewed is a page's review under the run's calibration.
func (r *classifier) reviewed(p classify.Page) *review.Page {
	rv := p.Review(r.calibration)
	return &rv
}

// restore writes the rows of the files the ledger holds as done (when the
// run continues from it) and returns the files left to classify.
//
// A run that continues from the ledger needs, before it starts, the digest
// of every file the ledger holds by name, to know whether its content is
// the one recorded (a file rewritten since is classified again, and so read
// twice). A file the ledger does not name cannot be done: like every file
// of a fresh run, it is read once, when classified, and recorded with the
// digest of the bytes the decoder read (Page.Digest).
func (r *classifier) restore() ([]string, error) {
	set, led, resume := r.set, r.led, r.resuming()
	var fileDigest []string
	var digestErrs []error
	if resume {
		known := make([]string, len(set.Files))
		for i, f := range set.Files {
			if bp := set.page(f); bp != nil && bp.local == "" {
				continue // a fetched page: recorded by its URL
			} else if led.Has(itemName(set, f)) {
				known[i] = f
				if bp != nil {
					known[i] = bp.local
				}
			}
		}
		fileDigest, digestErrs = digestAll(known)
		for i, f := range set.Files {
			if bp := set.page(f); bp != nil && bp.local == "" {
				fileDigest[i] = bp.identity()
			}
		}
	}
	var files []string
	restored, failedKept, keptPages := 0, 0, 0
	for i, f := range set.Files {
		name := itemName(set, f)
		if !resume || !led.Has(name) {
			files = append(files, f)
			continue
		}
		if digestErrs[i] != nil {
			r.log.Debug("content digest not taken; the file is classified", "file", f, "error", digestErrs[i].Error())
		}
		e, ok := led.Lookup(name, fileDigest[i])
		if fileDigest[i] == "" || !ok || (e.State == ledger.Failed && r.cli.RetryFailed) {
			files = append(files, f)
			continue
		}
		done, pages, err := r.restoreFile(f, name, e)
		if err != nil {
			return nil, err
		}
		if !done {
			files = append(files, f)
			continue
		}
		restored++
		keptPages += pages
		if e.State == ledger.Failed {
			failedKept++
		}
	}
	r.para.SetConfig("items_from_ledger", restored)
	if restored > 0 {
		// Every table holds a row of each kept page.
		r.para.KeptBefore(paradata.Before{Files: restored - failedKept, Failed: failedKept, SuccessfullyProcessed: keptPages,
			OutputCountsByType: map[string]int{"csv": keptPages * len(r.out.tables)}})
	}
	r.sum.FilesKept, r.toDo, r.failedKept = restored, len(files), failedKept
	r.logRestored(restored, failedKept, len(files))
	return files, nil
}

// restoreFile writes the rows and failures of file f (name in the ledger)
// from its ledger entry e; done is false when the entry cannot stand for
// the file, which is then classified again; pages counts its pages
// written (the run metadata's successfully_processed).
func (r *classifier) restoreFile(f, name string, e ledger.Entry) (done bool, pages int, err error) {
	var d itemData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return false, 0, fmt.Errorf("ledger %s: %s: %w", r.led.Path(), name, err)
	}
	if results.MayHavePages(f) && d.Count == 0 && len(d.Pages) > 0 {
		// A TIFF recorded before its pages were read one by one (no
		// page count): it may have more pages than the one kept.
		r.log.Info("classified again: recorded before every page of a TIFF was read", "file", f)
		return false, 0, nil
	}
	kept := d.pages(f)
	r.para.AddInputs(max(1, len(kept)+len(d.Errors)))
	for _, p := range kept {
		p = r.set.labelled(p)
		// The file's digest and kind as a fresh run has them, for its
		// document record's source (a resumed run wrote none).
		if ledger.IsDigest(e.Digest) { // a fetched page is recorded by its URL's identity
			p.Digest = e.Digest
		}
		p.PDF = d.Renderer != ""
		key, err := r.set.pageKey(f, p.Page, p.Pages)
		if err != nil {
			r.fail(f, name, p.Page, err.Error())
			continue
		}
		rv := r.reviewed(p)
		source, bp := r.set.source(f)
		dup, err := r.out.add(key, source, bp, p, rv)
		if err != nil {
			return false, 0, err
		}
		if dup != "" {
			r.fail(f, name, p.Page, dup)
			continue
		}
		r.para.Processed(1)
		pages++
		r.docs.add(key, p, rv)
		r.counted(source, p, rv)
		r.classed(f, key, p)
		r.checkpoint()
	}
	for _, pe := range d.Errors {
		r.fail(f, name, pe.Page, pe.Error)
	}
	r.decodedBy.add(d)
	if e.State == ledger.Skipped && len(d.Errors) == 0 {
		r.fail(f, name, 0, e.Reason)
	}
	return true, pages, nil
}

// retryHint says how to try again the files --resume kept failed.
const retryHint = "--resume does not try failed files again: add --retry-failed to try them (the failures table lists them)"

// logRestored says what the run took from the ledger.
func (r *classifier) logRestored(restored, failedKept, toClassify int) {
	led := r.led
	switch {
	case r.resuming() && restored > 0:
		args := []any{"ledger", led.Dir(), "runs_read", led.Files(), "files_done_before", restored,
			"failed_kept", failedKept, "files_to_classify", toClassify, "retry_failed", r.cli.RetryFailed}
		if failedKept > 0 && !r.cli.RetryFailed {
			args = append(args, "hint", retryHint)
		}
		r.log.Info("continuing from the ledger", args...)
	case r.resuming():
		r.log.Info("nothing to continue: no file of this run is in the ledger with the same content, models and precision", "ledger", led.Dir(), "runs_read", led.Files())
	case led.Len() > 0:
		r.log.Info("ledger", "ledger", led.Dir(), "note", "every file is classified again (without --resume the ledger is only written)")
	}
}

// predict classifies files, emitting every page as it comes (emit), with a
// progress bar.
func (r *classifier) predict(ctx context.Context, files []string, folders []classify.Folder, groups [][]int) error {
	inputs := r.set.inputs(files)
	r.bar = r.newBar(len(inputs))
	// The bar names the file whose pages come next in the tables (emit),
	// not the last one opened: inputs are opened well ahead of them.
	r.names = make([]string, len(inputs))
	for i, in := range inputs {
		r.names[i] = itemName(r.set, in.Name)
	}
	if len(inputs) > 0 {
		r.bar.SetItem(r.names[0])
	}
	opt := r.predictOptions()
	// An input a stopped run never opened is counted too, a page as the
	// bar counts it (its page count unknown): the record's total is what
	// was collected, as the summary's files_left says. The pipeline's
	// opener may still open one after a stop has ended predict: it is
	// counted as unopened then, once (it was counted twice: 43 of 42).
	var openMu sync.Mutex
	opened, counted := 0, false
	opt.OnOpen = func(in pipeline.Input, pages int) {
		if pages > 1 {
			r.bar.AddTotal(pages - 1)
		}
		openMu.Lock()
		defer openMu.Unlock()
		if !counted {
			r.para.AddInputs(max(pages, 1))
			opened++
		}
	}
	defer func() {
		openMu.Lock()
		defer openMu.Unlock()
		counted = true
		r.para.AddInputs(len(inputs) - opened)
	}()
	r.open = map[string]*item{}
	r.stopped = func() bool { return ctx.Err() != nil }
	var err error
	var st pipeline.Stats
	pages, start := 0, time.Now()
	failed := 0
	emit := func(p classify.Page) error {
		if p.Err != nil {
			failed++ // a page that could not be read or classified
		} else {
			pages++
		}
		return r.emit(p)
	}
	if r.cli.Parallel {
		err = r.runGroups(ctx, folders, r.orient, groups, inputs, opt, emit)
	} else {
		st, err = r.ens.Predict(ctx, inputs, opt, emit)
	}
	r.endBar(r.bar)
	// The rate of the classification itself (decoding, preprocessing and
	// the forward passes; models loaded before it, except --parallel's
	// groups after the first): what benchmarks compare.
	secs := time.Since(start).Seconds()
	attrs := []any{"pages", pages, "failed", failed, "seconds", math.Round(secs*1000) / 1000,
		"pages_per_s", math.Round(float64(pages)/max(secs, 1e-9)*10) / 10, "upload", opt.Upload.On(r.device).String()}
	if st.Batches > 0 {
		// Where the time went (one ensemble; --parallel's groups are not
		// timed): the host's start-up, the models' first call against
		// the next ones, and the share of the run with a batch in the
		// models (well under 1: the host does not keep up).
		attrs = append(attrs, "first_batch_s", seconds(st.FirstBatch), "first_call_s", seconds(st.FirstForward))
		if st.Batches > 1 {
			attrs = append(attrs, "call_mean_s", seconds(st.ForwardMean()))
		}
		attrs = append(attrs, "batches", st.Batches, "model_busy", math.Round(st.Busy()*1000)/1000)
	}
	r.log.Info("pages classified", attrs...)
	return err
}

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1000) / 1000 }

// emit writes the rows of a classified page and, after a file's last page,
// records the file in the ledger.
func (r *classifier) emit(p classify.Page) error {
	it := r.open[p.Name]
	if it == nil {
		it = &item{data: itemData{Decoding: r.decodingMode()}}
		r.open[p.Name] = it
	}
	if p.PDF {
		it.data.Renderer = r.cli.PDFRenderer
	}
	name := itemName(r.set, p.Name)
	switch next := p.Input + 1; {
	case p.Page < p.Pages:
		r.bar.SetItem(name) // more of this file's pages to come
	case next < len(r.names):
		r.bar.SetItem(r.names[next])
	}
	p = r.set.labelled(p)
	if err := r.row(p, it, name); err != nil {
		return err
	}
	if p.Page < p.Pages {
		return nil
	}
	// The file's last page: the item is complete.
	return r.complete(p, it, name)
}

// row writes a page's rows (or its failure) and adds it to its item.
func (r *classifier) row(p classify.Page, it *item, name string) error {
	pageFailed := func(reason string) {
		if it.passing != nil {
			r.bar.Leave(1) // left to do, not the page's failure
		} else {
			r.bar.Fail(1)
		}
		r.fail(p.Name, name, p.Page, reason)
		it.add(p, reason)
	}
	var rv *review.Page
	if p.Err == nil {
		rv = r.reviewed(p)
	}
	source, bp := r.set.source(p.Name)
	if p.Err != nil && errors.Is(p.Err, context.Canceled) && r.stopped != nil && r.stopped() {
		// The run was stopped while the page was decoded (a decoder
		// process is stopped with it): not the file's fault, not done.
		// A cancellation of anything else, the run going on, is a
		// failure like any other, recorded and listed.
		it.stopped = true
		return nil
	}
	if p.Err != nil {
		// ERROR, as translate logs a file that failed (it was WARN).
		r.log.Error("page skipped", append(r.pageArgs(p), "error", p.Err.Error())...)
		if ledger.Transient(p.Err) {
			it.passing = p.Err
		}
		var refused *fetch.StatusError
		it.refused = it.refused || errors.As(p.Err, &refused)
		pageFailed(p.Err.Error())
	} else if key, err := r.set.pageKey(p.Name, p.Page, p.Pages); err != nil {
		pageFailed(err.Error())
	} else if dup, err := r.out.add(key, source, bp, p, rv); err != nil {
		return err
	} else if dup != "" {
		r.log.Warn("page skipped: its row key is taken by another file", "file", p.Name, "key", key.String())
		pageFailed(dup)
	} else {
		r.bar.Add(1)
		r.para.Processed(1)
		r.docs.add(key, p, rv)
		r.counted(source, p, rv)
		r.classed(p.Name, key, p)
		r.printed(key, p)
		r.checkpoint()
		it.add(p, "")
	}
	return nil
}

// printed writes a page's Top-N to stdout when the run's input is one
// file given with -f (not a book), named by its row key (the tables' FILE
// and PAGE): "scan: TEXT 0.9734, TEXT_T 0.0123, ..." (a PDF's or TIFF's
// pages each on its line, "doc page 2: ..."),
// as the original tool printed its prediction; the tables hold the same,
// and the log goes to stderr, so a script reads the prediction alone.
func (r *classifier) printed(key results.Key, p classify.Page) {
	if r.cli.File == "" || r.stdout == nil || r.set.page(p.Name) != nil {
		return
	}
	var top []string
	for _, t := range p.Top(r.cli.TopN) {
		top = append(top, fmt.Sprintf("%s %.4f", t.Label, t.Score))
	}
	if _, err := fmt.Fprintf(r.stdout, "%s: %s\n", utf8name.Escape(key.String()), strings.Join(top, ", ")); err != nil {
		// A full disk, or a reader gone (| head -1): said once, and the
		// run goes on (it ended at the first line before, without its
		// tables, or exited 0 with the lines lost without a word).
		r.log.Warn("standard output cannot be written: the pages' Top-N are no longer printed there; the tables hold them", "error", err)
		r.stdout = nil
	}
}

// pageArgs are the log attributes that name a page: its file, and its page
// when it has one: the number of a PDF or TIFF page; for a page of a book,
// its position in the book and its ID (METS div or canvas). A single image
// has no page number, so none is given (before, "page":0).
func (r *classifier) pageArgs(p classify.Page) []any {
	args := []any{"file", p.Name}
	if bp := r.set.page(p.Name); bp != nil {
		return append(args, "page", bp.index, "page_id", bp.ids.ID)
	}
	if p.Page > 0 {
		args = append(args, "page", p.Page)
	}
	return args
}

// complete records a file whose last page was emitted in the ledger.
func (r *classifier) complete(p classify.Page, it *item, name string) error {
	delete(r.open, p.Name)
	if fileHook != nil {
		fileHook(p.Name)
	}
	// The digest of the bytes that were decoded, not of the file as it
	// is now: a file rewritten meanwhile must not be recorded with the
	// classes of its old content.
	digest := p.Digest
	if it.stopped {
		r.log.Debug("file left to do: the run was stopped while it was decoded", "file", p.Name)
		return nil
	}
	if it.passing != nil {
		// A page failed in passing: the file is not at fault and stays
		// to do (a --resume classifies it).
		r.log.Warn("file left to do after a passing failure; run again with --resume to finish it", "file", p.Name, "error", it.passing.Error())
		r.undone++
		r.lastPassing = it.passing
		return nil
	}
	r.decodedBy.add(it.data)
	if bp := r.set.page(p.Name); bp != nil && bp.local == "" && (digest != "" || it.refused) {
		// A fetched page is recorded by the URL it was fetched from,
		// which a resumed run knows without fetching it again; so is
		// one whose image the server refused for good (a 404).
		digest = bp.identity()
	}
	if digest == "" {
		r.log.Debug("content digest not taken (the file could not be read); the file is not recorded in the ledger", "file", p.Name)
		r.finished++
		return nil
	}
	e, err := it.entry(name, digest)
	if err != nil {
		return err
	}
	if err := r.led.Record(e); err != nil {
		return err
	}
	if bp := r.set.page(p.Name); bp != nil {
		r.set.books.classified(bp)
	}
	r.recorded++
	r.finished++
	if itemHook != nil {
		itemHook(r.recorded)
	}
	return nil
}

// fileSystemError reports whether err is a file system's refusal (a path
// that cannot be written: permission, a read-only or full file system, a
// folder gone or replaced by a file), not the run's own failure.
func fileSystemError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le)
}

// closeTables closes the tables (stamp tables), writes the failures table
// and the document records, and returns the run's error: runErr, a table
// not written, or no page classified at all.
func (r *classifier) closeTables(tables string, runErr error) error {
	r.decodedBy.record(r)
	written, cerr := r.out.close()
	for _, w := range written {
		r.para.AddOutputFile(w.path)
		r.para.CountOutput("csv", w.rows)
		r.log.Info("table written", "path", w.path, "rows", w.rows)
	}
	fpath := filepath.Join(r.cli.Results, tables+"_"+FailuresTable)
	if ferr := ledger.WriteFailures(fpath, r.failures); ferr != nil {
		cerr = errors.Join(cerr, fmt.Errorf("failures table: %w", ferr))
	} else {
		r.para.AddOutputFile(fpath)
		r.log.Info("failures table written", "path", fpath, "rows", len(r.failures))
	}
	cerr = errors.Join(cerr, r.summarise(filepath.Join(r.cli.Results, tables+"_"+summary.TableName)))
	if cerr != nil && runErr == nil && r.recorded > 0 && fileSystemError(cerr) {
		// The results folder could not be written at the end (made
		// read-only, moved, full): what was classified is in the ledger,
		// so the run is to finish, not failed ("run failed", exit 3).
		return cliflags.IncompleteError{Err: fmt.Errorf("%w; every page classified is recorded in the ledger: once the results folder can be written, "+
			"run again with --resume to write the tables (nothing is classified again)", cerr)}
	}
	if err := errors.Join(runErr, cerr); err != nil {
		return err
	}
	if err := r.docs.write(); err != nil {
		return err
	}
	if err := r.writeBookOut(); err != nil {
		return err
	}
	if r.out.rows() == 0 {
		r.para.SetConfig(shard.TriedConfig, true) // its share is done: a merge takes it
		if r.failedKept > 0 && !r.cli.RetryFailed {
			return fmt.Errorf("no page was classified: files that failed in earlier runs, kept failed: %d; %s", r.failedKept, retryHint)
		}
		return errors.New("no page was classified")
	}
	return nil
}

// summarise ends the run with its summary: the table at path, the run
// metadata, and a block on a terminal (off one, a log record).
func (r *classifier) summarise(path string) error {
	r.para.SetSummary(r.sum.Filled())
	logSummary(r.runner, &r.sum)
	if err := r.sum.WriteTable(path); err != nil {
		return fmt.Errorf("summary table: %w", err)
	}
	r.para.AddOutputFile(path)
	r.log.Info("summary table written", "path", path)
	return nil
}

// logSummary shows a run summary: on a terminal the text block on stderr,
// off one a log record with the totals and the pages per category.
func logSummary(r *runner, s *summary.Summary) {
	if r.logSink != nil && r.logSink.Terminal() {
		fmt.Fprint(r.stderr, s.Text())
		fmt.Fprintf(r.stderr, "  results in %s\n", r.cli.Results)
		return
	}
	r.log.Info("run summary", "pages", s.Pages, "sources", len(s.Sources), "flagged", s.Flagged,
		"failed", s.Failed, "categories", counts(s.Categories), "flag_reasons", counts(s.Reasons),
		"not_collected", counts(s.NotCollected), "files_kept", s.FilesKept, "files_left", s.FilesLeft, "output", r.cli.Results)
}

// counts is m, or an empty map when m is nil, so the record says {} for
// "none" rather than null.
func counts(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// imageKeys is the chunk key's word for how images are keyed: "" for the
// page number from the name (the only rule before there was a choice, so
// such chunked tables keep their name), "stem" for the whole stem.
func imageKeys(pageFromName bool) string {
	if pageFromName {
		return ""
	}
	return "stem"
}

// resolveCalibration finds the doubt calibration of the run's model set in
// the calibration file of the folder holding the model folders, records it
// (file, digest, target, thresholds) in the run metadata, or records and
// says that there is none: then no page is flagged for doubt, and the
// review table says "uncalibrated" rather than apply a default threshold.
func (r *classifier) resolveCalibration(folders []classify.Folder, names, digests []string) error {
	dirs := make([]string, len(folders))
	members := make([]review.Member, len(folders))
	for i, f := range folders {
		dirs[i] = f.Dir
		members[i] = review.Member{Name: names[i], Digest: digests[i]}
	}
	place, err := review.Place(dirs)
	note := ""
	if err != nil {
		note = err.Error()
	} else if r.calibration, note, err = review.Resolve(place, members); err != nil {
		return fmt.Errorf("calibration: %w", err)
	}
	if r.calibration == nil {
		r.log.Warn("no doubt calibration for these models: pages are not flagged for doubt (needs_review is left empty unless a page condition flags the page)", "reason", note)
		r.para.SetReview("calibration", nil)
		r.para.SetReview("calibration_note", note)
		return nil
	}
	// Set-up detail (the calibration and its digest are in the run metadata).
	r.log.Debug("doubt calibration", "file", r.calibration.File, "digest", r.calibration.FileDigest,
		"target_precision", r.calibration.Target, "min_agreement", r.calibration.Thresholds.MinAgreement,
		"min_margin", r.calibration.Thresholds.MinMargin, "reachable", r.calibration.Reachable)
	if msg := r.calibration.Shortfall(); msg != "" {
		r.log.Warn(msg, "target_precision", r.calibration.Target, "file", r.calibration.File)
	}
	r.para.SetReview("calibration", r.calibration)
	return nil
}

// FailuresTable ends the name of a run's failures table,
// {stamp}_FAILURES.csv: FILE (relative to the input folder), ERROR.
const FailuresTable = "FAILURES.csv"

// itemHook, when set (tests), is called after each item is recorded in the
// ledger with the number recorded so far in this run.
var itemHook func(recorded int)

// chunkWaitHook, when set (tests), is called with the lock's path when a
// --chunk run starts to wait for another run of the same tables.
var chunkWaitHook func(lock string)

// fileHook, when set (tests), is called with a file's path when its last
// page has been classified, before it is recorded in the ledger.
var fileHook func(path string)
