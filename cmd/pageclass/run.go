package main

import (
	"archivekit/internal/atomicfile"
	"archivekit/internal/shard"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/cliflags"
	"archivekit/internal/ledger"
	"archivekit/internal/licence"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/settings"
	"archivekit/internal/paradata"
	"archivekit/internal/progress"
	"archivekit/internal/resources"
)

// defaultHubEndpoint is the hub's base URL when HUB_ENDPOINT is not set.
const defaultHubEndpoint = "https://huggingface.co"

// testHookMetadataWritten, when set (tests), is called with the run's
// ledger file after its run metadata is written, before the ledger closes.
var testHookMetadataWritten func(ledger string)

// runner is the core of one run, shared by every mode: the command line and
// settings, the log, the stamp, the run metadata (with the run's licence)
// and the ledger. Each mode is a type of its own over it: classifier
// (classification), trainer (--train), evaluator (--eval), averager
// (--average) and merger (--merge); models selects, loads and records the
// models of the first three.
type runner struct {
	cli        *CLI
	settings   settings.Settings
	configPath string
	config     resources.File
	log        *slog.Logger
	logSink    *logSink
	stdout     io.Writer
	stderr     io.Writer

	start  time.Time
	stamp  string
	para   *paradata.Run
	device string
	// precision is the arithmetic of the forward passes on device
	// (--precision, resolved by pickDevice).
	precision torch.Precision
	// led is the run's ledger once opened; closed after the run metadata
	// is written.
	led *ledger.Ledger
	// lic is what the run's licence is resolved from.
	lic runLicence
	// plan is the shard runs a --merge takes (planMerge).
	plan *mergePlan
}

// runLicence is what a run's licence is resolved from, beyond the
// components file: the models used and whether a demo model answered.
type runLicence struct {
	// demo is set once a shipped demo model was loaded.
	demo bool
	// models are the licences of the models used, as components.
	models []licence.Component
	// said holds the licence warnings and results already logged.
	said map[string]bool
}

// main dispatches on the mode: --average, --train (then --eval), --eval, or
// classification. The run metadata is started first and finished last, also
// when the run fails.
func (r *runner) main(ctx context.Context) (err error) {
	c := r.cli
	r.start = time.Now()
	for _, w := range c.pathWarnings() {
		r.log.Warn(w)
	}
	if err := r.pickDevice(); err != nil {
		return err
	}
	if c.PDFRenderer == imageio.RendererPDFium {
		lib, err := imageio.LoadPDFium(os.Getenv)
		if err != nil {
			return usagef("--pdf-renderer pdfium: %v", err)
		}
		r.log.Debug("PDFium loaded", "library", lib)
	} else if lib, err := imageio.LoadPDFium(os.Getenv); err == nil {
		// For a second look at a PDF page poppler draws in one colour
		// (imageio.Doc.Use); without it such a page is taken as drawn.
		r.log.Debug("PDFium loaded for a second look at flat poppler pages", "library", lib)
	}
	if err := r.checkClassifying(); err != nil {
		return err
	}
	if c.Merge {
		// The shards are chosen first: a merge refused (a shard missing,
		// unfinished or of another configuration) writes nothing.
		if r.plan, err = r.planMerge(); err != nil {
			return err
		}
	}
	if err := r.checkLabelled(); err != nil {
		return err
	}
	_, statErr := os.Stat(c.Results)
	madeResults := os.IsNotExist(statErr)
	if err := os.MkdirAll(c.Results, 0o777); err != nil {
		return fmt.Errorf("results folder: %w (give --results DIR, a folder you can write; the default is ./result of the current folder)", err)
	}
	// A folder that exists but this user cannot write was named by the
	// run metadata file it could not create.
	if err := atomicfile.CheckDir(c.Results); err != nil {
		return fmt.Errorf("results folder %s is not writable by this process (user %d): %w (give --results DIR, a folder you can write)", c.Results, os.Getuid(), err)
	}
	// The records are written at the end: their folders are checked now,
	// not after every page was classified.
	if c.DocumentJSONOutDir != "" {
		if err := atomicfile.PrepareDir(c.DocumentJSONOutDir, "--document-json-out-dir"); err != nil {
			return err
		}
	}
	if c.DocumentJSONOut != "" {
		if err := atomicfile.PrepareDir(filepath.Dir(c.DocumentJSONOut), "--document-json-out: the folder of"); err != nil {
			return err
		}
	}
	// The stamp is claimed in the results folder, so two runs never share
	// output names (a second run of the same second gets stamp-2).
	stamp := results.Stamp(r.start)
	if sp, err := shard.Parse(c.Shard); err == nil && !sp.Whole() {
		// A shard's tables and run metadata say which share they hold
		// ({stamp}-shard-1-of-4_v4.4_TOP-3.csv): they were named as a
		// whole run's.
		stamp += "-" + strings.TrimPrefix(sp.FileSuffix(), "_")
	}
	r.para, r.stamp, err = paradata.Create(c.Results, stamp, r.start, paradata.NewInfo(os.Getenv))
	if err != nil {
		return fmt.Errorf("run metadata: %w", err)
	}
	r.para.SetUnit("page") // the input counts are pages (a PDF's, a book's each)
	defer func() { err = r.finish(ctx, err, madeResults) }()
	r.recordConfig()
	r.warnUnusedBaselines()
	// Written at once: a run killed before its end (SIGKILL, a machine
	// lost) leaves its settings, so --merge tells its shard unfinished
	// and --resume names it, rather than a record with none.
	if err := r.para.Flush(); err != nil {
		return fmt.Errorf("run metadata: %w", err)
	}
	if err := r.resolveLicence(false); err != nil {
		return err
	}
	return r.dispatch(ctx)
}

