package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/bindings/torch"
	"archivekit/pkg/modelmeta"
	"archivekit/pkg/splits"
)

// cachedVsUncachedTolerance bounds the difference between the final
// probabilities of a head trained on features computed once and the same
// head trained through the whole model: the same steps on the same numbers,
// apart from float rounding in batches of other sizes.
const cachedVsUncachedTolerance = 1e-4

// trainTiny trains fixture (a model of test/make_fixtures.py at 32 px) on
// the sample pages, one fold, in its own folder under out.
func trainTiny(t *testing.T, out, fixture, name string, edit func(*Options)) FoldResult {
	t.Helper()
	dir := filepath.Join(out, name)
	o := Options{Base: modelDir(t, filepath.Join(out, fixture+"-base"), fixture, 32), Pages: pages(t), Epochs: 3, Batch: 8,
		LR: 1e-2, Revision: "vF.1", Checkpoints: filepath.Join(dir, "ckpt"), Models: filepath.Join(dir, "model"),
		Results: filepath.Join(dir, "result"), Stamp: "test"}
	if edit != nil {
		edit(&o)
	}
	res, err := Train(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d folds trained, want 1", len(res))
	}
	return res[0]
}

// pageProbabilities is the final model's softmax on every sample page at
// its input size.
func pageProbabilities(t *testing.T, modelDir string) [][]float32 {
	t.Helper()
	meta, err := modelmeta.Load(modelDir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := torch.Load(filepath.Join(modelDir, modelmeta.WeightsFile), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := splits.Scan(pages(t), []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	ss, bad, err := loadSamples(context.Background(), pages(t), d.Items, meta.Preprocess.Size, 0, true)
	if err != nil || len(bad) > 0 {
		t.Fatalf("pages: %v %v", err, bad)
	}
	ptrs := make([]*sample, len(ss))
	for i := range ss {
		ptrs[i] = &ss[i]
	}
	probs, err := forward(m, ptrs, meta, 16)
	if err != nil {
		t.Fatal(err)
	}
	return probs
}

// A base with a frozen backbone and features/head methods (as
// tools/export_models.py --freeze-backbone exports them) trains its head on
// features computed once per page, says so in the result and the model's
// notes, and gives the model that training through the whole model every
// step gives with the same seed: the same shuffling, the same dropout draws
// in the head (the fixture's head has dropout 0.2), the same checkpoint.
func TestFeatureCacheTrainsTheSameModel(t *testing.T) {
	out := t.TempDir()
	cached := trainTiny(t, out, "tiny_frozen.pt", "cached", nil)
	whole := trainTiny(t, out, "tiny_frozen.pt", "whole", func(o *Options) { o.NoFeatureCache = true })

	const want = "features cached: backbone frozen, 187 trainable parameters all in the head" // 11 x 16 + 11
	if !cached.FeaturesCached || cached.FeatureCache != want {
		t.Errorf("cached run: FeaturesCached %v, %q; want true, %q", cached.FeaturesCached, cached.FeatureCache, want)
	}
	if whole.FeaturesCached || !strings.Contains(whole.FeatureCache, "NoFeatureCache") {
		t.Errorf("NoFeatureCache run: FeaturesCached %v, %q", whole.FeaturesCached, whole.FeatureCache)
	}
	meta, err := modelmeta.Load(cached.ModelDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(meta.Provenance.Notes, want) {
		t.Errorf("model notes %q do not say the features were cached", meta.Provenance.Notes)
	}
	if cached.DevAccuracy != whole.DevAccuracy || cached.TestTop1 != whole.TestTop1 || cached.TestTop3 != whole.TestTop3 {
		t.Errorf("cached: dev %.4f test %.4f/%.4f; whole model: dev %.4f test %.4f/%.4f",
			cached.DevAccuracy, cached.TestTop1, cached.TestTop3, whole.DevAccuracy, whole.TestTop1, whole.TestTop3)
	}
	a, b := pageProbabilities(t, cached.ModelDir), pageProbabilities(t, whole.ModelDir)
	d := maxDiff(a, b)
	t.Logf("max |probability difference| cached vs whole model on %d pages: %.3g", len(a), d)
	if d > cachedVsUncachedTolerance {
		t.Errorf("final probabilities differ by %.3g > %g", d, cachedVsUncachedTolerance)
	}
	// and training moved the head: the check compares trained models
	base := pageProbabilities(t, filepath.Join(out, "tiny_frozen.pt-base"))
	if d := maxDiff(a, base); d < 1e-2 {
		t.Errorf("the trained model differs from the base by only %.3g", d)
	}
}

// The cache is taken only when it cannot change what is trained: a base
// whose backbone has trainable parameters, augmentation (pages change every
// epoch) and a base without the methods all run the whole model each step.
func TestFeatureCacheOnlyWhenTheBackboneIsFrozen(t *testing.T) {
	out := t.TempDir()
	cases := []struct {
		name, fixture string
		edit          func(*Options)
		want          string
	}{
		{"trainable backbone", "tiny_headed.pt", nil, "1,392 of the 1,579 trainable parameters are in the backbone"},
		{"augmentation", "tiny_frozen.pt", func(o *Options) { o.Augment = true }, "augmentation changes the pages"},
		{"no methods", "tiny_cnn.pt", nil, "the base has no features method"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := trainTiny(t, out, c.fixture, strings.ReplaceAll(c.name, " ", "-"), func(o *Options) {
				o.Epochs = 1
				if c.edit != nil {
					c.edit(o)
				}
			})
			if r.FeaturesCached || !strings.HasPrefix(r.FeatureCache, "features not cached") || !strings.Contains(r.FeatureCache, c.want) {
				t.Errorf("FeaturesCached %v, %q; want false, %q", r.FeaturesCached, r.FeatureCache, c.want)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 187: "187", 1392: "1,392", 14091: "14,091", 1234567: "1,234,567", -1392: "-1,392"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
