package classify_test

import (
	"math"
	"path/filepath"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/classify/classifytest"
)

// TestChunkedForwardMatchesOneCall: a batch run on the CPU in forward
// passes of ChunkPages pages (the shipped demo models: 5 pages at 224 px,
// 4 at 240; the test models: 3 pages, the bound lowered) gives the rows of
// the whole batch in one call, in the same order, within float rounding.
func TestChunkedForwardMatchesOneCall(t *testing.T) {
	type tc struct {
		name  string
		dir   string
		bound int // cpuCallInput for the test; 0: the default
		want  int // ChunkPages
	}
	var cases []tc
	for _, s := range classifytest.Five()[:3] {
		dir := classifytest.ModelDir(t, filepath.Join(t.TempDir(), s.Revision), s)
		cases = append(cases, tc{s.Fixture, dir, 3 * 4 * 3 * s.Size * s.Size, 3})
	}
	if demo, err := classify.DemoEnsemble("../../../weights/demo"); err == nil {
		// model_v14 is EfficientNet-Lite0 at 224, model_v34 Lite1 at 240.
		cases = append(cases, tc{"model_v14", demo[0].Dir, 0, 5}, tc{"model_v34", demo[2].Dir, 0, 4})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := classify.Load(c.dir, "cpu")
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if c.bound > 0 {
				defer classify.SetCPUCallInput(c.bound)()
			}
			if got := m.ChunkPages(); got != c.want {
				t.Fatalf("ChunkPages = %d, want %d", got, c.want)
			}
			const n = 11 // chunks of 3: 3+3+3+2; of 5: 5+5+1; of 4: 4+4+3
			in := make([]float32, n*m.InputLen())
			for i := range in {
				in[i] = float32(math.Sin(float64(i)*0.37)) * 1.5 // pages differ from each other
			}
			s := m.Size()
			chunked, err := m.Probabilities(in, n, 3, s, s)
			if err != nil {
				t.Fatal(err)
			}
			restore := classify.SetCPUCallInput(1 << 62)
			whole, err := m.Probabilities(in, n, 3, s, s)
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if len(chunked) != n || len(whole) != n {
				t.Fatalf("%d and %d rows for %d pages", len(chunked), len(whole), n)
			}
			worst := 0.0
			for p := range whole {
				for k := range whole[p] {
					worst = max(worst, math.Abs(float64(chunked[p][k]-whole[p][k])))
				}
			}
			if worst > 1e-5 {
				t.Fatalf("chunked rows differ from one call's by up to %g", worst)
			}
			// The pages' rows differ from each other, so a chunk out of
			// place would have shown above.
			if math.Abs(float64(whole[0][0]-whole[n-1][0])) < 1e-7 && math.Abs(float64(whole[0][1]-whole[n-1][1])) < 1e-7 {
				t.Fatal("first and last page give the same row: the test cannot see the order")
			}
		})
	}
}
