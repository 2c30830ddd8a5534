package main

import (
	"archivekit/internal/dirwalk"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unicode/utf8"

	"archivekit/internal/cliflags"
	"archivekit/internal/logging"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/paradata"
)

// shippedDemo is the repository's demo models folder (weights/demo).
func shippedDemo(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(filepath.Join("..", "..", "weights", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// notGiven is the config override of a run whose model location is the
// shipped default (./model, absent here): not a given location.
var notGiven = map[string]string{"OUTPUT.FOLDER_MODELS": "./model"}

// The export tool's layout (OUT/v1.4 ... as older exports wrote it, and
// OUT/model_v14 ... as it writes now) is read by --best -m OUT; a given
// location with 4 of 5 models is an error naming the missing one, never the
// demo models.
func TestExplicitModelsNeverFallBackToDemo(t *testing.T) {
	demo := classifytest.Ensemble(t, t.TempDir())
	t.Run("export layout", func(t *testing.T) {
		e := newEnv(t, notGiven)
		e.linkPages(t, 1)
		out := filepath.Join(e.root, "exported")
		for _, s := range classifytest.Five() {
			classifytest.ModelDir(t, filepath.Join(out, s.Revision), s)
		}
		code, log := e.run(t, "--dir", "--best", "-m", out, "--demo-weights", demo)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, log)
		}
		if strings.Contains(log, "DEMO") {
			t.Errorf("demo warning with the published models present:\n%s", log)
		}
		d := readParadata(t, e)
		if d.Demo || len(d.Models) != 5 || d.License != "MIT" {
			t.Fatalf("demo %v, models %+v, licence %s", d.Demo, d.Models, d.License)
		}
		for i, m := range d.Models {
			if m.Path != filepath.Join(out, registry.Ensemble[i]) || !strings.HasPrefix(m.Digest, "sha256:") {
				t.Errorf("model %d: %+v", i, m)
			}
		}
	})
	t.Run("4 of 5", func(t *testing.T) {
		e := newEnv(t, notGiven)
		e.linkPages(t, 1)
		out := filepath.Join(e.root, "exported")
		for _, s := range classifytest.Five() {
			if s.Revision != "v3.4" {
				classifytest.ModelDir(t, filepath.Join(out, registry.ModelDirName(s.Revision)), s)
			}
		}
		code, log := e.run(t, "--dir", "--best", "-m", out, "--demo-weights", demo)
		if code != exitFailure || !strings.Contains(log, "4 of 5") || !strings.Contains(log, "v3.4 (") {
			t.Fatalf("exit %d, want %d and the missing v3.4 named:\n%s", code, exitFailure, log)
		}
		if m, _ := filepath.Glob(filepath.Join(e.results, "*.csv")); len(m) != 0 {
			t.Errorf("tables written: %v", m)
		}
	})
	t.Run("explicit single model", func(t *testing.T) {
		e := newEnv(t, notGiven)
		e.linkPages(t, 1)
		code, log := e.run(t, "--dir", "-m", filepath.Join(e.root, "nothing"), "--demo-weights", demo)
		if code != exitFailure || !strings.Contains(log, "export_models.py") {
			t.Fatalf("exit %d: %s", code, log)
		}
	})
}

// With no model location given and no published model, a first run uses the
// shipped demo model of the revision asked for: loud (one warning) and
// recorded (demo: true, the demo weights' CC BY-NC 4.0 licence).
func TestFirstRunUsesTheDemoModel(t *testing.T) {
	page := classifytest.Pages(t, 1)[0]
	for _, args := range [][]string{{"-f", page}, {"-f", page, "-rev", "v4.4", "-tn", "1"}, {"-f", page, "-rev", "v2.4"}} {
		t.Run(strings.Join(args[2:], " "), func(t *testing.T) {
			e := newEnv(t, notGiven)
			code, log := e.run(t, append(args, "--demo-weights", shippedDemo(t))...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, log)
			}
			if n := strings.Count(log, "DEMO MODEL"); n != 1 {
				t.Errorf("%d demo warnings, want 1:\n%s", n, log)
			}
			rev := "v4.4"
			if len(args) > 2 && args[2] == "-rev" {
				rev = args[3]
			}
			m, _ := filepath.Glob(filepath.Join(e.results, "*_"+rev+"_TOP-*.csv"))
			if len(m) != 1 || len(readCSV(t, m[0])) != 2 {
				t.Fatalf("tables %v", m)
			}
			d := readParadata(t, e)
			if !d.Demo || len(d.Models) != 1 || !d.Models[0].Demo || d.License != "CC BY-NC 4.0" {
				t.Errorf("demo %v, models %+v, licence %s", d.Demo, d.Models, d.License)
			}
		})
	}
	t.Run("revision without a demo model", func(t *testing.T) {
		e := newEnv(t, notGiven)
		code, log := e.run(t, "-f", page, "-rev", "v1.3", "--demo-weights", shippedDemo(t))
		if code != exitFailure || !strings.Contains(log, "export_models.py") || !strings.Contains(log, "v1.3") {
			t.Fatalf("exit %d: %s", code, log)
		}
	})
}

