package classify

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/atomicfile"
)

// GPUProfileName is the measured memory profile of --parallel, kept in the
// models folder (model/gpu_profile.json).
const GPUProfileName = "gpu_profile.json"

// GPUProfile is the measured GPU memory need of each model at one batch size
// on one GPU. It is measured again when the GPU, its memory, the batch size or
// the set of models changes (Matches).
type GPUProfile struct {
	// GPU names the device (its model name when the driver reports one).
	GPU string `json:"gpu"`
	// TotalBytes is the device memory.
	TotalBytes uint64 `json:"total_bytes"`
	// Batch is the batch size the need was measured at.
	Batch int `json:"batch"`
	// Models maps a model name to the device memory it took: weights plus
	// the activations of one forward pass of Batch pages.
	Models map[string]int64 `json:"models"`
	// Params maps a model name to its weights' bytes, so that Models less
	// Params is what the forward pass of Batch pages took (PerPage);
	// profiles measured before it was recorded have none.
	Params map[string]int64 `json:"params,omitempty"`
	// Measured is the RFC 3339 time of the measurement.
	Measured string `json:"measured"`
}

// LoadGPUProfile reads a profile; a missing file is (nil, nil).
func LoadGPUProfile(path string) (*GPUProfile, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var p GPUProfile
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// Save writes the profile atomically.
func (p *GPUProfile) Save(path string) error {
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'), 0o666)
}

// Matches reports whether the profile was measured on this GPU (name and
// memory), at this batch size, and covers every named model with a positive
// figure. A profile that does not match must be measured again.
func (p *GPUProfile) Matches(gpu string, total uint64, batch int, names []string) bool {
	if p == nil || p.GPU != gpu || p.TotalBytes != total || p.Batch != batch {
		return false
	}
	for _, n := range names {
		if p.Models[n] <= 0 {
			return false
		}
	}
	return true
}

// GroupByMemory packs models into groups whose summed need fits budget bytes
// (first fit, largest model first), so every group can be loaded and run on
// the device at once. Groups are returned as indexes into need, each group in
// ascending index order, groups ordered by their first index. A model needing
// more than the budget on its own gets a group of its own (it may still fit
// once nothing else is loaded; the caller should warn).
func GroupByMemory(need []int64, budget int64) [][]int {
	order := make([]int, len(need))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return need[order[a]] > need[order[b]] })
	var groups [][]int
	var used []int64
	for _, i := range order {
		placed := false
		for g := range groups {
			if used[g]+need[i] <= budget {
				groups[g] = append(groups[g], i)
				used[g] += need[i]
				placed = true
				break
			}
		}
		if !placed {
			groups = append(groups, []int{i})
			used = append(used, need[i])
		}
	}
	for _, g := range groups {
		sort.Ints(g)
	}
	sort.Slice(groups, func(a, b int) bool { return groups[a][0] < groups[b][0] })
	return groups
}

// GPUName returns the model name of CUDA device dev as the NVIDIA driver
// reports it under /proc/driver/nvidia/gpus, else "cuda:<dev>".
func GPUName(dev int) string {
	dirs, _ := filepath.Glob("/proc/driver/nvidia/gpus/*/information")
	sort.Strings(dirs)
	if dev < len(dirs) {
		if b, err := os.ReadFile(dirs[dev]); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "Model" {
					return strings.TrimSpace(v)
				}
			}
		}
	}
	return "cuda:" + strconv.Itoa(dev)
}

// ProfileName is the folder's key in a GPUProfile: the revision it was
// found for, else the name of its folder (a model folder given by path,
// which has no revision), so that a caller names the models before any is
// loaded.
func (f Folder) ProfileName() string {
	if f.Revision != "" {
		return f.Revision
	}
	return filepath.Base(f.Dir)
}

// MeasureGPU loads each folder on CUDA device dev in turn, runs one batch of
// blank pages through it and records how much device memory that took
// (free memory before loading minus free memory after the forward pass; at
// least the parameter bytes), keyed by Folder.ProfileName. Each model is
// closed before the next.
func MeasureGPU(folders []Folder, dev, batch int) (*GPUProfile, error) {
	_, total, err := torch.MemoryInfo(dev)
	if err != nil {
		return nil, err
	}
	p := &GPUProfile{GPU: GPUName(dev), TotalBytes: total, Batch: batch, Models: map[string]int64{}, Params: map[string]int64{},
		Measured: time.Now().UTC().Format(time.RFC3339)}
	device := "cuda:" + strconv.Itoa(dev)
	for _, f := range folders {
		before, _, err := torch.MemoryInfo(dev)
		if err != nil {
			return nil, err
		}
		m, err := LoadFolder(f, device)
		if err != nil {
			return nil, err
		}
		data := make([]float32, batch*m.InputLen())
		_, ferr := m.Probabilities(data, batch, 3, m.Size(), m.Size())
		after, _, merr := torch.MemoryInfo(dev)
		pb, _ := m.Module.ParamBytes()
		m.Close()
		if ferr != nil {
			return nil, ferr
		}
		if merr != nil {
			return nil, merr
		}
		need := int64(before) - int64(after)
		if need < pb {
			need = pb
		}
		p.Models[f.ProfileName()] = need
		p.Params[f.ProfileName()] = pb
	}
	return p, nil
}

