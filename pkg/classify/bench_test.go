package classify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"archivekit/bindings/torch"
	"archivekit/pkg/classify"
	"archivekit/pkg/classify/classifytest"
	"archivekit/pkg/modelmeta"
	"archivekit/pkg/pipeline"
	"archivekit/pkg/registry"
)

func samplePages(b *testing.B) []string {
	root := classifytest.PagesDir(b)
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".png") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func predictAll(b *testing.B, e *classify.Ensemble, pages []string) time.Duration {
	start := time.Now()
	n := 0
	_, err := e.Predict(context.Background(), pipeline.Files(pages), classify.Options{Batch: 16}, func(p classify.Page) error {
		if p.Err != nil {
			return p.Err
		}
		n++
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if n != len(pages) {
		b.Fatalf("%d of %d pages classified", n, len(pages))
	}
	return time.Since(start)
}

// referenceScript is the original tool's way: PIL decode, bilinear resize to
// S x S, ToTensor + Normalize, torch forward in batches of 16, softmax.
const referenceScript = `import sys, time, torch
from PIL import Image
from torchvision import transforms
torch.set_num_threads(int(sys.argv[2]))
m = torch.jit.load(sys.argv[1]); m.eval()
paths = [l.strip() for l in open(sys.argv[3])]
size = int(sys.argv[4])
tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize([0.5] * 3, [0.5] * 3)])
with torch.inference_mode():
    for _ in range(3):  # warm-up of the TorchScript executor, as the Go side has had
        m(torch.zeros(16, 3, size, size))
t = time.perf_counter()
with torch.inference_mode():
    for i in range(0, len(paths), 16):
        x = torch.stack([tf(Image.open(p).convert("RGB").resize((size, size), Image.BILINEAR)) for p in paths[i:i + 16]])
        torch.softmax(m(x), 1)
print(time.perf_counter() - t)`

// BenchmarkPagesVsPythonReference: pages per second of the pageclass
// pipeline against the Python reference pipeline, same TorchScript model,
// same 184 pages, same threads; rounds alternate, best of each compared.
func BenchmarkPagesVsPythonReference(b *testing.B) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		b.Skip("ARCHIVEKIT_PYTHON not set")
	}
	threads := runtime.NumCPU()
	torch.SetNumThreads(threads)
	dir := classifytest.ModelDir(b, filepath.Join(b.TempDir(), "m"), classifytest.Spec{Fixture: "bench_vit224.pt", Size: 224})
	m, err := classify.Load(dir, "cpu")
	if err != nil {
		b.Fatal(err)
	}
	e, _ := classify.NewEnsemble(m)
	defer e.Close()
	pages := samplePages(b)
	list := filepath.Join(b.TempDir(), "pages.txt")
	os.WriteFile(list, []byte(strings.Join(pages, "\n")), 0o644)
	goBest, pyBest := time.Duration(1<<62), 1e18
	for n := 0; n < b.N; n++ {
		for r := 0; r < 2; r++ {
			goBest = min(goBest, predictAll(b, e, pages))
			out, err := exec.Command(py, "-c", referenceScript, filepath.Join(dir, "model.pt"), strconv.Itoa(threads), list, "224").Output()
			if err != nil {
				b.Fatalf("python reference: %v", err)
			}
			sec, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				b.Fatal(err)
			}
			pyBest = min(pyBest, sec)
		}
	}
	goPPS := float64(len(pages)) / goBest.Seconds()
	pyPPS := float64(len(pages)) / pyBest
	b.ReportMetric(goPPS, "pages/s-go")
	b.ReportMetric(pyPPS, "pages/s-python")
	b.ReportMetric(goPPS/pyPPS, "go/python")
}

// BenchmarkPipelineCostLargeModel: end-to-end pages per second (decode,
// preprocess, batch, forward) over pure-forward pages per second for a
// ViT-B/16 at 224 px (86 M parameters, random weights), as a ratio.
func BenchmarkPipelineCostLargeModel(b *testing.B) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		b.Skip("ARCHIVEKIT_PYTHON not set")
	}
	torch.SetNumThreads(runtime.NumCPU())
	tmp := b.TempDir()
	dir := filepath.Join(tmp, "vitb")
	os.MkdirAll(dir, 0o755)
	mk := `import sys, torch, torchvision
torch.manual_seed(0)
torch.jit.script(torchvision.models.vit_b_16(num_classes=11).eval()).save(sys.argv[1])`
	if out, err := exec.Command(py, "-c", mk, filepath.Join(dir, modelmeta.WeightsFile)).CombinedOutput(); err != nil {
		b.Fatalf("making ViT-B/16: %v\n%s", err, out)
	}
	meta := &modelmeta.Meta{Labels: modelmeta.Categories, Base: "vit_b_16", License: "MIT",
		Preprocess: registry.Preprocess{Size: 224, Resize: registry.ResizeBilinear, Mean: registry.HalfMean, Std: registry.HalfStd},
		Provenance: modelmeta.Provenance{Method: "random-init"}}
	if err := modelmeta.Save(dir, meta); err != nil {
		b.Fatal(err)
	}
	m, err := classify.Load(dir, "cpu")
	if err != nil {
		b.Fatal(err)
	}
	e, _ := classify.NewEnsemble(m)
	defer e.Close()
	pages := samplePages(b)[:64]
	in := make([]float32, 16*m.InputLen())
	for n := 0; n < b.N; n++ {
		start := time.Now()
		for i := 0; i < len(pages)/16; i++ {
			if _, err := m.Probabilities(in, 16, 3, 224, 224); err != nil {
				b.Fatal(err)
			}
		}
		pure := float64(len(pages)) / time.Since(start).Seconds()
		e2e := float64(len(pages)) / predictAll(b, e, pages).Seconds()
		b.ReportMetric(pure, "pages/s-forward")
		b.ReportMetric(e2e, "pages/s-end-to-end")
		b.ReportMetric(e2e/pure, "end-to-end/forward")
	}
}
