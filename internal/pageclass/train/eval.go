package train

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"archivekit/bindings/torch"
	"archivekit/internal/atomicfile"
	"archivekit/internal/pageclass/confmat"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/pageclass/splits"
	"archivekit/internal/paradata"
)

// Evaluate runs a model over labelled pages (category folders) and writes
// {stamp}_{n}_{rev}_TOP-{N}_EVAL.csv, {stamp}_{n}_{rev}_EVAL_RAW.csv and the
// confusion matrix {stamp}_{n}_{rev}_conf_mat_TOP-{N}.png (normalised by
// true class) under Results.
func Evaluate(ctx context.Context, o EvalOptions) (*EvalResult, error) {
	if o.TopN < 1 || o.TopN > len(modelmeta.Categories) {
		return nil, fmt.Errorf("top-N %d: want 1 to %d", o.TopN, len(modelmeta.Categories))
	}
	o.defaults()
	dirs := o.Ensemble
	if len(dirs) == 0 {
		dirs = []string{o.Model}
	}
	read, metas, err := readEvaluated(o.Read, dirs)
	if err != nil {
		return nil, err
	}
	if o.Revision == "" {
		o.Revision = metas[0].Revision
		if len(dirs) > 1 {
			o.Revision = fmt.Sprintf("BEST_%d_models_AVG", len(dirs))
		} else if o.Revision == "" {
			o.Revision = filepath.Base(o.Model)
		}
	}
	items, err := o.items()
	if err != nil {
		return nil, err
	}
	ptrs, bySize, unreadable, err := o.samples(ctx, metas, items)
	if err != nil {
		return nil, err
	}
	perModel, digests, err := o.forwardAll(dirs, read, metas, ptrs, bySize)
	if err != nil {
		return nil, err
	}
	// The ensemble average of each page, computed as the classifier
	// computes it (classify.Page.Mean).
	probs := make([][]float64, len(ptrs))
	for j := range probs {
		probs[j] = results.Average(perModel[j])
	}
	res := &EvalResult{Pages: len(ptrs), Unreadable: unreadable, Revision: o.Revision, Digests: digests}
	res.score(probs, ptrs, o.TopN)
	if err := o.writeTables(res, ptrs, probs, perModel); err != nil {
		return nil, err
	}
	if o.Run != nil {
		o.Run.CountOutput("csv", 2*len(ptrs)) // the TOP-N and RAW tables' rows
		o.Run.CountOutput("png", 1)
	}
	pngPath := filepath.Join(o.Results, results.ConfMatName(o.Stamp, o.Count, o.Revision, o.TopN))
	title := fmt.Sprintf("%s on %d pages: accuracy %.1f%% (Top-%d %.1f%%)", o.Revision, res.Pages, 100*res.Top1, o.TopN, 100*res.TopN)
	if err := atomicfile.Write(pngPath, 0o666, func(w io.Writer) error {
		return confmat.PNG(w, title, modelmeta.Categories, res.Confusion)
	}); err != nil {
		return nil, err
	}
	res.Files = append(res.Files, pngPath)
	if o.Run != nil {
		for _, f := range res.Files {
			o.Run.AddOutputFile(f)
		}
	}
	res.reviewPath = filepath.Join(o.Results, results.EvalReviewName(o.Stamp, o.Count, o.Revision))
	res.run = o.Run
	o.Log.Info("evaluation", "model", o.Revision, "pages", res.Pages, "top1", round4(res.Top1), fmt.Sprintf("top%d", o.TopN), round4(res.TopN))
	return res, nil
}