// The shipped demo models copied into a folder of one's own and given with
// -m are demo still (their digests): warned and recorded as the fallback
// is (they were labelled as published models, demo: false).
func TestCopiedDemoModelIsDemo(t *testing.T) {
	page := classifytest.Pages(t, 1)[0]
	e := newEnv(t, nil)
	mine := filepath.Join(e.root, "mine")
	if err := os.CopyFS(filepath.Join(mine, "model_v44"), os.DirFS(filepath.Join(shippedDemo(t), "model_v44"))); err != nil {
		t.Fatal(err)
	}
	code, log := e.run(t, "-f", page, "-m", mine)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if !strings.Contains(log, "DEMO MODEL") || !strings.Contains(log, "mine") {
		t.Errorf("no demo warning naming the folder:\n%s", log)
	}
	if d := readParadata(t, e); !d.Demo || len(d.Models) != 1 || !d.Models[0].Demo || d.License != "CC BY-NC 4.0" {
		t.Errorf("demo %v, models %+v, licence %s", d.Demo, d.Models, d.License)
	}
}

// Six quick runs in a loop and two runs at once into one results folder each
// keep their own tables and run metadata.
func TestRunsNeverOverwriteEachOther(t *testing.T) {
	e := newEnv(t, nil)
	page := e.linkPages(t, 1)[0]
	e.model(t, "v4.4")
	for i := 0; i < 6; i++ {
		if code, log := e.run(t, "-f", page); code != exitOK {
			t.Fatalf("run %d: exit %d: %s", i, code, log)
		}
	}
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = e.run(t, "-f", page)
		}()
	}
	wg.Wait()
	if codes[0] != exitOK || codes[1] != exitOK {
		t.Fatalf("concurrent runs: exit %v", codes)
	}
	tables, _ := filepath.Glob(filepath.Join(e.results, "*_v4.4_TOP-3.csv"))
	paras, _ := filepath.Glob(filepath.Join(e.results, "*_page-classification.json"))
	if len(tables) != 8 || len(paras) != 8 {
		t.Fatalf("%d tables and %d run metadata files after 8 runs, want 8 each: %v", len(tables), len(paras), tables)
	}
	for _, p := range tables {
		if recs := readCSV(t, p); len(recs) != 2 {
			t.Errorf("%s: %d lines", p, len(recs))
		}
	}
}

