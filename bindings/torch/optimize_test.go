package torch

import "testing"

// TestGraphOptimize: a module's forward passes give the logits of the
// Python reference whether the graph executor optimises (the default) or
// runs the graph as scripted, on every device here, the first calls (when
// an optimising executor profiles and compiles) included; the setting
// reads back.
func TestGraphOptimize(t *testing.T) {
	if !GraphOptimize() {
		t.Fatal("the graph executor's optimisation is off by default")
	}
	defer SetGraphOptimize(true)
	want := readF32(t, fx(t, "tiny_cnn.logits.bin"))
	in := forwardInput(t)
	for _, dev := range devices() {
		for _, on := range []bool{false, true} {
			if err := SetGraphOptimize(on); err != nil {
				t.Fatal(err)
			}
			if GraphOptimize() != on {
				t.Fatalf("GraphOptimize() = %v after SetGraphOptimize(%v)", !on, on)
			}
			// a fresh module each time: the executor's plans are kept per module
			m, err := Load(fx(t, "tiny_cnn.pt"), dev)
			if err != nil {
				t.Fatal(err)
			}
			for call := 1; call <= 4; call++ {
				got, err := m.Forward(in)
				if err != nil {
					t.Fatalf("%s, optimise %v, call %d: %v", dev, on, call, err)
				}
				if d := maxAbsDiff(t, got, want); d > 1e-3 {
					t.Errorf("%s, optimise %v, call %d: logits differ from Python's by %g", dev, on, call, d)
				}
			}
			m.Close()
		}
	}
}