// finish ends the run that main started with err: its run metadata
// written (interrupted, naming the signal, when one stopped it; none at
// all when there was nothing to classify, and the results folder removed
// when the run made it) and its ledger closed. It returns err with what
// went wrong doing so.
func (r *runner) finish(ctx context.Context, err error, madeResults bool) error {
	if cliflags.Code(err) == exitNoInput && r.led == nil && r.wroteOnlyMetadata() {
		// Nothing to classify (an empty folder, none of -ff's files): no
		// trace is left, as translate leaves none; the run metadata of a
		// run that never started and the results folder it made were
		// left behind.
		_ = os.Remove(r.para.Path())
		if madeResults {
			_ = os.Remove(r.cli.Results) // only when empty
		}
		return err
	}
	outcome := err
	if s, ok := cliflags.StoppedBy(ctx); ok && err != nil {
		// Stopped by Ctrl-C or SIGTERM: interrupted, naming the signal,
		// not failed with "context canceled".
		outcome = s
	}
	if ferr := r.para.Finish(outcome); ferr != nil {
		r.log.Error("run metadata not written", "path", r.para.Path(), "error", ferr.Error())
		err = errors.Join(err, ferr)
	} else {
		r.log.Info("run metadata written", "path", r.para.Path())
	}
	if r.led != nil {
		if testHookMetadataWritten != nil {
			testHookMetadataWritten(r.led.Path())
		}
		if lerr := r.led.Close(); lerr != nil {
			err = errors.Join(err, lerr)
		}
	}
	return err
}

// wroteOnlyMetadata says whether the results folder holds nothing of this
// run (its stamp) but its run metadata: no table, no failures table.
func (r *runner) wroteOnlyMetadata() bool {
	entries, err := os.ReadDir(r.cli.Results)
	if err != nil {
		return false
	}
	meta := filepath.Base(r.para.Path())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), r.stamp) && e.Name() != meta {
			return false
		}
	}
	return true
}

// checkClassifying fails a classifying run before it writes anything (no
// results folder, no run metadata of a run that never started) when its
// input is missing, or its orientation model is not there (found once the
// models were loaded, seconds later, after writing the run metadata of a
// failed run).
func (r *runner) checkClassifying() error {
	c := r.cli
	if c.Merge || c.Average || c.Train || c.Eval {
		return nil
	}
	if err := checkInput(c.File, r.inputDir()); err != nil {
		return err
	}
	if dir := c.RotationModel; dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "model.json")); err != nil {
			return fmt.Errorf("%s: %w", c.source("rotation-model"), err)
		}
	}
	return nil
}

