package main

import (
	"context"
	"encoding/json"
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
	"archivekit/internal/filelock"
	"archivekit/internal/ledger"
	"archivekit/internal/licence"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/hub"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/pipeline"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/pageclass/settings"
	"archivekit/internal/paradata"
	"archivekit/internal/progress"
	"archivekit/internal/resources"
	"archivekit/internal/shard"
	"archivekit/internal/version"
)

// defaultHubEndpoint is the hub's base URL when HUB_ENDPOINT is not set.
const defaultHubEndpoint = "https://huggingface.co"

// testHookMetadataWritten, when set (tests), is called with the run's
// ledger file after its run metadata is written, before the ledger closes.
var testHookMetadataWritten func(ledger string)

// runner holds one run's state.
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
	// led is the run's ledger once opened; closed after the run metadata
	// is written.
	led *ledger.Ledger
	// hubClient, when set, replaces hub.FromEnv (tests).
	hubClient *hub.Client
	// digests caches modelmeta.Digest by folder.
	digests map[string]string
	// demo is set once a shipped demo model was loaded.
	demo bool
	// modelComps are the licences of the models used, as components.
	modelComps []licence.Component
	// licenceSaid holds the licence warnings and results already logged.
	licenceSaid map[string]bool
	// calibration is the doubt calibration of the run's models; nil when
	// there is none (then needs_review is only set by page conditions).
	calibration *review.Applied
}

// main dispatches on the mode: --average, --train (then --eval), --eval, or
// classification. The run metadata is started first and finished last, also
// when the run fails.
func (r *runner) main(ctx context.Context) (err error) {
	c := r.cli
	r.start = time.Now()
	if err := r.pickDevice(); err != nil {
		return err
	}
	if err := os.MkdirAll(c.Results, 0o755); err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	// The stamp is claimed in the results folder, so two runs never share
	// output names (a second run of the same second gets stamp-2).
	r.para, r.stamp, err = paradata.Create(c.Results, results.Stamp(r.start), r.start, paradata.Info{
		ToolVersion: version.String(), Repository: "archivekit",
		RunnerRef: os.Getenv("RUNNER_REF"), DockerImage: os.Getenv("DOCKER_IMAGE"),
	})
	if err != nil {
		return fmt.Errorf("run metadata: %w", err)
	}
	defer func() {
		if ferr := r.para.Finish(err); ferr != nil {
			r.log.Error("run metadata not written", "file", r.para.Path(), "error", ferr.Error())
			err = errors.Join(err, ferr)
		} else {
			r.log.Info("run metadata written", "file", r.para.Path())
		}
		if r.led != nil {
			if testHookMetadataWritten != nil {
				testHookMetadataWritten(r.led.Path())
			}
			if lerr := r.led.Close(); lerr != nil {
				err = errors.Join(err, lerr)
			}
		}
	}()
	r.recordConfig()
	if err := r.resolveLicence(false); err != nil {
		return err
	}
	switch {
	case c.Merge:
		r.para.SetConfig("merge_from", c.MergeFrom)
		return r.merge()
	case c.Average:
		return r.average()
	case c.Train:
		trained, err := r.train(ctx)
		if err != nil {
			return err
		}
		if c.Eval {
			// --train --eval evaluates the models this run just trained.
			return r.evaluate(ctx, trained)
		}
		return nil
	case c.Eval:
		return r.evaluate(ctx, nil)
	}
	return r.classify(ctx)
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
	return nil
}

