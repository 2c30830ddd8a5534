package torch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

func TestParsePrecision(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Precision
	}{{"fp32", FP32}, {"TF32", TF32}, {" bf16", BF16}, {"fp16", FP16}} {
		got, err := ParsePrecision(c.in)
		if err != nil || got != c.want || got.String() != strings.ToLower(strings.TrimSpace(c.in)) {
			t.Errorf("ParsePrecision(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := ParsePrecision("int8"); err == nil || !strings.Contains(err.Error(), "fp32, tf32, bf16, fp16") {
		t.Errorf("ParsePrecision(int8): %v, want an error listing the precisions", err)
	}
	if DefaultPrecision("cuda:0") != TF32 || DefaultPrecision("cpu") != FP32 {
		t.Error("default precision: want tf32 on CUDA, fp32 on the CPU")
	}
	if p, note, err := TF32.Effective("cpu"); p != FP32 || note == "" || err != nil {
		t.Errorf("tf32 on the CPU = %v %q %v, want fp32 with a note", p, note, err)
	}
	if _, _, err := FP16.Effective("cpu"); err == nil {
		t.Error("fp16 on the CPU must be refused")
	}
}

// softmaxRows runs in through m as probabilities.
func probs(t *testing.T, m *Module, in Tensor) [][]float32 {
	t.Helper()
	out, err := m.Probabilities(in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPrecisionOnCPU: bf16 runs on the CPU with probabilities close to
// fp32's; fp16 is refused with a clear error; the precision cannot change
// once the module is frozen.
func TestPrecisionOnCPU(t *testing.T) {
	in := forwardInput(t)
	for _, name := range []string{"tiny_cnn.pt", "tiny_vit.pt"} {
		t.Run(name, func(t *testing.T) {
			ref := probs(t, load(t, name), in)
			m := load(t, name)
			err := m.SetPrecision(FP16)
			if err == nil || !strings.Contains(err.Error(), "CUDA only") {
				t.Fatalf("fp16 on the CPU: %v, want an error saying it runs on CUDA only", err)
			}
			if err := m.SetPrecision(BF16); err != nil {
				t.Fatalf("bf16 on the CPU: %v", err)
			}
			if m.Precision() != BF16 {
				t.Errorf("Precision() = %v after SetPrecision(bf16)", m.Precision())
			}
			got := probs(t, m, in)
			if d := maxRowsDiff(got, ref); d > 0.05 || d == 0 {
				t.Errorf("bf16 probabilities differ from fp32 by %g (want 0 < d <= 0.05: converted, and close)", d)
			}
			for _, r := range got {
				s := 0.0
				for _, v := range r {
					s += float64(v)
				}
				if math.Abs(s-1) > 1e-5 { // softmax in float32
					t.Errorf("bf16 row sums to %g", s)
				}
			}
			if err := m.Optimize(Freeze); err != nil {
				t.Fatalf("freezing a bf16 module: %v", err)
			}
			if d := maxRowsDiff(probs(t, m, in), ref); d > 0.05 {
				t.Errorf("frozen bf16 differs from fp32 by %g", d)
			}
			if err := m.SetPrecision(FP32); err == nil {
				t.Error("changing the precision of a frozen module must be refused")
			}
		})
	}
	m := load(t, "tiny_cnn.pt")
	if err := m.SetPrecision(TF32); err != nil {
		t.Fatal(err)
	}
	if d := maxRowsDiff(probs(t, m, in), probs(t, load(t, "tiny_cnn.pt"), in)); d != 0 {
		t.Errorf("tf32 on the CPU differs from fp32 by %g; it is fp32 there", d)
	}
}

// devices are the devices the batch tests run on: the CPU, and the first
// CUDA device when there is one.
func devices() []string {
	if CUDAAvailable() {
		return []string{"cpu", "cuda:0"}
	}
	return []string{"cpu"}
}

// batchTolerance bounds the difference of the device-side preprocessing
// from Preprocess: on the CPU the same kernels (float rounding only); on
// CUDA its resize kernel rounds differently, which can move a pixel across
// an 8-bit rounding step (1/255/std, at most one step) on a few pixels.
func batchTolerance(device string, std []float32) (maxDiff, share float64) {
	if device == "cpu" {
		return 1e-5, 0
	}
	return 1.0001 / 255 / float64(min(std[0], std[1], std[2])), 0.01
}

// TestBatchMatchesPreprocess: the device-side preprocessing (8-bit pages
// uploaded, resized on the device, normalised per model) gives
// Preprocess's values, on the torchvision reference pages and on random
// pages up, down and not resized, grey and colour.
func TestBatchMatchesPreprocess(t *testing.T) {
	cases := preCases(t)
	type page struct {
		pix     []uint8
		h, w, c int
	}
	r := rand.New(rand.NewPCG(1, 2))
	random := func(h, w, c int) page {
		p := page{pix: make([]uint8, h*w*c), h: h, w: w, c: c}
		for i := range p.pix {
			p.pix[i] = uint8(r.IntN(256))
		}
		return p
	}
	for _, dev := range devices() {
		for i, c := range cases {
			pix, err := os.ReadFile(fx(t, fmt.Sprintf("pre_%d.u8", i)))
			if err != nil {
				t.Fatal(err)
			}
			pages := []page{{pix, c.H, c.W, c.C}, random(c.Size, c.Size, 3), random(57, 2*c.Size+3, 1), random(3*c.Size, 31, 3)}
			t.Run(fmt.Sprintf("%s/%d", dev, i), func(t *testing.T) {
				bt, err := NewBatch(dev, len(pages), c.Size)
				if err != nil {
					t.Fatal(err)
				}
				defer bt.Close()
				for k, p := range pages {
					if err := bt.Set(k, p.pix, p.h, p.w, p.c); err != nil {
						t.Fatal(err)
					}
				}
				limit, share := batchTolerance(dev, c.Std)
				for k, p := range pages {
					want, err := Preprocess(p.pix, p.h, p.w, p.c, c.Size, [3]float32(c.Mean), [3]float32(c.Std))
					if err != nil {
						t.Fatal(err)
					}
					got, err := bt.Page(k, [3]float32(c.Mean), [3]float32(c.Std))
					if err != nil {
						t.Fatal(err)
					}
					worst, off := 0.0, 0
					for j := range want {
						d := math.Abs(float64(got[j] - want[j]))
						worst = math.Max(worst, d)
						if d > 1e-5 {
							off++
						}
					}
					if worst > limit || float64(off) > share*float64(len(want)) {
						t.Errorf("page %d (%dx%dx%d): differs from Preprocess by up to %g on %d of %d values (limits %g, %g%%)",
							k, p.h, p.w, p.c, worst, off, len(want), limit, 100*share)
					}
				}
			})
		}
	}
}

// TestForwardBatchMatchesForward: a model's probabilities of a batch
// resized on the device equal those of the same pages preprocessed on the
// CPU and passed as floats; models of one size share the batch, each with
// its own mean and std.
func TestForwardBatchMatchesForward(t *testing.T) {
	const size, n = 32, 5
	r := rand.New(rand.NewPCG(3, 4))
	for _, dev := range devices() {
		t.Run(dev, func(t *testing.T) {
			m, err := Load(fx(t, "tiny_cnn.pt"), dev)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			bt, err := NewBatch(dev, n+2, size)
			if err != nil {
				t.Fatal(err)
			}
			defer bt.Close()
			var pix [][]uint8
			for k := 0; k < n; k++ {
				h, w := 40+13*k, 90-11*k
				p := make([]uint8, h*w*3)
				for i := range p {
					p[i] = uint8(r.IntN(256))
				}
				pix = append(pix, p)
				if err := bt.Set(k, p, h, w, 3); err != nil {
					t.Fatal(err)
				}
			}
			for _, norm := range [][2][3]float32{{{0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}}, {{0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}}} {
				var flat []float32
				for k, p := range pix {
					h, w := 40+13*k, 90-11*k
					v, err := Preprocess(p, h, w, 3, size, norm[0], norm[1])
					if err != nil {
						t.Fatal(err)
					}
					flat = append(flat, v...)
				}
				want, err := m.Probabilities(Tensor{Data: flat, Shape: []int64{n, 3, size, size}})
				if err != nil {
					t.Fatal(err)
				}
				got, err := m.ProbabilitiesBatch(bt, n, norm[0], norm[1], 0)
				if err != nil {
					t.Fatal(err)
				}
				limit := 1e-5
				if dev != "cpu" {
					limit = 2e-3
				}
				if len(got) != n {
					t.Fatalf("%d rows for %d pages", len(got), n)
				}
				if d := maxRowsDiff(got, want); d > limit {
					t.Errorf("mean %v: batch probabilities differ from the float path by %g (limit %g)", norm[0], d, limit)
				}
			}
			if _, err := m.ProbabilitiesBatch(bt, n+3, [3]float32{}, [3]float32{1, 1, 1}, 0); err == nil {
				t.Error("more pages than the batch holds must be an error")
			}
			if err := bt.Set(n+2, pix[0], 40, 90, 3); err == nil {
				t.Error("a page past the batch's end must be an error")
			}
			if err := bt.Set(0, pix[0], 40, 90, 2); err == nil {
				t.Error("a 2-channel page must be an error")
			}
			bt.Close()
			if _, err := m.ProbabilitiesBatch(bt, 1, [3]float32{}, [3]float32{1, 1, 1}, 0); err != ErrClosed {
				t.Errorf("closed batch: %v, want ErrClosed", err)
			}
		})
	}
}

// TestSetAllMatchesSet: a page uploaded once and resized into batches of
// several sizes (SetAll) gives each batch the values Set gives it; a bad
// page index, a closed batch and no batch at all are errors.
func TestSetAllMatchesSet(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	sizes := []int{384, 224, 97}
	for _, dev := range devices() {
		for _, shape := range [][3]int{{500, 410, 3}, {300, 200, 1}, {224, 224, 3}} {
			h, w, c := shape[0], shape[1], shape[2]
			pix := make([]uint8, h*w*c)
			for i := range pix {
				pix[i] = uint8(r.IntN(256))
			}
			var all, one []*Batch
			for _, s := range sizes {
				a, err := NewBatch(dev, 2, s)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Close()
				o, err := NewBatch(dev, 2, s)
				if err != nil {
					t.Fatal(err)
				}
				defer o.Close()
				all, one = append(all, a), append(one, o)
				if err := o.Set(1, pix, h, w, c); err != nil {
					t.Fatal(err)
				}
			}
			if err := SetAll(all, 1, pix, h, w, c); err != nil {
				t.Fatal(err)
			}
			mean, std := [3]float32{0.5, 0.4, 0.3}, [3]float32{0.2, 0.25, 0.3}
			for k := range sizes {
				want, err := one[k].Page(1, mean, std)
				if err != nil {
					t.Fatal(err)
				}
				got, err := all[k].Page(1, mean, std)
				if err != nil {
					t.Fatal(err)
				}
				worst := 0.0
				for j := range want {
					worst = math.Max(worst, math.Abs(float64(got[j]-want[j])))
				}
				if worst > 1e-5 {
					t.Errorf("%s %dx%dx%d to %d: SetAll differs from Set by %g", dev, h, w, c, sizes[k], worst)
				}
			}
		}
	}
	b, err := NewBatch("cpu", 1, 32)
	if err != nil {
		t.Fatal(err)
	}
	pix := make([]uint8, 40*40*3)
	if err := SetAll([]*Batch{b}, 1, pix, 40, 40, 3); err == nil {
		t.Error("SetAll of page 1 of a batch of 1: no error")
	}
	if err := SetAll(nil, 0, pix, 40, 40, 3); err == nil {
		t.Error("SetAll into no batch: no error")
	}
	b.Close()
	if err := SetAll([]*Batch{b}, 0, pix, 40, 40, 3); err == nil {
		t.Error("SetAll into a closed batch: no error")
	}
}

func TestCheckDevice(t *testing.T) {
	for d, ok := range map[string]bool{"cpu": true, "auto": true, "cuda": true, "cuda:0": true, "cuda:3": true,
		"gpu": false, "cuda:": false, "cuda:-1": false, "cuda:x": false, "CPU ": false, "": false} {
		if err := CheckDevice(d); (err == nil) != ok {
			t.Errorf("CheckDevice(%q) = %v, want ok %v", d, err, ok)
		}
	}
}
