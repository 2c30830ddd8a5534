package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"archivekit/pkg/translator/translatortest"
	"archivekit/pkg/xmlsplice/shareddata"
)

// outputs returns the translated files and logs under dir (not the run
// metadata, failures tables or ledgers).
func outputs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == LedgerFolder {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && !strings.Contains(d.Name(), "_translator") {
			rel, _ := filepath.Rel(dir, p)
			got[rel], _ = os.ReadFile(p)
		}
		return nil
	})
	return got
}

func translated(t *testing.T, stderr string) int {
	t.Helper()
	m := regexp.MustCompile(`"inputs_translated":(\d+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no inputs_translated in the log:\n%s", stderr)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// A run stopped after k inputs and resumed writes the outputs of an
// uninterrupted run and translates only what the ledger lacks; a changed
// input or a removed output is done again; --resume keeps a failure,
// --retry-failed tries it again; every run writes a failures table.
func TestResumeAndRetry(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(shareddata.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := recordsTree(t, recs)
	n := len(recs) + 1
	api := startAPI(t, translatortest.Config{})
	args := func(out string, more ...string) []string {
		return append([]string{root, "-o", out, "--formats", "xml", "--xpaths", "../../setup/translate/fields.txt", "--vocabulary", "", "-src", "cs"}, more...)
	}
	whole := t.TempDir()
	if r := runCLI(t, newEnv(api), args(whole)...); r.code != exitOK {
		t.Fatalf("whole run: exit %d: %s", r.code, r.stderr)
	}
	want := outputs(t, whole)
	failures := func(dir string) string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(dir, "*_translator_failures.csv"))
		var newest []byte
		var at int64
		for _, f := range m {
			if st, _ := os.Stat(f); st.ModTime().UnixNano() >= at {
				at = st.ModTime().UnixNano()
				newest, _ = os.ReadFile(f)
			}
			os.Remove(f)
		}
		return string(newest)
	}
	if got := failures(whole); !strings.HasPrefix(got, "FILE,ERROR\nbox1/broken.xml,") || strings.Count(got, "\n") != 2 {
		t.Errorf("failures table:\n%s", got)
	}

	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	itemHook = func(k int) {
		if k == 5 {
			cancel()
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(ctx, args(out), newEnv(api).get, &stdout, &stderr)
	itemHook = nil
	if code == exitOK {
		t.Fatalf("stopped run: exit 0: %s", stderr.String())
	}
	steps := []struct {
		name  string
		prep  func()
		flag  string
		runs  int
		equal bool
	}{
		{"resume after the stop", nil, "--resume", n - 5, true},
		{"resume with nothing left", nil, "--resume", 0, true},
		{"retry the failure", nil, "--retry-failed", 1, true},
		{"a changed input", func() {
			p := filepath.Join(root, "box0", filepath.Base(recs[0]))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, '\n'), 0o644)
		}, "--resume", 1, false},
		{"a removed output", func() {
			for rel := range want {
				os.Remove(filepath.Join(out, rel))
				break
			}
		}, "--resume", 1, false},
	}
	for _, c := range steps {
		if c.prep != nil {
			c.prep()
		}
		r := runCLI(t, newEnv(api), args(out, c.flag)...)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.name, r.code, r.stderr)
		}
		if got := translated(t, r.stderr); got != c.runs {
			t.Errorf("%s: translated %d inputs, want %d", c.name, translated(t, r.stderr), c.runs)
		}
		if f := failures(out); !strings.Contains(f, "box1/broken.xml") {
			t.Errorf("%s: failures table:\n%s", c.name, f)
		}
		if c.equal {
			g := outputs(t, out)
			if len(g) != len(want) {
				t.Fatalf("%s: %d outputs, want %d", c.name, len(g), len(want))
			}
			for k, b := range want {
				if !bytes.Equal(g[k], b) {
					t.Errorf("%s: %s differs from the uninterrupted run's", c.name, k)
				}
			}
		}
	}
}

// -o naming the input folder is refused before anything is written.
func TestOutputIsInputRefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.xml"), []byte("<record/>"), 0o644)
	r := runCLI(t, env{}, dir, "-o", dir+"/.")
	if r.code != exitUsage || !strings.Contains(r.stderr, "is the input folder") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}
