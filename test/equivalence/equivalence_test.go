// Package equivalence checks pageclass against the original Python pipeline:
// for each of the five published architectures, random-initialised locally
// from its configuration (no download) and exported by
// tools/export_models.py, `pageclass` over the sample pages must agree with
// tools/reference_predict.py (PIL decode, the original preprocessing, the
// transformers/timm forward) on Top-1 for at least 99% of the pages, with a
// maximum probability difference of at most 0.02.
//
// Slow (full-size models on CPU): set ARCHIVEKIT_SLOW=1 (make equivalence).
// ARCHIVEKIT_EQ_FAMILIES picks families (default all five), ARCHIVEKIT_EQ_LIMIT
// caps the pages per run (default all 184).
package equivalence

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"archivekit/internal/testenv"
)

func repo(t *testing.T) string {
	p, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readTable(t *testing.T, path string, skip int) map[string][]float64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := map[string][]float64{}
	for _, r := range recs[1:] {
		var v []float64
		for _, c := range r[2+skip : 2+skip+11] {
			x, err := strconv.ParseFloat(c, 64)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			v = append(v, x)
		}
		out[r[0]+"|"+r[1]] = v
	}
	return out
}

func argmax(v []float64) int {
	b := 0
	for i := range v {
		if v[i] > v[b] {
			b = i
		}
	}
	return b
}

// limitedPages links the first n pages of each category into a folder.
func limitedPages(t *testing.T, src string, n int) string {
	dst := t.TempDir()
	cats, _ := os.ReadDir(src)
	total := 0
	for _, c := range cats {
		if !c.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(src, c.Name()))
		sort.Slice(files, func(i, j int) bool { return files[i].Name() < files[j].Name() })
		os.MkdirAll(filepath.Join(dst, c.Name()), 0o755)
		for i, f := range files {
			if i >= n {
				break
			}
			os.Symlink(filepath.Join(src, c.Name(), f.Name()), filepath.Join(dst, c.Name(), f.Name()))
			total++
		}
	}
	t.Logf("%d pages (at most %d per category)", total, n)
	return dst
}

func TestPageclassAgreesWithPythonReference(t *testing.T) {
	if os.Getenv("ARCHIVEKIT_SLOW") == "" {
		t.Skip("slow: set ARCHIVEKIT_SLOW=1 (make equivalence)")
	}
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTHON not set")
	}
	root := repo(t)
	pages := testenv.Data(t, "pages")
	if n, err := strconv.Atoi(os.Getenv("ARCHIVEKIT_EQ_LIMIT")); err == nil && n > 0 {
		pages = limitedPages(t, pages, n)
	}
	bin := filepath.Join(t.TempDir(), "pageclass")
	if out, err := exec.Command("go", "build", "-o", bin, "archivekit/cmd/pageclass").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	families := []string{"v1.4", "v2.4", "v3.4", "v4.4", "v5.4"}
	if f := os.Getenv("ARCHIVEKIT_EQ_FAMILIES"); f != "" {
		families = strings.Split(f, ",")
	}
	for _, fam := range families {
		t.Run(fam, func(t *testing.T) {
			dir := t.TempDir()
			model := filepath.Join(dir, "model")
			run := func(name string, args ...string) {
				cmd := exec.Command(name, args...)
				cmd.Dir = root
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
				}
			}
			run(py, "tools/export_models.py", "--random-init", fam, "--calibrate", pages, "--out", model)
			ref := filepath.Join(dir, "ref.csv")
			run(py, "tools/reference_predict.py", filepath.Join(model, "original"), "--family", fam, "--pages", pages, "--out", ref)
			res := filepath.Join(dir, "result")
			run(bin, "--config", filepath.Join(root, "setup", "config.txt"), "-d", pages, "-m", model, "--raw", "--page-from-name", "--results", res) // keyed as tools/reference_predict.py keys pages
			raws, _ := filepath.Glob(filepath.Join(res, "*_RAW.csv"))
			if len(raws) != 1 {
				t.Fatalf("RAW tables: %v", raws)
			}
			goRows, pyRows := readTable(t, raws[0], 0), readTable(t, ref, 0)
			if len(goRows) != len(pyRows) || len(goRows) == 0 {
				t.Fatalf("pageclass classified %d pages, the reference %d", len(goRows), len(pyRows))
			}
			agree, maxDiff := 0, 0.0
			for k, g := range goRows {
				p, ok := pyRows[k]
				if !ok {
					t.Fatalf("page %s missing from the reference", k)
				}
				if argmax(g) == argmax(p) {
					agree++
				}
				for i := range g {
					maxDiff = math.Max(maxDiff, math.Abs(g[i]-p[i]))
				}
			}
			share := float64(agree) / float64(len(goRows))
			msg := fmt.Sprintf("%s: Top-1 agreement %d/%d (%.1f%%), max probability difference %.4f", fam, agree, len(goRows), 100*share, maxDiff)
			t.Log(msg)
			if share < 0.99 || maxDiff > 0.02 {
				t.Error(msg + ": want at least 99% and at most 0.02")
			}
		})
	}
}
