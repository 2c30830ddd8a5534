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

// gpuGroups groups the ensemble by measured device memory and sizes each
// group's batch by it (r.groupBatch). The profile (model/gpu_profile.json
// under -m) is measured again when the GPU, its memory, the batch size or
// the models changed.
func (r *classifier) gpuGroups(folders []classify.Folder) ([][]int, error) {
	dev := r.gpuDev()
	free, total, err := torch.MemoryInfo(dev)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(folders))
	for i, f := range folders {
		names[i] = f.Revision
	}
	path := filepath.Join(r.cli.Model, classify.GPUProfileName)
	prof, err := classify.LoadGPUProfile(path)
	if err != nil {
		r.log.Warn("GPU profile unreadable: measuring again", "file", path, "error", err.Error())
	}
	gpu, batch := classify.GPUName(dev), r.settings.Setup.Batch
	if !prof.Matches(gpu, total, batch, names) {
		r.log.Info("measuring GPU memory per model", "gpu", gpu, "batch", batch)
		if prof, err = classify.MeasureGPU(folders, dev, batch); err != nil {
			return nil, fmt.Errorf("measuring GPU memory: %w", err)
		}
		if err := prof.Save(path); err != nil {
			return nil, err
		}
		r.para.AddOutputFile(path)
	}
	need := make([]int64, len(names))
	for i, n := range names {
		need[i] = prof.Models[n]
	}
	budget := int64(float64(free) * gpuBudgetShare)
	groups := classify.GroupByMemory(need, budget)
	sizes := make([]int, len(folders))
	for i, f := range folders {
		meta, err := f.Meta()
		if err != nil {
			return nil, err
		}
		sizes[i] = meta.Preprocess.Size
	}
	r.groupBatch = prof.GroupBatches(names, sizes, groups, budget)
	if r.groupBatch == nil {
		r.log.Info("GPU profile without weights figures: each group runs at the configured batch (remove it to measure again)",
			"file", path, "batch", batch)
	}
	for k, g := range groups {
		var gs []string
		var sum int64
		for _, i := range g {
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