// A chunked re-run continues the tables only when the model, top-N and raw
// are the same; another model starts a new table and classifies every page.
func TestChunkResumeKeyedOnModel(t *testing.T) {
	e := newEnv(t, map[string]string{"INPUT.chunk_size": "3"})
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	if code, log := e.run(t, "-d", e.in, "--chunk"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	first := e.output(t, "_v4.4_TOP-3.csv")
	before := readCSV(t, first)
	if code, log := e.run(t, "-d", e.in, "--chunk"); code != exitOK || !strings.Contains(log, "continuing from the ledger") {
		t.Fatalf("same model did not resume: exit %d: %s", code, log)
	}
	// Another model under the same folder name.
	dir := filepath.Join(e.models, registry.ModelDirName("v4.4"))
	os.RemoveAll(dir)
	classifytest.ModelDir(t, dir, classifytest.Spec{Fixture: "avg_c.pt", Revision: "v4.4", Size: 32})
	code, log := e.run(t, "-d", e.in, "--chunk")
	if code != exitOK || strings.Contains(log, "continuing from the ledger") {
		t.Fatalf("another model resumed the old table: exit %d: %s", code, log)
	}
	tables, _ := filepath.Glob(filepath.Join(e.results, "chunk-*_v4.4_TOP-3.csv"))
	if len(tables) != 2 {
		t.Fatalf("tables %v, want the old and a new one", tables)
	}
	sort.Slice(tables, func(i, j int) bool { return tables[i] == first })
	if got := readCSV(t, first); strings.Join(flat(got), "|") != strings.Join(flat(before), "|") {
		t.Error("the first model's table changed")
	}
	second := readCSV(t, tables[1])
	if len(second) != len(pages)+1 {
		t.Fatalf("new table has %d lines, want %d", len(second), len(pages)+1)
	}
	if strings.Join(flat(second), "|") == strings.Join(flat(before), "|") {
		t.Error("the new model's table equals the old model's")
	}
	// Another top-N starts another table too, with the probabilities the
	// ledger kept for this model (top-N does not change them): no page is
	// classified again.
	if code, log := e.run(t, "-d", e.in, "--chunk", "-tn", "2"); code != exitOK || !strings.Contains(log, `"files_to_classify":0`) {
		t.Fatalf("top-2 run: exit %d: %s", code, log)
	}
	if top2, _ := filepath.Glob(filepath.Join(e.results, "chunk-*_v4.4_TOP-2.csv")); len(top2) != 1 || len(readCSV(t, top2[0])) != len(pages)+1 {
		t.Fatalf("top-2 tables %v, want one with every page", top2)
	}
}

// The output names, the run metadata and the evaluation tables carry the
// revision of the model that ran (its model.json), not [HUB] latest.
func TestLabelsFromTheModelThatRan(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	dir := classifytest.ModelDir(t, filepath.Join(e.root, "some", "folder"), classifytest.Five()[0]) // v1.4
	if code, log := e.run(t, "--dir", "-m", dir); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	e.output(t, "_v1.4_TOP-3.csv")
	if m, _ := filepath.Glob(filepath.Join(e.results, "*v4.4*")); len(m) != 0 {
		t.Errorf("v4.4 in output names: %v", m)
	}
	if d := readParadata(t, e); len(d.Models) != 1 || d.Models[0].Revision != "v1.4" {
		t.Errorf("models %+v", d.Models)
	}
	// -rev naming another revision than the folder's model is refused.
	code, log := e.run(t, "--dir", "-m", dir, "-rev", "v4.4")
	if code != exitFailure || !strings.Contains(log, "says revision v1.4, not the v4.4") {
		t.Fatalf("exit %d: %s", code, log)
	}
	// So is evaluating it as v4.4, and training from it as the v4.4 base
	// (a folder model_v44 holding the v1.4 model).
	code, log = e.run(t, "--eval", "-m", dir, "-rev", "v4.4", "-d", e.in)
	if code != exitFailure || !strings.Contains(log, "says revision v1.4, not the v4.4") {
		t.Fatalf("eval: exit %d: %s", code, log)
	}
	models := filepath.Join(e.root, "models")
	classifytest.ModelDir(t, filepath.Join(models, "model_v44"), classifytest.Five()[0]) // v1.4
	code, log = e.run(t, "--train", "-m", models, "--base", "v4.4", "-d", e.in)
	if code != exitFailure || !strings.Contains(log, "says revision v1.4, not the v4.4") {
		t.Fatalf("train: exit %d: %s", code, log)
	}
}

// scan-1.png, scan_1.png and scan-01.png in one folder each get a row, also
// when page numbers are read from names (--page-from-name).
func TestNoPageUnclassifiedBecauseOfItsName(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	src := classifytest.Pages(t, 1)
	names := []string{"scan-1.png", "scan_1.png", "scan-01.png", "other-2.png"}
	for i, n := range names {
		mkdir(t, e.in)
		if err := os.Symlink(src[i], filepath.Join(e.in, n)); err != nil {
			t.Fatal(err)
		}
	}
	if code, log := e.run(t, "--dir", "--page-from-name"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	var keys []string
	for _, r := range readCSV(t, e.output(t, "_TOP-3.csv"))[1:] {
		keys = append(keys, r[0]+"|"+r[1])
	}
	if got := strings.Join(keys, " "); got != "other|2 scan-01| scan-1| scan_1|" {
		t.Errorf("rows %s", got)
	}
	if d := readParadata(t, e); d.Statistics.SkippedFiles != 0 || d.Statistics.SuccessfullyProcessed != 4 {
		t.Errorf("statistics %+v %+v", d.Statistics, d.SkippedFilesDetail)
	}
}

// An unreadable sub-folder is skipped and recorded; the rest is classified.
func TestUnreadableSubfolderIsSkipped(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	bad := filepath.Join(e.in, "TEXT")
	if os.Geteuid() != 0 {
		if err := os.Chmod(bad, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(bad, 0o755) })
	} else {
		// Permissions do not stop root: make the folder unreadable the way
		// dirwalk.Walk reports one (a second call with the error).
		walkDir = func(root string, fn fs.WalkDirFunc) error {
			return dirwalk.Walk(root, func(p string, d fs.DirEntry, err error) error {
				if p == bad && err == nil {
					if r := fn(p, d, nil); r != nil {
						return r
					}
					return fn(p, d, &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission})
				}
				return fn(p, d, err)
			})
		}
		t.Cleanup(func() { walkDir = dirwalk.Walk })
	}
	code, log := e.run(t, "--dir")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	rows := readCSV(t, e.output(t, "_TOP-3.csv"))
	if len(rows) != 1+10 { // 11 categories, one page each, TEXT unreadable
		t.Errorf("%d rows, want 10", len(rows)-1)
	}
	d := readParadata(t, e)
	if d.Statistics.SkippedFiles != 1 || d.SkippedFilesDetail[0].File != bad || !strings.Contains(d.SkippedFilesDetail[0].Reason, "not readable") {
		t.Errorf("skipped %+v", d.SkippedFilesDetail)
	}
	if d.Status != paradata.StatusCompleted || !strings.Contains(log, "folder skipped") {
		t.Errorf("status %s, log:\n%s", d.Status, log)
	}
	// The folder is a failed input in the failures table and the summary
	// too (it was only in the run metadata), and the figures add up.
	failures := readCSV(t, e.output(t, "_FAILURES.csv"))
	if len(failures) != 2 || failures[1][0] != "TEXT" || !strings.Contains(failures[1][1], "folder not readable") {
		t.Errorf("failures table %v", failures)
	}
	if st := d.Statistics; st.InputFilesTotal != st.SuccessfullyProcessed+st.SkippedFiles {
		t.Errorf("inputs %d, processed %d, skipped %d", st.InputFilesTotal, st.SuccessfullyProcessed, st.SkippedFiles)
	}
	summary := readCSV(t, e.output(t, "_SUMMARY.csv"))
	if !strings.Contains(fmt.Sprint(summary), "failed 1") {
		t.Errorf("summary %v", summary)
	}
}

