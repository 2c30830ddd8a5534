package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"archivekit/internal/cliflags"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/pageclass/train"
	"archivekit/internal/paradata"
	"archivekit/internal/version"
)

// plainExts are the -ff extensions without the dot, as internal/pageclass/train wants them.
func plainExts(list string) ([]string, error) {
	exts, err := parseExts(list)
	if err != nil {
		return nil, cliflags.Usage(err)
	}
	out := make([]string, len(exts))
	for i, e := range exts {
		out[i] = strings.TrimPrefix(e, ".")
	}
	return out, nil
}

// checkLabelled refuses --train or --eval whose folder of labelled pages
// is missing before the run writes anything, naming where the folder came
// from (-d, or the config file's FOLDER_PAGES).
func (r *runner) checkLabelled() error {
	c, s := r.cli, r.settings
	if c.Merge || c.Average {
		return nil
	}
	type use struct{ mode, dir, key string }
	var uses []use
	if c.Train {
		uses = append(uses, use{"--train", s.Train.FolderPages, "[TRAIN] FOLDER_PAGES"})
	}
	if c.Eval {
		uses = append(uses, use{"--eval", s.Eval.FolderPages, "[EVAL] FOLDER_PAGES"})
	}
	for _, u := range uses {
		from, hint := u.key+" of "+r.configPathOr(), ": give it with -d DIR"
		if c.Directory != "" {
			from, hint = "-d", ""
		}
		st, err := os.Stat(u.dir)
		if err == nil && !st.IsDir() {
			err = errors.New("not a folder")
		}
		if err != nil {
			return cliflags.NoInput(fmt.Errorf("%s: folder of labelled pages %s (%s): %w (it holds one sub-folder of pages per category: DRAW, TEXT_HW, ...)%s", u.mode, u.dir, from, unwrapPath(err), hint))
		}
	}
	return nil
}

// unwrapPath is the reason of a path error without the path, which the
// caller names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// trainer is the --train mode: it fine-tunes the base model, one model per
// fold.
type trainer struct{ *models }

// evaluator is the --eval mode: it evaluates models (each one, and with
// --best their average) and, with --calibrate, calibrates their review
// flag.
type evaluator struct{ *models }

// averager is the --average mode: it averages fold weights into one model.
type averager struct{ *runner }

