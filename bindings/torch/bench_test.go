package torch

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkForwardGoVsPython measures forward throughput of the same
// TorchScript model from Go (through the shim) and from Python torch, with
// the same batch size and intra-op threads, in the same run, and reports the
// ratio go/python (1.0 = parity; the shim should cost nothing measurable).
func BenchmarkForwardGoVsPython(b *testing.B) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		b.Skip("ARCHIVEKIT_PYTHON not set")
	}
	path := fx(b, "bench_vit224.pt")
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
	in := Tensor{Data: make([]float32, batch*3*224*224), Shape: []int64{batch, 3, 224, 224}}
	for i := range in.Data {
		in.Data[i] = float32(i%251) / 251
	}
	// Warm-up: TorchScript's profiling executor optimises a graph after a
	// few runs; both sides get three before timing.
	for i := 0; i < 3; i++ {
		if _, err := m.Probabilities(in); err != nil {
			b.Fatal(err)
		}
	}
	// Rounds alternate between Go and Python so that load from other
	// processes hits both alike; the best round of each is compared.
	script := fmt.Sprintf(`import time, torch
torch.set_num_threads(%d)
m = torch.jit.load(%q); m.eval()
x = (torch.arange(%d*3*224*224) %% 251).float().div(251).reshape(%d, 3, 224, 224)
with torch.inference_mode():
    for _ in range(3):
        torch.softmax(m(x), 1)
    t = time.perf_counter()
    for _ in range(%d):
        torch.softmax(m(x), 1)
    print(time.perf_counter() - t)`, threads, path, batch, batch, iters)
	const rounds = 3
	goBest, pyBest := 1e18, 1e18
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for r := 0; r < rounds; r++ {
			start := time.Now()
			for i := 0; i < iters; i++ {
				if _, err := m.Probabilities(in); err != nil {
					b.Fatal(err)
				}
			}
			goBest = min(goBest, time.Since(start).Seconds())
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
	goIPS, pyIPS := batch*iters/goBest, batch*iters/pyBest
	b.ReportMetric(goIPS, "img/s-go")
	b.ReportMetric(pyIPS, "img/s-python")
	b.ReportMetric(goIPS/pyIPS, "go/python")
}
