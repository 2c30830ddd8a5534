package torch

import (
	"archivekit/internal/testenv"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The fixtures are made by test/make_fixtures.py (make fixtures); the
// Makefile passes their directory and the virtualenv's python.
func fixtures(t testing.TB) string {
	d := testenv.Fixtures(t)
	return d
}

func fx(t testing.TB, name string) string { return filepath.Join(fixtures(t), name) }

func readF32(t testing.TB, path string) []float32 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func forwardInput(t testing.TB) Tensor {
	return Tensor{Data: readF32(t, fx(t, "forward_input.bin")), Shape: []int64{4, 3, 32, 32}}
}

func maxAbsDiff(t testing.TB, got [][]float32, want []float32) float64 {
	t.Helper()
	var flat []float32
	for _, r := range got {
		flat = append(flat, r...)
	}
	if len(flat) != len(want) {
		t.Fatalf("got %d values, want %d", len(flat), len(want))
	}
	m := 0.0
	for i := range flat {
		m = math.Max(m, math.Abs(float64(flat[i]-want[i])))
	}
	return m
}

func load(t testing.TB, name string) *Module {
	t.Helper()
	m, err := Load(fx(t, name), "cpu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestForwardEqualsPython(t *testing.T) {
	in := forwardInput(t)
	for _, name := range []string{"tiny_cnn", "tiny_vit"} {
		t.Run(name, func(t *testing.T) {
			m := load(t, name+".pt")
			logits, err := m.Forward(in)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(t, logits, readF32(t, fx(t, name+".logits.bin"))); d > 1e-5 {
				t.Errorf("logits differ from Python by %g (limit 1e-5)", d)
			}
			probs, err := m.Probabilities(in)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(t, probs, readF32(t, fx(t, name+".probs.bin"))); d > 1e-5 {
				t.Errorf("probabilities differ from Python by %g (limit 1e-5)", d)
			}
			for i, row := range probs {
				s := 0.0
				for _, p := range row {
					s += float64(p)
				}
				if math.Abs(s-1) > 1e-5 {
					t.Errorf("row %d sums to %g", i, s)
				}
			}
		})
	}
}

type preCase struct {
	Name      string
	H, W, C   int
	Size      int
	Mean, Std []float32
}

// preCases are the preprocessing cases of the fixtures' manifest (pages
// pre_<i>.u8 and torchvision's pre_<i>.expected.bin).
func preCases(t *testing.T) []preCase {
	t.Helper()
	var man struct{ Preprocess []preCase }
	b, err := os.ReadFile(fx(t, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &man); err != nil {
		t.Fatal(err)
	}
	if len(man.Preprocess) < 3 {
		t.Fatalf("manifest lists %d preprocessing cases", len(man.Preprocess))
	}
	return man.Preprocess
}

func TestPreprocessEqualsTorchvision(t *testing.T) {
	for i, c := range preCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			pix, err := os.ReadFile(fx(t, fmt.Sprintf("pre_%d.u8", i)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Preprocess(pix, c.H, c.W, c.C, c.Size, [3]float32(c.Mean), [3]float32(c.Std))
			if err != nil {
				t.Fatal(err)
			}
			want := readF32(t, fx(t, fmt.Sprintf("pre_%d.expected.bin", i)))
			if d := maxAbsDiff(t, [][]float32{got}, want); d > 1e-4 {
				t.Errorf("differs from torchvision by %g (limit 1e-4)", d)
			}
		})
	}
}

func TestAverageEqualsPython(t *testing.T) {
	in := forwardInput(t)
	a, b, c := load(t, "avg_a.pt"), load(t, "avg_b.pt"), load(t, "avg_c.pt")
	for _, tc := range []struct {
		name string
		mods []*Module
	}{{"avg2", []*Module{a, b}}, {"avg3", []*Module{a, b, c}}} {
		t.Run(tc.name, func(t *testing.T) {
			avg, err := Average(tc.mods...)
			if err != nil {
				t.Fatal(err)
			}
			defer avg.Close()
			got, err := avg.Forward(in)
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(t, got, readF32(t, fx(t, tc.name+".logits.bin"))); d > 1e-5 {
				t.Errorf("Go average differs from the Python average by %g", d)
			}
		})
	}
	// the inputs are untouched by averaging
	orig, _ := a.Forward(in)
	again, _ := load(t, "avg_a.pt").Forward(in)
	if d := maxAbsDiff(t, orig, flatten(again)); d != 0 {
		t.Errorf("averaging changed an input module (diff %g)", d)
	}
}

func flatten(x [][]float32) []float32 {
	var f []float32
	for _, r := range x {
		f = append(f, r...)
	}
	return f
}

func TestBadInputsAreErrors(t *testing.T) {
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.pt")
	os.WriteFile(corrupt, []byte("this is not a zip archive of a TorchScript module"), 0o644)
	cases := []struct {
		name    string
		do      func() error
		wantMsg string
	}{
		{"missing file", func() error { _, err := Load(filepath.Join(dir, "nope.pt"), "cpu"); return err }, "nope.pt"},
		{"corrupt model", func() error { _, err := Load(corrupt, "cpu"); return err }, "not a loadable TorchScript file"},
		{"directory", func() error { _, err := Load(dir, "cpu"); return err }, "not a regular file"},
		{"bad device", func() error { _, err := Load(fx(t, "tiny_cnn.pt"), "tpu:0"); return err }, "want cpu or cuda:N"},
		{"cuda without gpu", func() error {
			if CUDAAvailable() {
				return errors.New("CUDA is available (skip)")
			}
			_, err := Load(fx(t, "tiny_cnn.pt"), "cuda:0")
			return err
		}, "CUDA is not available"},
		{"wrong shape", func() error {
			m := load(t, "tiny_vit.pt")
			_, err := m.Forward(Tensor{Data: make([]float32, 2*3*48*48), Shape: []int64{2, 3, 48, 48}})
			return err
		}, "forward"},
		{"wrong rank", func() error {
			m := load(t, "tiny_cnn.pt")
			_, err := m.Forward(Tensor{Data: make([]float32, 3*32*32), Shape: []int64{3, 32, 32}})
			return err
		}, "4-d NCHW"},
		{"shape/data mismatch", func() error {
			m := load(t, "tiny_cnn.pt")
			_, err := m.Forward(Tensor{Data: make([]float32, 10), Shape: []int64{1, 3, 32, 32}})
			return err
		}, "does not match"},
		{"mismatched average", func() error { _, err := Average(load(t, "avg_a.pt"), load(t, "mismatch.pt")); return err }, "shape"},
		{"closed module", func() error {
			m := load(t, "tiny_cnn.pt")
			m.Close()
			_, err := m.Forward(forwardInput(t))
			return err
		}, "closed"},
		{"bad label", func() error {
			m := load(t, "tiny_cnn.pt")
			tr, err := NewTrainer(m, DefaultAdamW(1e-3))
			if err != nil {
				return err
			}
			defer tr.Close()
			_, _, err = tr.Step(forwardInput(t), []int64{0, 1, 2, 11})
			return err
		}, "label out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "(skip)") {
				t.Skip(err)
			}
			if !strings.Contains(err.Error(), c.wantMsg) {
				t.Errorf("error %q does not mention %q", err, c.wantMsg)
			}
		})
	}
}

