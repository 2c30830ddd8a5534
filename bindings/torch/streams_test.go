package torch

import (
	"sync"
	"testing"
)

// TestCUDAStreamPool: forward passes called from several goroutines at
// once give the logits of the Python reference whether each takes a
// pooled stream (the default) or all share the calling thread's stream,
// on every device here (on the CPU the setting changes nothing; on CUDA
// it is the comparison test/gpu/run.sh times); the setting reads back.
func TestCUDAStreamPool(t *testing.T) {
	if !CUDAStreamPool() {
		t.Fatal("the stream pool is off by default")
	}
	defer SetCUDAStreamPool(true)
	want := readF32(t, fx(t, "tiny_cnn.logits.bin"))
	in := forwardInput(t)
	for _, dev := range devices() {
		m, err := Load(fx(t, "tiny_cnn.pt"), dev)
		if err != nil {
			t.Fatal(err)
		}
		for _, pooled := range []bool{false, true} {
			if err := SetCUDAStreamPool(pooled); err != nil {
				t.Fatal(err)
			}
			if CUDAStreamPool() != pooled {
				t.Fatalf("CUDAStreamPool() = %v after SetCUDAStreamPool(%v)", !pooled, pooled)
			}
			var wg sync.WaitGroup
			got := make([][][]float32, 4)
			errs := make([]error, 4)
			for g := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					got[g], errs[g] = m.Forward(in)
				}()
			}
			wg.Wait()
			for g := range got {
				if errs[g] != nil {
					t.Fatalf("%s, pooled %v: %v", dev, pooled, errs[g])
				}
				if d := maxAbsDiff(t, got[g], want); d > 1e-3 {
					t.Errorf("%s, pooled %v, goroutine %d: logits differ from Python's by %g", dev, pooled, g, d)
				}
			}
		}
		m.Close()
	}
}
