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
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'), 0o644)
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

// MeasureGPU loads each folder on CUDA device dev in turn, runs one batch of
// blank pages through it and records how much device memory that took
// (free memory before loading minus free memory after the forward pass; at
// least the parameter bytes). Each model is closed before the next.
func MeasureGPU(folders []Folder, dev, batch int) (*GPUProfile, error) {
	_, total, err := torch.MemoryInfo(dev)
	if err != nil {
		return nil, err
	}
	p := &GPUProfile{GPU: GPUName(dev), TotalBytes: total, Batch: batch, Models: map[string]int64{},
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
		p.Models[m.Name] = need
	}
	return p, nil
}