// defaults fills the options left zero.
func (o *EvalOptions) defaults() {
	if len(o.Exts) == 0 {
		o.Exts = []string{"png"}
	}
	if o.Batch <= 0 {
		o.Batch = 16
	}
	if o.Device == "" {
		o.Device = "cpu"
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Count == 0 {
		o.Count = 1
	}
}

// readEvaluated reads each model folder once (given in read, or here), so
// that the metadata checked is the one of the weights evaluated and
// digested.
func readEvaluated(given map[string]*modelmeta.Contents, dirs []string) ([]*modelmeta.Contents, []*modelmeta.Meta, error) {
	read := make([]*modelmeta.Contents, len(dirs))
	metas := make([]*modelmeta.Meta, len(dirs))
	for i, dir := range dirs {
		c := given[dir]
		if c == nil {
			var err error
			if c, err = modelmeta.ReadFolder(dir); err != nil {
				return nil, nil, err
			}
		}
		read[i] = c
		meta := c.Meta
		if !meta.Canonical() {
			return nil, nil, fmt.Errorf("%s: evaluation needs the 11 categories in canonical order", dir)
		}
		metas[i] = meta
	}
	return read, metas, nil
}

// items are the labelled pages evaluated: those of Pages, or of them those
// in Only.
func (o *EvalOptions) items() ([]splits.Item, error) {
	d, err := splits.Scan(o.Pages, o.Exts)
	if err != nil {
		return nil, err
	}
	warnData(d.Problems(false), o.Log, o.Run)
	items := d.Items
	if o.Only != nil {
		keep := map[string]bool{}
		for _, p := range o.Only {
			keep[p] = true
		}
		items = items[:0:0]
		for _, it := range d.Items {
			if keep[it.Path] {
				items = append(items, it)
			}
		}
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: no labelled pages to evaluate", o.Pages)
	}
	return items, nil
}

// samples decodes and resizes the pages once per input size of the models
// (bySize: by size, then by path); ptrs are the pages read at the first
// size, in order, whose unreadable pages are logged and skipped.
func (o *EvalOptions) samples(ctx context.Context, metas []*modelmeta.Meta, items []splits.Item) (ptrs []*sample, bySize map[int]map[string]*sample,
	unreadable map[string]string, err error) {
	bySize = map[int]map[string]*sample{}
	for _, meta := range metas {
		size := meta.Preprocess.Size
		if bySize[size] != nil {
			continue
		}
		samples, bad, err := loadSamples(ctx, o.Pages, items, size, o.Workers, true, &o.Decode)
		if err != nil {
			return nil, nil, nil, err
		}
		m := map[string]*sample{}
		for i := range samples {
			m[samples[i].path] = &samples[i]
		}
		bySize[size] = m
		if ptrs != nil {
			continue
		}
		for p, reason := range bad {
			o.Log.Warn("skipping unreadable page", "file", p, "error", reason)
		}
		unreadable = bad
		for i := range samples {
			ptrs = append(ptrs, &samples[i])
		}
	}
	return ptrs, bySize, unreadable, nil
}

// forwardAll runs each model on the pages at its own size and returns the
// probabilities of every page ([page][model][category]) and the digest of
// each model, that of the bytes evaluated.
func (o *EvalOptions) forwardAll(dirs []string, read []*modelmeta.Contents, metas []*modelmeta.Meta, ptrs []*sample,
	bySize map[int]map[string]*sample) ([][][]float64, []string, error) {
	n := len(modelmeta.Categories)
	perModel := make([][][]float64, len(ptrs)) // [page][model][category]
	digests := make([]string, len(dirs))
	for i, dir := range dirs {
		size := metas[i].Preprocess.Size
		these := make([]*sample, len(ptrs))
		for j, s := range ptrs {
			these[j] = bySize[size][s.path]
			if these[j] == nil {
				return nil, nil, fmt.Errorf("%s: page not read at size %d", s.path, size)
			}
		}
		// model.pt was read once, into memory: the digest is of the bytes
		// evaluated.
		c := read[i]
		digests[i] = c.Digest
		m, err := torch.LoadBytes(c.Weights, o.Device)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, modelmeta.WeightsFile), err)
		}
		p, err := forward(m, these, metas[i], o.Batch)
		m.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", dir, err)
		}
		for j := range p {
			own := make([]float64, n)
			for c, v := range p[j] {
				own[c] = float64(v)
			}
			perModel[j] = append(perModel[j], own)
		}
	}
	return perModel, digests, nil
}

// score sets the accuracies, the confusion matrix and the per-category
// scores of the mean probabilities of the pages.
func (res *EvalResult) score(probs [][]float64, ptrs []*sample, topN int) {
	n := len(modelmeta.Categories)
	res.Top1, res.TopN = accuracy(probs, ptrs, topN)
	res.Confusion = make([][]int, n)
	for i := range res.Confusion {
		res.Confusion[i] = make([]int, n)
	}
	for i, p := range probs {
		res.Confusion[ptrs[i].label][argmax(p)]++
	}
	res.PerClass = perClass(res.Confusion)
}

