package torch

import (
	"archivekit/internal/testenv"

	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkForwardGoVsPython measures forward throughput of the same
// TorchScript model from Go (through the shim) and from Python torch, with
// the same batch size and intra-op threads, in the same run, and reports the
// ratio go/python (1.0 = parity; the shim should cost nothing measurable).
// It also times the module frozen and optimised for inference
// (Module.Optimize(FreezeOptimize)) in the same alternating rounds:
// go-opt/python and go-opt/go, and the same ratios in process CPU time
// (cpu-go/python, cpu-go-opt/python: CPU per image of Python over Go's, so
// above 1 means Go spends less). Models: the ViT fixture at 224 and, when
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
	// timeGo returns the wall and the process CPU seconds of iters passes.
	timeGo := func(mod *Module) (wall, cpu float64) {
		start, c0 := time.Now(), testenv.CPUTime()
		for i := 0; i < iters; i++ {
			if _, err := mod.Probabilities(in); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start).Seconds(), (testenv.CPUTime() - c0).Seconds()
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
    t, c = time.perf_counter(), time.process_time()
    for _ in range(%d):
        torch.softmax(m(x), 1)
    print(time.perf_counter() - t, time.process_time() - c)`, threads, path, batch, size, size, batch, size, size, iters)
	const rounds = 3
	goBest, optBest, pyBest := 1e18, 1e18, 1e18
	goCPU, optCPU, pyCPU := 1e18, 1e18, 1e18
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for r := 0; r < rounds; r++ {
			w, c := timeGo(m)
			goBest, goCPU = min(goBest, w), min(goCPU, c)
			w, c = timeGo(opt)
			optBest, optCPU = min(optBest, w), min(optCPU, c)
			out, err := exec.Command(py, "-c", script).Output()
			if err != nil {
				b.Fatalf("python reference: %v", err)
			}
			f := strings.Fields(string(out))
			if len(f) != 2 {
				b.Fatalf("python reference printed %q", out)
			}
			w, err = strconv.ParseFloat(f[0], 64)
			if err == nil {
				c, err = strconv.ParseFloat(f[1], 64)
			}
			if err != nil {
				b.Fatal(err)
			}
			pyBest, pyCPU = min(pyBest, w), min(pyCPU, c)
		}
	}
	goIPS, optIPS, pyIPS := batch*iters/goBest, batch*iters/optBest, batch*iters/pyBest
	b.ReportMetric(goIPS, "img/s-go")
	b.ReportMetric(optIPS, "img/s-go-opt")
	b.ReportMetric(pyIPS, "img/s-python")
	b.ReportMetric(goIPS/pyIPS, "go/python")
	b.ReportMetric(optIPS/pyIPS, "go-opt/python")
	b.ReportMetric(optIPS/goIPS, "go-opt/go")
	// The same in process CPU time (Python's own time.process_time): a
	// ratio the load of other processes moves much less than wall time.
	b.ReportMetric(pyCPU/goCPU, "cpu-go/python")
	b.ReportMetric(pyCPU/optCPU, "cpu-go-opt/python")
}

// BenchmarkForwardPageFaults measures what keeping freed memory
// (KeepsFreedMemory) saves: forward passes of the ViT fixture at 224,
// batch 16, on the process-wide threads, in child processes with the
// program's malloc settings and with glibc's defaults
// (ARCHIVEKIT_MALLOC_DEFAULTS), 3 rounds in turn. Per image, the median
// round of each: minor page faults (memory mapped and zeroed again) and
// process CPU time, user and system, which load from other processes
// barely moves.
//
//	go test -run '^$' -bench ForwardPageFaults -benchtime 1x ./bindings/torch
func BenchmarkForwardPageFaults(b *testing.B) {
	const batch, size, passes = 16, 224, 6
	if os.Getenv("ARCHIVEKIT_FAULTS_CHILD") == "1" {
		m, err := Load(fx(b, "bench_vit224.pt"), "cpu")
		if err != nil {
			b.Fatal(err)
		}
		in := Tensor{Data: make([]float32, batch*3*size*size), Shape: []int64{batch, 3, size, size}}
		for i := range in.Data {
			in.Data[i] = float32(i%251) / 251
		}
		var r0, r1 syscall.Rusage
		for i := range 4 + passes { // 4 warm-up passes (the calls spread over the inference threads)
			if i == 4 {
				syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
			}
			if _, err := m.Probabilities(in); err != nil {
				b.Fatal(err)
			}
		}
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		n := float64(batch * passes)
		fmt.Printf("faults=%g user=%g sys=%g\n", float64(r1.Minflt-r0.Minflt)/n,
			float64(r1.Utime.Nano()-r0.Utime.Nano())/1e6/n, float64(r1.Stime.Nano()-r0.Stime.Nano())/1e6/n)
		os.Exit(0)
	}
	child := func(env ...string) (faults, user, sys float64) {
		s := childLine(b, "faults=", append(env, "ARCHIVEKIT_FAULTS_CHILD=1"),
			"-test.run", "^$", "-test.bench", "^BenchmarkForwardPageFaults$", "-test.benchtime", "1x")
		if _, err := fmt.Sscanf(s, "faults=%g user=%g sys=%g", &faults, &user, &sys); err != nil {
			b.Fatalf("child printed %q: %v", s, err)
		}
		return faults, user, sys
	}
	const rounds = 3
	var kept, dflt [3][]float64
	for n := 0; n < b.N; n++ {
		for r := range rounds {
			sides := []func(){
				func() {
					f, u, s := child()
					kept[0], kept[1], kept[2] = append(kept[0], f), append(kept[1], u), append(kept[2], s)
				},
				func() {
					f, u, s := child("ARCHIVEKIT_MALLOC_DEFAULTS=1")
					dflt[0], dflt[1], dflt[2] = append(dflt[0], f), append(dflt[1], u), append(dflt[2], s)
				},
			}
			if r%2 == 1 {
				sides[0], sides[1] = sides[1], sides[0]
			}
			for _, f := range sides {
				f()
			}
		}
	}
	median := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	b.ReportMetric(median(kept[0]), "faults/img-kept")
	b.ReportMetric(median(dflt[0]), "faults/img-glibc")
	b.ReportMetric(median(kept[1])+median(kept[2]), "cpu-ms/img-kept")
	b.ReportMetric(median(dflt[1])+median(dflt[2]), "cpu-ms/img-glibc")
	b.ReportMetric(median(kept[2]), "sys-ms/img-kept")
	b.ReportMetric(median(dflt[2]), "sys-ms/img-glibc")
}

// BenchmarkLoadVsClone times, alternating, a load of the demo
// EfficientNet-Lite0 model_v14 from its file (in the page cache) and a
// copy in memory of the module loaded (Module.Clone), what the feature
// cache check of internal/pageclass/train costs a fold now against the second load it
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
