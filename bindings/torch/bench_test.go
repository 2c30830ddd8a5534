package torch

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkForwardGoVsPython measures forward throughput of the same
// TorchScript model from Go (through the shim) and from Python torch, with
// the same batch size and intra-op threads, in the same run, and reports the
// ratio go/python (1.0 = parity; the shim should cost nothing measurable).
// It also times the module frozen and optimised for inference
// (Module.Optimize(FreezeOptimize)) in the same alternating rounds:
// go-opt/python and go-opt/go. Models: the ViT fixture at 224 and, when
// weights/demo is present, two of its CNNs (EfficientNet-Lite0 at 224,
// EfficientNet-Lite1 at 240).
//
//	go test -run '^$' -bench ForwardGoVsPython -benchtime 1x ./bindings/torch
func BenchmarkForwardGoVsPython(b *testing.B) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		b.Skip("ARCHIVEKIT_PYTHON not set")
	}
	for _, mc := range []struct {
		name, path string
		size       int
	}{
		{"vit224", fx(b, "bench_vit224.pt"), 224},
		{"lite0-demo", "../../weights/demo/model_v14/model.pt", 224},
		{"lite1-demo", "../../weights/demo/model_v34/model.pt", 240},
	} {
		b.Run(mc.name, func(b *testing.B) {
			if _, err := os.Stat(mc.path); err != nil {
				b.Skipf("no model: %v", err)
			}
			forwardGoVsPython(b, py, mc.path, mc.size)
		})
	}
}

func forwardGoVsPython(b *testing.B, py, path string, size int) {
	const batch, iters = 16, 5
	threads := runtime.NumCPU()
	if err := SetNumThreads(threads); err != nil {
		b.Fatal(err)
	}
	m, err := Load(path, "cpu")
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	opt, err := Load(path, "cpu")
	if err != nil {
		b.Fatal(err)
	}
	defer opt.Close()
	if err := opt.Optimize(FreezeOptimize); err != nil {
		b.Fatal(err)
	}
	in := Tensor{Data: make([]float32, batch*3*size*size), Shape: []int64{batch, 3, int64(size), int64(size)}}
	for i := range in.Data {
		in.Data[i] = float32(i%251) / 251
	}
	// Warm-up: TorchScript's profiling executor optimises a graph after a
	// few runs; every side gets three before timing.
	for _, mod := range []*Module{m, opt} {
		for i := 0; i < 3; i++ {
			if _, err := mod.Probabilities(in); err != nil {
				b.Fatal(err)
			}
		}
	}
	timeGo := func(mod *Module) float64 {
		start := time.Now()
		for i := 0; i < iters; i++ {
			if _, err := mod.Probabilities(in); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start).Seconds()
	}
	// Rounds alternate between Go, Go optimised and Python so that load
	// from other processes hits them alike; the best round of each is
	// compared.
	script := fmt.Sprintf(`import time, torch
torch.set_num_threads(%d)
m = torch.jit.load(%q); m.eval()
x = (torch.arange(%d*3*%d*%d) %% 251).float().div(251).reshape(%d, 3, %d, %d)
with torch.inference_mode():
    for _ in range(3):
        torch.softmax(m(x), 1)
    t = time.perf_counter()
    for _ in range(%d):
        torch.softmax(m(x), 1)
    print(time.perf_counter() - t)`, threads, path, batch, size, size, batch, size, size, iters)
	const rounds = 3
	goBest, optBest, pyBest := 1e18, 1e18, 1e18
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for r := 0; r < rounds; r++ {
			goBest = min(goBest, timeGo(m))
			optBest = min(optBest, timeGo(opt))
			out, err := exec.Command(py, "-c", script).Output()
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
	goIPS, optIPS, pyIPS := batch*iters/goBest, batch*iters/optBest, batch*iters/pyBest
	b.ReportMetric(goIPS, "img/s-go")
	b.ReportMetric(optIPS, "img/s-go-opt")
	b.ReportMetric(pyIPS, "img/s-python")
	b.ReportMetric(goIPS/pyIPS, "go/python")
	b.ReportMetric(optIPS/pyIPS, "go-opt/python")
	b.ReportMetric(optIPS/goIPS, "go-opt/go")
}

// BenchmarkLoadVsClone times, alternating, a load of the demo
// EfficientNet-Lite0 model_v14 from its file (in the page cache) and a
// copy in memory of the module loaded (Module.Clone), what the feature
// cache check of pkg/train costs a fold now against the second load it
// took before. Reports the median milliseconds of each over b.N rounds.
//
//	go test -run '^$' -bench LoadVsClone -benchtime 5x ./bindings/torch
func BenchmarkLoadVsClone(b *testing.B) {
	const path = "../../weights/demo/model_v14/model.pt"
	if _, err := os.Stat(path); err != nil {
		b.Skipf("no model: %v", err)
	}
	m, err := Load(path, "cpu")
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	var load, clone []float64
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		a, err := Load(path, "cpu")
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		c, err := m.Clone()
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		a.Close()
		c.Close()
		load = append(load, float64(t1.Sub(t0).Microseconds())/1e3)
		clone = append(clone, float64(t2.Sub(t1).Microseconds())/1e3)
	}
	slices.Sort(load)
	slices.Sort(clone)
	b.ReportMetric(load[len(load)/2], "load-ms")
	b.ReportMetric(clone[len(clone)/2], "clone-ms")
}