// separable makes n noisy 32x32 images whose class is their colour (11
// distinct RGB levels), so a tiny CNN can reach 100% accuracy quickly.
func separable(n, classes int, seed uint64) (Tensor, []int64) {
	data := make([]float32, n*3*32*32)
	labels := make([]int64, n)
	s := seed
	rnd := func() float32 { // splitmix64
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return float32(z>>11) / float32(1<<53)
	}
	for i := 0; i < n; i++ {
		k := i % classes
		labels[i] = int64(k)
		colour := [3]float32{float32(k%3) / 2, float32(k/3%3) / 2, float32(k/9%3) / 2}
		for c := 0; c < 3; c++ {
			for y := 0; y < 32; y++ {
				for x := 0; x < 32; x++ {
					data[((i*3+c)*32+y)*32+x] = colour[c] + rnd()*0.2 - 0.1
				}
			}
		}
	}
	return Tensor{Data: data, Shape: []int64{int64(n), 3, 32, 32}}, labels
}

func accuracy(rows [][]float32, labels []int64) float64 {
	ok := 0
	for i, r := range rows {
		best := 0
		for j := range r {
			if r[j] > r[best] {
				best = j
			}
		}
		if int64(best) == labels[i] {
			ok++
		}
	}
	return float64(ok) / float64(len(rows))
}

