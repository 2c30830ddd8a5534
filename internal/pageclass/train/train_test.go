package train

import (
	"archivekit/internal/testenv"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/results"
)

func fixtures(t testing.TB) string {
	d := testenv.Fixtures(t)
	return d
}

// pages is the shared sample set, read in place (testenv.Data).
func pages(t testing.TB) string { return testenv.Data(t, "pages") }

// modelDir makes a model folder from a fixture TorchScript file.
func modelDir(t testing.TB, dir, fixture string, size int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures(t), fixture))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, modelmeta.WeightsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	m := &modelmeta.Meta{Labels: modelmeta.Categories, Base: "tiny_cnn", License: "MIT", Trainable: true,
		Preprocess: registry.Preprocess{Size: size, Resize: registry.ResizeBilinear, Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.5, 0.5, 0.5}},
		Provenance: modelmeta.Provenance{Method: "random-init"}}
	if err := modelmeta.Save(dir, m); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLRSchedule(t *testing.T) {
	cases := []struct {
		s, total int
		want     float64
	}{
		{0, 100, 0.1}, {9, 100, 1}, {10, 100, 1}, {55, 100, 0.5}, {99, 100, 1.0 / 90}, {0, 3, 1}, {2, 3, 0.5},
	}
	for _, c := range cases {
		if got := LR(1, c.s, c.total); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("LR(1, %d, %d) = %g, want %g", c.s, c.total, got, c.want)
		}
	}
}

func TestMatches(t *testing.T) {
	cases := []struct {
		name, pattern string
		want          bool
	}{
		{"v4.4_FOLD_1", "v4", true},
		{"v4_FOLD_2", "v4", true},
		{"v4", "v4", true},
		{"v40_FOLD_1", "v4", false},
		{"xv4.4_FOLD_1", "v4", false},
		{"v4.4_FOLD_1", "v4.4_FOLD", true},
		{"v4.4_AVG_5", "v4", false},
		{"v4.4_FOLD_1", "", false},
	}
	for _, c := range cases {
		if got := Matches(c.name, c.pattern); got != c.want {
			t.Errorf("Matches(%q, %q) = %v", c.name, c.pattern, got)
		}
	}
}

func TestTrainFoldsWritesModelsAndDatasets(t *testing.T) {
	out := t.TempDir()
	base := modelDir(t, filepath.Join(out, "base"), "tiny_cnn.pt", 48)
	o := Options{Base: base, Pages: pages(t), Epochs: 2, Batch: 16, LR: 3e-3, Folds: 2, Revision: "vT.1",
		Checkpoints: filepath.Join(out, "ckpt"), Models: filepath.Join(out, "model"), Results: filepath.Join(out, "result"),
		Stamp: "test", Augment: true, LogStep: 5}
	res, err := Train(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d fold results, want 2", len(res))
	}
	for i, r := range res {
		if r.Fold != i+1 {
			t.Errorf("fold %d numbered %d", i+1, r.Fold)
		}
		meta, err := modelmeta.Load(r.ModelDir)
		if err != nil {
			t.Fatal(err)
		}
		if meta.Provenance.Method != "train" || meta.Provenance.Fold != i+1 || meta.License != "CC BY-NC 4.0" {
			t.Errorf("fold %d metadata: %+v", i+1, meta.Provenance)
		}
		if filepath.Base(r.DatasetFile) != "test_vT.1_FOLD_"+string(rune('1'+i))+"_DATASETS.txt" {
			t.Errorf("datasets file %s", r.DatasetFile)
		}
		if _, err := os.Stat(filepath.Join(r.Checkpoint, modelmeta.WeightsFile)); err != nil {
			t.Errorf("no checkpoint: %v", err)
		}
		if r.DevAccuracy < 0 || r.DevAccuracy > 1 || r.TestTop1 > r.TestTop3 {
			t.Errorf("fold %d accuracies: %+v", i+1, r)
		}
	}
	a, _ := os.ReadFile(res[0].DatasetFile)
	b, _ := os.ReadFile(res[1].DatasetFile)
	if bytes.Equal(a, b) {
		t.Error("folds 1 and 2 used the same split")
	}
	// the same run again writes identical DATASETS files
	o2 := o
	o2.Results = filepath.Join(out, "result2")
	o2.Folds = 1
	o2.Epochs = 1
	var logged bytes.Buffer
	o2.Log = slog.New(slog.NewTextHandler(&logged, nil))
	res2, err := Train(context.Background(), o2)
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := os.ReadFile(res2[0].DatasetFile)
	if !bytes.Equal(a, a2) {
		t.Error("split 1 differs between two runs")
	}
	// ... and says it replaces the first run's model of fold 1 (it did
	// so without a word).
	if !strings.Contains(logged.String(), "replacing an earlier model") || !strings.Contains(logged.String(), res[0].ModelDir) {
		t.Errorf("no warning that fold 1's model is replaced:\n%s", logged.String())
	}
}

