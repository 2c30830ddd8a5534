package main

import (
	"archivekit/internal/pageclass/modelmeta"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/train"
)

// testModes is a run core with the modes whose option mappings the tests
// check, over the same core.
type testModes struct {
	*runner
	*trainer
	*evaluator
}

// testRunner parses args over a config and returns a run ready for the
// option mappings (no run metadata, CPU).
func testRunner(t *testing.T, cfg map[string]string, args ...string) *testModes {
	t.Helper()
	e := newEnv(t, cfg)
	p, code, done := parseArgs(append([]string{"--config", e.cfg}, args...), io.Discard, io.Discard, plainUsage(io.Discard))
	if done {
		t.Fatalf("exit %d", code)
	}
	r := &runner{cli: p.cli, settings: p.settings, configPath: p.configPath, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		stamp: "260101-120000", device: "cpu", stderr: io.Discard}
	m := &models{runner: r}
	return &testModes{runner: r, trainer: &trainer{m}, evaluator: &evaluator{m}}
}

func TestTrainOptionsMapping(t *testing.T) {
	cfg := map[string]string{"TRAIN.epochs": "7", "TRAIN.lr": "1e-4", "TRAIN.max_categ": "50", "TRAIN.test_size": "0.2",
		"TRAIN.log_step": "9", "SETUP.seed": "7", "SETUP.batch": "8", "TRAIN.FOLDER_PAGES": "/data/train",
		"OUTPUT.FOLDER_CPOINTS": "/ck", "TRAIN.folds_csv": "/f.csv"}
	base := classify.Folder{Revision: "v1.4", Dir: "/models/model_v14"}
	tests := []struct {
		name string
		args []string
		want func(o *train.Options)
		cfg  map[string]string // keys over cfg
	}{
		{"config values and best fold of the base revision", []string{"--train", "-ff", "png,jpg"}, func(o *train.Options) {
			o.Exts = []string{"png", "jpg", "jpeg"}
			o.FoldColumn = "fold 1"
			o.Revision = "v1.4"
		}, nil},
		{"flags win; explicit fold column; -rev names the output", []string{"--train", "--folds", "5", "--folds_csv", "/g.csv", "--fold_column", "fold 3", "-rev", "v9.1"}, func(o *train.Options) {
			o.Folds, o.FoldsCSV, o.FoldColumn, o.Revision = 5, "/g.csv", "fold 3", "v9.1"
		}, nil},
		{"revision without a best fold trains every column", []string{"--train", "-rev", "v6.2"}, func(o *train.Options) {
			o.FoldColumn, o.Revision = "", "v6.2"
		}, nil},
		{"-d is the labelled pages folder", []string{"--train", "-d", "/data/mine"}, func(o *train.Options) {
			o.Pages, o.FoldColumn, o.Revision = "/data/mine", "fold 1", "v1.4"
		}, nil},
		{"[TRAIN] input_size and augment", []string{"--train"}, func(o *train.Options) {
			o.FoldColumn, o.Revision, o.Size, o.Augment = "fold 1", "v1.4", 384, false
		}, map[string]string{"TRAIN.input_size": "384", "TRAIN.augment": "False"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := map[string]string{}
			for _, m := range []map[string]string{cfg, tt.cfg} {
				for k, v := range m {
					c[k] = v
				}
			}
			r := testRunner(t, c, tt.args...)
			got, err := r.trainOptions(base)
			if err != nil {
				t.Fatal(err)
			}
			want := train.Options{Base: base.Dir, Pages: "/data/train", Exts: []string{"png"}, Epochs: 7, Batch: 8, LR: 1e-4,
				MaxPerClass: 50, TestSize: 0.2, Seed: 7, FoldsCSV: "/f.csv", Checkpoints: "/ck", Models: r.cli.Model,
				Results: r.cli.Results, Stamp: r.stamp, Device: "cpu", LogStep: 9, Augment: true}
			tt.want(&want)
			got.Log, got.Progress, got.Run = nil, nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestEvalOptionsMapping(t *testing.T) {
	r := testRunner(t, map[string]string{"EVAL.FOLDER_PAGES": "/data/eval", "SETUP.batch": "2"}, "--eval", "-tn", "5")
	dir := classifytest.ModelDir(t, filepath.Join(t.TempDir(), "model_v24"), classifytest.Five()[1])
	got, err := r.evalOptions([]classify.Folder{{Revision: "v2.4", Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	got.Log, got.Progress, got.Run = nil, nil, nil
	want := train.EvalOptions{Model: dir, Pages: "/data/eval", Exts: []string{"png"}, TopN: 5, Count: 5,
		Revision: "v2.4", Results: r.cli.Results, Stamp: r.stamp, Device: "cpu", Batch: 2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// -d names the labelled pages in place of [EVAL] FOLDER_PAGES.
	d := testRunner(t, map[string]string{"EVAL.FOLDER_PAGES": "/data/eval"}, "--eval", "-d", "/data/mine")
	if o, err := d.evalOptions([]classify.Folder{{Revision: "v2.4", Dir: dir}}); err != nil || o.Pages != "/data/mine" {
		t.Errorf("--eval -d /data/mine: pages %q, %v", o.Pages, err)
	}
	// More than one folder: their average, labelled as the BEST tables.
	got, err = r.evalOptions([]classify.Folder{{Dir: "/m/a"}, {Dir: "/m/b"}})
	if err != nil || !reflect.DeepEqual(got.Ensemble, []string{"/m/a", "/m/b"}) || got.Revision != "BEST_2_models_AVG" || got.Count != 2 {
		t.Errorf("ensemble options %+v, %v", got, err)
	}
}

func TestBaseFolder(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	r := testRunner(t, map[string]string{"OUTPUT.FOLDER_MODELS": e.models})
	f, err := r.baseFolder(context.Background())
	if err != nil || f.Dir != filepath.Join(e.models, "model_v44") || f.Revision != "v4.4" {
		t.Fatalf("base from [SETUP] base_model: %+v, %v", f, err)
	}
	r.cli.Base = filepath.Join(e.models, "model_v44")
	if f, err := r.baseFolder(context.Background()); err != nil || f.Dir != r.cli.Base {
		t.Fatalf("base folder: %+v, %v", f, err)
	}
	r.cli.Base = "/no/such/folder"
	if _, err := r.baseFolder(context.Background()); err == nil {
		t.Fatal("accepted a missing base folder")
	}
}

// A missing folder of labelled pages is refused before anything is
// written, naming the folder and where it came from.
func TestLabelledPagesMissing(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"config", []string{"--eval"}, []string{"--eval: folder of labelled pages", "eval ([EVAL] FOLDER_PAGES of ", "give it with -d DIR"}},
		{"flag", []string{"--train", "--eval", "-d", "nowhere"}, []string{"--train: folder of labelled pages nowhere (-d): no such file or directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			t.Chdir(e.root)
			code, log := e.run(t, tt.args...)
			if code != exitNoInput {
				t.Fatalf("exit %d, want %d:\n%s", code, exitNoInput, log)
			}
			for _, w := range tt.want {
				if !strings.Contains(log, w) {
					t.Errorf("log lacks %q:\n%s", w, log)
				}
			}
			if _, err := os.Stat(e.results); !os.IsNotExist(err) {
				t.Errorf("results folder written: %v", err)
			}
		})
	}
}

// A training stopped by Ctrl-C says to run it again, not to --resume it
// (which refuses --train: the message sent the user to a refusal).
func TestTrainInterruptedSaysRunAgain(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	e.linkPages(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"--config", e.cfg, "--train", "-d", e.in, "-b", filepath.Join(e.models, "model_v44")}, &out, &errOut)
	if code == exitOK || !strings.Contains(errOut.String(), "is not continued by --resume: run it again") || strings.Contains(errOut.String(), "run again with --resume") {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
}

// TestAverageRecordsModels: --average's run metadata names the models
// averaged, each with its digest, and the averaged model's digest, and its
// licence is their weights' (it said models [] and the tool's MIT while the
// averaged model was CC BY-NC).
func TestAverageRecordsModels(t *testing.T) {
	e := newEnv(t, nil)
	var spec classifytest.Spec
	for _, s := range classifytest.Five() {
		if s.Revision == "v4.4" {
			spec = s
		}
	}
	dir := filepath.Join(e.root, "folds")
	for _, n := range []string{"v4.4_FOLD_1", "v4.4_FOLD_2"} {
		classifytest.ModelDir(t, filepath.Join(dir, n), spec)
		meta, err := modelmeta.Load(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		meta.License = "CC BY-NC 4.0"
		if err := modelmeta.Save(filepath.Join(dir, n), meta); err != nil {
			t.Fatal(err)
		}
	}
	if code, log := e.run(t, "--average", "-ap", "v4.4", "-m", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	d := readParadata(t, e)
	if len(d.Models) != 2 || d.Models[0].Revision != "v4.4_FOLD_1" || !strings.HasPrefix(d.Models[0].Digest, "sha256:") {
		t.Errorf("models %+v", d.Models)
	}
	if avg, _ := d.Training["averaged_model"].(map[string]any); avg == nil || !strings.HasPrefix(fmt.Sprint(avg["digest"]), "sha256:") {
		t.Errorf("training.averaged_model %v", d.Training["averaged_model"])
	}
	if !strings.Contains(d.License, "CC BY-NC") {
		t.Errorf("licence %q, want the averaged weights' CC BY-NC", d.License)
	}
}

// A base given as a folder named for a revision (model_v44) trains that
// revision's folds, v4.4_FOLD_1 (they were model_v44_FOLD_1); another
// folder name is kept.
func TestTrainBaseFolderRevision(t *testing.T) {
	for dir, want := range map[string]string{"/models/model_v44": "v4.4", "/models/tinybase": "tinybase"} {
		r := testRunner(t, map[string]string{"TRAIN.FOLDER_PAGES": "/data/train"}, "--train")
		got, err := r.trainOptions(classify.Folder{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if got.Revision != want {
			t.Errorf("base %s: revision %q, want %q", dir, got.Revision, want)
		}
	}
}
