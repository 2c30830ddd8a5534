package train

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/splits"
)

// fold is the training of one split: its pages, the model and its trainer,
// and how far the steps and epochs are.
type fold struct {
	o    Options
	base *modelmeta.Meta
	sp   *splits.Split
	res  FoldResult

	train, dev, test []*sample
	seed             int64
	m                *torch.Module
	tr               *torch.Trainer

	size, plane int
	total       int // steps of all epochs
	name, ckpt  string
	aug         *augmenter
	buf         []float32
	labels      []int64
	began       time.Time
	// With features cached, each page's backbone runs once and the steps
	// and evaluations run the head on its features.
	trainF, devF, testF [][]float32
	fbuf                []float32

	step          int
	best          float64
	bestEpoch     int
	lossSum       float64
	seen, correct int
}

// trainFold trains split sp from the base (its metadata, and weights: the
// bytes of its model.pt).
func trainFold(ctx context.Context, o Options, base *modelmeta.Meta, weights []byte, sp *splits.Split, byPath map[string]*sample) (FoldResult, error) {
	f := &fold{o: o, base: base, sp: sp, res: FoldResult{Fold: sp.Fold}}
	f.train, f.dev, f.test = pick(sp.Train, byPath), pick(sp.Dev, byPath), pick(sp.Test, byPath)
	if len(f.train) == 0 {
		return f.res, errors.New("no training pages")
	}
	f.seed = splits.SeedFor(o.Seed, sp.Fold)
	torch.ManualSeed(uint64(f.seed))
	m, err := torch.LoadBytes(weights, o.Device)
	if err != nil {
		return f.res, fmt.Errorf("%s: %w", filepath.Join(o.Base, modelmeta.WeightsFile), err)
	}
	defer m.Close()
	f.m = m
	f.res.TrainableParams, f.res.TotalParams, err = m.ParamCounts()
	if err != nil {
		return f.res, err
	}
	if f.res.TrainableParams == 0 {
		return f.res, fmt.Errorf("%s: no parameter of the base requires gradients: nothing to train", o.Base)
	}
	tr, err := torch.NewTrainer(m, torch.DefaultAdamW(o.LR))
	if err != nil {
		return f.res, err
	}
	defer tr.Close()
	f.tr = tr
	var checkErr error // the check of the base failed: a warning, the whole model trains
	f.res.FeaturesCached, f.res.FeatureCache, checkErr = featureCache(o, base, m, f.res.TrainableParams, f.train[:min(2, len(f.train))])
	torch.ManualSeed(uint64(f.seed)) // the check may have drawn numbers: every path starts from the seed
	f.plan(ctx, checkErr)
	if err := f.cacheFeatures(); err != nil {
		return f.res, err
	}
	if err := f.epochs(ctx); err != nil {
		return f.res, err
	}
	err = f.finish()
	return f.res, err
}

// plan sets the sizes, names and buffers of the training and logs them.
func (f *fold) plan(ctx context.Context, checkErr error) {
	o, sp, res := f.o, f.sp, &f.res
	f.size = f.base.Preprocess.Size
	f.plane = 3 * f.size * f.size
	perEpoch := (len(f.train) + o.Batch - 1) / o.Batch
	f.total = perEpoch * o.Epochs
	f.name = fmt.Sprintf("%s_FOLD_%d", o.Revision, sp.Fold)
	f.ckpt = filepath.Join(o.Checkpoints, o.Stamp+"_"+f.name)
	o.Log.Info("training fold", "fold", sp.Fold, "train", len(f.train), "dev", len(f.dev), "test", len(f.test),
		"epochs", o.Epochs, "batch", o.Batch, "steps", f.total, "lr", o.LR, "seed", f.seed,
		"trainable_params", res.TrainableParams, "total_params", res.TotalParams)
	level := slog.LevelInfo
	if checkErr != nil {
		level = slog.LevelWarn
	}
	o.Log.Log(ctx, level, "feature cache", "fold", sp.Fold, "features_cached", res.FeaturesCached, "why", res.FeatureCache)
	if res.TrainableParams < res.TotalParams {
		o.Log.Info("the base has frozen parameters: training changes only the rest", "base", o.Base,
			"trainable_params", res.TrainableParams, "total_params", res.TotalParams)
	}
	f.aug = newAugmenter(f.size)
	f.buf = make([]float32, o.Batch*f.plane)
	f.labels = make([]int64, o.Batch)
	f.began = time.Now()
	f.best = -1.0
}