// PerPage returns the device memory one page took in each named model's
// forward pass: (Models − Params) / Batch, at least one byte; ok is false
// when the profile lacks a figure (a profile measured before Params was
// recorded).
func (p *GPUProfile) PerPage(names []string) (perPage []int64, ok bool) {
	if p == nil || p.Batch <= 0 {
		return nil, false
	}
	for _, n := range names {
		need, okN := p.Models[n]
		params, okP := p.Params[n]
		if !okN || !okP || need <= 0 {
			return nil, false
		}
		perPage = append(perPage, max(1, (need-params)/int64(p.Batch)))
	}
	return perPage, true
}

// MaxGPUBatch is the largest batch BatchForMemory gives: beyond it the
// host's rows in flight grow (up to 4 MB a row before its upload with
// UploadPage) for no gain once the device is busy.
const MaxGPUBatch = 128

// InputBytes is the device memory the inputs of one page take in models
// of the given input sizes: each distinct size's resized page (a float
// torch.Batch), and each model's normalised copy of it, as floats.
func InputBytes(sizes []int) int64 {
	seen := map[int]bool{}
	var n int64
	for _, s := range sizes {
		page := int64(3*s*s) * 4
		if !seen[s] {
			seen[s] = true
			n += page
		}
		n += page
	}
	return n
}

// BatchForMemory is the largest batch, from 1 to most, whose pages fit
// budget bytes of device memory with lanes batches in flight: a page takes
// input bytes (InputBytes) and, in the models, perPage[i] bytes of model
// i's forward pass: the largest of them when the models run one after
// another, their sum when they run at once (concurrent). The weights are
// not in budget: the caller leaves them out.
func BatchForMemory(budget int64, perPage []int64, input int64, lanes int, concurrent bool, most int) int {
	var act int64
	for _, a := range perPage {
		if concurrent {
			act += a
		} else {
			act = max(act, a)
		}
	}
	page := (input + act) * int64(max(1, lanes))
	if page <= 0 || budget <= 0 {
		return 1
	}
	return int(max(1, min(int64(most), budget/page)))
}

// GroupBatches sizes the batch of each group of models (indexes into names
// and sizes, the models' input sizes; GroupByMemory's groups) by the
// device memory budget (the free bytes the caller allows, nothing loaded)
// and the profile's figures: the group's weights stay resident and its
// models run at once, GPULanes batches in flight (BatchForMemory, at most
// MaxGPUBatch). It is nil when the profile lacks a figure (PerPage).
func (p *GPUProfile) GroupBatches(names []string, sizes []int, groups [][]int, budget int64) []int {
	per, ok := p.PerPage(names)
	if !ok {
		return nil
	}
	out := make([]int, len(groups))
	for k, g := range groups {
		out[k] = p.batchOf(names, sizes, per, g, budget, true)
	}
	return out
}

// SequentialBatch sizes the batch of a plain run on the device (no
// --parallel): every named model's weights stay resident (the budget is the
// free bytes the caller allows, nothing loaded) and the models run one
// after another, so a page takes the inputs of all the models' sizes
// (InputBytes) and the largest of their forward passes' per-page figures,
// GPULanes batches in flight (BatchForMemory, at most MaxGPUBatch). It is
// 0 when the profile lacks a figure (PerPage): the caller keeps its batch.
func (p *GPUProfile) SequentialBatch(names []string, sizes []int, budget int64) int {
	per, ok := p.PerPage(names)
	if !ok {
		return 0
	}
	all := make([]int, len(names))
	for i := range all {
		all[i] = i
	}
	return p.batchOf(names, sizes, per, all, budget, false)
}

// batchOf is the batch of the models at indexes idx into names, sizes and
// per (PerPage's figures) within budget less their weights, run at once
// (concurrent) or one after another.
func (p *GPUProfile) batchOf(names []string, sizes []int, per []int64, idx []int, budget int64, concurrent bool) int {
	var perG []int64
	var sz []int
	left := budget
	for _, i := range idx {
		perG = append(perG, per[i])
		sz = append(sz, sizes[i])
		left -= p.Params[names[i]]
	}
	return BatchForMemory(left, perG, InputBytes(sz), GPULanes, concurrent, MaxGPUBatch)
}
