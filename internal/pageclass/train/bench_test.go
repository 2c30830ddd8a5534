package train

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"archivekit/bindings/torch"
)

// BenchmarkTrainStepGoVsPython measures training throughput (AdamW step with
// softmax cross-entropy) of the same scripted model from Go and from Python
// torch, same batch and threads, alternating rounds, and reports go/python.
func BenchmarkTrainStepGoVsPython(b *testing.B) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		b.Skip("ARCHIVEKIT_PYTHON not set")
	}
	path := filepath.Join(fixtures(b), "bench_vit224.pt")
	const batch, steps, rounds = 16, 3, 3
	threads := runtime.NumCPU()
	if err := torch.SetNumThreads(threads); err != nil {
		b.Fatal(err)
	}
	m, err := torch.Load(path, "cpu")
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	tr, err := torch.NewTrainer(m, torch.DefaultAdamW(1e-4))
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	in := torch.Tensor{Data: make([]float32, batch*3*224*224), Shape: []int64{batch, 3, 224, 224}}
	for i := range in.Data {
		in.Data[i] = float32(i%251) / 251
	}
	labels := make([]int64, batch)
	for i := range labels {
		labels[i] = int64(i % 11)
	}
	for i := 0; i < 3; i++ { // warm-up, as on the Python side
		if _, _, err := tr.Step(in, labels); err != nil {
			b.Fatal(err)
		}
	}
	script := fmt.Sprintf(`import time, torch
torch.set_num_threads(%d)
m = torch.jit.load(%q); m.train()
opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
x = (torch.arange(%d*3*224*224) %% 251).float().div(251).reshape(%d, 3, 224, 224)
y = torch.arange(%d) %% 11
def step():
    opt.zero_grad(); loss = torch.nn.functional.cross_entropy(m(x), y); loss.backward(); opt.step()
for _ in range(3): step()
t = time.perf_counter()
for _ in range(%d): step()
print(time.perf_counter() - t)`, threads, path, batch, batch, batch, steps)
	goBest, pyBest := 1e18, 1e18
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for r := 0; r < rounds; r++ {
			start := time.Now()
			for i := 0; i < steps; i++ {
				if _, _, err := tr.Step(in, labels); err != nil {
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
	goIPS, pyIPS := batch*steps/goBest, batch*steps/pyBest
	b.ReportMetric(goIPS, "img/s-go")
	b.ReportMetric(pyIPS, "img/s-python")
	b.ReportMetric(goIPS/pyIPS, "go/python")
}

// BenchmarkFeatureCache trains the same frozen-backbone base on the sample
// pages with the features computed once (the default for such a base) and
// through the whole model every step (NoFeatureCache), alternating, and
// reports the training time per epoch of each (the cached one includes
// computing the features) and uncached/cached. The base is the fixture
// tiny_frozen.pt at 160 px, or the model folder ARCHIVEKIT_BENCH_BASE (a
// tools/export_models.py --pretrained --freeze-backbone export) at its own
// size; ARCHIVEKIT_BENCH_EPOCHS sets the epochs (default 5).
func BenchmarkFeatureCache(b *testing.B) {
	out := b.TempDir()
	base, size := os.Getenv("ARCHIVEKIT_BENCH_BASE"), 0
	if base == "" {
		base, size = modelDir(b, filepath.Join(out, "base"), "tiny_frozen.pt", 160), 160
	}
	epochs := 5
	if e, err := strconv.Atoi(os.Getenv("ARCHIVEKIT_BENCH_EPOCHS")); err == nil && e > 0 {
		epochs = e
	}
	best := map[bool]float64{true: math.Inf(1), false: math.Inf(1)}
	for n := 0; n < b.N; n++ {
		for _, cached := range []bool{false, true} {
			o := Options{Base: base, Pages: pages(b), Epochs: epochs, Batch: 16, LR: 1e-2, Size: size, NoFeatureCache: !cached,
				Revision: "bench", Checkpoints: filepath.Join(out, "ckpt"), Models: filepath.Join(out, "model"),
				Results: filepath.Join(out, "result"), Stamp: "bench"}
			res, err := Train(context.Background(), o)
			if err != nil {
				b.Fatal(err)
			}
			if res[0].FeaturesCached != cached {
				b.Fatalf("features cached %v, want %v: %s", res[0].FeaturesCached, cached, res[0].FeatureCache)
			}
			best[cached] = math.Min(best[cached], res[0].Elapsed.Seconds()/float64(epochs))
		}
	}
	b.ReportMetric(best[false], "s/epoch-uncached")
	b.ReportMetric(best[true], "s/epoch-cached")
	b.ReportMetric(best[false]/best[true], "uncached/cached")
}