func TestTrainingReachesFullAccuracyAndLoadsInPython(t *testing.T) {
	ManualSeed(1)
	m := load(t, "tiny_cnn.pt")
	tr, err := NewTrainer(m, DefaultAdamW(1e-2))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	x, y := separable(44, 11, 42)
	var first, last float32
	steps := 150
	for s := 0; s < steps; s++ {
		// warm-up then linear decay, as the classifier's training loop does
		lr := 1e-2 * math.Min(float64(s+1)/15, float64(steps-s)/float64(steps-15))
		if err := tr.SetLR(lr); err != nil {
			t.Fatal(err)
		}
		loss, _, err := tr.Step(x, y)
		if err != nil {
			t.Fatal(err)
		}
		if s == 0 {
			first = loss
		}
		last = loss
	}
	if !(last < first/10) {
		t.Errorf("loss went from %g to %g: not down by 10x", first, last)
	}
	if err := m.SetTrain(false); err != nil {
		t.Fatal(err)
	}
	xt, yt := separable(22, 11, 7)
	probs, err := m.Probabilities(xt)
	if err != nil {
		t.Fatal(err)
	}
	if acc := accuracy(probs, yt); acc != 1 {
		t.Errorf("held-out accuracy %.3f, want 1.0", acc)
	}

	// The saved file loads and runs in Python torch with the same outputs.
	path := filepath.Join(t.TempDir(), "trained.pt")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTHON not set: cannot check the saved model in Python")
	}
	inPath := filepath.Join(t.TempDir(), "x.bin")
	buf := make([]byte, 4*len(xt.Data))
	for i, v := range xt.Data {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
	}
	os.WriteFile(inPath, buf, 0o644)
	script := `import sys, json, numpy as np, torch
m = torch.jit.load(sys.argv[1]); m.eval()
x = torch.from_numpy(np.fromfile(sys.argv[2], dtype=np.float32).reshape(-1, 3, 32, 32))
with torch.inference_mode(): print(json.dumps(torch.softmax(m(x), 1).flatten().tolist()))`
	out, err := exec.Command(py, "-c", script, path, inPath).Output()
	if err != nil {
		t.Fatalf("python could not run the saved model: %v", err)
	}
	var pyProbs []float32
	if err := json.Unmarshal(out, &pyProbs); err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(t, probs, pyProbs); d > 1e-5 {
		t.Errorf("Python output of the saved model differs by %g", d)
	}
}

func TestTracedModuleIsNotTrainableButRuns(t *testing.T) {
	m := load(t, "traced_cnn.pt")
	if _, err := m.Forward(forwardInput(t)); err != nil {
		t.Fatalf("a traced module must still run inference: %v", err)
	}
}

func TestDeviceFacts(t *testing.T) {
	fixtures(t)
	// No pin on a libtorch version: the shim must run against the
	// library it was built for, whichever that is (2.7.1 here, the lent
	// GPU machine's own PyTorch in make gpu-check).
	loaded, err := LoadedVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v := Version(); v == "" || !strings.HasPrefix(loaded, v) {
		t.Errorf("the shim was built against libtorch %q but %q is loaded", v, loaded)
	}
	if err := SetNumThreads(2); err != nil {
		t.Fatal(err)
	}
	if NumThreads() != 2 {
		t.Errorf("threads = %d after SetNumThreads(2)", NumThreads())
	}
	if !CUDAAvailable() {
		if DeviceCount() != 0 {
			t.Errorf("no CUDA but %d devices", DeviceCount())
		}
		if _, _, err := MemoryInfo(0); err == nil {
			t.Error("MemoryInfo without CUDA must be an error")
		}
		t.Skip("no CUDA device on this machine: CUDA paths compiled, not exercised")
	}
	for d := 0; d < DeviceCount(); d++ {
		free, total, err := MemoryInfo(d)
		if err != nil || total == 0 || free > total {
			t.Errorf("device %d: free %d total %d err %v", d, free, total, err)
		}
	}
	m, err := Load(fx(t, "tiny_cnn.pt"), "cuda:0")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	got, err := m.Forward(forwardInput(t))
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(t, got, readF32(t, fx(t, "tiny_cnn.logits.bin"))); d > 1e-3 {
		t.Errorf("CUDA forward differs from CPU Python by %g", d)
	}
}

// rssKB is the resident set size of the test process in KiB.
func rssKB(t testing.TB) int {
	kb, err := testenv.RSSKiB()
	if err != nil {
		t.Skip(err)
	}
	return int(kb)
}

