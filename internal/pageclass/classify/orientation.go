package classify

import (
	"fmt"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/resources"
)

// Orientation is a loaded page-orientation model (model.json task
// "rotation", labels modelmeta.RotationLabels): it tells by how much a page
// was turned clockwise from upright. It is never a page classifier.
type Orientation struct {
	net
}

// OrientationDir is the shipped page-orientation model found by
// internal/resources (ARCHIVEKIT_ROTATION_MODEL, weights/rotation in the working
// directory, beside the executable, in the installed share folder); "" when
// none is found: then pages are not checked for rotation. The default of the
// command's and the service's --rotation-model.
func OrientationDir() string {
	if f, err := resources.Default.Find(resources.RotationModel, ""); err == nil {
		return f.Path
	}
	return ""
}

// LoadOrientation loads the orientation model in dir onto device, reading
// each file once (Digest is of the bytes loaded). A folder
// whose model.json is not an orientation model is refused.
func LoadOrientation(dir, device string) (*Orientation, error) {
	return LoadOrientationAs(dir, device, torch.DefaultPrecision(device))
}

// LoadOrientationAs is LoadOrientation at precision prec.
func LoadOrientationAs(dir, device string, prec torch.Precision) (*Orientation, error) {
	c, err := modelmeta.ReadFolder(dir)
	if err != nil {
		return nil, err
	}
	if !c.Meta.IsRotation() {
		return nil, fmt.Errorf("%s: not a page-orientation model (its %s has no \"task\": %q)", dir, modelmeta.MetaFile, modelmeta.TaskRotation)
	}
	n, err := loadNet(dir, device, prec, c)
	if err != nil {
		return nil, err
	}
	return &Orientation{n}, nil
}

// Close releases the native module.
func (o *Orientation) Close() error {
	if o == nil {
		return nil
	}
	return o.net.close()
}

// Probabilities runs n preprocessed pages and returns, per page, the
// probabilities of modelmeta.RotationLabels.
func (o *Orientation) Probabilities(data []float32, n int) ([][]float32, error) {
	return o.probabilities(data, n, 0)
}

// probabilities is Probabilities on threads intra-op threads (0: the
// process-wide count), as the ensemble's lanes run.
func (o *Orientation) probabilities(data []float32, n, threads int) ([][]float32, error) {
	if n == 0 {
		return nil, nil
	}
	rows, err := o.net.probabilities(data, n, threads)
	if err != nil {
		return nil, fmt.Errorf("orientation model %s: %w", o.Dir, err)
	}
	return rows, o.check(rows, n)
}

// check checks the n rows of a forward pass.
func (o *Orientation) check(rows [][]float32, n int) error {
	if len(rows) != n {
		return fmt.Errorf("orientation model %s: %d rows for %d pages", o.Dir, len(rows), n)
	}
	for i, r := range rows {
		if len(r) != len(modelmeta.RotationLabels) {
			return fmt.Errorf("orientation model %s: page %d: %d scores, want %d", o.Dir, i, len(r), len(modelmeta.RotationLabels))
		}
	}
	return nil
}

// Turn is the rotation evidence of one page from the model's probabilities.
func (o *Orientation) Turn(p []float32) *review.Rotation {
	var v [4]float64
	for i := range v {
		v[i] = float64(p[i])
	}
	r := review.FromOrientation(v)
	return &r
}