// warnUnusedBaselines says that a baseline record given without the flag
// that writes its update is not used: the document-record adapter does
// nothing without an output (spec 4.1 rule 8), and a user who gave one
// expects a record.
func (r *runner) warnUnusedBaselines() {
	c := r.cli
	for _, u := range []struct{ flag, value, out, outValue string }{
		{"--document-json", c.DocumentJSON, "--document-json-out FILE", c.DocumentJSONOut},
		{"--document-json-dir", c.DocumentJSONDir, "--document-json-out-dir DIR", c.DocumentJSONOutDir},
	} {
		if u.value != "" && u.outValue == "" {
			w := fmt.Sprintf("%s %s is not used: no record is written without %s (where the updated record goes)", u.flag, u.value, u.out)
			r.log.Warn(w)
			r.para.Warn(w)
		}
	}
}

// dispatch runs the mode of the command line.
func (r *runner) dispatch(ctx context.Context) error {
	c := r.cli
	m := &models{runner: r}
	switch {
	case c.Merge:
		r.para.SetConfig("merge_from", c.MergeFrom)
		return (&merger{r}).merge()
	case c.Average:
		return (&averager{r}).average()
	case c.Train:
		trained, err := (&trainer{m}).train(ctx)
		if err != nil {
			return err
		}
		if c.Eval {
			// --train --eval evaluates the models this run just trained.
			return (&evaluator{m}).evaluate(ctx, trained)
		}
		return nil
	case c.Eval:
		return (&evaluator{m}).evaluate(ctx, nil)
	}
	return (&classifier{models: m}).classify(ctx)
}

// newDecoders starts the run's decoder processes (imageio.Isolation: pages
// are decoded in processes of their own, started when first needed), or
// returns nil with --decode-in-process. The caller closes them.
func (r *runner) newDecoders() (*imageio.Isolation, error) {
	if r.cli.DecodeInProcess {
		return nil, nil
	}
	if testDecoders != nil {
		return testDecoders, nil
	}
	iso, err := imageio.NewIsolation(0, r.cli.DecodeTimeout)
	if err != nil {
		return nil, err
	}
	iso.MaxMemory = int64(r.cli.DecodeMemory) << 20
	return iso, nil
}

// closeDecoders stops decoder processes of newDecoders.
func closeDecoders(d *imageio.Isolation) {
	if d != testDecoders {
		d.Close()
	}
}

// testDecoders, when a test sets it, are the decoder processes of every
// run of the test binary, instead of processes started and stopped by
// each run (a test binary starts in about a second: the suite's runs
// spent minutes starting them).
var testDecoders *imageio.Isolation

// decodeOptions are how the run decodes pages: imageio's defaults with
// --pdf-renderer, in decoders (nil: in this process).
func (r *runner) decodeOptions(decoders *imageio.Isolation) imageio.Options {
	dec := imageio.DefaultOptions
	dec.Renderer = r.cli.PDFRenderer
	dec.Isolation = decoders
	return dec
}

// inputDir is the input folder: -d, or [INPUT] FOLDER_INPUT with --dir.
func (r *runner) inputDir() string {
	if r.cli.Dir {
		return r.settings.Input.FolderInput
	}
	return r.cli.Directory
}

// pickDevice resolves --device and refuses --parallel without a GPU.
func (r *runner) pickDevice() error {
	c := r.cli
	gpu := torch.CUDAAvailable()
	if c.Parallel && !gpu {
		return usagef("--parallel needs a CUDA GPU and none is available: run --best without --parallel (the models then run one after the other)")
	}
	problem := torch.CUDAProblem() // a driver is present but CUDA failed
	switch d := c.Device; {
	case d == "auto" || d == "":
		r.device = "cpu"
		if gpu {
			r.device = "cuda:0"
		} else if problem != "" {
			r.log.Warn("an NVIDIA driver is present but CUDA could not be enabled: running on the CPU", "reason", problem)
		}
	case d == "cpu":
		r.device = d
	case strings.HasPrefix(d, "cuda"):
		if !gpu {
			if problem != "" {
				return usagef("--device %s: CUDA could not be enabled: %s", d, problem)
			}
			return usagef("--device %s: no CUDA GPU is available", d)
		}
		r.device = d
	default:
		return usagef("--device %q: want cpu, cuda:N or auto", d)
	}
	if err := torch.CheckDevice(r.device); err != nil {
		return usagef("--%v", err) // cuda:x, cuda:-1
	}
	return r.pickPrecision()
}

