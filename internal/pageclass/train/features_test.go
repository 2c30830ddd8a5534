package train

import (
	"archive/zip"
	"archivekit/internal/testenv"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/splits"
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
	ss, bad, err := loadSamples(context.Background(), pages(t), d.Items, meta.Preprocess.Size, 0, true, nil)
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

// probePages are the first two sample pages at size px, as a fold checks
// its base on its first two training pages.
func probePages(t *testing.T, size int) []*sample {
	t.Helper()
	d, err := splits.Scan(pages(t), []string{"png"})
	if err != nil {
		t.Fatal(err)
	}
	ss, bad, err := loadSamples(context.Background(), pages(t), d.Items[:2], size, 0, true, nil)
	if err != nil || len(bad) > 0 {
		t.Fatalf("pages: %v %v", err, bad)
	}
	return []*sample{&ss[0], &ss[1]}
}

// savedBytes is the module as Save writes it: its parameters, buffers and
// the training flag of every submodule.
func savedBytes(t *testing.T, m *torch.Module) []byte {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.pt")
	if err := m.Save(p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The check that a base may be trained on cached features runs on a copy
// of the module about to be trained, loaded once: that module keeps its
// mode (training or evaluation), its parameters and buffers (what Save
// writes, byte for byte) and its trainer's state: a step after the check
// gives the loss and logits of a step on a module never checked.
func TestFeatureCacheCheckLeavesTheModuleAlone(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		fixture string
		cached  bool
	}{{"tiny_frozen.pt", true}, {"tiny_headed.pt", false}} {
		dir := modelDir(t, filepath.Join(out, c.fixture), c.fixture, 32)
		meta, err := modelmeta.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		probe := probePages(t, 32)
		x, err := batchOf(probe, meta)
		if err != nil {
			t.Fatal(err)
		}
		labels := []int64{0, 1}
		for _, train := range []bool{true, false} {
			step := func(check bool) (float32, [][]float32, []byte) {
				m, err := torch.Load(filepath.Join(dir, modelmeta.WeightsFile), "cpu")
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				trainable, _, err := m.ParamCounts()
				if err != nil {
					t.Fatal(err)
				}
				tr, err := torch.NewTrainer(m, torch.DefaultAdamW(1e-2))
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				torch.ManualSeed(7)
				if _, _, err := tr.Step(x, labels); err != nil { // gradients and optimiser state in place
					t.Fatal(err)
				}
				if err := m.SetTrain(train); err != nil {
					t.Fatal(err)
				}
				before := savedBytes(t, m)
				if check {
					cached, why, err := featureCache(Options{}, meta, m, trainable, probe)
					if err != nil || cached != c.cached {
						t.Fatalf("%s: cached %v (%s), error %v; want cached %v", c.fixture, cached, why, err, c.cached)
					}
				}
				if after := savedBytes(t, m); !bytes.Equal(before, after) {
					t.Errorf("%s, training mode %v: the module as saved changed during the check", c.fixture, train)
				}
				torch.ManualSeed(7)
				loss, logits, err := tr.Step(x, labels)
				if err != nil {
					t.Fatal(err)
				}
				return loss, logits, savedBytes(t, m)
			}
			l0, g0, s0 := step(false)
			l1, g1, s1 := step(true)
			if l0 != l1 || maxDiff(g0, g1) != 0 || !bytes.Equal(s0, s1) {
				t.Errorf("%s, training mode %v: the step after the check: loss %g, logits differ by %g, same module saved %v; unchecked: loss %g",
					c.fixture, train, l1, maxDiff(g0, g1), bytes.Equal(s0, s1), l0)
			}
		}
	}
}

// The base's model.pt is read once per run, however many folds: each fold
// loads its module from those bytes (torch.LoadBytes), and the check that
// its features may be cached runs on a copy in memory of that module
// (TestFeatureCacheCheckLeavesTheModuleAlone). Counted with inotify over a
// run of two folds: 1 open; 8 when each fold loaded the base from its path
// twice (libtorch opens a file it loads twice), once for training and once
// for the check. A caller's BaseContents (read once, its digest recorded)
// is what trains even when the folder's model.pt is replaced meanwhile:
// here by tiny_headed.pt, whose backbone trains (its features would not be
// cached).
func TestBaseReadOnce(t *testing.T) {
	out := t.TempDir()
	base := modelDir(t, filepath.Join(out, "base"), "tiny_frozen.pt", 32)
	weights := filepath.Join(base, modelmeta.WeightsFile)
	o := Options{Base: base, Pages: pages(t), Epochs: 1, Batch: 8, LR: 1e-2, Folds: 2, Revision: "vF.1",
		Checkpoints: filepath.Join(out, "ckpt"), Models: filepath.Join(out, "model"), Results: filepath.Join(out, "result"), Stamp: "test"}
	var res []FoldResult
	var err error
	opened := testenv.Opens(t, []string{weights}, func() { res, err = Train(context.Background(), o) })
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || !res[0].FeaturesCached || !res[1].FeaturesCached {
		t.Fatalf("folds %+v: want 2, features cached", res)
	}
	if opened[weights] != 1 {
		t.Errorf("%s opened %d times by 2 folds, want 1", weights, opened[weights])
	}

	if o.BaseContents, err = modelmeta.ReadFolder(base); err != nil {
		t.Fatal(err)
	}
	modelDir(t, base, "tiny_headed.pt", 32)
	o.Folds, o.Stamp = 1, "replaced"
	if res, err = Train(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if !res[0].FeaturesCached || res[0].TrainableParams != 187 {
		t.Errorf("trained %d parameters, features cached %v: want the 187 of tiny_frozen.pt's head, cached (%s)",
			res[0].TrainableParams, res[0].FeaturesCached, res[0].FeatureCache)
	}
}

// editCode writes dst, the TorchScript file src with the source of its
// top-level class (code/__torch__.py) replaced by edit's; that file's debug
// information (source ranges of the old text) is left out.
func editCode(t *testing.T, src, dst string, edit func(string) string) {
	t.Helper()
	r, err := zip.OpenReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := zip.NewWriter(f)
	edited := false
	for _, e := range r.File {
		if strings.HasSuffix(e.Name, "/code/__torch__.py.debug_pkl") {
			continue
		}
		b, err := readZipEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(e.Name, "/code/__torch__.py") {
			s := edit(string(b))
			edited = s != string(b)
			b = []byte(s)
		}
		ew, err := w.CreateHeader(&zip.FileHeader{Name: e.Name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ew.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !edited {
		t.Fatalf("%s: the edit changed nothing", src)
	}
}

func readZipEntry(e *zip.File) ([]byte, error) {
	rc, err := e.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// An error while checking whether a base's features may be cached (here
// its features method gives [batch, C, 1, 1], not [batch, C] rows; its head
// flattens them, so forward works) is no reason to stop: the fold trains
// through the whole model, and the log (a warning), the result (for the run
// metadata) and the model's notes say the check failed and why. Before,
// the training stopped with that error.
func TestFeatureCacheCheckErrorTrainsTheWholeModel(t *testing.T) {
	out := t.TempDir()
	base := modelDir(t, filepath.Join(out, "base"), "tiny_frozen.pt", 32)
	weights := filepath.Join(base, modelmeta.WeightsFile)
	editCode(t, filepath.Join(fixtures(t), "tiny_frozen.pt"), weights, func(code string) string {
		code = strings.Replace(code, "_0 = torch.flatten((backbone).forward(x, ), 1)", "_0 = (backbone).forward(x, )", 1)
		return strings.Replace(code, "(drop).forward(f, )", "(drop).forward(torch.flatten(f, 1), )", 1)
	})
	var log bytes.Buffer
	o := Options{Base: base, Pages: pages(t), Epochs: 1, Batch: 8, LR: 1e-2, Revision: "vF.1",
		Checkpoints: filepath.Join(out, "ckpt"), Models: filepath.Join(out, "model"), Results: filepath.Join(out, "result"), Stamp: "test",
		Log: slog.New(slog.NewJSONHandler(&log, nil))}
	res, err := Train(context.Background(), o)
	if err != nil {
		t.Fatalf("training stopped: %v", err)
	}
	const want = "features not cached, every step runs the whole model: the check of the base failed: "
	r := res[0]
	if r.FeaturesCached || !strings.HasPrefix(r.FeatureCache, want) || !strings.Contains(r.FeatureCache, "features output has shape") {
		t.Errorf("FeaturesCached %v, %q; want false, %q and the features' shape", r.FeaturesCached, r.FeatureCache, want)
	}
	meta, err := modelmeta.Load(r.ModelDir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(meta.Provenance.Notes, r.FeatureCache) {
		t.Errorf("model notes %q do not say why the features were not cached", meta.Provenance.Notes)
	}
	var warned bool
	for _, line := range strings.Split(log.String(), "\n") {
		var rec struct{ Level, Msg, Why string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "feature cache" {
			warned = rec.Level == "WARN" && rec.Why == r.FeatureCache
		}
	}
	if !warned {
		t.Errorf("no warning \"feature cache\" with why %q in the log:\n%s", r.FeatureCache, log.String())
	}
}
