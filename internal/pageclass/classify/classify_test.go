package classify_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/pipeline"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/review"
)

func loadFive(t *testing.T, root string) []*classify.Model {
	t.Helper()
	loc := &classify.Locator{Models: root}
	folders, err := loc.Ensemble(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := classify.LoadAll(folders, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { classify.CloseAll(ms) })
	return ms
}

func predict(t *testing.T, e *classify.Ensemble, files []string, o classify.Options) []classify.Page {
	t.Helper()
	var out []classify.Page
	_, err := e.Predict(context.Background(), pipeline.Files(files), o, func(p classify.Page) error {
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The ensemble mean equals the mean of the five single-model tables, and each
// member's column equals that model run alone.
func TestEnsembleMeanOfSingleModels(t *testing.T) {
	ms := loadFive(t, classifytest.Ensemble(t, t.TempDir()))
	files := classifytest.Pages(t, 2)
	all, _ := classify.NewEnsemble(ms...)
	if got, want := all.Names(), registry.Ensemble; !reflect.DeepEqual(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	joint := predict(t, all, files, classify.Options{Batch: 5, Workers: 2})
	if len(joint) != len(files) {
		t.Fatalf("%d rows for %d files", len(joint), len(files))
	}
	single := make([][]classify.Page, len(ms))
	for i, m := range ms {
		e, _ := classify.NewEnsemble(m)
		single[i] = predict(t, e, files, classify.Options{Batch: 3, Workers: 2})
	}
	for r, p := range joint {
		if p.Err != nil {
			t.Fatalf("row %d: %v", r, p.Err)
		}
		for c := range modelmeta.Categories {
			sum := 0.0
			for i := range ms {
				s := single[i][r]
				if math.Abs(s.Mean[c]-p.Probs[i][c]) > 1e-5 {
					t.Fatalf("row %d model %s class %d: alone %v, in ensemble %v", r, ms[i].Name, c, s.Mean[c], p.Probs[i][c])
				}
				sum += s.Mean[c]
			}
			if want := sum / float64(len(ms)); math.Abs(p.Mean[c]-want) > 1e-5 {
				t.Fatalf("row %d class %d: mean %v, want %v", r, c, p.Mean[c], want)
			}
		}
		total := 0.0
		for _, v := range p.Mean {
			total += v
		}
		if math.Abs(total-1) > 1e-4 {
			t.Errorf("row %d: mean probabilities sum to %v", r, total)
		}
	}
	// The members really differ, so the average is not trivially one model.
	if reflect.DeepEqual(joint[0].Probs[0], joint[0].Probs[2]) {
		t.Error("models v1.4 and v3.4 gave identical probabilities")
	}
}

// A corrupt file in the middle of the inputs gets its own error row and every
// other row is what it is without it.
func TestCorruptFileKeepsOtherRows(t *testing.T) {
	ms := loadFive(t, classifytest.Ensemble(t, t.TempDir()))
	e, _ := classify.NewEnsemble(ms...)
	files := classifytest.Pages(t, 1)[:6]
	bad := filepath.Join(t.TempDir(), "broken-1.png")
	if err := os.WriteFile(bad, []byte("\x89PNG\r\n\x1a\nnot really"), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := predict(t, e, files, classify.Options{Batch: 4})
	mixed := append(append(append([]string{}, files[:3]...), bad), files[3:]...)
	got := predict(t, e, mixed, classify.Options{Batch: 4})
	if len(got) != len(mixed) {
		t.Fatalf("%d rows for %d inputs", len(got), len(mixed))
	}
	if got[3].Err == nil || !strings.Contains(got[3].Err.Error(), "broken-1.png") || got[3].Probs != nil {
		t.Fatalf("corrupt row: err %v probs %v", got[3].Err, got[3].Probs)
	}
	for i, p := range append(append([]classify.Page{}, got[:3]...), got[4:]...) {
		want := clean[i]
		if p.Name != want.Name || p.Err != nil {
			t.Fatalf("row %d: %s err %v, want %s", i, p.Name, p.Err, want.Name)
		}
		for c := range p.Mean {
			if math.Abs(p.Mean[c]-want.Mean[c]) > 1e-5 {
				t.Fatalf("row %s class %d: %v, want %v", p.Name, c, p.Mean[c], want.Mean[c])
			}
		}
	}
}

// A model whose labels are in another order reports canonical order.
func TestLabelsMappedToCanonicalOrder(t *testing.T) {
	dir := t.TempDir()
	rev := make([]string, len(modelmeta.Categories))
	for i, c := range modelmeta.Categories {
		rev[len(rev)-1-i] = c
	}
	a, err := classify.Load(classifytest.ModelDir(t, filepath.Join(dir, "a"), classifytest.Spec{Fixture: "tiny_cnn.pt", Size: 32}), "")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := classify.Load(classifytest.ModelDir(t, filepath.Join(dir, "b"), classifytest.Spec{Fixture: "tiny_cnn.pt", Size: 32, Labels: rev}), "")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	files := classifytest.Pages(t, 1)[:2]
	ea, _ := classify.NewEnsemble(a)
	eb, _ := classify.NewEnsemble(b)
	pa, pb := predict(t, ea, files, classify.Options{}), predict(t, eb, files, classify.Options{})
	for r := range pa {
		for c := range modelmeta.Categories {
			if math.Abs(pa[r].Mean[c]-pb[r].Mean[len(rev)-1-c]) > 1e-6 {
				t.Fatalf("row %d class %d: %v vs reversed %v", r, c, pa[r].Mean[c], pb[r].Mean[len(rev)-1-c])
			}
		}
	}
}

// Preprocessing comes from model.json: the same weights with another size
// give other probabilities, and the input tensor has the metadata's size.
func TestPreprocessFromMetadata(t *testing.T) {
	dir := t.TempDir()
	m, err := classify.Load(classifytest.ModelDir(t, dir, classifytest.Spec{Fixture: "avg_a.pt", Size: 40, Mean: registry.ImageNetMean, Std: registry.ImageNetStd}), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	img := imageio.Image{W: 3, H: 2, Pix: make([]uint8, 18)}
	x, err := m.Preprocess(img)
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != 3*40*40 || m.InputLen() != len(x) {
		t.Fatalf("tensor of %d floats, want %d", len(x), 3*40*40)
	}
	// A black page normalised with ImageNet statistics: (0 - mean) / std.
	if want := float32(-0.485 / 0.229); math.Abs(float64(x[0]-want)) > 1e-4 {
		t.Errorf("first value %v, want %v", x[0], want)
	}
}

func TestLocator(t *testing.T) {
	ctx := context.Background()
	models := t.TempDir()
	classifytest.ModelDir(t, filepath.Join(models, "model_v44"), classifytest.Spec{Fixture: "tiny_cnn.pt", Size: 32, Revision: "v4.4"})
	demo := classifytest.Ensemble(t, t.TempDir())
	empty := t.TempDir()

	t.Run("single revision", func(t *testing.T) {
		f, err := (&classify.Locator{Models: models}).Folder(ctx, "v4.4", false)
		if err != nil || f.Dir != filepath.Join(models, "model_v44") || f.Demo {
			t.Fatalf("got %+v, %v", f, err)
		}
	})
	t.Run("models flag names a file", func(t *testing.T) {
		file := filepath.Join(empty, "page.png")
		if err := os.WriteFile(file, []byte("\x89PNG"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := (&classify.Locator{Models: file, Given: true}).Folder(ctx, "v4.4", false)
		if err == nil || !strings.Contains(err.Error(), "page.png is a file, not a folder") {
			t.Fatalf("err %v, want one saying the file is not a folder", err)
		}
	})
	t.Run("models flag names the model folder itself", func(t *testing.T) {
		f, err := (&classify.Locator{Models: filepath.Join(models, "model_v44")}).Folder(ctx, "v2.4", false)
		if err != nil || f.Dir != filepath.Join(models, "model_v44") {
			t.Fatalf("got %+v, %v", f, err)
		}
		// Not asked for a revision: the model is named after its own.
		m, err := classify.LoadFolder(f, "cpu")
		if err != nil || m.Name != "v4.4" {
			t.Fatalf("name %v, %v", m, err)
		}
		m.Close()
		// Asked for v2.4 explicitly: the v4.4 model is refused.
		f, _ = (&classify.Locator{Models: filepath.Join(models, "model_v44")}).Folder(ctx, "v2.4", true)
		if _, err := classify.LoadFolder(f, "cpu"); err == nil || !strings.Contains(err.Error(), "says revision v4.4, not the v2.4") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("missing revision names the folder", func(t *testing.T) {
		_, err := (&classify.Locator{Models: models}).Folder(ctx, "v1.4", false)
		if err == nil || !strings.Contains(err.Error(), "model_v14") || !strings.Contains(err.Error(), "export_models.py") || !strings.Contains(err.Error(), "give -m DIR") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("bad revision", func(t *testing.T) {
		if _, err := (&classify.Locator{Models: models}).Folder(ctx, "4.4", false); err == nil {
			t.Fatal("accepted revision 4.4")
		}
	})
	t.Run("hub without repository", func(t *testing.T) {
		_, err := (&classify.Locator{Models: models, Hub: &hubClient}).Folder(ctx, "v4.4", false)
		if err == nil || !strings.Contains(err.Error(), "repo_name") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("published ensemble present", func(t *testing.T) {
		fs, err := (&classify.Locator{Models: demo, Demo: models}).Ensemble(ctx)
		if err != nil || len(fs) != 5 || fs[0].Demo || fs[4].Revision != "v5.4" {
			t.Fatalf("got %+v, %v", fs, err)
		}
	})
	t.Run("demo fallback names the original tool's checkpoints", func(t *testing.T) {
		old := t.TempDir()
		for _, d := range []string{"model_v13", "model_v23"} {
			if err := os.MkdirAll(filepath.Join(old, d), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(old, d, "config.json"), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var log bytes.Buffer
		fs, err := (&classify.Locator{Models: old, Demo: demo, Log: slog.New(slog.NewTextHandler(&log, nil))}).Ensemble(ctx)
		if err != nil || len(fs) != 5 || !fs[0].Demo {
			t.Fatalf("got %+v, %v", fs, err)
		}
		if !strings.Contains(log.String(), "its folders model_v13, model_v23 hold no model.json") || !strings.Contains(log.String(), "export_models.py") {
			t.Errorf("warning does not name the folders it passed over:\n%s", log.String())
		}
		// A single model's demo warning names them too.
		log.Reset()
		if _, err := (&classify.Locator{Models: old, Demo: demo, Log: slog.New(slog.NewTextHandler(&log, nil))}).Folder(ctx, "v4.4", false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "DEMO MODEL:") || !strings.Contains(log.String(), "its folders model_v13, model_v23 hold no model.json") {
			t.Errorf("single-model warning does not name the folders it passed over:\n%s", log.String())
		}
	})
	t.Run("demo fallback when no location was given", func(t *testing.T) {
		fs, err := (&classify.Locator{Models: empty, Demo: demo}).Ensemble(ctx)
		if err != nil || len(fs) != 5 {
			t.Fatalf("got %+v, %v", fs, err)
		}
		for i, f := range fs {
			if !f.Demo || f.Revision != registry.Ensemble[i] || filepath.Dir(f.Dir) != demo {
				t.Errorf("folder %d: %+v", i, f)
			}
		}
		ms, err := classify.LoadAll(fs, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		e, _ := classify.NewEnsemble(ms...)
		defer e.Close()
		if !e.Demo() {
			t.Error("demo ensemble not marked")
		}
		f, err := (&classify.Locator{Models: empty, Demo: demo}).Folder(ctx, "v2.4", false)
		if err != nil || !f.Demo || f.Dir != filepath.Join(demo, "model_v24") {
			t.Fatalf("single demo: %+v, %v", f, err)
		}
		if _, err := (&classify.Locator{Models: empty, Demo: demo}).Folder(ctx, "v1.3", false); err == nil ||
			!strings.Contains(err.Error(), "demo models") || !strings.Contains(err.Error(), "export_models.py") ||
			!strings.Contains(err.Error(), "it holds v1.4, v2.4, v3.4, v4.4, v5.4") {
			t.Fatalf("no demo v1.3: %v", err)
		}
		// A demo folder that holds no model is said to hold none, not
		// listed as if it held the ensemble.
		if _, err := (&classify.Locator{Models: empty, Demo: empty}).Folder(ctx, "v4.4", false); err == nil ||
			!strings.Contains(err.Error(), "it holds none of v1.4") || strings.Contains(err.Error(), "it holds v") {
			t.Fatalf("empty demo folder: %v", err)
		}
	})
	t.Run("a given location never falls back", func(t *testing.T) {
		_, err := (&classify.Locator{Models: empty, Given: true, Demo: demo}).Ensemble(ctx)
		if err == nil || !strings.Contains(err.Error(), "0 of 5") || !strings.Contains(err.Error(), "v3.4") {
			t.Fatalf("err %v", err)
		}
		if _, err := (&classify.Locator{Models: empty, Given: true, Demo: demo}).Folder(ctx, "v4.4", false); err == nil {
			t.Fatal("single model fell back to the demo")
		}
	})
	t.Run("incomplete set is an error naming what is missing", func(t *testing.T) {
		_, err := (&classify.Locator{Models: models, Demo: demo}).Ensemble(ctx)
		if err == nil || !strings.Contains(err.Error(), "1 of 5") {
			t.Fatalf("err %v", err)
		}
		for _, rev := range []string{"v1.4", "v2.4", "v3.4", "v5.4"} {
			if !strings.Contains(err.Error(), rev+" (") {
				t.Errorf("error does not name %s: %v", rev, err)
			}
		}
		if strings.Contains(err.Error(), "v4.4 (") {
			t.Errorf("error names the present v4.4: %v", err)
		}
	})
	t.Run("export layout v1.4 is accepted", func(t *testing.T) {
		root := t.TempDir()
		for _, s := range classifytest.Five() {
			classifytest.ModelDir(t, filepath.Join(root, s.Revision), s)
		}
		fs, err := (&classify.Locator{Models: root, Given: true}).Ensemble(ctx)
		if err != nil || len(fs) != 5 || fs[2].Dir != filepath.Join(root, "v3.4") {
			t.Fatalf("got %+v, %v", fs, err)
		}
		classifytest.ModelDir(t, filepath.Join(root, "model_v34"), classifytest.Five()[2])
		if _, err := (&classify.Locator{Models: root, Given: true}).Ensemble(ctx); err == nil || !strings.Contains(err.Error(), "two folders") {
			t.Fatalf("both spellings: %v", err)
		}
	})
}

func TestLoadErrorsNameTheFolder(t *testing.T) {
	dir := t.TempDir()
	classifytest.ModelDir(t, dir, classifytest.Spec{Fixture: "tiny_cnn.pt", Size: 32})
	if err := os.WriteFile(filepath.Join(dir, modelmeta.WeightsFile), []byte("not torchscript"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := classify.Load(dir, "cpu")
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err %v", err)
	}
	_, err = classify.Load(filepath.Join(dir, "absent"), "cpu")
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err %v", err)
	}
}

// Step is the step Predict runs, and the one the HTTP service runs with its
// own forward passes: over the same pages it gives the same members'
// probabilities, mean and condition (rotation included), through
// Model.Probabilities or through a caller's Forward, and the ink is the one
// review.MeasureInk measures on the decoded page, to the bit (it travels as
// counts, not as a rounded coverage).
func TestStepIsPredictsStep(t *testing.T) {
	ms := loadFive(t, classifytest.Ensemble(t, t.TempDir()))
	orient, err := classify.LoadOrientation(filepath.Join("..", "..", "..", "weights", "rotation"), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer orient.Close()
	e, _ := classify.NewEnsemble(ms...)
	e.Orientation = orient
	files := classifytest.Pages(t, 1)[:4]
	want := predict(t, e, files, classify.Options{Batch: 3, Workers: 2})
	var inks []review.Ink
	for _, f := range files {
		doc, err := imageio.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := doc.Use(context.Background(), 0, func(img imageio.Image) error {
			inks = append(inks, review.MeasureInk(img.Pix, img.W, img.H))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	var calls atomic.Int32
	forward := func(ctx context.Context, i int, pages [][]float32) ([][]float32, error) {
		calls.Add(1)
		var data []float32
		for _, p := range pages {
			data = append(data, p...)
		}
		s := ms[i].Size()
		return ms[i].Probabilities(data, len(pages), 3, s, s)
	}
	const tol = 1e-6 // other batch sizes: float rounding of the forward passes
	near := func(a, b []float64) bool {
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if math.Abs(a[i]-b[i]) > tol {
				return false
			}
		}
		return true
	}
	for _, fw := range []classify.Forward{nil, forward} {
		step := classify.NewStep(ms, orient, fw)
		var data []float32
		for _, f := range files {
			doc, err := imageio.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := doc.Use(context.Background(), 0, func(img imageio.Image) error {
				row, err := step.Prepare(img)
				data = append(data, row...)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := step.Run(context.Background(), data, len(files))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(files) {
			t.Fatalf("%d pages for %d", len(got), len(files))
		}
		for p, g := range got {
			w := want[p]
			if w.Err != nil {
				t.Fatal(w.Err)
			}
			for i := range ms {
				if !near(g.Probs[i], w.Probs[i]) {
					t.Errorf("page %d model %s: step %v, Predict %v", p, ms[i].Name, g.Probs[i], w.Probs[i])
				}
			}
			if !near(g.Mean, w.Mean) {
				t.Errorf("page %d mean: step %v, Predict %v", p, g.Mean, w.Mean)
			}
			if *g.Condition.Ink != inks[p] || *w.Condition.Ink != inks[p] {
				t.Errorf("page %d ink: step %+v, Predict %+v, measured %+v", p, *g.Condition.Ink, *w.Condition.Ink, inks[p])
			}
			gr, wr := g.Condition.Rotation, w.Condition.Rotation
			if gr == nil || wr == nil || gr.Angle != wr.Angle || !near(gr.Confidence[:], wr.Confidence[:]) {
				t.Errorf("page %d rotation: step %+v, Predict %+v", p, gr, wr)
			}
		}
	}
	if n := calls.Load(); n != int32(len(ms)) {
		t.Errorf("the Forward was called %d times, want once per member (%d)", n, len(ms))
	}
}

// A model's Digest is modelmeta.Digest of the bytes it was loaded from:
// with model.pt replaced by other weights after loading, the model still
// computes what the digest names (the other weights give other
// probabilities), and the folder's digest is now another.
func TestDigestIsOfTheWeightsLoaded(t *testing.T) {
	dir := classifytest.ModelDir(t, t.TempDir(), classifytest.Spec{Fixture: "avg_a.pt", Size: 40})
	want, err := modelmeta.Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := classify.Load(dir, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Digest != want {
		t.Fatalf("digest %s, folder's %s", m.Digest, want)
	}
	other := classifytest.ModelDir(t, t.TempDir(), classifytest.Spec{Fixture: "avg_b.pt", Size: 40})
	b, err := os.ReadFile(filepath.Join(other, modelmeta.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, modelmeta.WeightsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if now, _ := modelmeta.Digest(dir); now == m.Digest {
		t.Fatal("the replaced folder has the same digest")
	}
	// One grey page through the loaded model, a fresh load of the original
	// weights and the replacing ones: equal to the first (tolerance 1e-6),
	// not to the second.
	img := imageio.Image{W: 40, H: 40, Pix: make([]uint8, 40*40*3)}
	for i := range img.Pix {
		img.Pix[i] = uint8(i % 251)
	}
	probs := func(mm *classify.Model) []float32 {
		x, err := mm.Preprocess(img)
		if err != nil {
			t.Fatal(err)
		}
		p, err := mm.Probabilities(x, 1, 3, 40, 40)
		if err != nil {
			t.Fatal(err)
		}
		return p[0]
	}
	orig := classifytest.ModelDir(t, t.TempDir(), classifytest.Spec{Fixture: "avg_a.pt", Size: 40})
	load := func(d string) *classify.Model {
		mm, err := classify.Load(d, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mm.Close() })
		return mm
	}
	diff := func(a, b []float32) float64 {
		d := 0.0
		for i := range a {
			d = math.Max(d, math.Abs(float64(a[i]-b[i])))
		}
		return d
	}
	got := probs(m)
	if d := diff(got, probs(load(orig))); d > 1e-6 {
		t.Errorf("the loaded model differs from the weights of its digest by %g", d)
	}
	if d := diff(got, probs(load(dir))); d < 1e-6 {
		t.Errorf("the replacing weights give the same probabilities (within %g): the test shows nothing", d)
	}
}