// upload is --upload (auto when unset or unknown: kong checks the enum).
func (r *runner) upload() classify.Upload {
	u, err := classify.ParseUpload(r.cli.Upload)
	if err != nil {
		return classify.UploadAuto
	}
	return u
}

// pickPrecision resolves --precision on the run's device: auto is
// torch.DefaultPrecision (tf32 on CUDA, fp32 on the CPU); tf32 on the CPU
// runs as fp32 (said in the log); fp16 on the CPU is refused. It also
// applies --gpu-streams and --jit-optimize.
func (r *runner) pickPrecision() error {
	p := torch.DefaultPrecision(r.device)
	if asked := r.cli.Precision; asked != "" && asked != "auto" {
		var err error
		if p, err = torch.ParsePrecision(asked); err != nil {
			return usagef("--precision: %v", err)
		}
	}
	p, note, err := p.Effective(r.device)
	if err != nil {
		return usagef("--precision %s on %s: %v", r.cli.Precision, r.device, err)
	}
	if note != "" {
		r.log.Info("precision: "+note, "precision", p.String(), "device", r.device)
	}
	r.precision = p
	// --gpu-streams and --jit-optimize: process-wide in the shim, like the
	// thread count
	if err := torch.SetGraphOptimize(r.jitOptimize()); err != nil {
		return err
	}
	return torch.SetCUDAStreamPool(r.cli.GPUStreams != "one")
}

// jitOptimize resolves --jit-optimize on the run's device (auto:
// torch.DefaultGraphOptimize).
func (r *runner) jitOptimize() bool {
	return onOffAuto(r.cli.JITOptimize, torch.DefaultGraphOptimize(r.device))
}

// onOffAuto resolves an auto|on|off flag value: on and off as said,
// anything else (auto, or unset) to auto.
func onOffAuto(asked string, auto bool) bool {
	switch asked {
	case "on":
		return true
	case "off":
		return false
	}
	return auto
}

// recordConfig writes every flag value (config defaults applied) into the
// run metadata.
func (r *runner) recordConfig() {
	c := r.cli
	r.para.SetConfig("config_file", r.configPath)
	for k, v := range map[string]any{
		"file": c.File, "directory": c.Directory, "dir": c.Dir, "file_format": c.FileFormat, "inner": c.Inner, "page_from_name": c.PageFromName,
		"topn": c.TopN, "raw": c.Raw, "chunk": c.Chunk, "chunk_size": r.settings.Input.ChunkSize, "results": c.Results,
		"no_average_best": c.NoAverageBest, "save_intermediates": c.SaveIntermediates,
		"model": c.Model, "base": c.Base, "revision": c.Revision, "hub": c.Hub, "fastcls": c.FastCls,
		"fastcls_base": c.FastClsBase, "best": c.Best, "parallel": c.Parallel, "device": r.device, "pdf_renderer": c.PDFRenderer, "pdf_second_look": imageio.SecondLook(c.PDFRenderer), "decode_in_process": c.DecodeInProcess, "decode_timeout": c.DecodeTimeout.String(), "decode_memory_mib": c.DecodeMemory,
		"precision": r.precision.String(), "upload": r.upload().On(r.device).String(), "gpu_streams": r.cli.GPUStreams, "jit_optimize": onOff(r.jitOptimize()), "warm_up": onOff(r.warmUp()), "train": c.Train, "eval": c.Eval, "folds": c.Folds, "folds_csv": c.FoldsCSV, "fold_column": c.FoldColumn,
		"average": c.Average, "average_pattern": c.AveragePattern, "batch": r.settings.Setup.Batch,
		"document_json": c.DocumentJSON, "document_json_out": c.DocumentJSONOut,
		"document_json_dir": c.DocumentJSONDir, "document_json_out_dir": c.DocumentJSONOutDir,
		"strict_document_json": c.StrictDocumentJSON, "merge": c.Merge,
		"image_group": c.ImageGroup, "book_pages": c.BookPages, "book_skip_types": c.BookSkipTypes, "fetch_private": c.FetchPrivate, "book_out": c.BookOut,
	} {
		r.para.SetConfig(k, v)
	}
}

