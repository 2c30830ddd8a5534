package train

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/atomicfile"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/splits"
)

func (o *Options) defaults() {
	if len(o.Exts) == 0 {
		o.Exts = []string{"png"}
	}
	if o.Epochs <= 0 {
		o.Epochs = 3
	}
	if o.Batch <= 0 {
		o.Batch = 16
	}
	if o.LR <= 0 {
		o.LR = 5e-5
	}
	if o.TestSize == 0 {
		o.TestSize = 0.1
	}
	if o.Seed == 0 {
		o.Seed = splits.BaseSeed
	}
	if o.LogStep <= 0 {
		o.LogStep = 100
	}
	if o.Device == "" {
		o.Device = "cpu"
	}
	if o.Workers <= 0 {
		o.Workers = runtime.NumCPU()
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.Revision == "" {
		o.Revision = "model"
	}
	if o.Stamp == "" {
		o.Stamp = time.Now().Format("060102-1504")
	}
}

// LR returns the learning rate of step s (0-based) of total steps: linear
// warm-up over the first 10% of the steps, then linear decay to zero.
func LR(peak float64, s, total int) float64 {
	warm := int(math.Round(0.1 * float64(total)))
	if warm < 1 {
		warm = 1
	}
	if s < warm {
		return peak * float64(s+1) / float64(warm)
	}
	if total <= warm {
		return peak
	}
	return peak * float64(total-s) / float64(total-warm)
}

var foldColumnNumber = regexp.MustCompile(`(\d+)\s*$`)

// plan returns the splits to train, one per fold.
func plan(o Options, d *splits.Dataset) ([]*splits.Split, error) {
	if o.FoldsCSV != "" {
		f, err := splits.ReadFoldsCSV(o.FoldsCSV)
		if err != nil {
			return nil, err
		}
		cols := f.Columns
		if o.FoldColumn != "" {
			cols = []string{o.FoldColumn}
		}
		var out []*splits.Split
		for _, c := range cols {
			s, err := f.Split(d, c)
			if err != nil {
				return nil, err
			}
			if s.Fold == 0 {
				if m := foldColumnNumber.FindStringSubmatch(c); m != nil {
					s.Fold, _ = strconv.Atoi(m[1])
				}
			}
			out = append(out, s)
		}
		return out, nil
	}
	n := o.Folds
	if n <= 0 {
		n = 1
	}
	if n > len(d.Items) {
		// 99 folds of 22 pages were 99 trainings of one split.
		return nil, fmt.Errorf("--folds %d: more folds than the %d labelled pages of %s", n, len(d.Items), o.Pages)
	}
	var out []*splits.Split
	for i := 1; i <= n; i++ {
		s, err := splits.Stratified(d, i, splits.Options{BaseSeed: o.Seed, TestSize: o.TestSize, MaxPerClass: o.MaxPerClass})
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Train fine-tunes Options.Base on every requested fold and returns one
// result per fold. The final model of a fold is its best checkpoint by dev
// accuracy, saved as {Models}/{Revision}_FOLD_{n}.
func Train(ctx context.Context, o Options) ([]FoldResult, error) {
	o.defaults()
	// The base is read once: each fold loads its module from these bytes,
	// so a base replaced during the run changes nothing, and the digest
	// recorded (the caller's, of BaseContents) is of the weights trained.
	bc := o.BaseContents
	if bc == nil {
		var err error
		if bc, err = modelmeta.ReadFolder(o.Base); err != nil {
			return nil, fmt.Errorf("base model: %w", err)
		}
	}
	base := bc.Meta
	if !base.Trainable {
		return nil, fmt.Errorf("base model %s is not trainable (a traced export freezes dropout and batch norm); export a scripted model with tools/export_models.py", o.Base)
	}
	if !base.Canonical() && !base.IsRotation() {
		return nil, fmt.Errorf("base model %s: labels must be the 11 categories in canonical order (or the labels of an orientation model)", o.Base)
	}
	if o.Size > 0 && o.Size != base.Preprocess.Size {
		b := *base
		b.Preprocess.Size = o.Size
		base = &b
	}
	d, err := splits.Scan(o.Pages, o.Exts)
	if err != nil {
		return nil, err
	}
	if len(d.Items) == 0 {
		return nil, fmt.Errorf("%s: no labelled pages (want category folders of %s files)", o.Pages, strings.Join(o.Exts, ", "))
	}
	warnData(append(d.Problems(true), d.Relabelled()...), o.Log, o.Run)
	folds, err := plan(o, d)
	if err != nil {
		return nil, err
	}
	o.Log.Info("loading training pages", "pages", len(d.Items), "folder", o.Pages, "size", base.Preprocess.Size)
	samples, bad, err := loadSamples(ctx, o.Pages, d.Items, base.Preprocess.Size, o.Workers, !o.NoCache, &o.Decode)
	if err != nil {
		return nil, err
	}
	for p, reason := range bad {
		o.Log.Warn("skipping unreadable page", "file", p, "error", reason)
		if o.Run != nil {
			o.Run.Skip(p, reason)
		}
	}
	byPath := make(map[string]*sample, len(samples))
	for i := range samples {
		byPath[samples[i].path] = &samples[i]
	}
	var results []FoldResult
	for _, sp := range folds {
		if err := ctx.Err(); err != nil {
			return results, err
		}
		sp.Drop(bad)
		ds, err := sp.WriteFile(o.Results, o.Stamp, o.Revision)
		if err != nil {
			return results, err
		}
		for _, w := range sp.Warnings {
			o.Log.Warn("split", "fold", sp.Fold, "warning", w)
		}
		r, err := trainFold(ctx, o, base, bc.Weights, sp, byPath)
		if err != nil {
			return results, fmt.Errorf("fold %d: %w", sp.Fold, err)
		}
		r.DatasetFile = ds
		results = append(results, r)
	}
	return results, nil
}

func pick(items []splits.Item, byPath map[string]*sample) []*sample {
	var out []*sample
	for _, it := range items {
		if s, ok := byPath[it.Path]; ok {
			out = append(out, s)
		}
	}
	return out
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

func argmax[F float32 | float64](v []F) int {
	b := 0
	for i := range v {
		if v[i] > v[b] {
			b = i
		}
	}
	return b
}

// forward runs the model (in eval mode) over samples without augmentation
// and returns the softmax of its logits.
func forward(m *torch.Module, ss []*sample, meta *modelmeta.Meta, batch int) ([][]float32, error) {
	return runPages(m, "", ss, meta, batch, true)
}

// runPages runs method ("" for forward) over samples without augmentation,
// batch pages at a time, in the module's current mode, and returns its
// rows (their softmax when asked).
func runPages(m *torch.Module, method string, ss []*sample, meta *modelmeta.Meta, batch int, softmax bool) ([][]float32, error) {
	var out [][]float32
	for b0 := 0; b0 < len(ss); b0 += batch {
		x, err := batchOf(ss[b0:min(b0+batch, len(ss))], meta)
		if err != nil {
			return nil, err
		}
		var p [][]float32
		switch {
		case method != "":
			p, err = m.RunMethod(method, x, softmax)
		case softmax:
			p, err = m.Probabilities(x)
		default:
			p, err = m.Forward(x)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	return out, nil
}

// accuracy returns Top-1 and Top-k accuracy.
func accuracy[F float32 | float64](probs [][]F, ss []*sample, k int) (float64, float64) {
	if len(ss) == 0 {
		return 0, 0
	}
	var top1, topk int
	for i, p := range probs {
		rank := 0
		want := p[ss[i].label]
		for j, v := range p {
			if v > want || (v == want && j < int(ss[i].label)) {
				rank++
			}
		}
		if rank == 0 {
			top1++
		}
		if rank < k {
			topk++
		}
	}
	return float64(top1) / float64(len(ss)), float64(topk) / float64(len(ss))
}

func checkpointMeta(base *modelmeta.Meta, o Options, sp *splits.Split, res FoldResult, note string) *modelmeta.Meta {
	m := *base
	m.Labels = append([]string(nil), base.Labels...)
	m.Trainable = true
	m.License = "CC BY-NC 4.0"
	m.Revision = ""
	m.Provenance = modelmeta.Provenance{
		Method:  "train",
		Command: strings.Join(os.Args, " "),
		Source:  fmt.Sprintf("base %s (%s); pages %s; split: %s", o.Base, base.Base, o.Pages, sp.Source),
		Fold:    sp.Fold,
		Created: time.Now().UTC().Format(time.RFC3339),
		Notes: fmt.Sprintf("%s; %s; %s; epochs %d, batch %d, lr %g (10%% warm-up, linear decay), AdamW, augmentation %v; trained on CC BY-NC 4.0 data",
			note, trained(res), res.FeatureCache, o.Epochs, o.Batch, o.LR, o.Augment),
	}
	return &m
}

// saveModel writes model.pt and model.json into a fresh folder next to dir
// and renames it over dir, so a reader never sees half a model.
func saveModel(m *torch.Module, dir string, meta *modelmeta.Meta) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o777); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := m.Save(filepath.Join(tmp, modelmeta.WeightsFile)); err != nil {
		return err
	}
	if err := modelmeta.Save(tmp, meta); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o777&^atomicfile.Umask()); err != nil {
		return err
	}
	old := dir + ".old"
	os.RemoveAll(old)
	if _, err := os.Stat(dir); err == nil {
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

// turnSquare returns a copy of a CHW page of size×size 8-bit pixels turned
// clockwise by q quarters. Turning the resized square is the same as
// resizing the turned page (the resize scales each axis on its own), so an
// orientation model trained on it sees what it sees at inference.
func turnSquare(pix []uint8, size, q int) []uint8 {
	q %= 4
	if q == 0 {
		return pix
	}
	out := make([]uint8, len(pix))
	plane := size * size
	for c := 0; c < 3; c++ {
		src, dst := pix[c*plane:(c+1)*plane], out[c*plane:(c+1)*plane]
		for r := 0; r < size; r++ {
			for col := 0; col < size; col++ {
				var v uint8
				switch q {
				case 1: // new[r][c] = old[S-1-c][r]
					v = src[(size-1-col)*size+r]
				case 2:
					v = src[(size-1-r)*size+size-1-col]
				case 3: // new[r][c] = old[c][S-1-r]
					v = src[col*size+size-1-r]
				}
				dst[r*size+col] = v
			}
		}
	}
	return out
}

// evalSet is the pages a dev or test accuracy is measured on: the pages
// themselves for a classifier; for an orientation model every page turned
// by 0, 90, 180 and 270 degrees, labelled with the turn.
func evalSet(ss []*sample, base *modelmeta.Meta) []*sample {
	if !base.IsRotation() {
		return ss
	}
	size := base.Preprocess.Size
	out := make([]*sample, 0, 4*len(ss))
	for _, s := range ss {
		pix, err := pixels(s, size)
		if err != nil {
			continue // unreadable now: left out of the measure
		}
		for q := 0; q < 4; q++ {
			out = append(out, &sample{root: s.root, path: s.path, label: int64(q), pix: turnSquare(pix, size, q), dec: s.dec})
		}
	}
	return out
}

// kept says which checkpoint a fold keeps: the best on its dev pages, or,
// when the split has none, the last epoch (nothing was chosen on accuracy).
func kept(devPages, epoch int) string {
	if devPages == 0 {
		return fmt.Sprintf("last epoch, %d: the split has no dev pages, no checkpoint chosen", epoch+1)
	}
	return "best dev checkpoint"
}

// devAcc is a dev (or test) accuracy for the log: null when the split has
// no dev (test) pages.
func devAcc(devPages int, acc float64) any {
	if devPages == 0 {
		return nil
	}
	return round4(acc)
}

// trained says which parameters training changed.
func trained(res FoldResult) string {
	if res.TrainableParams == res.TotalParams {
		return fmt.Sprintf("all %d parameters trained", res.TotalParams)
	}
	return fmt.Sprintf("%d of %d parameters trained, the rest frozen in the base", res.TrainableParams, res.TotalParams)
}
