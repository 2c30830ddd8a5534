package torch

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestPreprocessBandsMatchOneCall: the shim resizes across on bands of rows
// and then down (so that a huge page is never held as floats); the result
// must equal libtorch's single interpolate call on the whole page, as
// Python torch makes it, to float rounding (the same library: 0 is
// expected; 1e-6 allows another CPU's kernels). Wide, tall, grey and
// enlarged images.
func TestPreprocessBandsMatchOneCall(t *testing.T) {
	py := os.Getenv("ARCHIVEKIT_PYTHON")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTHON not set")
	}
	const script = `import sys, numpy as np, torch
import torch.nn.functional as F
h, w, c, s = (int(a) for a in sys.argv[2:6])
img = torch.from_numpy(np.fromfile(sys.argv[1], dtype=np.uint8).reshape(h, w, c).copy())
x = img.permute(2, 0, 1).unsqueeze(0).float()
if c == 1:
    x = x.expand(1, 3, h, w)
x = F.interpolate(x, size=(s, s), mode="bilinear", align_corners=False, antialias=True).round_().clamp_(0, 255)
mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
((x.div(255.0) - mean) / std).numpy().astype("<f4").tofile(sys.argv[6])`
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct{ h, w, c, size int }{
		{3001, 2203, 3, 192}, // many bands of rows
		{700, 1500, 1, 224},  // grey
		{2500, 900, 3, 160},
		{50, 100, 3, 224},  // enlarged
		{224, 600, 3, 224}, // height unchanged: across only
	} {
		pix := make([]uint8, tc.h*tc.w*tc.c)
		for i := range pix {
			pix[i] = uint8(rng.IntN(256))
		}
		// smooth areas too, where rounding meets .5 more often
		for i := 0; i < len(pix)/3; i++ {
			pix[i] = uint8(i / 4096 % 256)
		}
		dir := t.TempDir()
		in, out := filepath.Join(dir, "in.bin"), filepath.Join(dir, "out.bin")
		if err := os.WriteFile(in, pix, 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"-c", script, in}
		for _, v := range []int{tc.h, tc.w, tc.c, tc.size} {
			args = append(args, strconv.Itoa(v))
		}
		if msg, err := exec.Command(py, append(args, out)...).CombinedOutput(); err != nil {
			t.Fatalf("python: %v\n%s", err, msg)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Preprocess(pix, tc.h, tc.w, tc.c, tc.size, [3]float32{0.485, 0.456, 0.406}, [3]float32{0.229, 0.224, 0.225})
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != 4*len(got) {
			t.Fatalf("%+v: python wrote %d floats, Go has %d", tc, len(raw)/4, len(got))
		}
		worst := 0.0
		for i, v := range got {
			want := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
			worst = math.Max(worst, math.Abs(float64(v-want)))
		}
		if worst > 1e-6 {
			t.Errorf("%+v: differs from one interpolate call by up to %g", tc, worst)
		}
	}
}