// resolveLicence records the run's licence from the components file with
// the conditions of this run ("training", "fastcls", and "demo" once a
// shipped demo model answers).
func (r *runner) resolveLicence(demo bool) error {
	f, err := resources.Default.Beside(r.config, resources.PageclassComponents)
	if err != nil {
		return usagef("licence components: %w", err)
	}
	comps, err := licence.ReadComponents(f)
	if err != nil {
		return usagef("licence components: %w", err)
	}
	var conds []string
	if r.cli.Train {
		conds = append(conds, "training")
	}
	if r.cli.FastCls {
		conds = append(conds, "fastcls")
	}
	if demo {
		conds = append(conds, "demo")
	}
	names := comps.Counting(conds...)
	for _, m := range r.lic.models {
		// Each model's own licence (model.json "license") counts too: the
		// weights that produced the results.
		comps.Add(m)
		names = append(names, m.Name)
	}
	res := comps.Resolve(names...)
	r.para.SetLicence(res)
	if r.lic.said == nil {
		r.lic.said = map[string]bool{}
	}
	for _, w := range res.Warnings {
		if !r.lic.said[w] {
			r.lic.said[w] = true
			r.log.Warn("licence", "warning", w)
			r.para.Warn(w)
		}
	}
	if key := res.EffectiveLicense + "|" + strings.Join(res.DeterminedBy, ","); !r.lic.said[key] {
		r.lic.said[key] = true
		// Set-up detail: the licence is in the run metadata.
		r.log.Debug("licence resolved", "license", res.EffectiveLicense, "determined_by", strings.Join(res.DeterminedBy, ","))
	}
	return nil
}

func (r *runner) configPathOr() string {
	if r.configPath == "" {
		return DefaultConfig
	}
	return r.configPath
}

// barInterval, when set (tests), is the time between two progress lines
// off a terminal (0: progress's default, 10 s).
var barInterval time.Duration

// newBar starts a progress bar on stderr and routes the log through it.
func (r *runner) newBar(total int) *progress.Bar {
	opt := progress.Options{Label: "pageclass", Interval: barInterval}
	if !r.logSink.Terminal() {
		// Off a terminal the log is JSON lines: progress lines are log
		// records too, never bare text between (or inside) them.
		opt.Log = func(line string, f progress.Fields) { r.log.Info(line, f.Args()...) }
	}
	bar := progress.New(r.stderr, total, opt)
	r.logSink.set(bar)
	return bar
}

func (r *runner) endBar(bar *progress.Bar) {
	bar.Finish()
	r.logSink.set(r.stderr)
}

// progressOut is where training and evaluation draw their progress line:
// stderr on a terminal; off one nothing (the log records say how far it
// is), so the line never lands inside a JSON log record.
func (r *runner) progressOut() io.Writer {
	if r.logSink != nil && r.logSink.Terminal() {
		return r.stderr
	}
	return nil
}

// markInterrupted finds the earlier runs this run continues (their ledger
// files in its ledger folder) that have ended while their run metadata still
// says "running" (killed with SIGKILL, or crashed): it records in their
// metadata that they were interrupted, and in this run's which they were.
// A run still going holds its ledger file and is left alone.
func (r *runner) markInterrupted(led *ledger.Ledger) {
	r.para.RecordInterrupted(r.log, r.para.Snapshot().RunID, led.Ended(), paradata.ClassifierMeta(r.cli.Results))
}

// onOff names a switch's state in the run metadata.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