// baseFolder resolves --base: a model folder, or a registry revision found
// like any model (-m, or the hub with --hub).
func (r *trainer) baseFolder(ctx context.Context) (classify.Folder, error) {
	if r.cli.FastCls {
		return r.fastClsFolder() // spec 4.1 rule 3: --fastcls overrides --base
	}
	b := r.cli.Base
	if classify.IsModelDir(b) {
		return classify.Folder{Dir: b}, nil
	}
	if strings.ContainsAny(b, `/\`) {
		return classify.Folder{}, usagef("--base %s: not a model folder (no model.json)", b)
	}
	loc, err := r.locator()
	if err != nil {
		return classify.Folder{}, err
	}
	return loc.Folder(ctx, b, true)
}

// trainOptions maps the flags and the config file onto train.Options.
func (r *trainer) trainOptions(base classify.Folder) (train.Options, error) {
	c, s := r.cli, r.settings
	exts, err := plainExts(c.FileFormat)
	if err != nil {
		return train.Options{}, err
	}
	rev := c.Revision
	if rev == "" {
		rev = base.Revision
	}
	if rev == "" {
		// A base given as a folder: the revision its model.json names, or
		// its folder's registry name (model_v44: v4.4; the folds were
		// named model_v44_FOLD_1), else the folder's name.
		rev = filepath.Base(base.Dir)
		if m, err := modelmeta.Load(base.Dir); err == nil && m.Revision != "" {
			rev = m.Revision
		} else {
			for _, em := range registry.EnsembleModels() {
				if registry.ModelDirName(em.Revision) == rev {
					rev = em.Revision
				}
			}
		}
	}
	if c.FastCls {
		// Rule 3: --fastcls overrides --revision too.
		rev = "fastcls"
		if !strings.ContainsAny(c.FastClsBase, `/\`) && !strings.HasSuffix(c.FastClsBase, ".pt") {
			rev = "fastcls_" + c.FastClsBase
		}
	}
	col := c.FoldColumn
	if c.FoldsCSV != "" && col == "" {
		// Rule 5: an omitted --fold_column is the revision's best fold;
		// a revision without one trains every fold column of the CSV.
		if resolved, err := registry.ResolveFoldColumn("", rev); err == nil {
			col = resolved
		} else {
			r.log.Info("no best fold recorded for the revision: training every fold column", "revision", rev)
		}
	}
	o := train.Options{
		Base:        base.Dir,
		Pages:       s.Train.FolderPages,
		Exts:        exts,
		Epochs:      s.Train.Epochs,
		Batch:       s.Setup.Batch,
		LR:          s.Train.LR,
		MaxPerClass: s.Train.MaxCateg,
		TestSize:    s.Train.TestSize,
		Seed:        int64(s.Setup.Seed),
		Folds:       c.Folds,
		FoldsCSV:    c.FoldsCSV,
		FoldColumn:  col,
		Revision:    rev,
		Checkpoints: s.Output.FolderCPoints,
		Models:      c.Model,
		Results:     c.Results,
		Stamp:       r.stamp,
		Device:      r.device,
		LogStep:     s.Train.LogStep,
		Augment:     s.Train.Augment,
		Size:        s.Train.InputSize,
		Log:         r.log,
		Progress:    r.progressOut(),
		Run:         r.para,
	}
	o.BaseContents = base.Contents // the base as read once by train
	if c.FastCls {
		if err := r.fastClsTraining(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

// FastClsAutoLR is the learning rate of [FASTCLS] fastcls_lr0 = 0
// (automatic): AdamW's usual rate for a small CNN trained from scratch.
const FastClsAutoLR = 1e-3

// fastClsTraining applies the [FASTCLS] keys to a --fastcls training run:
// fastcls_epochs, fastcls_patience (early stopping on dev accuracy),
// fastcls_lr0 (0: FastClsAutoLR), fastcls_imgsz (the input size trained at
// and recorded in the model), fastcls_cache (false: pages are read from disk
// for every batch) and fastcls_dropout, which must be the rate built into
// the base (model.json "dropout").
func (r *trainer) fastClsTraining(o *train.Options) error {
	f := r.settings.FastCls
	meta, err := modelmeta.Load(o.Base)
	if err != nil {
		return err
	}
	if meta.Dropout == nil {
		return fmt.Errorf("fast classifier base %s records no dropout rate: make it with tools/make_fastcls.py --out DIR --dropout %g", o.Base, f.Dropout)
	}
	if math.Abs(*meta.Dropout-f.Dropout) > 1e-9 {
		return usagef("[FASTCLS] fastcls_dropout = %g, but the base %s was made with dropout %g (it is part of model.pt): make a base with tools/make_fastcls.py --out DIR --dropout %g and give --fastcls_base DIR, or set fastcls_dropout = %g",
			f.Dropout, o.Base, *meta.Dropout, f.Dropout, *meta.Dropout)
	}
	if f.LR0 < 0 {
		return usagef("[FASTCLS] fastcls_lr0 = %g: want 0 (automatic) or a positive rate", f.LR0)
	}
	o.Epochs, o.Patience, o.Size, o.NoCache = f.Epochs, f.Patience, f.ImgSz, !f.Cache
	o.LR = f.LR0
	if o.LR == 0 {
		o.LR = FastClsAutoLR
	}
	return nil
}

// train runs --train and returns the folders of the models it wrote.
func (r *trainer) train(ctx context.Context) ([]classify.Folder, error) {
	base, err := r.baseFolder(ctx)
	if err != nil {
		return nil, err
	}
	// Read once: the folds train from these bytes, the digest recorded is theirs.
	if base.Contents, err = modelmeta.ReadFolder(base.Dir); err != nil {
		return nil, err
	}
	if err := r.digests.Loaded(base.Dir, base.Contents.Digest); err != nil {
		return nil, err
	}
	meta, err := base.Meta() // a --base revision must be the model trained from
	if err != nil {
		return nil, err
	}
	o, err := r.trainOptions(base)
	if err != nil {
		return nil, err
	}
	if err := r.recordModel(base.Name(meta), base.Dir, meta, base.Demo); err != nil { // the base trained from
		return nil, err
	}
	if o.FoldsCSV != "" && r.cli.Folds > 0 {
		msg := fmt.Sprintf("--folds %d is ignored: --folds_csv %s takes precedence (spec 4.1 rule 4)", r.cli.Folds, o.FoldsCSV)
		r.log.Warn(msg)
		r.para.Warn(msg)
	}
	for k, v := range map[string]any{"base": o.Base, "pages": o.Pages, "epochs": o.Epochs, "batch": o.Batch, "lr": o.LR,
		"max_per_class": o.MaxPerClass, "test_size": o.TestSize, "seed": o.Seed, "folds": o.Folds, "folds_csv": o.FoldsCSV,
		"fold_column": o.FoldColumn, "revision": o.Revision, "augment": o.Augment, "patience": o.Patience,
		"input_size": o.Size, "cache": !o.NoCache, "fastcls": r.cli.FastCls} {
		r.para.SetTraining(k, v)
	}
	r.log.Info("training", "base", o.Base, "pages", o.Pages, "folds", o.Folds, "folds_csv", o.FoldsCSV, "fold_column", o.FoldColumn, "epochs", o.Epochs)
	decoders, err := r.newDecoders()
	if err != nil {
		return nil, err
	}
	defer closeDecoders(decoders)
	o.Decode = r.decodeOptions(decoders)
	res, err := train.Train(ctx, o)
	var out []classify.Folder
	var made []map[string]any
	for _, f := range res {
		var dev any = f.DevAccuracy // null when the split has no dev pages: the last epoch was kept
		if f.DevPages == 0 {
			dev = nil
		}
		// null when the split has no test pages (it said 0: a model
		// right on no page)
		var top1, top3 any = f.TestTop1, f.TestTop3
		if f.TestPages == 0 {
			top1, top3 = nil, nil
		}
		r.log.Info("fold trained", "fold", f.Fold, "model", f.ModelDir, "dev_accuracy", dev, "dev_pages", f.DevPages, "test_top1", top1, "test_pages", f.TestPages)
		made = append(made, map[string]any{"fold": f.Fold, "model": f.ModelDir, "checkpoint": f.Checkpoint, "datasets": f.DatasetFile,
			"dev_accuracy": dev, "dev_pages": f.DevPages, "trainable_params": f.TrainableParams, "total_params": f.TotalParams, "test_top1": top1, "test_top3": top3, "test_pages": f.TestPages, "stopped_early_at_epoch": f.StoppedEarly,
			"features_cached": f.FeaturesCached, "feature_cache": f.FeatureCache})
		r.para.AddOutputFile(f.ModelDir)
		r.para.AddOutputFile(f.DatasetFile)
		out = append(out, classify.Folder{Dir: f.ModelDir})
	}
	r.para.SetTraining("folds_trained", made)
	return out, err
}

// evalOptions maps the flags and the config file onto train.EvalOptions for
// the model folders (one model, or more averaged as an ensemble).
func (r *evaluator) evalOptions(folders []classify.Folder) (train.EvalOptions, error) {
	c, s := r.cli, r.settings
	exts, err := plainExts(c.FileFormat)
	if err != nil {
		return train.EvalOptions{}, err
	}
	o := train.EvalOptions{
		Pages: s.Eval.FolderPages, Exts: exts, TopN: c.TopN, Count: 1,
		Results: c.Results, Stamp: r.stamp, Device: r.device, Batch: s.Setup.Batch,
		Log: r.log, Progress: r.progressOut(), Run: r.para,
	}
	for _, f := range folders { // read once by evaluate
		if f.Contents != nil {
			if o.Read == nil {
				o.Read = map[string]*modelmeta.Contents{}
			}
			o.Read[f.Dir] = f.Contents
		}
	}
	if len(folders) > 1 {
		for _, f := range folders {
			o.Ensemble = append(o.Ensemble, f.Dir)
		}
		o.Count = len(folders)
		o.Revision = fmt.Sprintf("BEST_%d_models_AVG", len(folders))
		return o, nil
	}
	f := folders[0]
	meta, err := f.Meta()
	if err != nil {
		return o, err
	}
	o.Model, o.Revision = f.Dir, f.Name(meta)
	if fold, ok := registry.BestFold(o.Revision); ok {
		o.Count = fold
	}
	return o, nil
}

// evaluate runs --eval on folders (nil: the models selected by the flags).
// Each model is evaluated; with more than one (--best), so is their
// probability average. Per-category precision, recall and F1 go to stdout.
func (r *evaluator) evaluate(ctx context.Context, folders []classify.Folder) error {
	if folders == nil {
		var err error
		if folders, err = r.folders(ctx); err != nil {
			return err
		}
	}
	if err := r.readFolders(folders); err != nil { // the digests are of the bytes evaluated
		return err
	}
	sets := make([][]classify.Folder, 0, len(folders)+1)
	for _, f := range folders {
		sets = append(sets, []classify.Folder{f})
	}
	if len(folders) > 1 && r.cli.Best {
		sets = append(sets, folders)
	}
	for _, f := range folders {
		meta, err := f.Meta()
		if err != nil {
			return err
		}
		if err := r.recordModel(f.Name(meta), f.Dir, meta, f.Demo); err != nil {
			return err
		}
	}
	decoders, err := r.newDecoders()
	if err != nil {
		return err
	}
	defer closeDecoders(decoders)
	var evaluated []map[string]any
	for _, set := range sets {
		o, err := r.evalOptions(set)
		if err != nil {
			return err
		}
		o.Decode = r.decodeOptions(decoders)
		res, err := train.Evaluate(ctx, o)
		if err != nil {
			return fmt.Errorf("evaluating %s: %w", o.Revision, err)
		}
		r.log.Info("evaluated", "model", o.Revision, "pages", res.Pages, "top1", res.Top1, "topN", res.TopN)
		if len(evaluated) == 0 {
			// The pages of the run are those of each evaluation: counted
			// once (its statistics were 0; an unreadable page was
			// skipped once per model).
			r.para.AddInputs(res.Pages + len(res.Unreadable))
			r.para.Processed(res.Pages)
			for _, p := range slices.Sorted(maps.Keys(res.Unreadable)) {
				r.para.Skip(p, res.Unreadable[p])
			}
		}
		// In the run metadata too (it was on stdout and in the log only).
		evaluated = append(evaluated, map[string]any{"model": o.Revision, "digests": res.Digests, "pages": res.Pages,
			"top1": math.Round(res.Top1*1e4) / 1e4, "topn": math.Round(res.TopN*1e4) / 1e4, "n": o.TopN})
		r.para.SetTraining("evaluated", evaluated)
		fmt.Fprintf(r.stdout, "\n%s", res.Report())
		if err := r.reviewEvaluation(set, o, res); err != nil {
			return err
		}
	}
	return nil
}

// reviewEvaluation reports the precision of the unflagged pages and the
// review rate of one evaluated model set at a few thresholds; with
// --calibrate it calibrates the set's needs_review flag for
// --review-precision within --review-rate and writes it to the calibration file beside the model
// folders. It then writes the evaluation's review table under the
// calibration in force.
func (r *evaluator) reviewEvaluation(set []classify.Folder, o train.EvalOptions, res *train.EvalResult) error {
	dirs := make([]string, len(set))
	members := make([]review.Member, len(set))
	for i, f := range set {
		meta, err := f.Meta()
		if err != nil {
			return err
		}
		d, err := r.digests.Of(f.Dir)
		if err != nil {
			return err
		}
		dirs[i], members[i] = f.Dir, review.Member{Name: f.Name(meta), Digest: d}
	}
	fmt.Fprintf(r.stdout, "\n%s", review.FormatReport(o.Revision, review.Report(res.Samples, len(set))))
	place, placeErr := review.Place(dirs)
	if r.cli.Calibrate {
		if placeErr != nil {
			return fmt.Errorf("--calibrate: %w", placeErr)
		}
		t := r.cli.ReviewPrecision
		if !(t > 0 && t <= 1) {
			return usagef("--review-precision %v: want a precision in (0, 1]", t)
		}
		rate := r.cli.ReviewRate
		if !(rate >= 0 && rate <= 1) {
			return usagef("--review-rate %v: want a share of pages in [0, 1]", rate)
		}
		best, ok := review.Calibrate(res.Samples, len(set), t, rate)
		loo := review.LeaveOneOut(res.Samples, len(set), t, rate)
		c := review.Calibration{Models: members, Target: t, MaxReviewRate: &rate, Thresholds: best.Thresholds, Reachable: ok,
			Split: review.Split{Folder: o.Pages, Pages: res.Pages}, Result: best, LeaveOneOut: &loo,
			Table: review.Report(res.Samples, len(set)), Tool: "pageclass " + version.String()}
		path, err := review.Save(place, c)
		if err != nil {
			return fmt.Errorf("writing the calibration: %w", err)
		}
		r.para.AddOutputFile(path)
		r.log.Info("calibration written", "path", path, "models", o.Revision, "target_precision", t, "max_review_rate", rate,
			"min_agreement", best.MinAgreement, "min_margin", best.MinMargin, "reachable", ok,
			"kept", best.Kept, "pages", best.Pages, "review_rate", best.ReviewRate)
		switch {
		case !ok && best.MinMargin >= review.FlagAll:
			r.log.Warn("target precision not reached on the evaluation pages at any threshold: every page will be flagged for review",
				"models", o.Revision, "target_precision", t)
		case !ok:
			r.log.Warn("target precision not reached within the review-rate cap: the thresholds of the highest precision within it are kept",
				"models", o.Revision, "target_precision", t, "max_review_rate", rate, "precision", *best.Precision)
		}
		fmt.Fprintf(r.stdout, "calibrated %s for precision %.2f, review rate at most %.2f: %s\n", o.Revision, t, rate, review.FormatPoint(best, ok))
		fmt.Fprintf(r.stdout, "  on pages it was not fitted to (leave one out): %d of %d pages kept, %d right (precision %s), review rate %.1f%%\n",
			loo.Kept, loo.Pages, loo.Correct, review.FormatPrecision(loo.Precision), 100*loo.ReviewRate)
	}
	var cal *review.Applied
	if placeErr == nil {
		var err error
		if cal, _, err = review.Resolve(place, members); err != nil {
			return err
		}
	}
	path, err := res.WriteReview(cal)
	if err != nil {
		return err
	}
	r.log.Info("table written", "path", path, "rows", res.Pages)
	return nil
}

// average runs --average -ap PATTERN over the models folder.
func (r *averager) average() error {
	dir, n, err := train.Average(r.cli.Model, r.cli.AveragePattern)
	if err != nil {
		return err
	}
	r.para.AddOutputFile(dir)
	r.log.Info("models averaged", "pattern", r.cli.AveragePattern, "models", n, "output", dir)
	return r.recordAveraged(dir)
}

// recordAveraged records in the run metadata the models averaged into dir
// (each with its digest), the new model's digest, and the licence their
// weights give the result (the run said models [] and the tool's MIT, the
// model CC BY-NC).
func (r *averager) recordAveraged(dir string) error {
	meta, err := modelmeta.Load(dir)
	if err != nil {
		return err
	}
	for _, name := range meta.Provenance.AveragedFrom {
		src := filepath.Join(r.cli.Model, name)
		sm, err := modelmeta.Load(src)
		if err != nil {
			return err
		}
		digest, err := modelmeta.Digest(src)
		if err != nil {
			return err
		}
		r.countModel(paradata.Model{Revision: name, Path: src, Base: sm.Base, License: sm.License, Digest: digest})
	}
	digest, err := modelmeta.Digest(dir)
	if err != nil {
		return err
	}
	r.para.SetTraining("averaged_model", map[string]string{"path": dir, "digest": digest, "license": meta.License})
	return r.resolveLicence(false)
}
