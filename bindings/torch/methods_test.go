package torch

import (
	"math"
	"strings"
	"testing"
)

// flat2 stacks equal rows into a [rows, cols] tensor.
func flat2(rows [][]float32) Tensor {
	var d []float32
	for _, r := range rows {
		d = append(d, r...)
	}
	return Tensor{Data: d, Shape: []int64{int64(len(rows)), int64(len(rows[0]))}}
}

func maxRowsDiff(a, b [][]float32) float64 {
	d := 0.0
	for i := range a {
		for j := range a[i] {
			d = math.Max(d, math.Abs(float64(a[i][j]-b[i][j])))
		}
	}
	return d
}

// The fixture tiny_frozen.pt has features(x) (pooled backbone, 16 values)
// and head(f) methods, with forward = head(features): HasMethod finds them,
// RunMethod runs them, and MethodTrainableParams says which parameters
// training can change behind each (its backbone is frozen; tiny_headed.pt's
// is not).
func TestFeaturesAndHeadMethods(t *testing.T) {
	m := load(t, "tiny_frozen.pt")
	for name, want := range map[string]bool{"forward": true, "features": true, "head": true, "nope": false} {
		if got, err := m.HasMethod(name); err != nil || got != want {
			t.Errorf("HasMethod(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	if got, err := load(t, "tiny_cnn.pt").HasMethod("features"); err != nil || got {
		t.Errorf("tiny_cnn HasMethod(features) = %v, %v; want false", got, err)
	}
	in := forwardInput(t)
	f, err := m.RunMethod("features", in, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(f) != 4 || len(f[0]) != 16 {
		t.Fatalf("features: %d rows of %d, want 4 of 16", len(f), len(f[0]))
	}
	for _, softmax := range []bool{false, true} {
		viaHead, err := m.RunMethod("head", flat2(f), softmax)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := m.forward(in, softmax, 0)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxRowsDiff(viaHead, whole); d > 1e-6 {
			t.Errorf("softmax %v: head(features) differs from forward by %g", softmax, d)
		}
	}
	trainable, _, err := m.ParamCounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fixture, method string
		in              Tensor
		want            int64
	}{
		{"tiny_frozen.pt", "features", in, 0},
		{"tiny_frozen.pt", "head", flat2(f), trainable},
		{"tiny_frozen.pt", "forward", in, trainable},
		{"tiny_headed.pt", "features", in, 3*8*9 + 8 + 8*16*9 + 16},
		{"tiny_headed.pt", "head", flat2(f), 16*11 + 11},
	} {
		mm := load(t, c.fixture)
		if err := mm.SetTrain(true); err != nil {
			t.Fatal(err)
		}
		got, err := mm.MethodTrainableParams(c.method, c.in)
		if err != nil || got != c.want {
			t.Errorf("%s %s: MethodTrainableParams = %d, %v; want %d", c.fixture, c.method, got, err, c.want)
		}
		// inference on the module still runs after a method ran with autograd
		if _, err := mm.RunMethod(c.method, c.in, false); err != nil {
			t.Errorf("%s %s after MethodTrainableParams: %v", c.fixture, c.method, err)
		}
	}
	if trainable != 16*11+11 {
		t.Errorf("tiny_frozen: %d trainable parameters, want the head's %d", trainable, 16*11+11)
	}
}

// StepMethod("head") on features computed once trains as Step through the
// whole model does: the same losses, logits and resulting weights, with
// the same seed (the head's dropout draws the same masks).
func TestStepThroughHeadEqualsStepThroughForward(t *testing.T) {
	x, y := separable(11, 11, 3)
	run := func(viaHead bool) ([]float32, [][]float32) {
		m := load(t, "tiny_frozen.pt")
		f, err := m.RunMethod("features", x, false)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := NewTrainer(m, DefaultAdamW(5e-2))
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		ManualSeed(9)
		var losses []float32
		for s := 0; s < 5; s++ {
			var loss float32
			if viaHead {
				loss, _, err = tr.StepMethod("head", flat2(f), y)
			} else {
				loss, _, err = tr.Step(x, y)
			}
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, loss)
		}
		if err := m.SetTrain(false); err != nil {
			t.Fatal(err)
		}
		p, err := m.Probabilities(x)
		if err != nil {
			t.Fatal(err)
		}
		return losses, p
	}
	lh, ph := run(true)
	lf, pf := run(false)
	for i := range lh {
		if math.Abs(float64(lh[i]-lf[i])) > 1e-5 {
			t.Errorf("step %d: loss %g through head, %g through forward", i, lh[i], lf[i])
		}
	}
	if lh[len(lh)-1] >= lh[0] {
		t.Errorf("losses %v: training through the head did not lower the loss", lh)
	}
	if d := maxRowsDiff(ph, pf); d > 1e-5 {
		t.Errorf("probabilities after training differ by %g", d)
	}
}

func TestMethodErrors(t *testing.T) {
	m := load(t, "tiny_frozen.pt")
	in := forwardInput(t)
	cases := []struct {
		name string
		do   func() error
		want string
	}{
		{"unknown method", func() error { _, err := m.RunMethod("nope", in, false); return err }, `no method "nope"`},
		{"empty name", func() error { _, err := m.RunMethod("", in, false); return err }, "empty method name"},
		{"head on pixels", func() error { _, err := m.RunMethod("head", in, false); return err }, "run head"},
		{"trainable of unknown", func() error { _, err := m.MethodTrainableParams("nope", in); return err }, `no method "nope"`},
		{"step through unknown", func() error {
			mm := load(t, "tiny_frozen.pt")
			tr, err := NewTrainer(mm, DefaultAdamW(1e-3))
			if err != nil {
				return err
			}
			defer tr.Close()
			_, _, err = tr.StepMethod("nope", in, []int64{0, 1, 2, 3})
			return err
		}, `no method "nope"`},
		{"closed", func() error {
			mm := load(t, "tiny_frozen.pt")
			mm.Close()
			_, err := mm.HasMethod("features")
			return err
		}, "closed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one mentioning %q", err, c.want)
			}
		})
	}
	// an optimised (frozen) module keeps forward alone
	if err := m.Optimize(Freeze); err != nil {
		t.Fatal(err)
	}
	if has, err := m.HasMethod("features"); err != nil || has {
		t.Errorf("after Optimize: HasMethod(features) = %v, %v; want false", has, err)
	}
}