// cacheFeatures runs each page's backbone once, with features cached.
func (f *fold) cacheFeatures() error {
	if !f.res.FeaturesCached {
		return nil
	}
	o := f.o
	for _, set := range []struct {
		dst *[][]float32
		ss  []*sample
	}{{&f.trainF, f.train}, {&f.devF, f.dev}, {&f.testF, f.test}} {
		var err error
		if *set.dst, err = runPages(f.m, featuresMethod, set.ss, f.base, o.Batch, false); err != nil {
			return err
		}
	}
	f.fbuf = make([]float32, o.Batch*len(f.trainF[0]))
	if err := f.m.SetTrain(true); err != nil {
		return err
	}
	o.Log.Info("features computed", "fold", f.sp.Fold, "pages", len(f.train)+len(f.dev)+len(f.test),
		"features", len(f.trainF[0]), "elapsed", time.Since(f.began).Round(time.Millisecond).String())
	return nil
}

// epochs runs the epochs, each over the training pages in a shuffled
// order, until the last or an early stop.
func (f *fold) epochs(ctx context.Context) error {
	o := f.o
	for epoch := 0; epoch < o.Epochs; epoch++ {
		order := make([]int, len(f.train))
		for i := range order {
			order[i] = i
		}
		g := splits.NewSplitMix64(uint64(f.seed)<<16 ^ uint64(epoch))
		g.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for b0 := 0; b0 < len(order); b0 += o.Batch {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := f.trainStep(order[b0:min(b0+o.Batch, len(order))], epoch); err != nil {
				return err
			}
		}
		stop, err := f.endEpoch(epoch)
		if err != nil {
			return err
		}
		if stop {
			break
		}
	}
	return nil
}

// trainStep takes one optimiser step on the training pages idx and logs
// the progress every LogStep steps.
func (f *fold) trainStep(idx []int, epoch int) error {
	o := f.o
	n := len(idx)
	if err := f.tr.SetLR(LR(o.LR, f.step, f.total)); err != nil {
		return err
	}
	loss, logits, err := f.batchStep(idx, epoch)
	if err != nil {
		return err
	}
	f.step++
	f.lossSum += float64(loss) * float64(n)
	f.seen += n
	for k := range logits {
		if argmax(logits[k]) == int(f.labels[k]) {
			f.correct++
		}
	}
	if f.step%o.LogStep == 0 || f.step == f.total {
		f.logProgress(epoch)
	}
	return nil
}

// batchStep is the trainer's step on the pages idx: on their cached
// features, else on their pixels.
func (f *fold) batchStep(idx []int, epoch int) (float32, [][]float32, error) {
	n := len(idx)
	if f.res.FeaturesCached {
		for k, i := range idx {
			f.labels[k] = f.train[i].label
		}
		return f.tr.StepMethod(headMethod, rowsOf(f.fbuf, f.trainF, idx), f.labels[:n])
	}
	x, err := f.pixelBatch(idx, epoch)
	if err != nil {
		return 0, nil, err
	}
	return f.tr.Step(x, f.labels[:n])
}

// pixelBatch fills buf and labels with the training pages idx of an
// epoch: augmented when asked, turned for the orientation model.
func (f *fold) pixelBatch(idx []int, epoch int) (torch.Tensor, error) {
	size, plane, seed := f.size, f.plane, f.seed
	for k, i := range idx {
		pix, err := pixels(f.train[i], size)
		if err != nil {
			return torch.Tensor{}, err
		}
		if f.o.Augment {
			pix = f.aug.apply(pix, splits.NewSplitMix64(uint64(seed)<<32^uint64(epoch)<<20^uint64(i)))
		}
		f.labels[k] = f.train[i].label
		if f.base.IsRotation() {
			// self-supervised: the page turned by a drawn quarter,
			// labelled with it
			q := int(splits.NewSplitMix64(uint64(seed)<<32 ^ uint64(epoch)<<20 ^ uint64(i) ^ 0x726f74).Below(4))
			pix, f.labels[k] = turnSquare(pix, size, q), int64(q)
		}
		normalise(f.buf[k*plane:(k+1)*plane], pix, f.base.Preprocess)
	}
	n := len(idx)
	return torch.Tensor{Data: f.buf[:n*plane], Shape: []int64{int64(n), 3, int64(size), int64(size)}}, nil
}

// logProgress logs the loss and accuracy since the last report and draws
// the progress line.
func (f *fold) logProgress(epoch int) {
	o := f.o
	el := time.Since(f.began)
	left := time.Duration(float64(el) / float64(f.step) * float64(f.total-f.step))
	o.Log.Info("training", "fold", f.sp.Fold, "epoch", epoch+1, "step", f.step, "of", f.total,
		"loss", round4(f.lossSum/float64(f.seen)), "train_acc", round4(float64(f.correct)/float64(f.seen)),
		"time_left", left.Round(time.Second).String())
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, "\rfold %d epoch %d/%d step %d/%d loss %.4f acc %.3f left %s   ",
			f.sp.Fold, epoch+1, o.Epochs, f.step, f.total, f.lossSum/float64(f.seen), float64(f.correct)/float64(f.seen), left.Round(time.Second))
	}
	f.lossSum, f.seen, f.correct = 0, 0, 0
}

