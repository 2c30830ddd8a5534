package classify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/pipeline"
	"archivekit/internal/pageclass/registry"
)

func samplePages(b testing.TB) []string {
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
	return predictWith(b, e, pages, classify.Options{Batch: 16})
}

func predictWith(b *testing.B, e *classify.Ensemble, pages []string, o classify.Options) time.Duration {
	start := time.Now()
	n := 0
	_, err := e.Predict(context.Background(), pipeline.Files(pages), o, func(p classify.Page) error {
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

// BenchmarkPipelineCostLargeModel: end-to-end pages per second (decode,
// preprocess, batch, forward) over pure-forward pages per second for a
// ViT-B/16 at 224 px (86 M parameters, random weights), as a ratio.
func BenchmarkPipelineCostLargeModel(b *testing.B) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		b.Skip("ARCHIVEKIT_PYTHON not set")
	}
	torch.SetNumThreads(runtime.NumCPU())
	m, err := classify.Load(vitB16(b, py, filepath.Join(b.TempDir(), "vitb")), "cpu")
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

// vitB16 writes a model folder dir holding torchvision's ViT-B/16 at 224
// px (86 M parameters, random weights, seed 0), scripted by Python torch
// py, and returns dir.
func vitB16(b *testing.B, py, dir string) string {
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
	return dir
}