// --best --raw --no-average-best writes each model's RAW table.
func TestRawWithoutAverage(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	classifytest.Ensemble(t, e.models)
	if code, log := e.run(t, "--dir", "--best", "--raw", "--no-average-best"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	for _, rev := range registry.Ensemble {
		if recs := readCSV(t, e.output(t, "_"+rev+"_RAW.csv")); len(recs) != 12 || len(recs[0]) != 14 { // FILE, PAGE, 11 categories, SOURCE
			t.Errorf("%s RAW: %d lines, %d columns", rev, len(recs), len(recs[0]))
		}
	}
}

// --train --eval evaluates the model it just trained, and prints precision,
// recall and F1 per category.
func TestTrainThenEvalEvaluatesTheTrainedModel(t *testing.T) {
	e := newEnv(t, map[string]string{"TRAIN.epochs": "1"})
	e.linkPages(t, 3)
	base := classifytest.ModelDir(t, filepath.Join(e.root, "tinybase"), classifytest.Spec{Fixture: "tiny_cnn.pt", Size: 32})
	write(t, e.cfg, strings.NewReplacer(filepath.Join(e.root, "train"), e.in, filepath.Join(e.root, "eval"), e.in).Replace(readFile(t, e.cfg)))
	code, log := e.run(t, "--train", "--eval", "-b", base)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	top := e.output(t, "_tinybase_FOLD_1_TOP-3_EVAL.csv")
	if recs := readCSV(t, top); len(recs) < 20 || recs[0][len(recs[0])-1] != "TRUE" {
		t.Errorf("%s: %d lines, header %v", top, len(recs), recs[0])
	}
	e.output(t, "_tinybase_FOLD_1_conf_mat_TOP-3.png")
	if !strings.Contains(log, "tinybase_FOLD_1 on ") || !strings.Contains(log, "precision") || !strings.Contains(log, "TEXT_HW") {
		t.Errorf("no per-category report:\n%s", log)
	}
	d := readParadata(t, e)
	if d.Training["epochs"] != 1.0 || d.Training["seed"] != 420.0 || d.Training["folds_trained"] == nil || len(d.Models) != 2 ||
		d.Models[0].Revision != "tinybase" || d.Models[1].Revision != "tinybase_FOLD_1" { // the base, then the model evaluated
		t.Errorf("training %v, models %+v", d.Training, d.Models)
	}
	// A test accuracy is given with its pages, and is null without any (it
	// said 0 for a split with no test page).
	if folds, _ := d.Training["folds_trained"].([]any); len(folds) == 1 {
		f, _ := folds[0].(map[string]any)
		n, ok := f["test_pages"].(float64)
		if !ok || (n == 0) != (f["test_top1"] == nil) {
			t.Errorf("fold: test_pages %v, test_top1 %v", f["test_pages"], f["test_top1"])
		}
	}
}

// --eval --best evaluates every model and their probability average.
func TestEvalBestEvaluatesTheEnsemble(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	write(t, e.cfg, strings.ReplaceAll(readFile(t, e.cfg), filepath.Join(e.root, "eval"), e.in))
	classifytest.Ensemble(t, e.models)
	write(t, filepath.Join(e.in, "TEXT", "broken.png"), "not a png")
	code, log := e.run(t, "--eval", "--best")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	// The run's statistics count its pages once (they were all 0), the
	// unreadable one skipped once (not once per model), and the rows and
	// pictures written by the six evaluations.
	d := readParadata(t, e)
	st := d.Statistics
	pages := len(readCSV(t, e.output(t, "_5_BEST_5_models_AVG_EVAL_RAW.csv"))) - 1
	if st.InputFilesTotal != pages+1 || st.SuccessfullyProcessed != pages || st.SkippedFiles != 1 ||
		st.OutputCountsByType["csv"] != 6*3*pages || st.OutputCountsByType["png"] != 6 {
		t.Errorf("statistics %+v; want %d inputs, %d processed, 1 skipped, %d csv rows, 6 png", st, pages+1, pages, 6*3*pages)
	}
	// The accuracies are in the run metadata (they were on stdout and in
	// the log only): one entry for each model and one for their average.
	if ev, _ := d.Training["evaluated"].([]any); len(ev) != 6 {
		t.Errorf("training.evaluated %v, want 6 entries", ev)
	} else if m, _ := ev[0].(map[string]any); m["pages"] == nil || m["top1"] == nil || m["digests"] == nil {
		t.Errorf("training.evaluated[0] %v", m)
	}
	avg := readCSV(t, e.output(t, "_5_BEST_5_models_AVG_EVAL_RAW.csv"))
	sum := make([][]float64, len(avg))
	for _, rev := range registry.Ensemble {
		m, _ := filepath.Glob(filepath.Join(e.results, "*_"+rev+"_EVAL_RAW.csv"))
		if len(m) != 1 {
			t.Fatalf("%s: %v", rev, m)
		}
		for i, r := range readCSV(t, m[0])[1:] {
			if sum[i+1] == nil {
				sum[i+1] = make([]float64, 11)
			}
			for c := 0; c < 11; c++ {
				sum[i+1][c] += cell(t, r[2+c]) / 5
			}
		}
	}
	for i, r := range avg[1:] {
		for c := 0; c < 11; c++ {
			// each single cell is rounded to 4 decimals
			if d := cell(t, r[2+c]) - sum[i+1][c]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("row %d class %d: average %s, mean of the models %.5f", i, c, r[2+c], sum[i+1][c])
			}
		}
	}
	if n := strings.Count(log, "category   precision"); n != 6 {
		t.Errorf("%d per-category reports, want 6 (five models and the average)", n)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Off a terminal every line on stderr is a JSON log record (progress lines
// included); on a terminal the log is readable text.
func TestLogLinesAreRecords(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"--config", e.cfg, "--dir"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	progress := false
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("not a JSON record: %q", l)
		}
		progress = progress || strings.Contains(l, "pages in")
	}
	if !progress {
		t.Errorf("no progress summary record:\n%s", stderr.String())
	}
	var text bytes.Buffer
	lg, err := logging.FromEnv(&logSink{w: &text, tty: true})
	if err != nil {
		t.Fatal(err)
	}
	lg.Info("model loaded", "model", "v4.4")
	if json.Valid(bytes.TrimSpace(text.Bytes())) || !strings.Contains(text.String(), "model loaded") {
		t.Errorf("terminal log is not text: %q", text.String())
	}
}

// Ctrl-C: exit 130 with "interrupted" and how to continue (--resume), and
// the run metadata says interrupted by Ctrl-C (before: failed, "context
// canceled"); SIGTERM: exit 143, stopped by SIGTERM; SIGHUP (the terminal
// closed): exit 129, stopped by SIGHUP, with how to outlive it.
func TestInterruptExits130(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 2)
	e.model(t, "v4.4")
	for _, c := range []struct {
		sig   os.Signal
		code  int
		error string
	}{{os.Interrupt, 130, "interrupted by Ctrl-C (SIGINT)"}, {syscall.SIGTERM, 143, "stopped by SIGTERM"},
		{syscall.SIGHUP, 129, "stopped by SIGHUP (its terminal closed: run it under nohup, screen or tmux to outlive a lost session)"}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cliflags.Stopped{Signal: c.sig})
		var stdout, stderr bytes.Buffer
		code := run(ctx, []string{"--config", e.cfg, "--dir"}, &stdout, &stderr)
		if code != c.code || !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stderr.String(), "--resume") {
			t.Fatalf("%v: exit %d, want %d, \"interrupted\" and --resume:\n%s", c.sig, code, c.code, stderr.String())
		}
		if d := readParadata(t, e); d.Status != paradata.StatusInterrupted || d.Error != c.error {
			t.Errorf("%v: status %q error %q, want interrupted, %q", c.sig, d.Status, d.Error, c.error)
		}
		os.RemoveAll(e.results)
	}
}

