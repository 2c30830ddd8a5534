package main

import (
	"strings"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/settings"
)

// The sources of a run's batch: the log's source and the run metadata's
// config.batch_source.
const (
	// batchConfigured is --batch, else [SETUP] batch.
	batchConfigured = "configured"
	// batchMemory is a batch sized by the GPU's free memory and the
	// models' measured memory profile.
	batchMemory = "memory"
)

// batchChosen reports whether the user chose the batch: --batch on the
// command line (given), or a [SETUP] batch other than the shipped one. The
// shipped config file sets the key too, to 16, a CPU figure: that value is
// not taken as a choice.
func batchChosen(given bool, configured int) bool {
	return given || configured != settings.Defaults().Setup.Batch
}

// plainBatch decides the batch of a plain run (not --parallel, whose groups
// are sized on their own) on device: the configured batch, unless the
// device is a CUDA GPU and the user did not choose it (chosen); then the
// batch size gives (sized by the free memory), or the configured one when
// it gives 0 (no figures to size it by). size is called only then.
func plainBatch(device string, configured int, chosen bool, size func() int) (batch int, source string) {
	if chosen || !strings.HasPrefix(device, "cuda") {
		return configured, batchConfigured
	}
	if b := size(); b > 0 {
		return b, batchMemory
	}
	return configured, batchConfigured
}

// chooseBatch sets the batch of a plain run (r.batch, plainBatch) and
// records it and its source in the run metadata (config.batch,
// config.batch_source); on a GPU it logs them ("GPU batch"). A batch sized
// by memory comes from the GPU's free memory before the models load and
// their profile (gpuMemory, shared with --parallel), the models run one
// after another (GPUProfile.SequentialBatch). A profile without the
// figures, or one that cannot be measured, keeps the configured batch,
// and the log says why.
func (r *classifier) chooseBatch(folders []classify.Folder) {
	var memory []any // the free and budget bytes, once read
	size := func() int {
		g, err := r.gpuMemory(folders)
		if err != nil {
			r.log.Warn("GPU memory not measured: running at the configured batch", "batch", r.settings.Setup.Batch, "error", err.Error())
			return 0
		}
		memory = []any{"free", g.free, "budget", g.budget}
		b := g.prof.SequentialBatch(g.names, g.sizes, g.budget)
		if b == 0 {
			r.log.Info("GPU profile without weights figures: running at the configured batch (remove it to measure again)",
				"file", g.path, "batch", r.settings.Setup.Batch)
		}
		return b
	}
	chosen := batchChosen(r.cli.Given["batch"], r.settings.Setup.Batch)
	var source string
	r.batch, source = plainBatch(r.device, r.settings.Setup.Batch, chosen, size)
	if strings.HasPrefix(r.device, "cuda") {
		r.log.Info("GPU batch", append([]any{"batch", r.batch, "source", source, "chosen", chosen}, memory...)...)
	}
	r.para.SetConfig("batch", r.batch)
	r.para.SetConfig("batch_source", source)
}