// Clone copies a module in memory: the copy computes what the module does,
// the same parameters require gradients and take part in its methods, and
// training the copy changes the copy alone. A frozen module is refused.
func TestClone(t *testing.T) {
	for _, name := range []string{"tiny_frozen.pt", "tiny_headed.pt", "tiny_cnn.pt"} {
		m := load(t, name)
		c, err := m.Clone()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		x := forwardInput(t)
		want, err := m.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Forward(x)
		if err != nil {
			t.Fatal(err)
		}
		if d := maxRowsDiff(got, want); d != 0 {
			t.Errorf("%s: the copy's logits differ by %g", name, d)
		}
		mt, mn, _ := m.ParamCounts()
		ct, cn, _ := c.ParamCounts()
		if mt != ct || mn != cn || mt == 0 {
			t.Errorf("%s: copy has %d of %d parameters trainable, the module %d of %d", name, ct, cn, mt, mn)
		}
		if name != "tiny_cnn.pt" {
			mf, err1 := m.MethodTrainableParams("features", x)
			cf, err2 := c.MethodTrainableParams("features", x)
			if err1 != nil || err2 != nil || mf != cf {
				t.Errorf("%s: trainable parameters behind features: copy %d (%v), module %d (%v)", name, cf, err2, mf, err1)
			}
		}
		tr, err := NewTrainer(c, DefaultAdamW(0.1))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := tr.Step(x, []int64{0, 1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		tr.Close()
		for _, mm := range []*Module{m, c} {
			if err := mm.SetTrain(false); err != nil {
				t.Fatal(err)
			}
		}
		after, _ := m.Forward(x)
		trained, _ := c.Forward(x)
		if d := maxRowsDiff(after, want); d != 0 {
			t.Errorf("%s: training the copy changed the module's logits by %g", name, d)
		}
		if d := maxRowsDiff(trained, want); d < 1e-4 {
			t.Errorf("%s: a training step moved the copy's logits by only %g", name, d)
		}
	}
	f := load(t, "tiny_cnn.pt")
	if err := f.Optimize(Freeze); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Clone(); err == nil || !strings.Contains(err.Error(), "frozen") {
		t.Errorf("clone of a frozen module: %v, want an error saying it is frozen", err)
	}
}
