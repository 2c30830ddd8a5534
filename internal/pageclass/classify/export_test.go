package classify

import "archivekit/internal/pageclass/imageio"

// SetCPUCallInput sets the input bound of one forward pass on the CPU
// (cpuCallInput; 1<<62: the whole batch in one call) and returns a function
// that restores it. For benchmarks that compare both in one run.
func SetCPUCallInput(bytes int) (restore func()) {
	old := cpuCallInput
	cpuCallInput = bytes
	return func() { cpuCallInput = old }
}

// Resizes is the number of pages resized to the input sizes on the host
// and on the models' device so far in this process.
func Resizes() (host, device int64) { return resizes.host.Load(), resizes.device.Load() }

// HostPrepare is the work Predict's workers do on the host for one decoded
// page with upload up (resolved) for models and orient: the row of the
// page (a page held for UploadPage is let go again at once, as the upload
// would take it).
func HostPrepare(models []*Model, orient *Orientation, up Upload) func(imageio.Image) error {
	rows, _ := HostRows(models, orient, up)
	return func(img imageio.Image) error {
		_, err := rows(img)
		return err
	}
}

// PageDecode is the decoding Predict uses with UploadPage for inputs of at
// most size pixels a side.
func PageDecode(dec imageio.Options, size int) imageio.Options { return decodeFor(dec, size) }

// HostRows is HostPrepare as a pipeline.Preprocess: each page's row (for
// UploadPage, the held page let go again at once, as its upload would take
// it) and the row's width.
func HostRows(models []*Model, orient *Orientation, up Upload) (func(imageio.Image) ([]float32, error), int) {
	j := newJoint(models, orient, false, up, "cpu")
	return func(img imageio.Image) ([]float32, error) {
		row, err := j.preprocess(img)
		if err == nil && up == UploadPage {
			_, err = j.take(row)
		}
		return row, err
	}, j.width
}

// DemoDigestCount is the number of demo digests known.
func DemoDigestCount() int { return len(demoDigests) }
