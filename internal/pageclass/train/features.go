package train

import (
	"fmt"
	"math"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/modelmeta"
)

// The TorchScript methods of a base whose backbone is frozen
// (tools/export_models.py --freeze-backbone): features(x) is the pooled
// backbone output, [batch, C], and head(f) the classifier on it, with
// forward(x) = head(features(x)).
const (
	featuresMethod = "features"
	headMethod     = "head"
)

// Tolerances of the checks that a base's features may be computed once:
// the features of the same pages in training and evaluation mode (relative
// to their largest magnitude; a frozen backbone gives the same values), and
// forward's logits against head(features) (absolute, in logits).
const (
	featuresModeTolerance = 1e-5
	headLogitTolerance    = 1e-4
)

// featureCache decides whether a fold trains the head alone on features
// computed once per page instead of running the whole module every step.
// It holds when nothing that changes from epoch to epoch reaches the
// backbone (no augmentation, not the orientation model's turned pages),
// the base has features and head methods, and, checked on the probe pages
// (cacheable): the features depend on no trainable parameter, are the same
// in training and evaluation mode (no batch statistics, no dropout), every
// trainable parameter takes part in the head, and forward equals
// head(features). why says which path runs and why, for the log, the run
// metadata and the model's notes. An error while checking (a features
// method that throws, or gives no [batch, C] rows) leaves the features
// uncached too: why names it and checkErr is that error, for a warning.
//
// m is the module about to be trained; the check runs on a copy of it in
// memory (torch.Module.Clone), never on m itself: a pass in training mode
// moves the running statistics of batch norms that are not frozen, and a
// method may set any attribute. The base is not loaded again.
func featureCache(o Options, base *modelmeta.Meta, m *torch.Module, trainable int64, probe []*sample) (cached bool, why string, checkErr error) {
	const no = "features not cached, every step runs the whole model: "
	switch {
	case o.NoFeatureCache:
		return false, no + "asked for (NoFeatureCache)", nil
	case o.Augment:
		return false, no + "augmentation changes the pages every epoch", nil
	case base.IsRotation():
		return false, no + "the orientation model turns the pages every epoch", nil
	case len(probe) == 0:
		return false, no + "no training page to check the base on", nil
	}
	c, err := m.Clone()
	if err != nil {
		return false, no + "the check of the base failed: " + err.Error(), err
	}
	defer c.Close()
	reason, err := cacheable(c, base, trainable, probe)
	switch {
	case err != nil:
		return false, no + "the check of the base failed: " + err.Error(), err
	case reason != "":
		return false, no + reason, nil
	}
	return true, fmt.Sprintf("features cached: backbone frozen, %s trainable parameters all in the head", thousands(trainable)), nil
}

// cacheable checks on the probe pages that the features of m (a copy of
// the module to train, changed by the check) may be computed once: "" when
// they may, else why not.
func cacheable(m *torch.Module, base *modelmeta.Meta, trainable int64, probe []*sample) (string, error) {
	for _, name := range []string{featuresMethod, headMethod} {
		has, err := m.HasMethod(name)
		if err != nil {
			return "", err
		}
		if !has {
			return fmt.Sprintf("the base has no %s method (tools/export_models.py --freeze-backbone exports features and head)", name), nil
		}
	}
	x, err := batchOf(probe, base)
	if err != nil {
		return "", err
	}
	if err := m.SetTrain(true); err != nil {
		return "", err
	}
	n, err := m.MethodTrainableParams(featuresMethod, x)
	if err != nil {
		return "", err
	}
	if n > 0 {
		return fmt.Sprintf("%s of the %s trainable parameters are in the backbone (features)", thousands(n), thousands(trainable)), nil
	}
	inTrain, err := m.RunMethod(featuresMethod, x, false)
	if err != nil {
		return "", err
	}
	if err := m.SetTrain(false); err != nil {
		return "", err
	}
	inEval, err := m.RunMethod(featuresMethod, x, false)
	if err != nil {
		return "", err
	}
	if d, s := maxDiff(inTrain, inEval), maxAbs(inEval); d > featuresModeTolerance*math.Max(1, s) {
		return fmt.Sprintf("the features differ by %.3g between training and evaluation mode (batch statistics or dropout in the backbone)", d), nil
	}
	f := flatten(inEval)
	n, err = m.MethodTrainableParams(headMethod, f) // evaluation mode: no dropout draw
	if err != nil {
		return "", err
	}
	if n != trainable {
		return fmt.Sprintf("only %s of the %s trainable parameters are in the head", thousands(n), thousands(trainable)), nil
	}
	viaHead, err := m.RunMethod(headMethod, f, false)
	if err != nil {
		return "", err
	}
	whole, err := m.Forward(x)
	if err != nil {
		return "", err
	}
	if d := maxDiff(whole, viaHead); d > headLogitTolerance {
		return fmt.Sprintf("forward differs from head(features) by %.3g in logits", d), nil
	}
	return "", nil
}

// batchOf is the normalised NCHW batch of pages (no augmentation).
func batchOf(ss []*sample, meta *modelmeta.Meta) (torch.Tensor, error) {
	size := meta.Preprocess.Size
	plane := 3 * size * size
	buf := make([]float32, len(ss)*plane)
	for k, s := range ss {
		pix, err := pixels(s, size)
		if err != nil {
			return torch.Tensor{}, err
		}
		normalise(buf[k*plane:(k+1)*plane], pix, meta.Preprocess)
	}
	return torch.Tensor{Data: buf, Shape: []int64{int64(len(ss)), 3, int64(size), int64(size)}}, nil
}

// flatten stacks rows of equal length into a [rows, cols] tensor.
func flatten(rows [][]float32) torch.Tensor {
	cols := len(rows[0])
	data := make([]float32, 0, len(rows)*cols)
	for _, r := range rows {
		data = append(data, r...)
	}
	return torch.Tensor{Data: data, Shape: []int64{int64(len(rows)), int64(cols)}}
}

// rowsOf is the [len(idx), C] tensor of the feature rows idx, written into buf.
func rowsOf(buf []float32, feats [][]float32, idx []int) torch.Tensor {
	c := len(feats[0])
	for k, i := range idx {
		copy(buf[k*c:(k+1)*c], feats[i])
	}
	return torch.Tensor{Data: buf[:len(idx)*c], Shape: []int64{int64(len(idx)), int64(c)}}
}

// headProbabilities runs the head (in the module's current mode) on feature
// rows, batch rows at a time, and returns the softmax of each.
func headProbabilities(m *torch.Module, feats [][]float32, batch int) ([][]float32, error) {
	if len(feats) == 0 {
		return nil, nil
	}
	buf := make([]float32, batch*len(feats[0]))
	idx := make([]int, 0, batch)
	var out [][]float32
	for b0 := 0; b0 < len(feats); b0 += batch {
		idx = idx[:0]
		for i := b0; i < min(b0+batch, len(feats)); i++ {
			idx = append(idx, i)
		}
		p, err := m.RunMethod(headMethod, rowsOf(buf, feats, idx), true)
		if err != nil {
			return nil, err
		}
		out = append(out, p...)
	}
	return out, nil
}

func maxDiff(a, b [][]float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	d := 0.0
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return math.Inf(1)
		}
		for j := range a[i] {
			d = math.Max(d, math.Abs(float64(a[i][j])-float64(b[i][j])))
		}
	}
	return d
}

func maxAbs(a [][]float32) float64 {
	s := 0.0
	for _, r := range a {
		for _, v := range r {
			s = math.Max(s, math.Abs(float64(v)))
		}
	}
	return s
}

// thousands writes n with commas between groups of three digits: 14,091.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