// recordConfig writes every flag value (config defaults applied) into the
// run metadata.
func (r *runner) recordConfig() {
	c := r.cli
	r.para.SetConfig("config_file", r.configPath)
	for k, v := range map[string]any{
		"file": c.File, "directory": c.Directory, "dir": c.Dir, "file_format": c.FileFormat, "inner": c.Inner,
		"topn": c.TopN, "raw": c.Raw, "chunk": c.Chunk, "chunk_size": r.settings.Input.ChunkSize, "results": c.Results,
		"no_average_best": c.NoAverageBest, "save_intermediates": c.SaveIntermediates,
		"model": c.Model, "base": c.Base, "revision": c.Revision, "hub": c.Hub, "fastcls": c.FastCls,
		"fastcls_base": c.FastClsBase, "best": c.Best, "parallel": c.Parallel, "device": r.device,
		"train": c.Train, "eval": c.Eval, "folds": c.Folds, "folds_csv": c.FoldsCSV, "fold_column": c.FoldColumn,
		"average": c.Average, "average_pattern": c.AveragePattern, "batch": r.settings.Setup.Batch,
		"document_json": c.DocumentJSON, "document_json_out": c.DocumentJSONOut,
		"document_json_dir": c.DocumentJSONDir, "document_json_out_dir": c.DocumentJSONOutDir,
		"strict_document_json": c.StrictDocumentJSON, "merge": c.Merge,
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
	for _, m := range r.modelComps {
		// Each model's own licence (model.json "license") counts too: the
		// weights that produced the results.
		comps.Add(m)
		names = append(names, m.Name)
	}
	res := comps.Resolve(names...)
	r.para.SetLicence(res)
	if r.licenceSaid == nil {
		r.licenceSaid = map[string]bool{}
	}
	for _, w := range res.Warnings {
		if !r.licenceSaid[w] {
			r.licenceSaid[w] = true
			r.log.Warn("licence", "warning", w)
			r.para.Warn(w)
		}
	}
	if key := res.EffectiveLicense + "|" + strings.Join(res.DeterminedBy, ","); !r.licenceSaid[key] {
		r.licenceSaid[key] = true
		r.log.Info("licence resolved", "license", res.EffectiveLicense, "determined_by", strings.Join(res.DeterminedBy, ","))
	}
	return nil
}

// locator builds the model locator of the run (hub when --hub).
func (r *runner) locator() (*classify.Locator, error) {
	c := r.cli
	loc := &classify.Locator{Models: c.Model, Given: c.ModelGiven || c.Hub, Demo: c.DemoWeights, Log: r.log}
	if c.Hub {
		if strings.TrimSpace(r.settings.Hub.RepoName) == "" {
			return nil, usagef("--hub needs the hub repository: set [HUB] repo_name in %s", r.configPathOr())
		}
		hc := r.hubClient
		if hc == nil {
			var err error
			if hc, err = hub.FromEnv(defaultHubEndpoint); err != nil {
				return nil, err
			}
			if hc.Token == "" && r.settings.Hub.Token != "" {
				hc.Token = r.settings.Hub.Token
			}
			hc.Log = r.log
		}
		loc.Hub, loc.HubRepo = hc, r.settings.Hub.RepoName
	}
	return loc, nil
}

func (r *runner) configPathOr() string {
	if r.configPath == "" {
		return DefaultConfig
	}
	return r.configPath
}

// singleRevision is the revision of a single-model run: -rev, else
// [HUB] revision with --hub, else [HUB] latest.
func (r *runner) singleRevision() string {
	switch {
	case r.cli.Revision != "":
		return r.cli.Revision
	case r.cli.Hub:
		return r.settings.Hub.Revision
	default:
		return r.settings.Hub.Latest
	}
}

// folders selects the model folders of a classification or evaluation run:
// the fast classifier, the five ensemble models, or one revision.
func (r *runner) folders(ctx context.Context) ([]classify.Folder, error) {
	c := r.cli
	if c.FastCls {
		f, err := r.fastClsFolder()
		if err != nil {
			return nil, err
		}
		return []classify.Folder{f}, nil
	}
	loc, err := r.locator()
	if err != nil {
		return nil, err
	}
	if c.Best {
		return loc.Ensemble(ctx)
	}
	f, err := loc.Folder(ctx, r.singleRevision(), r.cli.Revision != "")
	if err != nil {
		return nil, err
	}
	return []classify.Folder{f}, nil
}

// fastClsFolder finds the fast classifier (spec 4.1 rule 3: --fastcls
// overrides --base and --revision): --fastcls_base is a model folder (or its
// model.pt), or a short tag found as <models>/fastcls_<tag>; when no model
// location was given and that is absent, the shipped <demo>/fastcls_<tag>
// answers, with the demo warning. The folder must hold the fast classifier
// (model.json base_architecture modelmeta.FastClsBase), not any model.
func (r *runner) fastClsFolder() (classify.Folder, error) {
	c := r.cli
	base := c.FastClsBase
	var f classify.Folder
	switch {
	case strings.HasSuffix(base, ".pt"):
		f.Dir = filepath.Dir(base)
	case strings.ContainsAny(base, `/\`):
		f.Dir = base
	default:
		// A bare name is a tag first (<models>/fastcls_<tag>, then the
		// shipped demo one), and a folder of the working directory only
		// when no tag answers: what a tag means does not depend on the
		// directory the command runs in.
		f.Dir = filepath.Join(c.Model, "fastcls_"+base)
		demo := ""
		if !classify.IsModelDir(f.Dir) && !c.ModelGiven && c.DemoWeights != "" {
			if d := filepath.Join(c.DemoWeights, "fastcls_"+base); classify.IsModelDir(d) {
				demo = d
			}
		}
		switch {
		case classify.IsModelDir(f.Dir):
		case demo == "" && classify.IsModelDir(base):
			f.Dir = base
		case demo != "":
			r.log.Warn("DEMO MODEL: no model location given and "+f.Dir+" is absent: using the shipped demo fast classifier (low accuracy, CC BY-NC 4.0)",
				"demo", demo, "hint", "train one with pageclass --train --fastcls (README, Fast classifier)")
			f = classify.Folder{Dir: demo, Demo: true}
		}
	}
	if !classify.IsModelDir(f.Dir) {
		return f, fmt.Errorf("fast classifier %q not found: no %s in %s; make a base with tools/make_fastcls.py --out DIR and train it with pageclass --train --fastcls --fastcls_base DIR (README, Fast classifier)",
			base, modelmeta.MetaFile, f.Dir)
	}
	meta, err := modelmeta.Load(f.Dir)
	if err != nil {
		return f, err
	}
	if !meta.IsFastCls() {
		return f, fmt.Errorf("%s is not the fast classifier: its base_architecture is %q, not %q (--fastcls runs only models made by tools/make_fastcls.py and trained with --fastcls)",
			f.Dir, meta.Base, modelmeta.FastClsBase)
	}
	return f, nil
}

// loadModels loads folders onto the run's device and records them.
func (r *runner) loadModels(folders []classify.Folder) ([]*classify.Model, error) {
	ms, err := classify.LoadAll(folders, r.device)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if err := r.addModel(m); err != nil {
			classify.CloseAll(ms)
			return nil, err
		}
	}
	return ms, nil
}

// addModel records a loaded model in the run metadata, with the digest of
// the bytes it was loaded from.
func (r *runner) addModel(m *classify.Model) error {
	r.log.Info("model loaded", "model", m.Name, "folder", m.Dir, "input", m.Size(), "device", r.device, "demo", m.Demo)
	if err := r.loadedDigest(m.Dir, m.Digest); err != nil {
		return err
	}
	return r.recordModel(m.Name, m.Dir, m.Meta, m.Demo)
}

// recordModel records a model (with its digest) in the run metadata; a demo
// model adds the demo weights' licence to the run's.
func (r *runner) recordModel(name, dir string, meta *modelmeta.Meta, demo bool) error {
	digest, err := r.digest(dir)
	if err != nil {
		return err
	}
	r.para.AddModel(paradata.Model{Revision: name, Path: dir, Base: meta.Base, License: meta.License, Digest: digest, Demo: demo})
	r.demo = r.demo || demo
	r.modelComps = append(r.modelComps, licence.Component{Name: "model " + name, License: meta.License,
		When: []string{licence.Always}, Description: "weights of " + dir})
	return r.resolveLicence(r.demo)
}

// readFolders reads each folder once (classify.Folder.Contents) and
// records its digest, that of those bytes, for runs that need the digests
// before the models load or load a model more than once: --parallel (the
// ledger, calibration and chunk key before the groups load) and --eval
// (each model alone, then in the ensemble). The models then load from the
// bytes digested, so a model.pt replaced meanwhile is neither read nor
// recorded.
func (r *runner) readFolders(folders []classify.Folder) error {
	for i := range folders {
		c, err := modelmeta.ReadFolder(folders[i].Dir)
		if err != nil {
			return err
		}
		folders[i].Contents = c
		if err := r.loadedDigest(folders[i].Dir, c.Digest); err != nil {
			return err
		}
	}
	return nil
}

// loadedDigest sets the digest of model folder dir to d, that of the bytes
// a model was loaded from (classify.Model.Digest), so that what the run
// records is the model that ran. A digest taken earlier in the run from
// another read of the folder must be the same: a folder whose files were
// replaced in between is an error, never a model recorded under another's
// digest. (Runs that need the digests before loading read each folder
// once and load from those bytes: readFolders.)
func (r *runner) loadedDigest(dir, d string) error {
	if old, ok := r.digests[dir]; ok && old != d {
		return fmt.Errorf("model %s: its files changed during the run (digest %s when the run started, %s when loaded)", dir, old, d)
	}
	if r.digests == nil {
		r.digests = map[string]string{}
	}
	r.digests[dir] = d
	return nil
}

// digest is modelmeta.Digest of a model folder, computed once per run;
// that of the bytes loaded where the model was loaded first
// (loadedDigest).
func (r *runner) digest(dir string) (string, error) {
	if d, ok := r.digests[dir]; ok {
		return d, nil
	}
	d, err := modelmeta.Digest(dir)
	if err != nil {
		return "", fmt.Errorf("model %s: %w", dir, err)
	}
	if r.digests == nil {
		r.digests = map[string]string{}
	}
	r.digests[dir] = d
	return d, nil
}

// newBar starts a progress bar on stderr and routes the log through it.
func (r *runner) newBar(total int) *progress.Bar {
	opt := progress.Options{Label: "pageclass"}
	if !r.logSink.Terminal() {
		// Off a terminal the log is JSON lines: progress lines are log
		// records too, never bare text between (or inside) them.
		opt.Log = func(line string) { r.log.Info(line) }
	}
	bar := progress.New(r.stderr, total, opt)
	r.logSink.set(bar)
	return bar
}

func (r *runner) endBar(bar *progress.Bar) {
	bar.Finish()
	r.logSink.set(r.stderr)
}

// predictOptions are the pipeline settings of the run.
func (r *runner) predictOptions() classify.Options {
	return classify.Options{Batch: r.settings.Setup.Batch}
}

// inputs collects the files of the run.
func (r *runner) inputs() (*inputSet, error) {
	c := r.cli
	exts, err := parseExts(c.FileFormat)
	if err != nil {
		return nil, cliflags.Usage(err)
	}
	spec, err := shard.Parse(c.Shard)
	if err != nil {
		return nil, cliflags.Usage(fmt.Errorf("--shard: %w", err))
	}
	dir := c.Directory
	if c.Dir {
		dir = r.settings.Input.FolderInput
	}
	set, err := collect(c.File, dir, exts, c.Inner)
	if err != nil {
		return nil, err
	}
	set.share(spec)
	return set, nil
}

// classify is the prediction run.
func (r *runner) classify(ctx context.Context) error {
	c := r.cli
	set, err := r.inputs()
	if err != nil {
		return err
	}
	r.log.Info("inputs collected", "files", len(set.Files), "root", set.Root)
	if !set.Shard.Whole() {
		r.para.SetConfig("shard", set.Shard.String())
		r.para.SetConfig("shard_files_all", set.All)
		r.para.SetConfig(shard.InputsConfig, set.AllDigest)
		r.para.SetConfig(shard.FolderConfig, set.Root)
		r.log.Info("shard", "shard", set.Shard.String(), "files", len(set.Files), "files_all_shards", set.All)
		if len(set.Files) == 0 {
			// Another shard classifies them: nothing to do here is success.
			return nil
		}
	}
	for _, s := range set.Skipped {
		r.log.Warn("folder skipped", "folder", s.File, "error", s.Reason)
		r.para.Skip(s.File, s.Reason)
	}
	folders, err := r.folders(ctx)
	if err != nil {
		return err
	}
	// The models load first (each file read once), so that their digests
	// below are those of the bytes loaded. --parallel loads them group by
	// group later: each folder is read once here (its digest is of those
	// bytes) and its model loads from them.
	var ens *classify.Ensemble
	var orient *classify.Orientation // --parallel: runs with the first group
	if !c.Parallel {
		ms, err := r.loadModels(folders)
		if err != nil {
			return err
		}
		ens, _ = classify.NewEnsemble(ms...)
		defer ens.Close()
		if ens.Orientation, err = r.loadOrientation(); err != nil {
			return err
		}
	} else {
		if err := r.readFolders(folders); err != nil {
			return err
		}
		if orient, err = r.loadOrientation(); err != nil {
			return err
		}
		defer orient.Close()
	}
	names := make([]string, len(folders))
	digests := make([]string, len(folders))
	for i, f := range folders {
		meta, err := f.Meta()
		if err != nil {
			return err
		}
		names[i] = f.Name(meta)
		if digests[i], err = r.digest(f.Dir); err != nil {
			return err
		}
	}
	if err := r.resolveCalibration(folders, names, digests); err != nil {
		return err
	}
	stamp := r.stamp
	chunk := 0
	if c.Chunk {
		chunk = r.settings.Input.ChunkSize
		if chunk < 1 {
			return usagef("[INPUT] chunk_size must be at least 1 with --chunk, got %d", chunk)
		}
		key := chunkKey{Input: inputKey(set, c.File, c.Inner), Renamed: set.Keys.Renamed(), Models: names, Digests: digests,
			TopN: c.TopN, Raw: c.Raw, Best: c.Best, Average: !c.NoAverageBest, Intermediates: c.SaveIntermediates}
		stamp = key.stamp()
		r.para.SetConfig("chunk_key", key)
		// Runs of one key append to the same tables: they take turns, the
		// later one continuing from the ledger once the earlier is done
		// (before, both appended at once, and a run stopped after the other
		// had finished left its rows twice in the finished tables).
		lock := filepath.Join(c.Results, LedgerFolder, stamp+".lock")
		unlock, err := filelock.Lock(ctx, lock, func() {
			r.log.Warn("waiting for another run writing the same chunked tables to finish; this run then continues from the ledger", "tables", stamp, "lock", lock)
			if chunkWaitHook != nil {
				chunkWaitHook(lock)
			}
		})
		if err != nil {
			return fmt.Errorf("chunked tables %s: %w", stamp, err)
		}
		defer unlock()
		r.log.Info("chunked output", "tables", stamp, "note", "a re-run with the same inputs, models, top-N and raw continues these tables; anything else starts new ones")
	}

	led, ledKey, err := r.openLedger(set, names, digests)
	if err != nil {
		return err
	}
	// The ledger file stays open (and flocked) until the run metadata is
	// written (run's deferred Finish): a resume that starts in between
	// must not take this run for one that was killed.
	r.led = led
	r.para.SetConfig("ledger", led.Path())
	r.para.SetConfig("ledger_key", ledKey)
	r.para.SetConfig("resume", c.Resume)
	r.para.SetConfig("retry_failed", c.RetryFailed)
	if c.Resume || c.RetryFailed || c.Chunk {
		r.markInterrupted(led)
	}

	var groups [][]int
	if c.Parallel {
		groups, err = r.gpuGroups(folders)
		if err != nil {
			return err
		}
	}

	out, err := newOutputs(outputSpec{
		Dir: c.Results, Stamp: stamp, Names: names, TopN: c.TopN, Raw: c.Raw, Best: c.Best,
		Average: !c.NoAverageBest, Intermediates: c.SaveIntermediates, Chunk: chunk,
	})
	if err != nil {
		return err
	}
	docs := newDocuments(r, set)
	var failures []ledger.Failure
	fail := func(file, name string, page int, reason string) {
		if page > 0 && results.IsPDF(file) {
			reason = fmt.Sprintf("page %d: %s", page, reason)
		}
		failures = append(failures, ledger.Failure{File: name, Error: reason})
		r.para.Skip(file, reason)
	}
	// The ledger decides what is done: with --resume (also --retry-failed
	// and --chunk, which continue a run) every file whose name and content
	// digest it holds is not classified again; its rows are written from the
	// probabilities the ledger kept.
	resume := c.Resume || c.RetryFailed || c.Chunk
	// reviewed is a page's review under the run's calibration.
	reviewed := func(p classify.Page) *review.Page {
		rv := p.Review(r.calibration)
		return &rv
	}
	// A run that continues from the ledger needs, before it starts, the
	// digest of every file the ledger holds by name, to know whether its
	// content is the one recorded (a file rewritten since is classified
	// again, and so read twice). A file the ledger does not name cannot be
	// done: like every file of a fresh run, it is read once, when
	// classified, and recorded with the digest of the bytes the decoder
	// read (Page.Digest).
	var fileDigest []string
	var digestErrs []error
	if resume {
		known := make([]string, len(set.Files))
		for i, f := range set.Files {
			if led.Has(itemName(set, f)) {
				known[i] = f
			}
		}
		fileDigest, digestErrs = digestAll(known)
	}
	var files []string
	restored, failedKept := 0, 0
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
		if fileDigest[i] == "" || !ok || (e.State == ledger.Failed && c.RetryFailed) {
			files = append(files, f)
			continue
		}
		var d itemData
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return fmt.Errorf("ledger %s: %s: %w", led.Path(), name, err)
		}
		if results.MayHavePages(f) && d.Count == 0 && len(d.Pages) > 0 {
			// A TIFF recorded before its pages were read one by one (no
			// page count): it may have more pages than the one kept.
			r.log.Info("classified again: recorded before every page of a TIFF was read", "file", f)
			files = append(files, f)
			continue
		}
		pages := d.pages(f)
		r.para.AddInputs(max(1, len(pages)+len(d.Errors)))
		for _, p := range pages {
			key, err := set.Keys.PageKey(f, p.Page, p.Pages)
			if err != nil {
				fail(f, name, p.Page, err.Error())
				continue
			}
			rv := reviewed(p)
			dup, err := out.add(key, p, rv)
			if err != nil {
				return err
			}
			if dup != "" {
				fail(f, name, p.Page, dup)
				continue
			}
			r.para.Processed(1)
			docs.add(key, p, rv)
		}
		for _, pe := range d.Errors {
			fail(f, name, pe.Page, pe.Error)
		}
		if e.State == ledger.Skipped && len(d.Errors) == 0 {
			fail(f, name, 0, e.Reason)
		}
		restored++
		if e.State == ledger.Failed {
			failedKept++
		}
	}
	r.para.SetConfig("items_from_ledger", restored)
	switch {
	case resume && restored > 0:
		r.log.Info("continuing from the ledger", "ledger", led.Dir(), "runs_read", led.Files(), "files_done_before", restored,
			"failed_kept", failedKept, "files_to_classify", len(files), "retry_failed", c.RetryFailed)
	case resume:
		r.log.Info("nothing to continue: no file of this run is in the ledger with the same content and models", "ledger", led.Dir(), "runs_read", led.Files())
	case led.Len() > 0:
		r.log.Info("ledger", "ledger", led.Dir(), "note", "every file is classified again (without --resume the ledger is only written)")
	}
	inputs := pipeline.Files(files)
	bar := r.newBar(len(inputs))
	opt := r.predictOptions()
	opt.OnOpen = func(in pipeline.Input, pages int) {
		bar.SetItem(itemName(set, in.Name))
		if pages > 1 {
			bar.AddTotal(pages - 1)
		}
		r.para.AddInputs(max(pages, 1))
	}
	open := map[string]*item{}
	recorded := 0
	emit := func(p classify.Page) error {
		it := open[p.Name]
		if it == nil {
			it = &item{}
			open[p.Name] = it
		}
		name := itemName(set, p.Name)
		pageFailed := func(reason string) {
			bar.Fail(1)
			fail(p.Name, name, p.Page, reason)
			it.add(p, reason)
		}
		var rv *review.Page
		if p.Err == nil {
			rv = reviewed(p)
		}
		if p.Err != nil {
			r.log.Warn("page skipped", "file", p.Name, "page", p.Page, "error", p.Err.Error())
			pageFailed(p.Err.Error())
		} else if key, err := set.Keys.PageKey(p.Name, p.Page, p.Pages); err != nil {
			pageFailed(err.Error())
		} else if dup, err := out.add(key, p, rv); err != nil {
			return err
		} else if dup != "" {
			r.log.Warn("page skipped: its row key is taken by another file", "file", p.Name, "key", key.String())
			pageFailed(dup)
		} else {
			bar.Add(1)
			r.para.Processed(1)
			docs.add(key, p, rv)
			it.add(p, "")
		}
		if p.Page < p.Pages {
			return nil
		}
		// The file's last page: the item is complete.
		delete(open, p.Name)
		if fileHook != nil {
			fileHook(p.Name)
		}
		// The digest of the bytes that were decoded, not of the file as it
		// is now: a file rewritten meanwhile must not be recorded with the
		// classes of its old content.
		digest := p.Digest
		if digest == "" {
			r.log.Debug("content digest not taken (the file could not be read); the file is not recorded in the ledger", "file", p.Name)
			return nil
		}
		e, err := it.entry(name, digest)
		if err != nil {
			return err
		}
		if err := led.Record(e); err != nil {
			return err
		}
		recorded++
		if itemHook != nil {
			itemHook(recorded)
		}
		return nil
	}
	var runErr error
	if c.Parallel {
		runErr = r.runGroups(ctx, folders, orient, groups, inputs, opt, emit)
	} else {
		_, runErr = ens.Predict(ctx, inputs, opt, emit)
	}
	r.endBar(bar)
	written, cerr := out.close()
	for _, w := range written {
		r.para.AddOutputFile(w.path)
		r.para.CountOutput("csv", w.rows)
		r.log.Info("table written", "file", w.path, "rows", w.rows)
	}
	fpath := filepath.Join(c.Results, stamp+"_"+FailuresTable)
	if ferr := ledger.WriteFailures(fpath, failures); ferr != nil {
		cerr = errors.Join(cerr, fmt.Errorf("failures table: %w", ferr))
	} else {
		r.para.AddOutputFile(fpath)
		r.log.Info("failures table written", "file", fpath, "rows", len(failures))
	}
	if err := errors.Join(runErr, cerr); err != nil {
		return err
	}
	if err := docs.write(); err != nil {
		return err
	}
	if out.rows() == 0 {
		return errors.New("no page was classified")
	}
	return nil
}

// resolveCalibration finds the doubt calibration of the run's model set in
// the calibration file of the folder holding the model folders, records it
// (file, digest, target, thresholds) in the run metadata, or records and
// says that there is none: then no page is flagged for doubt, and the
// review table says "uncalibrated" rather than apply a default threshold.
func (r *runner) resolveCalibration(folders []classify.Folder, names, digests []string) error {
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
	r.log.Info("doubt calibration", "file", r.calibration.File, "digest", r.calibration.FileDigest,
		"target_precision", r.calibration.Target, "min_agreement", r.calibration.Thresholds.MinAgreement,
		"min_margin", r.calibration.Thresholds.MinMargin, "reachable", r.calibration.Reachable)
	if !r.calibration.Reachable {
		r.log.Warn("the calibration could not reach its target precision on its evaluation split: every page is flagged for review",
			"target_precision", r.calibration.Target, "file", r.calibration.File)
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

// loadOrientation loads the page-orientation model of --rotation-model and
// records it in the run metadata; none given means pages are not checked
// for rotation, which is said and recorded too.
func (r *runner) loadOrientation() (*classify.Orientation, error) {
	dir := r.cli.RotationModel
	if dir == "" {
		if r.cli.Given["rotation-model"] {
			r.log.Info("pages are not checked for rotation: no orientation model (--rotation-model)")
		} else {
			// Not turned off: the shipped model was looked for and is
			// missing, which the user did not ask for.
			r.log.Warn("pages are not checked for rotation: the shipped orientation model was not found",
				"looked_for", resources.RotationModel.Places(),
				"hint", "give --rotation-model DIR (or set "+resources.RotationModel.Env+"); --rotation-model \"\" turns the check off")
		}
		r.para.SetReview("rotation_model", nil)
		return nil, nil
	}
	o, err := classify.LoadOrientation(dir, r.device)
	if err != nil {
		return nil, fmt.Errorf("--rotation-model: %w", err)
	}
	if err := r.loadedDigest(dir, o.Digest); err != nil {
		o.Close()
		return nil, fmt.Errorf("--rotation-model: %w", err)
	}
	digest := o.Digest
	r.log.Info("orientation model loaded", "folder", dir, "input", o.Size(), "rotated_confidence", review.RotatedConfidence)
	r.para.SetReview("rotation_model", map[string]any{"path": dir, "digest": digest, "license": o.Meta.License,
		"rotated_confidence": review.RotatedConfidence})
	r.modelComps = append(r.modelComps, licence.Component{Name: "orientation model", License: o.Meta.License,
		When: []string{licence.Always}, Description: "weights of " + dir})
	if err := r.resolveLicence(r.demo); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}

// markInterrupted finds the earlier runs this run continues (their ledger
// files in its ledger folder) that have ended while their run metadata still
// says "running" (killed with SIGKILL, or crashed): it records in their
// metadata that they were interrupted, and in this run's which they were.
// A run still going holds its ledger file and is left alone.
func (r *runner) markInterrupted(led *ledger.Ledger) {
	r.para.RecordInterrupted(r.log, r.stamp, led.Ended(), paradata.ClassifierMeta(r.cli.Results))
}