func TestLoadForwardCloseLoopKeepsMemoryFlat(t *testing.T) {
	in := forwardInput(t)
	path := fx(t, "tiny_cnn.pt")
	cycle := func() {
		m, err := Load(path, "cpu")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.Probabilities(in); err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	for i := 0; i < 100; i++ { // warm allocator caches
		cycle()
	}
	runtime.GC()
	before := rssKB(t)
	for i := 0; i < 1000; i++ {
		cycle()
	}
	runtime.GC()
	after := rssKB(t)
	t.Logf("RSS before %d kB, after 1000 load/forward/close cycles %d kB", before, after)
	if after-before > 20*1024 {
		t.Errorf("RSS grew by %d kB over 1000 cycles", after-before)
	}
}

// After training, the TorchScript executor may hold differentiable graphs;
// inference on the same module must still work (regression: "Inference
// tensors cannot be saved for backward" on a ViT).
func TestInferenceAfterTrainingSameModule(t *testing.T) {
	m := load(t, "tiny_vit.pt")
	tr, err := NewTrainer(m, DefaultAdamW(1e-3))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	x, y := separable(8, 11, 3)
	for i := 0; i < 3; i++ {
		if _, _, err := tr.Step(x, y); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.SetTrain(false); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := m.Probabilities(x); err != nil {
			t.Fatalf("inference after training: %v", err)
		}
	}
}

// LoadBytes of a file's bytes is the module Load reads from the file: the
// same outputs, value for value (tolerance 0: one module, one input).
func TestLoadBytesEqualsLoad(t *testing.T) {
	in := forwardInput(t)
	for _, name := range []string{"tiny_cnn.pt", "tiny_vit.pt", "traced_cnn.pt"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(fx(t, name))
			if err != nil {
				t.Fatal(err)
			}
			fromBytes, err := LoadBytes(b, "")
			if err != nil {
				t.Fatal(err)
			}
			defer fromBytes.Close()
			if fromBytes.Device() != "cpu" {
				t.Errorf("device %q, want cpu", fromBytes.Device())
			}
			want, err := load(t, name).Forward(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fromBytes.Forward(in)
			if err != nil {
				t.Fatal(err)
			}
			var flat []float32
			for _, r := range want {
				flat = append(flat, r...)
			}
			if d := maxAbsDiff(t, got, flat); d != 0 {
				t.Errorf("outputs differ from Load's by %g", d)
			}
			wb, _ := load(t, name).ParamBytes()
			if gb, _ := fromBytes.ParamBytes(); gb != wb {
				t.Errorf("%d parameter bytes, Load gives %d", gb, wb)
			}
		})
	}
}

// Bytes that are not a whole TorchScript file are an error, never a crash:
// none, garbage, a torch.save-like pickle header, and the fixture cut at
// sixteen places (the zip's central directory is at its end, so every cut
// loses it) and with its middle overwritten.
func TestLoadBytesRefusesBadBytes(t *testing.T) {
	good, err := os.ReadFile(fx(t, "tiny_cnn.pt"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"nil":     nil,
		"empty":   {},
		"garbage": []byte("this is not a zip archive of a TorchScript module"),
		"pickle":  {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8},
	}
	for i := 0; i < 16; i++ {
		n := len(good) * i / 16
		cases[fmt.Sprintf("first %d of %d bytes", n, len(good))] = good[:n]
	}
	scrambled := append([]byte(nil), good...)
	for i := len(good) / 3; i < 2*len(good)/3; i++ {
		scrambled[i] ^= 0x5a
	}
	cases["middle third scrambled"] = scrambled
	live := LiveHandles()
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := LoadBytes(b, "cpu")
			if err == nil {
				m.Close()
				t.Fatalf("%d bytes loaded without error", len(b))
			}
			var te *Error
			if !errors.As(err, &te) || te.Op != "load" {
				t.Errorf("error %q (%T) is not a load *Error", err, err)
			}
			want := "not a loadable TorchScript file"
			if len(b) == 0 {
				want = "no bytes to load"
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		})
	}
	if n := LiveHandles(); n != live {
		t.Errorf("%d native handles live after the refused loads, %d before", n, live)
	}
	if _, err := LoadBytes(good, "tpu:0"); err == nil || !strings.Contains(err.Error(), "want cpu or cuda:N") {
		t.Errorf("bad device: error %v", err)
	}
}
