package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/registry"
	goldenpkg "archivekit/test/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// env is a working folder for one pageclass run: its own config file, input
// folder (links to the shared sample pages, read in place), models and
// results.
type env struct {
	root, cfg, in, models, results string
}

// newEnv writes setup/config.txt (the shipped keys with folders inside the
// test folder, then overrides "SECTION.key": value) and setup/para_config.txt
// (the shipped one).
func newEnv(t *testing.T, overrides map[string]string) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{root: root, cfg: filepath.Join(root, "setup", "config.txt"), in: filepath.Join(root, "in"),
		models: filepath.Join(root, "model"), results: filepath.Join(root, "result")}
	keys := map[string]map[string]string{
		"OUTPUT":   {"FOLDER_RESULTS": e.results, "FOLDER_CPOINTS": filepath.Join(root, "checkpoint"), "FOLDER_MODELS": e.models},
		"EVAL":     {"FOLDER_PAGES": filepath.Join(root, "eval")},
		"TRAIN":    {"FOLDER_PAGES": filepath.Join(root, "train"), "cross_runs": "0", "folds_csv": "", "test_size": "0.1", "log_step": "100", "epochs": "3", "lr": "5e-5", "max_categ": "14000", "Training": "False", "Testing": "False"},
		"SETUP":    {"files_format": "png", "seed": "420", "base_model": "v4.4", "batch": "4", "top_N": "3", "raw": "False", "inner": "True"},
		"FASTCLS":  {"use_fastcls": "False", "fastcls_base": "small"},
		"INPUT":    {"FOLDER_INPUT": e.in, "chunk_size": "100", "chunking": "False"},
		"HUB":      {"repo_name": "", "token": "", "use_hub": "False", "revision": "main", "latest": "v4.4"},
		"DOCUMENT": {"document_json": "", "document_json_out": "", "document_json_dir": "", "document_json_out_dir": "", "strict": "False"},
	}
	for k, v := range overrides {
		sec, key, _ := strings.Cut(k, ".")
		keys[sec][key] = v
	}
	var b strings.Builder
	for _, sec := range []string{"OUTPUT", "EVAL", "TRAIN", "SETUP", "FASTCLS", "INPUT", "HUB", "DOCUMENT"} {
		fmt.Fprintf(&b, "[%s]\n", sec)
		ks := make([]string, 0, len(keys[sec]))
		for k := range keys[sec] {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			fmt.Fprintf(&b, "%s = %s\n", k, keys[sec][k])
		}
	}
	mkdir(t, filepath.Dir(e.cfg))
	write(t, e.cfg, b.String())
	para, err := os.ReadFile(filepath.Join("..", "..", "setup", "para_config.txt"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "setup", "para_config.txt"), string(para))
	return e
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	mkdir(t, filepath.Dir(path))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// linkPages links the first perCategory sample pages of every category into
// e.in/<CATEGORY>/ (symbolic links: the shared data is read in place).
func (e *env) linkPages(t *testing.T, perCategory int) []string {
	t.Helper()
	var out []string
	for _, p := range classifytest.Pages(t, perCategory) {
		dst := filepath.Join(e.in, filepath.Base(filepath.Dir(p)), filepath.Base(p))
		mkdir(t, filepath.Dir(dst))
		if err := os.Symlink(p, dst); err != nil {
			t.Fatal(err)
		}
		out = append(out, dst)
	}
	return out
}

// model writes one test model as e.models/model_<rev>.
func (e *env) model(t *testing.T, rev string) {
	t.Helper()
	for _, s := range classifytest.Five() {
		if s.Revision == rev {
			classifytest.ModelDir(t, filepath.Join(e.models, registry.ModelDirName(rev)), s)
			return
		}
	}
	t.Fatalf("no test model for %s", rev)
}

// runs counts the runs of pageclass in flight in this test process
// (running) and those started so far (started), under runsMu.
var (
	runsMu  sync.Mutex
	running int
	started int
)

// run runs pageclass with the env's config and returns exit code and stderr.
func (e *env) run(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	runsMu.Lock()
	alone := running == 0
	running++
	started++
	gen := started
	base := torch.LiveHandles()
	runsMu.Unlock()
	code := run(context.Background(), append([]string{"--config", e.cfg}, args...), &stdout, &stderr)
	// Every model and trainer the run opened is closed when it returns:
	// checked when no other run of the test was in flight at any time
	// during this one (none was running at its start, none started since,
	// and the handles are counted before another can start).
	runsMu.Lock()
	running--
	n := torch.LiveHandles() - base
	checked := alone && started == gen
	runsMu.Unlock()
	if checked && n != 0 {
		t.Errorf("pageclass %v left %d native handles open", args, n)
	}
	return code, stdout.String() + stderr.String()
}

// output returns the only result file whose name ends with suffix.
func (e *env) output(t *testing.T, suffix string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(e.results, "*"+suffix))
	if len(m) != 1 {
		all, _ := filepath.Glob(filepath.Join(e.results, "*"))
		t.Fatalf("%d files end with %s; results: %v", len(m), suffix, all)
	}
	return m[0]
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return recs
}

// golden compares got with testdata/golden/name (rewritten with -update):
// text exactly, model numbers within golden.Tolerance (test/golden).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Check(t, filepath.Join("testdata", "golden", name), got, *update)
}

func goldenFile(t *testing.T, name, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, name, b)
}

func mustTime(s string) time.Time {
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return v
}

// testClassifier is the classification mode over the run core r.
func testClassifier(r *runner) *classifier {
	return &classifier{models: &models{runner: r}}
}

// runOut runs pageclass with the env's config and returns exit code,
// stdout and stderr apart.
func (e *env) runOut(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"--config", e.cfg}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}
