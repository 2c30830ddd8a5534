package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"archivekit/pkg/classify"
	"archivekit/pkg/registry"
	"archivekit/pkg/train"
)

// plainExts are the -ff extensions without the dot, as pkg/train wants them.
func plainExts(list string) ([]string, error) {
	exts, err := parseExts(list)
	if err != nil {
		return nil, usageError{err}
	}
	out := make([]string, len(exts))
	for i, e := range exts {
		out[i] = strings.TrimPrefix(e, ".")
	}
	return out, nil
}

// baseFolder resolves --base: a model folder, or a registry revision found
// like any model (-m, or the hub with --hub).
func (r *runner) baseFolder(ctx context.Context) (classify.Folder, error) {
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
	return loc.Folder(ctx, b)
}

// trainOptions maps the flags and the config file onto train.Options.
func (r *runner) trainOptions(base classify.Folder) (train.Options, error) {
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
		rev = filepath.Base(base.Dir)
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
	return train.Options{
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
		Augment:     true,
		Log:         r.log,
		Progress:    r.stderr,
		Run:         r.para,
	}, nil
}

// train runs --train.
func (r *runner) train(ctx context.Context) error {
	base, err := r.baseFolder(ctx)
	if err != nil {
		return err
	}
	o, err := r.trainOptions(base)
	if err != nil {
		return err
	}
	r.log.Info("training", "base", o.Base, "pages", o.Pages, "folds", o.Folds, "folds_csv", o.FoldsCSV, "fold_column", o.FoldColumn, "epochs", o.Epochs)
	res, err := train.Train(ctx, o)
	for _, f := range res {
		r.log.Info("fold trained", "fold", f.Fold, "model", f.ModelDir, "dev_accuracy", f.DevAccuracy, "test_top1", f.TestTop1)
	}
	return err
}

// evalOptions maps the flags and the config file onto train.EvalOptions for
// the model folder f.
func (r *runner) evalOptions(f classify.Folder) (train.EvalOptions, error) {
	c, s := r.cli, r.settings
	exts, err := plainExts(c.FileFormat)
	if err != nil {
		return train.EvalOptions{}, err
	}
	rev := f.Revision
	if rev == "" {
		rev = filepath.Base(f.Dir)
	}
	count := 1
	if fold, ok := registry.BestFold(rev); ok {
		count = fold
	}
	return train.EvalOptions{
		Model: f.Dir, Pages: s.Eval.FolderPages, Exts: exts, TopN: c.TopN, Count: count, Revision: rev,
		Results: c.Results, Stamp: r.stamp, Device: r.device, Batch: s.Setup.Batch,
		Log: r.log, Progress: r.stderr, Run: r.para,
	}, nil
}

// evaluate runs --eval on the selected model(s).
func (r *runner) evaluate(ctx context.Context) error {
	folders, err := r.folders(ctx)
	if err != nil {
		return err
	}
	for _, f := range folders {
		o, err := r.evalOptions(f)
		if err != nil {
			return err
		}
		res, err := train.Evaluate(ctx, o)
		if err != nil {
			return fmt.Errorf("evaluating %s: %w", f.Dir, err)
		}
		for _, p := range res.Files {
			r.para.AddOutputFile(p)
		}
		r.log.Info("evaluated", "model", o.Revision, "pages", res.Pages, "top1", res.Top1, "topN", res.TopN)
	}
	return nil
}

// average runs --average -ap PATTERN over the models folder.
func (r *runner) average() error {
	dir, n, err := train.Average(r.cli.Model, r.cli.AveragePattern)
	if err != nil {
		return err
	}
	r.para.AddOutputFile(dir)
	r.log.Info("models averaged", "pattern", r.cli.AveragePattern, "models", n, "output", dir)
	return nil
}