func TestFoldsCSVTakesPrecedenceAndExcludes(t *testing.T) {
	out := t.TempDir()
	base := modelDir(t, filepath.Join(out, "base"), "tiny_cnn.pt", 32)
	p := pages(t)
	// list two pages per category; everything else must be excluded
	var rows [][]string
	rows = append(rows, []string{"PNG", "fold 1", "fold 2"})
	listed := 0
	for _, cat := range modelmeta.Categories {
		ents, _ := os.ReadDir(filepath.Join(p, cat))
		for i, e := range ents {
			if i >= 3 {
				break
			}
			role := []string{"train", "dev", "test"}[i]
			rows = append(rows, []string{e.Name(), role, "train"})
			listed++
		}
	}
	var buf bytes.Buffer
	csv.NewWriter(&buf).WriteAll(rows)
	csvPath := filepath.Join(out, "folds.csv")
	os.WriteFile(csvPath, buf.Bytes(), 0o644)
	res, err := Train(context.Background(), Options{Base: base, Pages: p, Epochs: 1, Folds: 5, FoldsCSV: csvPath, FoldColumn: "fold 1",
		Revision: "vT.2", Checkpoints: filepath.Join(out, "c"), Models: filepath.Join(out, "m"), Results: filepath.Join(out, "r"), Stamp: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("--folds_csv with one column must train 1 fold, got %d (it must take precedence over --folds 5)", len(res))
	}
	ds, _ := os.ReadFile(res[0].DatasetFile)
	text := string(ds)
	if !strings.Contains(text, "[excluded]") {
		t.Fatalf("datasets file lacks the excluded section:\n%s", text)
	}
	excluded := strings.Count(text[strings.Index(text, "[excluded]"):], ".png")
	if excluded != 184-listed {
		t.Errorf("%d pages excluded, want %d (all unlisted pages)", excluded, 184-listed)
	}
	if res[0].DevPages != len(modelmeta.Categories) {
		t.Errorf("fold 1 chose its checkpoint on %d dev pages, want %d", res[0].DevPages, len(modelmeta.Categories))
	}

	// A column without dev pages keeps the last epoch and says so: the
	// model must not claim a "best dev checkpoint" at dev accuracy 0.
	res, err = Train(context.Background(), Options{Base: base, Pages: p, Epochs: 2, FoldsCSV: csvPath, FoldColumn: "fold 2",
		Revision: "vT.3", Checkpoints: filepath.Join(out, "c"), Models: filepath.Join(out, "m"), Results: filepath.Join(out, "r"), Stamp: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].DevPages != 0 {
		t.Errorf("fold 2 has no dev pages, DevPages = %d", res[0].DevPages)
	}
	meta, err := modelmeta.Load(res[0].ModelDir)
	if err != nil {
		t.Fatal(err)
	}
	if notes := meta.Provenance.Notes; !strings.Contains(notes, fmt.Sprintf("all %d parameters trained", res[0].TotalParams)) || res[0].TotalParams == 0 {
		t.Errorf("model notes %q do not say all %d parameters of the tiny base were trained", notes, res[0].TotalParams)
	}
	if notes := meta.Provenance.Notes; strings.Contains(notes, "best dev") || !strings.Contains(notes, "last epoch, 2") {
		t.Errorf("model trained without dev pages is labelled %q, want the last epoch (2) kept and no best dev checkpoint", notes)
	}
}

func readF32(t testing.TB, path string) []float32 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func TestAverageEqualsPythonAndRefusesMismatch(t *testing.T) {
	dir := t.TempDir()
	modelDir(t, filepath.Join(dir, "v9.1_FOLD_1"), "avg_a.pt", 32)
	modelDir(t, filepath.Join(dir, "v9.1_FOLD_2"), "avg_b.pt", 32)
	modelDir(t, filepath.Join(dir, "v90_FOLD_1"), "avg_c.pt", 32) // not selected by "v9"
	out, n, err := Average(dir, "v9")
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || filepath.Base(out) != "v9_AVG_2" {
		t.Fatalf("averaged %d into %s, want 2 into v9_AVG_2", n, out)
	}
	m, err := torch.Load(filepath.Join(out, modelmeta.WeightsFile), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in := torch.Tensor{Data: readF32(t, filepath.Join(fixtures(t), "forward_input.bin")), Shape: []int64{4, 3, 32, 32}}
	got, err := m.Forward(in)
	if err != nil {
		t.Fatal(err)
	}
	want := readF32(t, filepath.Join(fixtures(t), "avg2.logits.bin"))
	var d float64
	for i, row := range got {
		for j, v := range row {
			d = math.Max(d, math.Abs(float64(v-want[i*len(row)+j])))
		}
	}
	if d > 1e-5 {
		t.Errorf("average differs from Python's by %g", d)
	}
	meta, _ := modelmeta.Load(out)
	if len(meta.Provenance.AveragedFrom) != 2 {
		t.Errorf("provenance: %+v", meta.Provenance)
	}
	// another architecture under the same pattern is a clear error
	modelDir(t, filepath.Join(dir, "v8.1_FOLD_1"), "avg_a.pt", 32)
	modelDir(t, filepath.Join(dir, "v8.1_FOLD_2"), "mismatch.pt", 32)
	if _, _, err := Average(dir, "v8"); err == nil || !strings.Contains(err.Error(), "architectures differ") {
		t.Errorf("mismatched average: %v", err)
	}
	if _, _, err := Average(dir, "v7"); err == nil || !strings.Contains(err.Error(), "selects 0") {
		t.Errorf("empty pattern match: %v", err)
	}
}

func TestEvaluateWritesTablesAndConfusionMatrix(t *testing.T) {
	out := t.TempDir()
	model := modelDir(t, filepath.Join(out, "m"), "tiny_cnn.pt", 32)
	p := pages(t)
	var only []string
	for _, cat := range []string{"TEXT", "PHOTO", "DRAW"} {
		ents, _ := os.ReadDir(filepath.Join(p, cat))
		for _, e := range ents[:2] {
			only = append(only, cat+"/"+e.Name())
		}
	}
	res, err := Evaluate(context.Background(), EvalOptions{Model: model, Pages: p, Only: only, TopN: 3, Count: 1, Revision: "vT.3",
		Results: filepath.Join(out, "r"), Stamp: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 6 || len(res.Files) != 3 {
		t.Fatalf("%d pages, files %v", res.Pages, res.Files)
	}
	total := 0
	for _, row := range res.Confusion {
		for _, c := range row {
			total += c
		}
	}
	if total != 6 {
		t.Errorf("confusion matrix counts %d pages", total)
	}
	f, _ := os.Open(res.Files[0])
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(recs[0], ","); !strings.HasSuffix(h, ",TRUE") || !strings.HasPrefix(h, "FILE,PAGE,CLASS-1") {
		t.Errorf("eval header %s", h)
	}
	if filepath.Base(res.Files[2]) != "s_1_vT.3_conf_mat_TOP-3.png" {
		t.Errorf("confusion matrix file %s", res.Files[2])
	}
	png, _ := os.ReadFile(res.Files[2])
	i := bytes.Index(png, []byte("pHYs"))
	if i < 0 || binary.BigEndian.Uint32(png[i+4:]) != 11811 {
		t.Error("confusion matrix PNG does not declare 300 dpi")
	}
	if !strings.Contains(res.Report(), "precision") {
		t.Error("report lacks the per-class table")
	}
}

// The fast classifier's training keys: Size trains (and records) another
// input size, NoCache reads pages from disk per batch, and Patience stops a
// fold whose dev accuracy stops improving (here the rate is ~0: only the
// batch-norm statistics move, so the accuracy settles within a few epochs).
func TestPatienceSizeAndNoCache(t *testing.T) {
	base, err := filepath.Abs("../../../weights/demo/fastcls_small")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := modelmeta.Load(base); err != nil {
		t.Skipf("shipped fast classifier: %v", err)
	}
	out := t.TempDir()
	o := Options{Base: base, Pages: pages(t), Epochs: 8, Batch: 16, LR: 1e-12, Patience: 1, Size: 48, NoCache: true,
		Revision: "fastcls_small", Checkpoints: filepath.Join(out, "ckpt"), Models: filepath.Join(out, "model"),
		Results: filepath.Join(out, "result"), Stamp: "test"}
	res, err := Train(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].StoppedEarly < 2 || res[0].StoppedEarly >= 8 {
		t.Fatalf("results %+v: want one fold stopped early, before epoch 8", res)
	}
	meta, err := modelmeta.Load(res[0].ModelDir)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Preprocess.Size != 48 || !meta.IsFastCls() || meta.Dropout == nil || *meta.Dropout != 0.1 {
		t.Errorf("trained model: size %d, base %s, dropout %v", meta.Preprocess.Size, meta.Base, meta.Dropout)
	}
}

// TestShippedModelsTrainOnlyTheirHead: the shipped demo models were trained
// as linear heads on frozen ImageNet backbones, and a base made from them
// says so: ParamCounts gives the head alone (11 categories x 1280 features
// + 11 biases for EfficientNet-Lite0) as trainable, which pageclass --train
// logs and records.
func TestShippedModelsTrainOnlyTheirHead(t *testing.T) {
	m, err := torch.Load("../../../weights/demo/model_v14/model.pt", "cpu")
	if err != nil {
		t.Skipf("no shipped model: %v", err)
	}
	defer m.Close()
	trainable, total, err := m.ParamCounts()
	if err != nil {
		t.Fatal(err)
	}
	if trainable != 11*1280+11 || total <= trainable {
		t.Errorf("model_v14: %d of %d parameters trainable, want the head alone (%d)", trainable, total, 11*1280+11)
	}
	if got := trained(FoldResult{TrainableParams: trainable, TotalParams: total}); !strings.Contains(got, "frozen") {
		t.Errorf("trained() = %q, want it to say the rest is frozen", got)
	}
}

// An ensemble evaluation scores each page with the classifier's ensemble
// average (results.Average of the members' probabilities, what
// classify.Page.Mean holds), to the bit, and its tables write those scores.
func TestEvaluateEnsembleAveragesAsTheClassifier(t *testing.T) {
	out := t.TempDir()
	a := modelDir(t, filepath.Join(out, "a"), "tiny_cnn.pt", 32)
	b := modelDir(t, filepath.Join(out, "b"), "tiny_cnn.pt", 48)
	p := pages(t)
	only := firstPages(t, p, "TEXT", "PHOTO", "DRAW", "LINE_HW")
	res, err := Evaluate(context.Background(), EvalOptions{Ensemble: []string{a, b}, Pages: p, Only: only, TopN: 3, Count: 1,
		Results: filepath.Join(out, "r"), Stamp: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.rows) != len(only) {
		t.Fatalf("%d rows for %d pages", len(res.rows), len(only))
	}
	differ := 0
	for _, row := range res.rows {
		if len(row.PerModel) != 2 {
			t.Fatalf("%s: %d members", row.Key, len(row.PerModel))
		}
		if want := results.Average(row.PerModel); !slices.Equal(row.Scores, want) {
			t.Errorf("%s: scores %v, the classifier's mean %v", row.Key, row.Scores, want)
		}
		if !slices.Equal(row.PerModel[0], row.PerModel[1]) {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("the two members gave the same probabilities on every page: the test cannot tell an average")
	}
	// The raw table holds the same numbers (to its 4 decimals).
	f, err := os.Open(res.Files[1])
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(res.rows)+1 {
		t.Fatalf("raw table: %d lines for %d rows", len(recs), len(res.rows))
	}
	for i, row := range res.rows {
		for c, v := range results.Average(row.PerModel) {
			if got, want := recs[i+1][2+c], results.FormatScore(v); got != want {
				t.Errorf("raw table %s %s: %s, want %s", row.Key, recs[0][2+c], got, want)
			}
		}
	}
}

// Evaluate reads each model.pt once, into memory (1 open each; 2 when
// libtorch loaded it from its path), and reports the digest of the bytes
// it evaluated. Models a caller read before (EvalOptions.Read, their
// digests recorded) are evaluated from those bytes even when the folder's
// model.pt has been replaced since: the same scores, the same digests.
func TestEvaluateReadsEachModelOnce(t *testing.T) {
	out := t.TempDir()
	a := modelDir(t, filepath.Join(out, "a"), "tiny_cnn.pt", 32)
	b := modelDir(t, filepath.Join(out, "b"), "tiny_headed.pt", 32)
	p := pages(t)
	only := firstPages(t, p, "TEXT", "PHOTO")
	o := EvalOptions{Ensemble: []string{a, b}, Pages: p, Only: only, TopN: 3, Count: 1, Results: filepath.Join(out, "r"), Stamp: "s"}
	weights := []string{filepath.Join(a, modelmeta.WeightsFile), filepath.Join(b, modelmeta.WeightsFile)}
	var res *EvalResult
	var err error
	opened := testenv.Opens(t, weights, func() { res, err = Evaluate(context.Background(), o) })
	if err != nil {
		t.Fatal(err)
	}
	want := make([]string, 2)
	o.Read = map[string]*modelmeta.Contents{}
	for i, dir := range []string{a, b} {
		if opened[weights[i]] != 1 {
			t.Errorf("%s opened %d times, want 1", weights[i], opened[weights[i]])
		}
		c, err := modelmeta.ReadFolder(dir)
		if err != nil {
			t.Fatal(err)
		}
		o.Read[dir], want[i] = c, c.Digest
	}
	if !slices.Equal(res.Digests, want) {
		t.Errorf("digests %v, want the folders' %v", res.Digests, want)
	}
	modelDir(t, a, "tiny_frozen.pt", 32) // replaced after it was read
	o.Stamp = "replaced"
	again, err := Evaluate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Digests, want) {
		t.Errorf("digests %v after the file was replaced, want those read %v", again.Digests, want)
	}
	for i := range res.rows {
		if !slices.Equal(again.rows[i].Scores, res.rows[i].Scores) {
			t.Fatalf("%s: scores %v, before the file was replaced %v", res.rows[i].Key, again.rows[i].Scores, res.rows[i].Scores)
		}
	}
}

// firstPages are the relative paths of the first two pages of each
// category folder cats under p.
func firstPages(t *testing.T, p string, cats ...string) []string {
	t.Helper()
	var only []string
	for _, cat := range cats {
		ents, err := os.ReadDir(filepath.Join(p, cat))
		if err != nil || len(ents) < 2 {
			t.Fatalf("%s: %d pages, %v", filepath.Join(p, cat), len(ents), err)
		}
		for _, e := range ents[:2] {
			only = append(only, cat+"/"+e.Name())
		}
	}
	return only
}

// TestFoldsMoreThanPages: more folds than labelled pages is refused before
// any training (99 folds of 22 pages trained 99 times on one split).
func TestFoldsMoreThanPages(t *testing.T) {
	out := t.TempDir()
	base := modelDir(t, filepath.Join(out, "base"), "tiny_cnn.pt", 48)
	_, err := Train(context.Background(), Options{Base: base, Pages: pages(t), Epochs: 1, Batch: 16, Folds: 100000, Revision: "vT.1",
		Checkpoints: filepath.Join(out, "ckpt"), Models: filepath.Join(out, "model"), Results: filepath.Join(out, "result"), Stamp: "test"})
	if err == nil || !strings.Contains(err.Error(), "--folds 100000: more folds than the") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "model")); err == nil {
		t.Error("a model folder was written")
	}
}
