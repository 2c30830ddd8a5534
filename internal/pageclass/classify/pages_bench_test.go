package classify_test

import (
	"archivekit/internal/testenv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
)

// referenceScript is the original tool's way: PIL decode, bilinear resize to
// S x S, ToTensor + Normalize with the model's mean and std, torch forward
// in batches of 16, softmax; one model per run. It prints the seconds from
// the first page to the last (the TorchScript executor warmed up first, as
// the Go side is).
const referenceScript = `import sys, time, json, torch
from PIL import Image
from torchvision import transforms
torch.set_num_threads(int(sys.argv[2]))
m = torch.jit.load(sys.argv[1]); m.eval()
paths = [l.strip() for l in open(sys.argv[3])]
size = int(sys.argv[4])
mean, std = json.loads(sys.argv[5]), json.loads(sys.argv[6])
tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(mean, std)])
with torch.inference_mode():
    for _ in range(3):
        m(torch.zeros(16, 3, size, size))
t = time.perf_counter()
with torch.inference_mode():
    for i in range(0, len(paths), 16):
        x = torch.stack([tf(Image.open(p).convert("RGB").resize((size, size), Image.BILINEAR)) for p in paths[i:i + 16]])
        torch.softmax(m(x), 1)
print(time.perf_counter() - t)`

// pythonReference runs referenceScript for each model of e in turn (the
// original tool ran one model per run, decoding the pages each time) and
// returns the total seconds.
func pythonReference(b *testing.B, py string, e *classify.Ensemble, list string) float64 {
	total := 0.0
	for _, m := range e.Models {
		js := func(v [3]float64) string { return fmt.Sprintf("[%g, %g, %g]", v[0], v[1], v[2]) }
		p := m.Meta.Preprocess
		out, err := exec.Command(py, "-c", referenceScript, filepath.Join(m.Dir, "model.pt"), strconv.Itoa(runtime.NumCPU()),
			list, strconv.Itoa(m.Size()), js(p.Mean), js(p.Std)).Output()
		if err != nil {
			b.Fatalf("python reference: %v", err)
		}
		sec, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			b.Fatal(err)
		}
		total += sec
	}
	return total
}

// BenchmarkPagesVsPythonReference: pages per second of the pageclass
// pipeline (classify.Ensemble.Predict, batch 16, models as classify.Load
// gives them) against the Python reference pipeline over the 184 sample
// pages, same TorchScript models, same threads, in alternating rounds (best
// round of each compared): each demo model alone, the five-model demo
// ensemble (Python: one run per model, the original's way), and the ViT
// fixture at 224; torchvision's ViT-B/16 at 224 (random weights, first 48
// pages) when ARCHIVEKIT_BENCH_MODELS names vitb16. Go runs with one lane
// (one batch at a time on every thread) and with two
// (classify.Options.Lanes: two batches at once, one thread each);
// go/python is the default's (DefaultLanes).
//
//	go test -run '^$' -bench PagesVsPythonReference -benchtime 1x ./internal/pageclass/classify
func BenchmarkPagesVsPythonReference(b *testing.B) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		b.Skip("ARCHIVEKIT_PYTHON not set")
	}
	torch.SetNumThreads(runtime.NumCPU())
	sets := map[string][]string{}
	var order []string
	if demo, err := classify.DemoEnsemble("../../../weights/demo"); err == nil {
		var all []string
		for _, f := range demo {
			name := filepath.Base(f.Dir)
			sets[name] = []string{f.Dir}
			order = append(order, name)
			all = append(all, f.Dir)
		}
		sets["demo-ensemble"] = all
		order = append(order, "demo-ensemble")
	}
	vit := classifytest.ModelDir(b, filepath.Join(b.TempDir(), "vit"), classifytest.Spec{Fixture: "bench_vit224.pt", Size: 224})
	sets["vit224"] = []string{vit}
	order = append(order, "vit224")
	if only := os.Getenv("ARCHIVEKIT_BENCH_MODELS"); only != "" {
		order = strings.Split(only, ",")
	}
	all := samplePages(b)
	for _, name := range order {
		b.Run(name, func(b *testing.B) {
			pages := all
			if name == "vitb16" {
				// Only when asked for: made here, and run over the first 48
				// pages (three batches), as its forward passes are slow.
				sets[name] = []string{vitB16(b, py, filepath.Join(b.TempDir(), "vitb16"))}
				pages = all[:48]
			}
			list := filepath.Join(b.TempDir(), "pages.txt")
			os.WriteFile(list, []byte(strings.Join(pages, "\n")), 0o644)
			var ms []*classify.Model
			for _, dir := range sets[name] {
				m, err := classify.Load(dir, "cpu")
				if err != nil {
					b.Fatal(err)
				}
				ms = append(ms, m)
			}
			e, _ := classify.NewEnsemble(ms...)
			defer e.Close()
			one, two := time.Duration(1<<62), time.Duration(1<<62)
			pyBest := 1e18
			for n := 0; n < b.N; n++ {
				for r := 0; r < 2; r++ {
					one = min(one, predictWith(b, e, pages, classify.Options{Batch: 16, Lanes: 1}))
					two = min(two, predictWith(b, e, pages, classify.Options{Batch: 16, Lanes: 2}))
					pyBest = min(pyBest, pythonReference(b, py, e, list))
				}
			}
			pps := func(d time.Duration) float64 { return float64(len(pages)) / d.Seconds() }
			pyPPS := float64(len(pages)) / pyBest
			def := one
			if classify.DefaultLanes == 2 {
				def = two
			}
			b.ReportMetric(pps(one), "pages/s-go-1lane")
			b.ReportMetric(pps(two), "pages/s-go-2lanes")
			b.ReportMetric(pyPPS, "pages/s-python")
			b.ReportMetric(pps(def)/pyPPS, "go/python")
			b.ReportMetric(pps(two)/pps(one), "2lanes/1lane")
			b.ReportMetric(testenv.LoadAvg(), "load-avg")
		})
	}
}