// A file name that is not UTF-8 cannot make the table unreadable.
func TestNonUTF8NameKeepsTheTableReadable(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	mkdir(t, e.in)
	src := classifytest.Pages(t, 1)
	if err := os.Symlink(src[0], filepath.Join(e.in, "scan\xff\xfe-3.png")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(src[1], filepath.Join(e.in, "plain.png")); err != nil {
		t.Fatal(err)
	}
	if code, log := e.run(t, "--dir"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	path := e.output(t, "_TOP-3.csv")
	b, _ := os.ReadFile(path)
	if !utf8.Valid(b) {
		t.Fatalf("%s is not UTF-8: %q", path, b)
	}
	recs := readCSV(t, path)
	if len(recs) != 3 || recs[2][0] != `scan\xff\xfe-3` || recs[2][1] != "" || recs[2][len(recs[2])-1] != `scan\xff\xfe-3.png` {
		t.Errorf("rows %v", recs)
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	mkdir(t, dst)
	for _, name := range []string{"model.pt", "model.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// --train --fastcls trains the fast classifier (overriding --base and
// --revision, spec 4.1 rule 3) with the [FASTCLS] keys: epochs, lr0 0 as the
// automatic rate, imgsz, cache; a dropout other than the base's is refused.
func TestFastClsTrainingUsesItsKeys(t *testing.T) {
	keys := map[string]string{"FASTCLS.fastcls_epochs": "1", "FASTCLS.fastcls_imgsz": "64", "FASTCLS.fastcls_lr0": "0",
		"FASTCLS.fastcls_cache": "False", "FASTCLS.fastcls_patience": "3", "FASTCLS.fastcls_dropout": "0.1", "TRAIN.epochs": "9", "TRAIN.lr": "0.5"}
	e := newEnv(t, keys)
	e.linkPages(t, 3)
	write(t, e.cfg, strings.ReplaceAll(readFile(t, e.cfg), filepath.Join(e.root, "train"), e.in))
	copyDir(t, filepath.Join(shippedDemo(t), "fastcls_small"), filepath.Join(e.models, "fastcls_small"))
	code, log := e.run(t, "--train", "--fastcls", "-b", "v4.4", "-rev", "v9.9")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	out := filepath.Join(e.models, "fastcls_small_FOLD_1")
	meta, err := modelmeta.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.IsFastCls() || meta.Preprocess.Size != 64 || !strings.Contains(meta.Provenance.Source, "fastcls_small") {
		t.Errorf("trained model: base %s, size %d, source %s", meta.Base, meta.Preprocess.Size, meta.Provenance.Source)
	}
	d := readParadata(t, e)
	if d.Training["epochs"] != 1.0 || d.Training["lr"] != FastClsAutoLR || d.Training["input_size"] != 64.0 ||
		d.Training["cache"] != false || d.Training["patience"] != 3.0 || d.License != "CC BY-NC 4.0" {
		t.Errorf("training %v, licence %s", d.Training, d.License)
	}
	// The trained model classifies with --fastcls.
	if code, log := e.run(t, "--dir", "--fastcls", "--fastcls_base", out); code != exitOK {
		t.Fatalf("classify: exit %d: %s", code, log)
	}
	// Dropout is part of model.pt: another rate is refused, with the way out.
	e2 := newEnv(t, map[string]string{"FASTCLS.fastcls_dropout": "0.3"})
	copyDir(t, filepath.Join(shippedDemo(t), "fastcls_small"), filepath.Join(e2.models, "fastcls_small"))
	if code, log := e2.run(t, "--train", "--fastcls", "-d", t.TempDir()); code != exitUsage || !strings.Contains(log, "make_fastcls.py --out DIR --dropout 0.3") {
		t.Fatalf("dropout 0.3: exit %d: %s", code, log)
	}
}

// --fastcls runs only the fast classifier, not any model folder; without a
// model location the shipped demo fast classifier answers, loudly.
func TestFastClsIsTheFastClassifier(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	classifytest.ModelDir(t, filepath.Join(e.models, "fastcls_small"), classifytest.Spec{Fixture: "tiny_cnn.pt", Size: 32})
	if code, log := e.run(t, "--dir", "--fastcls"); code != exitFailure || !strings.Contains(log, "not the fast classifier") {
		t.Fatalf("exit %d: %s", code, log)
	}
	e = newEnv(t, notGiven)
	e.linkPages(t, 1)
	code, log := e.run(t, "--dir", "--fastcls", "--demo-weights", shippedDemo(t))
	if code != exitOK || strings.Count(log, "DEMO MODEL") != 1 {
		t.Fatalf("exit %d: %s", code, log)
	}
	e.output(t, "_fastcls_small_TOP-3.csv")
	if d := readParadata(t, e); !d.Demo || d.License != "CC BY-NC 4.0" {
		t.Errorf("demo %v licence %s", d.Demo, d.License)
	}
}

// A file added to an interrupted chunked run's folder that changes an
// earlier file's row key (scan_1.png beside scan-1.png) starts new tables:
// continuing would keep the old "scan" row beside the new "scan-1" one
// (with --page-from-name: without it the two keep their whole stems and
// never collide).
func TestChunkNewCollisionStartsNewTables(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	src := classifytest.Pages(t, 1)
	mkdir(t, e.in)
	if err := os.Symlink(src[0], filepath.Join(e.in, "scan-1.png")); err != nil {
		t.Fatal(err)
	}
	if code, log := e.run(t, "-d", e.in, "--chunk", "--page-from-name"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if err := os.Symlink(src[1], filepath.Join(e.in, "scan_1.png")); err != nil {
		t.Fatal(err)
	}
	if code, log := e.run(t, "-d", e.in, "--chunk", "--page-from-name"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	tables, _ := filepath.Glob(filepath.Join(e.results, "chunk-*_v4.4_TOP-3.csv"))
	if len(tables) != 2 {
		t.Fatalf("tables %v, want the old and a new one", tables)
	}
	var keys []string
	for _, tab := range tables {
		var k []string
		for _, r := range readCSV(t, tab)[1:] {
			k = append(k, r[0]+"|"+r[1])
		}
		keys = append(keys, strings.Join(k, " "))
	}
	sort.Strings(keys)
	if got := strings.Join(keys, " / "); got != "scan-1| scan_1| / scan|1" {
		t.Errorf("rows %s", got)
	}
}

// A bare --fastcls_base is a tag whatever the working directory holds: a
// folder ./small beside the command does not replace <models>/fastcls_small.
func TestFastClsTagIndependentOfWorkingDir(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	copyDir(t, filepath.Join(shippedDemo(t), "fastcls_small"), filepath.Join(e.models, "fastcls_small"))
	wd := t.TempDir()
	classifytest.ModelDir(t, filepath.Join(wd, "small"), classifytest.Spec{Fixture: "tiny_cnn.pt", Size: 32})
	t.Chdir(wd)
	if code, log := e.run(t, "--dir", "--fastcls", "--fastcls_base", "small"); code != exitOK {
		t.Fatalf("tag small with ./small in the working directory: exit %d: %s", code, log)
	}
}

// Each model.pt, the orientation model's included, is read once per run:
// the digest the run metadata and the ledger record is of the bytes the
// model was loaded from (on the previous code each was read twice, once to
// load and once for its digest, and a file replaced in between was
// recorded under the digest of weights that did not run).
func TestModelFilesReadOnce(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	rotation := filepath.Join(e.root, "rotation")
	mkdir(t, rotation)
	for _, name := range []string{modelmeta.MetaFile, modelmeta.WeightsFile} {
		b, err := os.ReadFile(filepath.Join(shippedDemo(t), "..", "rotation", name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(rotation, name), string(b))
	}
	model := filepath.Join(e.models, registry.ModelDirName("v4.4"))
	weights := []string{filepath.Join(model, modelmeta.WeightsFile), filepath.Join(rotation, modelmeta.WeightsFile)}
	runReadingOnce(t, e, weights, "-d", e.in, "--rotation-model", rotation)
	d := readParadata(t, e)
	want, err := modelmeta.Digest(model)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Models) != 1 || d.Models[0].Digest != want {
		t.Errorf("run metadata models %+v, want one with digest %s", d.Models, want)
	}
	want, err = modelmeta.Digest(rotation)
	if err != nil {
		t.Fatal(err)
	}
	if rm, _ := d.Review["rotation_model"].(map[string]any); rm == nil || rm["digest"] != want {
		t.Errorf("run metadata rotation_model %v, want digest %s", d.Review["rotation_model"], want)
	}
}

// A folder given as a link, and a sub-folder that is a link to pages kept
// elsewhere, are read as folders: before, the first found nothing (exit 2)
// and the second was left out without a word. A link back to a folder
// above is named in the run metadata, not walked again.
func TestLinkedFolders(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	vol := filepath.Join(e.root, "volume")
	if err := os.Rename(e.in, vol); err != nil {
		t.Fatal(err)
	}
	mkdir(t, e.in)
	for _, l := range [][2]string{{vol, filepath.Join(e.in, "photos")}, {".", filepath.Join(e.in, "again")}, {e.in, filepath.Join(e.root, "in-link")}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	code, log := e.run(t, "-d", filepath.Join(e.root, "in-link"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	rows := readCSV(t, e.output(t, "_TOP-3.csv"))
	if len(rows) != 1+len(pages) || !strings.HasPrefix(rows[1][0], "photos/") {
		t.Errorf("%d rows (want %d), first %v", len(rows)-1, len(pages), rows[1])
	}
	// The link read again is said (a warning), not counted among the pages
	// that failed: input_files_total = processed + skipped.
	d := readParadata(t, e)
	again := "folder " + filepath.Join(e.root, "in-link", "again") + " skipped: a link to a folder already read"
	if len(d.SkippedFilesDetail) != 0 || !slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.HasPrefix(w, again) }) {
		t.Errorf("skipped %+v, warnings %q; want none skipped and a warning %q", d.SkippedFilesDetail, d.Warnings, again)
	}
	if st := d.Statistics; st.InputFilesTotal != st.SuccessfullyProcessed+st.SkippedFiles {
		t.Errorf("%d inputs, %d processed, %d skipped", st.InputFilesTotal, st.SuccessfullyProcessed, st.SkippedFiles)
	}
}

// A results folder that cannot be made (the default ./result of a folder the
// user cannot write) is an error that says what to do.
func TestResultsFolderNotWritableSaysWhatToDo(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	blocker := filepath.Join(e.root, "file")
	write(t, blocker, "not a folder")
	code, log := e.run(t, "-d", e.in, "--results", filepath.Join(blocker, "result"))
	if code != exitFailure || !strings.Contains(log, "give --results DIR, a folder you can write") {
		t.Errorf("exit %d: %s", code, log)
	}
}
