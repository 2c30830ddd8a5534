package classify_test

import (
	"archivekit/internal/testenv"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
)

// benchModels are the models of the optimisation benchmarks: the demo
// ensemble, the demo fast classifier and, where the Python environment has
// timm, a random-initialised EfficientNet-Lite0 at 224 (the family of the
// fine-tuned shipped models).
func benchModels(b *testing.B) []string {
	var dirs []string
	if demo, err := classify.DemoEnsemble("../../../weights/demo"); err == nil {
		for _, f := range demo {
			dirs = append(dirs, f.Dir)
		}
	}
	if fc := "../../../weights/demo/fastcls_small"; classify.IsModelDir(fc) {
		dirs = append(dirs, fc)
	}
	if dir, err := liteModel(b); err == nil {
		dirs = append(dirs, dir)
	} else {
		b.Logf("no EfficientNet-Lite0: %v", err)
	}
	return dirs
}

// liteModel exports a random-initialised timm efficientnet_lite0 (11
// classes, TorchScript) with its model.json into a temporary folder.
func liteModel(b *testing.B) (string, error) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		return "", fmt.Errorf("ARCHIVEKIT_PYTHON not set")
	}
	dir := filepath.Join(b.TempDir(), "efficientnet_lite0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	mk := `import sys, torch, timm
torch.manual_seed(0)
m = timm.create_model("efficientnet_lite0", pretrained=False, num_classes=11).eval()
torch.jit.script(m).save(sys.argv[1])`
	if out, err := exec.Command(py, "-c", mk, filepath.Join(dir, modelmeta.WeightsFile)).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v: %s", err, out)
	}
	meta := &modelmeta.Meta{Labels: modelmeta.Categories, Base: "efficientnet_lite0", License: "Apache-2.0",
		Preprocess: registry.Preprocess{Size: 224, Resize: registry.ResizeBilinear, Mean: registry.ImageNetMean, Std: registry.ImageNetStd},
		Provenance: modelmeta.Provenance{Method: "random-init"}}
	return dir, modelmeta.Save(dir, meta)
}

// BenchmarkInferenceOptimization: forward throughput (batch 16) of each
// model as classify.Load gives it (the family's choice,
// InferenceOptimization) and frozen + optimize_for_inference, against the
// plain module. One batch of each in turn, the order rotating each round,
// so that load from other processes hits them alike; the median of 9
// batches of each is compared. On one intra-op thread the figures are
// process CPU time per batch, which load from other processes barely
// moves (cpu1-default/plain, cpu1-freeze-opt/plain); on every core's
// thread they are wall time (wall-default/plain, wall-freeze-opt/plain).
//
//	go test -run '^$' -bench InferenceOptimization -benchtime 1x ./internal/pageclass/classify
func BenchmarkInferenceOptimization(b *testing.B) {
	torch.SetNumThreads(runtime.NumCPU())
	for _, dir := range benchModels(b) {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			plain, err := classify.LoadPlain(dir, "cpu")
			if err != nil {
				b.Fatal(err)
			}
			defer plain.Close()
			def, err := classify.Load(dir, "cpu")
			if err != nil {
				b.Fatal(err)
			}
			defer def.Close()
			fo, err := classify.LoadPlain(dir, "cpu")
			if err != nil {
				b.Fatal(err)
			}
			defer fo.Close()
			if err := fo.Module.Optimize(torch.FreezeOptimize); err != nil {
				b.Fatal(err)
			}
			const batch, rounds = 16, 9
			s := int64(plain.Size())
			in := torch.Tensor{Data: make([]float32, batch*3*s*s), Shape: []int64{batch, 3, s, s}}
			for i := range in.Data {
				in.Data[i] = float32(i%251)/125 - 1
			}
			models := []*classify.Model{plain, def, fo}
			measure := func(threads int, clock func() time.Duration) []float64 {
				run := func(m *classify.Model) float64 {
					start := clock()
					if _, err := m.Module.ProbabilitiesThreads(in, threads); err != nil {
						b.Fatal(err)
					}
					return (clock() - start).Seconds()
				}
				for _, m := range models {
					for range 3 { // warm-up: the profiling executor compiles after a few runs
						run(m)
					}
				}
				times := make([][]float64, len(models))
				for r := 0; r < rounds; r++ {
					for k := range models {
						i := (k + r) % len(models)
						times[i] = append(times[i], run(models[i]))
					}
				}
				med := make([]float64, len(models))
				for i := range times {
					med[i] = median(times[i])
				}
				return med
			}
			for n := 0; n < b.N; n++ {
				cpu := measure(1, cpuTime)
				wall := measure(0, func() time.Duration { return time.Duration(time.Now().UnixNano()) })
				b.ReportMetric(batch/cpu[0], "img/cpu-s-plain")
				b.ReportMetric(cpu[0]/cpu[1], "cpu1-default/plain")
				b.ReportMetric(cpu[0]/cpu[2], "cpu1-freeze-opt/plain")
				b.ReportMetric(batch/wall[0], "img/s-plain")
				b.ReportMetric(wall[0]/wall[1], "wall-default/plain")
				b.ReportMetric(wall[0]/wall[2], "wall-freeze-opt/plain")
			}
			b.ReportMetric(float64(def.Optimized), "default-level")
			b.ReportMetric(testenv.LoadAvg(), "load-avg")
		})
	}
}

// cpuTime is the CPU time (user + system) of the whole process so far.
func cpuTime() time.Duration { return testenv.CPUTime() }

// median of a non-empty slice (sorted in place).
func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}
