package main

import (
	"archivekit/internal/testenv"
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/pipeline"
	"archivekit/internal/paradata"
)

// PDF pages are rows keyed by page number, next to images.
func TestPDFPages(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	pdf, err := filepath.Abs(filepath.Join("..", "..", "internal", "pageclass", "imageio", "testdata", "two.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pdf, filepath.Join(e.in, "TEXT", "report.pdf")); err != nil {
		t.Fatal(err)
	}
	code, log := e.run(t, "--dir", "-ff", "pdf,png")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	var pages []string
	for _, r := range readCSV(t, e.output(t, "_TOP-3.csv")) {
		if r[0] == "TEXT/report" {
			pages = append(pages, r[1])
		}
	}
	if strings.Join(pages, ",") != "1,2" {
		t.Fatalf("PDF rows %v, want pages 1,2", pages)
	}
	// Counted in pages, as the record says (the PDF's two pages each).
	if d := readParadata(t, e); d.Statistics.Unit != "page" || d.Statistics.InputFilesTotal != 13 || d.Statistics.SuccessfullyProcessed != 13 {
		t.Errorf("statistics %+v", d.Statistics)
	}
}

// TestPDFPageFailure: a PDF page that cannot be rendered (here a page
// without height) fails alone, its failure naming its page once ("page 2:
// …: page 2: cannot decode pixels" before), and the other page is
// classified.
func TestPDFPageFailure(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	write(t, filepath.Join(e.in, "doc.pdf"), string(hostile.PDFObjects("<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 0] >>")))
	if code, log := e.run(t, "-d", e.in, "-ff", "pdf"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if rows := readCSV(t, e.output(t, "_TOP-3.csv"))[1:]; len(rows) != 1 || rows[0][1] != "1" {
		t.Errorf("rows %v, want page 1's", rows)
	}
	f := readCSV(t, e.output(t, "_FAILURES.csv"))[1:]
	if len(f) != 1 || f[0][0] != "doc.pdf" || strings.Count(f[0][1], "page 2: ") != 1 || regexp.MustCompile(`page [013-9]`).MatchString(f[0][1]) {
		t.Errorf("failures %v, want doc.pdf's page 2 named once", f)
	}
}

// jointRun is every page of inputs through the ensemble of folders loaded
// at once, 4 pages a batch.
func jointRun(t *testing.T, folders []classify.Folder, inputs []pipeline.Input) []classify.Page {
	t.Helper()
	ms, err := classify.LoadAll(folders, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	ens, _ := classify.NewEnsemble(ms...)
	defer ens.Close()
	var joint []classify.Page
	if _, err := ens.Predict(context.Background(), inputs, classify.Options{Batch: 4}, func(p classify.Page) error {
		joint = append(joint, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return joint
}

// The grouped runner of --parallel (here on the CPU, groups given) gives the
// same per-model probabilities and mean as one joint run.
func TestRunGroupsMatchesJointRun(t *testing.T) {
	root := classifytest.Ensemble(t, t.TempDir())
	folders, err := (&classify.Locator{Models: root}).Ensemble(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	files := classifytest.Pages(t, 1)
	bad := filepath.Join(t.TempDir(), "bad.png")
	write(t, bad, "junk")
	files = append(files[:4], append([]string{bad}, files[4:]...)...)
	inputs := pipeline.Files(files)

	para, err := paradata.Start(t.TempDir(), "260101-120000", timeZero, paradata.Info{})
	if err != nil {
		t.Fatal(err)
	}
	joint := jointRun(t, folders, inputs)
	// each group at the configured batch, and at batches of its own (as
	// sized by the device's free memory on a GPU)
	for _, groupBatch := range [][]int{nil, {3, 5}} {
		r := testClassifier(&runner{cli: &CLI{}, device: "cpu", log: slog.New(slog.NewTextHandler(io.Discard, nil)), para: para})
		r.groupBatch = groupBatch
		var grouped []classify.Page
		err = r.runGroups(context.Background(), folders, nil, [][]int{{0, 3}, {1, 2, 4}}, inputs, classify.Options{Batch: 4},
			func(p classify.Page) error { grouped = append(grouped, p); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(grouped) != len(joint) {
			t.Fatalf("%d rows grouped, %d joint", len(grouped), len(joint))
		}
		for i := range joint {
			g, j := grouped[i], joint[i]
			if (g.Err == nil) != (j.Err == nil) || g.Name != j.Name || g.Page != j.Page {
				t.Fatalf("row %d: grouped %s/%d err %v, joint %s/%d err %v", i, g.Name, g.Page, g.Err, j.Name, j.Page, j.Err)
			}
			for c := range j.Mean {
				if math.Abs(g.Mean[c]-j.Mean[c]) > 1e-6 {
					t.Fatalf("row %d class %d: grouped %v, joint %v", i, c, g.Mean[c], j.Mean[c])
				}
				for m := range j.Probs {
					if math.Abs(g.Probs[m][c]-j.Probs[m][c]) > 1e-6 {
						t.Fatalf("row %d model %d class %d", i, m, c)
					}
				}
			}
		}
		if grouped[4].Err == nil {
			t.Error("the unreadable file has no error in the grouped run")
		}
	}
}

// --hub downloads the revision's files from a hub laid out as
// {endpoint}/{repo}/resolve/{revision}/{file}, with the bearer token, and a
// second run works from the cache with the hub gone.
func TestHubDownload(t *testing.T) {
	src := classifytest.ModelDir(t, filepath.Join(t.TempDir(), "m"), classifytest.Five()[3])
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer sekrit" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, "/org/pages/resolve/v4.4/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, filepath.Join(src, name))
	}))
	t.Setenv("HUB_ENDPOINT", srv.URL)
	t.Setenv("HUB_TOKEN", "sekrit")
	t.Setenv("HUB_HOME", t.TempDir())
	e := newEnv(t, map[string]string{"HUB.repo_name": "org/pages"})
	e.linkPages(t, 1)
	code, log := e.run(t, "--dir", "--hub", "-rev", "v4.4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	first := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
	if hits.Load() < 2 {
		t.Errorf("%d hub requests, want the two files", hits.Load())
	}
	srv.Close()
	os.RemoveAll(e.results)
	if code, log := e.run(t, "--dir", "--hub", "-rev", "v4.4"); code != exitOK {
		t.Fatalf("offline run: exit %d: %s", code, log)
	}
	if got := readCSV(t, e.output(t, "_v4.4_TOP-3.csv")); strings.Join(flat(got), "|") != strings.Join(flat(first), "|") {
		t.Error("offline run differs")
	}
	t.Setenv("HUB_TOKEN", "")
	t.Setenv("HUB_HOME", t.TempDir())
	if code, log := e.run(t, "--dir", "--hub", "-rev", "v4.4"); code != exitFailure {
		t.Errorf("unreachable hub without cache: exit %d: %s", code, log)
	}
}

var timeZero = mustTime("2026-01-01T12:00:00Z")

// An interrupted run (SIGINT cancels the context) exits 130 and leaves run
// metadata with status failed.
func TestInterruptedRun(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	code := run(ctx, []string{"--config", e.cfg, "--dir"}, &out, &out)
	if code != exitInterrupted {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if d := readParadata(t, e); d.Status != paradata.StatusFailed || !strings.Contains(d.Error, "canceled") {
		t.Errorf("status %q error %q", d.Status, d.Error)
	}
}

// --parallel reads each model folder once, before grouping (its digest is
// needed for the ledger and the calibration), and each group loads from
// those bytes: no model.pt is opened again when the groups load, a model.pt
// replaced in between is neither run nor recorded, and the run metadata
// records the digest of the bytes that ran. Before, the folders were
// digested apart and read again at each group's load (2 opens each), and a
// folder replaced in between stopped the run.
func TestParallelReadsEachModelOnce(t *testing.T) {
	root := classifytest.Ensemble(t, t.TempDir())
	folders, err := (&classify.Locator{Models: root}).Ensemble(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	inputs := pipeline.Files(classifytest.Pages(t, 1)[:4])
	weights := make([]string, len(folders))
	want := make([]string, len(folders))
	for i, f := range folders {
		weights[i] = filepath.Join(f.Dir, modelmeta.WeightsFile)
		if want[i], err = modelmeta.Digest(f.Dir); err != nil {
			t.Fatal(err)
		}
	}
	joint := jointRun(t, folders, inputs)

	para, err := paradata.Start(t.TempDir(), "260101-120000", timeZero, paradata.Info{})
	if err != nil {
		t.Fatal(err)
	}
	r := testClassifier(&runner{cli: &CLI{}, device: "cpu", log: slog.New(slog.NewTextHandler(io.Discard, nil)), para: para})
	opened := testenv.Opens(t, weights, func() { err = r.readFolders(folders) })
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range weights {
		if opened[w] != 1 {
			t.Errorf("%s opened %d times to read the folders, want 1", w, opened[w])
		}
	}
	// model 0's file replaced by model 1's before the groups load
	b, err := os.ReadFile(weights[1])
	if err != nil {
		t.Fatal(err)
	}
	write(t, weights[0], string(b))
	var grouped []classify.Page
	opened = testenv.Opens(t, weights, func() {
		err = r.runGroups(context.Background(), folders, nil, [][]int{{0, 3}, {1, 2, 4}}, inputs, classify.Options{Batch: 4},
			func(p classify.Page) error { grouped = append(grouped, p); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range weights {
		if opened[w] != 0 {
			t.Errorf("%s opened %d times by the groups, want 0", w, opened[w])
		}
	}
	if len(grouped) != len(joint) {
		t.Fatalf("%d rows grouped, %d before the file was replaced", len(grouped), len(joint))
	}
	for i := range joint {
		for m := range joint[i].Probs {
			for c := range joint[i].Probs[m] {
				if d := math.Abs(grouped[i].Probs[m][c] - joint[i].Probs[m][c]); d > 1e-6 {
					t.Fatalf("row %d model %d class %d: %g from the replaced file's model", i, m, c, d)
				}
			}
		}
	}
	got := para.Snapshot().Models
	if len(got) != len(folders) {
		t.Fatalf("run metadata models %+v", got)
	}
	for _, m := range got {
		i := slices.IndexFunc(folders, func(f classify.Folder) bool { return f.Dir == m.Path })
		if i < 0 || m.Digest != want[i] {
			t.Errorf("run metadata: %s digest %s, want %s (the bytes that ran)", m.Path, m.Digest, want[i])
		}
	}
}

// --train reads the base's model.pt once: the folds train from those bytes
// and the run metadata records their digest (before: read for the digest,
// then twice a fold by libtorch loading it from its path, 3 opens here).
func TestTrainReadsTheBaseOnce(t *testing.T) {
	e := newEnv(t, map[string]string{"TRAIN.epochs": "1"})
	e.linkPages(t, 3)
	base := classifytest.ModelDir(t, filepath.Join(e.root, "tinybase"), classifytest.Spec{Fixture: "tiny_cnn.pt", Size: 32})
	write(t, e.cfg, strings.ReplaceAll(readFile(t, e.cfg), filepath.Join(e.root, "train"), e.in))
	weights := filepath.Join(base, modelmeta.WeightsFile)
	runReadingOnce(t, e, []string{weights}, "--train", "-b", base)
	want, err := modelmeta.Digest(base)
	if err != nil {
		t.Fatal(err)
	}
	if d := readParadata(t, e); len(d.Models) != 1 || d.Models[0].Path != base || d.Models[0].Digest != want {
		t.Errorf("run metadata models %+v, want the base with digest %s", d.Models, want)
	}
}

// --eval --best reads each model.pt once: each model is evaluated alone
// and in the ensemble from those bytes, and the run metadata records their
// digest (before: read for the digest, then loaded from its path for each
// evaluation, libtorch opening it twice: 5 opens each).
func TestEvalReadsEachModelOnce(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	write(t, e.cfg, strings.ReplaceAll(readFile(t, e.cfg), filepath.Join(e.root, "eval"), e.in))
	classifytest.Ensemble(t, e.models)
	folders, err := (&classify.Locator{Models: e.models}).Ensemble(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	weights := make([]string, len(folders))
	want := map[string]string{}
	for i, f := range folders {
		weights[i] = filepath.Join(f.Dir, modelmeta.WeightsFile)
		if want[f.Dir], err = modelmeta.Digest(f.Dir); err != nil {
			t.Fatal(err)
		}
	}
	runReadingOnce(t, e, weights, "--eval", "--best")
	d := readParadata(t, e)
	if len(d.Models) != len(folders) {
		t.Fatalf("run metadata models %+v", d.Models)
	}
	for _, m := range d.Models {
		if m.Digest != want[m.Path] {
			t.Errorf("run metadata: %s digest %s, want %s", m.Path, m.Digest, want[m.Path])
		}
	}
}

// runReadingOnce runs pageclass with args and fails unless it exits 0
// having opened each of files once.
func runReadingOnce(t *testing.T, e *env, files []string, args ...string) {
	t.Helper()
	var code int
	var log string
	opened := testenv.Opens(t, files, func() { code, log = e.run(t, args...) })
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	for _, f := range files {
		if opened[f] != 1 {
			t.Errorf("%s opened %d times, want 1", f, opened[f])
		}
	}
}
