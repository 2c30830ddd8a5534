package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/pipeline"
	"archivekit/internal/pageclass/results"
)

// gpuBudgetShare is the part of the free device memory a group may use; the
// rest is left for the allocator's fragmentation and the CUDA context.
const gpuBudgetShare = 0.9

// gpuDev is the CUDA device index of the run's device.
func (r *classifier) gpuDev() int {
	n, err := strconv.Atoi(strings.TrimPrefix(r.device, "cuda:"))
	if err != nil {
		return 0
	}
	return n
}

// gpuMemory is what sizes batches on a GPU: the device's free memory
// before the run loads a model, the share of it a run may use, and the
// models' measured memory profile.
type gpuMemory struct {
	prof *classify.GPUProfile
	// path is the profile's file.
	path string
	// names are the models' keys in the profile (Folder.ProfileName);
	// sizes their input sizes, in the order of the folders.
	names []string
	sizes []int
	// free is the device's free memory; budget the share of it a run may
	// use (gpuBudgetShare).
	free   uint64
	budget int64
}

// gpuMemory reads the free memory of the run's GPU and the memory profile
// of folders (model/gpu_profile.json under -m), measured again when the
// GPU, its memory, the configured batch or the models changed. A profile
// that cannot be saved is used for this run, with a warning (it is measured
// again next time).
func (r *classifier) gpuMemory(folders []classify.Folder) (*gpuMemory, error) {
	dev := r.gpuDev()
	free, total, err := torch.MemoryInfo(dev)
	if err != nil {
		return nil, err
	}
	g := &gpuMemory{path: filepath.Join(r.cli.Model, classify.GPUProfileName), free: free,
		budget: int64(float64(free) * gpuBudgetShare), names: make([]string, len(folders)), sizes: make([]int, len(folders))}
	for i, f := range folders {
		g.names[i] = f.ProfileName()
		meta, err := f.Meta()
		if err != nil {
			return nil, err
		}
		g.sizes[i] = meta.Preprocess.Size
	}
	g.prof, err = classify.LoadGPUProfile(g.path)
	if err != nil {
		r.log.Warn("GPU profile unreadable: measuring again", "file", g.path, "error", err.Error())
	}
	gpu, batch := classify.GPUName(dev), r.settings.Setup.Batch
	if !g.prof.Matches(gpu, total, batch, g.names) {
		r.log.Info("measuring GPU memory per model", "gpu", gpu, "batch", batch)
		if g.prof, err = classify.MeasureGPU(folders, dev, batch); err != nil {
			return nil, fmt.Errorf("measuring GPU memory: %w", err)
		}
		if err := g.prof.Save(g.path); err != nil {
			r.log.Warn("GPU profile not saved: it is measured again next run", "file", g.path, "error", err.Error())
		} else {
			r.para.AddOutputFile(g.path)
		}
	}
	return g, nil
}

// gpuGroups groups the ensemble by measured device memory and sizes each
// group's batch by it (r.groupBatch), from gpuMemory's profile.
func (r *classifier) gpuGroups(folders []classify.Folder) ([][]int, error) {
	g, err := r.gpuMemory(folders)
	if err != nil {
		return nil, err
	}
	prof, names, budget, batch := g.prof, g.names, g.budget, r.settings.Setup.Batch
	need := make([]int64, len(names))
	for i, n := range names {
		need[i] = prof.Models[n]
	}
	groups := classify.GroupByMemory(need, budget)
	r.groupBatch = prof.GroupBatches(names, g.sizes, groups, budget)
	if r.groupBatch == nil {
		r.log.Info("GPU profile without weights figures: each group runs at the configured batch (remove it to measure again)",
			"file", g.path, "batch", batch)
		r.para.SetConfig("batch_source", batchConfigured)
	} else {
		r.para.SetConfig("batch_source", batchMemory)
		r.para.SetConfig("group_batches", r.groupBatch)
	}
	for k, gr := range groups {
		var gs []string
		var sum int64
		for _, i := range gr {
			gs = append(gs, names[i])
			sum += need[i]
		}
		gb := batch
		if r.groupBatch != nil {
			gb = r.groupBatch[k]
		}
		r.log.Info("model group", "models", strings.Join(gs, ","), "bytes", sum, "budget", budget, "batch", gb)
		if sum > budget {
			r.log.Warn("model needs more memory than is free; running it alone", "models", strings.Join(gs, ","))
		}
	}
	return groups, nil
}

// runGroups runs the groups one after the other (the models of a group at the
// same time, on the GPU), keeps every page's per-model probabilities, and
// emits each page once all groups have run, with the ensemble mean. The
// first group also runs the orientation model orient (nil: none). Each
// folder's Contents are let go once its model is loaded.
func (r *classifier) runGroups(ctx context.Context, folders []classify.Folder, orient *classify.Orientation, groups [][]int,
	inputs []pipeline.Input, opt classify.Options, emit func(classify.Page) error) error {
	var pages []classify.Page
	for gi, g := range groups {
		var fs []classify.Folder
		for _, i := range g {
			fs = append(fs, folders[i])
		}
		ms, err := r.loadModels(fs)
		if err != nil {
			return err
		}
		for _, i := range g {
			folders[i].Contents = nil // the module holds the weights now
		}
		e, _ := classify.NewEnsemble(ms...)
		if gi == 0 {
			e.Orientation = orient // the first group also tells each page's rotation
		}
		o := opt
		o.Concurrent = true
		if gi < len(r.groupBatch) {
			o.Batch = r.groupBatch[gi] // sized by the device's free memory
		}
		if gi > 0 {
			o.OnOpen = nil // inputs are counted once
		}
		row := 0
		_, err = e.Predict(ctx, inputs, o, func(p classify.Page) error {
			if gi == 0 {
				q := p
				q.Probs = make([][]float64, len(folders))
				pages = append(pages, q)
			}
			if row >= len(pages) {
				return fmt.Errorf("group %d gave more rows than the first", gi+1)
			}
			if p.Err != nil && pages[row].Err == nil {
				pages[row].Err = p.Err
			}
			for k, i := range g {
				if p.Err == nil && pages[row].Err == nil {
					pages[row].Probs[i] = p.Probs[k]
				}
			}
			row++
			return nil
		})
		e.Close()
		if err != nil {
			return err
		}
	}
	for _, p := range pages {
		if p.Err == nil {
			p.Mean = results.Average(p.Probs)
		} else {
			p.Probs = nil
		}
		if err := emit(p); err != nil {
			return err
		}
	}
	return nil
}