// writeTables writes the TOP-N and RAW evaluation tables (added to
// res.Files) and keeps each page's row and review sample in res.
func (o *EvalOptions) writeTables(res *EvalResult, ptrs []*sample, probs [][]float64, perModel [][][]float64) error {
	topLayout, err := results.TopNLayout(o.TopN, true)
	if err != nil {
		return err
	}
	topPath := filepath.Join(o.Results, results.EvalTopNName(o.Stamp, o.Count, o.Revision, o.TopN))
	rawPath := filepath.Join(o.Results, results.EvalRawName(o.Stamp, o.Count, o.Revision))
	if err := os.MkdirAll(o.Results, 0o777); err != nil {
		return err
	}
	tw, err := results.Create(topPath, topLayout, 0)
	if err != nil {
		return err
	}
	rw, err := results.Create(rawPath, results.RawLayout(true), 0)
	if err != nil {
		return err
	}
	full := make([]string, len(ptrs))
	for i, s := range ptrs {
		full[i] = filepath.Join(o.Pages, filepath.FromSlash(s.path))
	}
	keys := results.NewKeyer(o.Pages, full, false) // keyed as classification keys them; no page loses its row to another's name
	for i := range ptrs {
		key, err := keys.Key(full[i], 1)
		if err != nil {
			return err
		}
		scores := probs[i]
		row := results.Row{Key: key, Scores: scores, PerModel: perModel[i], True: modelmeta.Categories[ptrs[i].label]}
		res.rows = append(res.rows, row)
		d := review.Measure(perModel[i], scores)
		res.Samples = append(res.Samples, review.Sample{Doubt: d, Correct: d.Top1 == row.True})
		if err := tw.Add(row); err != nil {
			return err
		}
		if err := rw.Add(row); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := rw.Close(); err != nil {
		return err
	}
	res.Files = []string{topPath, rawPath}
	return nil
}

func perClass(conf [][]int) []ClassScore {
	out := make([]ClassScore, len(conf))
	for c := range conf {
		tp := conf[c][c]
		var predicted, actual int
		for k := range conf {
			predicted += conf[k][c]
			actual += conf[c][k]
		}
		s := ClassScore{Label: modelmeta.Categories[c], Support: actual}
		if predicted > 0 {
			s.Precision = float64(tp) / float64(predicted)
		}
		if actual > 0 {
			s.Recall = float64(tp) / float64(actual)
		}
		if tp > 0 {
			// From the counts (2TP / (2TP + FP + FN)), as scikit-learn
			// does: from the rounded ratios, 60/64 came out as
			// 0.93749… and was printed 0.937.
			s.F1 = float64(2*tp) / float64(predicted+actual)
		}
		out[c] = s
	}
	return out
}

// Report formats per-class precision, recall and F1 as a console table.
func (r *EvalResult) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %d pages\n", r.Revision, r.Pages)
	fmt.Fprintf(&b, "%-10s %9s %9s %9s %8s\n", "category", "precision", "recall", "f1", "support")
	for _, c := range r.PerClass {
		fmt.Fprintf(&b, "%-10s %9.3f %9.3f %9.3f %8d\n", c.Label, c.Precision, c.Recall, c.F1, c.Support)
	}
	fmt.Fprintf(&b, "%-10s %9s %9s %9.3f %8d\n", "accuracy", "", "", r.Top1, r.Pages)
	return b.String()
}

// WriteReview writes the evaluation's review table,
// {stamp}_{n}_{rev}_EVAL_REVIEW.csv, with the doubt of each page flagged under
// cal (nil: no calibration, every page "uncalibrated") and its gold
// category, and returns its path.
func (r *EvalResult) WriteReview(cal *review.Applied) (string, error) {
	w, err := results.Create(r.reviewPath, results.ReviewLayout(true), 0)
	if err != nil {
		return "", err
	}
	for _, row := range r.rows {
		rv := review.Assess(row.PerModel, row.Scores, review.Condition{}, cal)
		row.Review = &rv
		if err := w.Add(row); err != nil {
			return "", err
		}
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	if r.run != nil {
		r.run.AddOutputFile(r.reviewPath)
		r.run.CountOutput("csv", len(r.rows))
	}
	return r.reviewPath, nil
}

// warnData logs the data folder's problems (splits.Dataset.Problems) as
// warnings and adds them to the run metadata's.
func warnData(problems []string, log *slog.Logger, run *paradata.Run) {
	for _, w := range problems {
		if log != nil {
			log.Warn(w)
		}
		if run != nil {
			run.Warn(w)
		}
	}
}