// endEpoch evaluates the epoch on the dev pages, keeps the checkpoint of
// the best, and tells whether training stops early (no better dev accuracy
// for Patience epochs).
func (f *fold) endEpoch(epoch int) (stop bool, err error) {
	o, sp := f.o, f.sp
	if err := f.m.SetTrain(false); err != nil {
		return false, err
	}
	acc := 0.0
	if len(f.dev) > 0 {
		ds := evalSet(f.dev, f.base)
		probs, err := f.probabilities(f.m, ds, f.devF)
		if err != nil {
			return false, err
		}
		acc, _ = accuracy(probs, ds, 3)
	}
	o.Log.Info("epoch done", "fold", sp.Fold, "epoch", epoch+1, "dev_acc", devAcc(len(f.dev), acc), "elapsed", time.Since(f.began).Round(time.Second).String())
	if acc > f.best || len(f.dev) == 0 {
		f.best, f.bestEpoch = acc, epoch
		if err := saveModel(f.m, f.ckpt, checkpointMeta(f.base, o, sp, f.res, kept(len(f.dev), epoch))); err != nil {
			return false, err
		}
		o.Log.Info("checkpoint saved", "fold", sp.Fold, "dir", f.ckpt, "dev_acc", devAcc(len(f.dev), acc))
	}
	if err := f.m.SetTrain(true); err != nil {
		return false, err
	}
	if o.Patience > 0 && len(f.dev) > 0 && epoch-f.bestEpoch >= o.Patience && epoch < o.Epochs-1 {
		o.Log.Info("early stop: dev accuracy did not improve", "fold", sp.Fold, "epoch", epoch+1, "best_epoch", f.bestEpoch+1,
			"patience", o.Patience, "dev_acc", round4(f.best))
		f.res.StoppedEarly = epoch + 1
		return true, nil
	}
	return false, nil
}

// probabilities runs m over the pages ss (feats: their cached features).
func (f *fold) probabilities(m *torch.Module, ss []*sample, feats [][]float32) ([][]float32, error) {
	if f.res.FeaturesCached {
		return headProbabilities(m, feats, f.o.Batch)
	}
	return forward(m, ss, f.base, f.o.Batch)
}

// finish tests the best checkpoint on the test pages and saves it as the
// fold's model.
func (f *fold) finish() error {
	o, sp, res := f.o, f.sp, &f.res
	if o.Progress != nil {
		fmt.Fprintln(o.Progress)
	}
	res.Checkpoint, res.DevAccuracy, res.DevPages = f.ckpt, f.best, len(f.dev)
	final := filepath.Join(o.Models, f.name)
	bm, err := torch.Load(filepath.Join(f.ckpt, modelmeta.WeightsFile), o.Device)
	if err != nil {
		return err
	}
	defer bm.Close()
	res.TestPages = len(f.test)
	if len(f.test) > 0 {
		ts := evalSet(f.test, f.base)
		// the checkpoint's backbone is the base's: the same features
		probs, err := f.probabilities(bm, ts, f.testF)
		if err != nil {
			return err
		}
		res.TestTop1, res.TestTop3 = accuracy(probs, ts, 3)
	}
	chosen := fmt.Sprintf("best dev checkpoint, epoch %d: dev accuracy %.4f on %d dev pages", f.bestEpoch+1, f.best, len(f.dev))
	if len(f.dev) == 0 {
		chosen = kept(0, f.bestEpoch)
	}
	meta := checkpointMeta(f.base, o, sp, *res, fmt.Sprintf("final model (%s), test top-1 %.4f, top-3 %.4f on %d test pages",
		chosen, res.TestTop1, res.TestTop3, len(f.test)))
	if earlier, err := modelmeta.Load(final); err == nil {
		// Said: a second training of the revision replaced the first
		// one's folds without a word, its run metadata then naming
		// another model.
		o.Log.Warn("replacing an earlier model", "model", final, "created", earlier.Provenance.Created,
			"hint", "its checkpoints keep its weights; give -rev another revision, or another models folder, to keep both")
	}
	if err := saveModel(bm, final, meta); err != nil {
		return err
	}
	res.ModelDir = final
	res.Elapsed = time.Since(f.began)
	o.Log.Info("fold done", "fold", sp.Fold, "model", final, "dev_acc", devAcc(len(f.dev), f.best), "test_top1", devAcc(res.TestPages, res.TestTop1),
		"test_top3", devAcc(res.TestPages, res.TestTop3), "test_pages", res.TestPages, "elapsed", time.Since(f.began).Round(time.Second).String())
	return nil
}
