// Package classify is the page classifier's inference engine, shared by the
// batch command line (cmd/pageclass) and the HTTP service.
//
// A Model is one loaded model folder: model.pt (TorchScript) and model.json
// (modelmeta.Meta) on a device. Its preprocessing (input size, mean, std)
// always comes from its own model.json, never from flags or configuration.
// Its probabilities are reported in canonical category order
// (modelmeta.Categories) whatever the model's own label order.
//
// An Ensemble is one or more Models run over the same pages. Each page is
// decoded once; every distinct preprocessing of the ensemble is computed once
// from that decoded page (two models of the same size, mean and std share one
// tensor), and each model gets its own tensor. Predict returns, per page, every
// model's full softmax vector and their element-wise mean: the ensemble average
// of full probabilities, the numbers both the command line's AVG table and the
// service's version=all answer are made of.
//
// A Locator finds model folders: a registry revision lives in
// {Models}/model_<rev without dots> (or {Models}/<rev>), or in the hub cache
// when the hub is used. When no model location was given and the default
// folder holds none of the models asked for, the shipped demo models answer,
// with a warning; Folder.Demo marks them so the run metadata can say so. A
// given location never falls back (see Locator).
package classify

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
)

// Model is a loaded model folder. It implements pipeline.Model; its
// Probabilities are in canonical category order.
type Model struct {
	// Name labels the model in outputs: the registry revision it was
	// loaded for, else the revision in model.json, else the folder name.
	Name string
	// Demo is true for a model of the shipped demo ensemble.
	Demo bool
	net
}

// net is a TorchScript module loaded from a model folder with its
// metadata and its preprocessing: what a classifier and the orientation
// model share.
type net struct {
	// Dir is the model folder.
	Dir string
	// Meta is the model's model.json.
	Meta *modelmeta.Meta
	// Module is the TorchScript module.
	Module *torch.Module
	// Optimized is the inference optimisation applied at load (0: none);
	// see InferenceOptimization.
	Optimized torch.Optimization
	// Precision is the arithmetic its forward passes run in (the one
	// asked for as it runs on the net's device: tf32 on the CPU is fp32).
	Precision torch.Precision
	// Digest is modelmeta.Digest of the bytes this net was made from
	// (model.json as parsed into Meta, model.pt as loaded into Module),
	// each file read once: what run metadata records as the model that
	// ran, even if the folder's files are replaced after loading.
	Digest string

	mean, std [3]float32
}

// loadNet loads the model.pt bytes of c, read from dir, onto device at
// precision prec with c's preprocessing.
func loadNet(dir, device string, prec torch.Precision, c *modelmeta.Contents) (net, error) {
	meta := c.Meta
	if meta.Preprocess.Resize != registry.ResizeBilinear {
		return net{}, fmt.Errorf("%s: unsupported resize rule %q", dir, meta.Preprocess.Resize)
	}
	prec, _, err := prec.Effective(deviceOr(device))
	if err != nil {
		return net{}, err
	}
	mod, err := torch.LoadBytes(c.Weights, device)
	if err != nil {
		return net{}, fmt.Errorf("%s: %w", filepath.Join(dir, modelmeta.WeightsFile), err)
	}
	if err := mod.SetPrecision(prec); err != nil {
		mod.Close()
		return net{}, fmt.Errorf("%s: %w", dir, err)
	}
	n := net{Dir: dir, Meta: meta, Module: mod, Digest: c.Digest, Precision: prec}
	for i := 0; i < 3; i++ {
		n.mean[i] = float32(meta.Preprocess.Mean[i])
		n.std[i] = float32(meta.Preprocess.Std[i])
	}
	return n, nil
}

// deviceOr is device, "cpu" when empty.
func deviceOr(device string) string {
	if device == "" {
		return "cpu"
	}
	return device
}

// Load loads the model folder dir (model.pt + model.json) onto device ("cpu"
// or "cuda:N"; "" means "cpu") for inference, at the device's default
// precision (torch.DefaultPrecision), with the optimisation that
// InferenceOptimization chooses for its family. Errors name the folder.
func Load(dir, device string) (*Model, error) {
	return LoadAs(dir, device, torch.DefaultPrecision(device))
}

// LoadAs is Load at precision prec (fp16 on the CPU is refused; tf32 on
// the CPU runs as fp32, Model.Precision says so).
func LoadAs(dir, device string, prec torch.Precision) (*Model, error) {
	c, err := modelmeta.ReadFolder(dir)
	if err != nil {
		return nil, err
	}
	return loadOptimized(dir, device, prec, c)
}

// loadOptimized is LoadAs of the folder's contents c.
func loadOptimized(dir, device string, prec torch.Precision, c *modelmeta.Contents) (*Model, error) {
	m, err := loadPlain(dir, device, prec, c)
	if err != nil {
		return nil, err
	}
	if opt := InferenceOptimization(m.Meta.Base, device); opt != 0 {
		if err := m.Module.Optimize(opt); err != nil {
			m.Close()
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		m.Optimized = opt
	}
	return m, nil
}

// InferenceOptimization is the optimisation Load applies to a model of
// base architecture base on device, chosen per family from measurements
// (docs/benchmarks.md; the outputs match the plain module's within
// float rounding, TestOptimizedMatchesPlain):
//
//   - CNNs (EfficientNet, EfficientNetV2, EfficientNet-Lite, RegNet,
//     ResNet, ConvNeXt, MobileNet and the fast classifier) on the CPU:
//     channels-last weights and input, frozen: 1.5× (EfficientNetV2) to
//     2.4× (EfficientNet-Lite0) the plain module's images per second.
//     optimize_for_inference is not added: it gained less on every CNN
//     but EfficientNet-Lite0 on two threads.
//   - EfficientNet-Lite (the shipped models) on the CPU: channels-last,
//     frozen and optimize_for_inference (oneDNN for every convolution).
//     With the forward passes in chunks (ChunkPages) on one thread each
//     (two lanes), libtorch computes the 1×1 convolutions of the frozen
//     module with MKL's sgemm; optimize_for_inference keeps them on
//     oneDNN: 1.12–1.39× the pages per second of the pipeline, 12–22% less
//     CPU per page (docs/benchmarks.md).
//   - ViTs and any family not listed: none (freezing, channels-last and
//     optimize_for_inference were within ±5% of the plain module).
//   - CUDA: none (not measured: no GPU was available).
func InferenceOptimization(base, device string) torch.Optimization {
	if device != "" && device != "cpu" {
		return 0
	}
	b := strings.ToLower(base)
	if strings.HasPrefix(b, "efficientnet_lite") {
		return torch.ChannelsLast | torch.FreezeOptimize
	}
	for _, family := range []string{"efficientnet", "regnet", "resnet", "convnext", "mobilenet", modelmeta.FastClsBase} {
		if strings.HasPrefix(b, family) {
			return torch.ChannelsLast | torch.Freeze
		}
	}
	return 0
}

// LoadPlain is Load without the inference optimisation: the module as
// its file holds it.
func LoadPlain(dir, device string) (*Model, error) {
	c, err := modelmeta.ReadFolder(dir)
	if err != nil {
		return nil, err
	}
	return loadPlain(dir, device, torch.DefaultPrecision(device), c)
}

// loadPlain is LoadPlain of the folder's contents c at precision prec.
func loadPlain(dir, device string, prec torch.Precision, c *modelmeta.Contents) (*Model, error) {
	if c.Meta.IsRotation() {
		return nil, fmt.Errorf("%s: a page-orientation model, not a page classifier (it is given as the orientation model)", dir)
	}
	n, err := loadNet(dir, device, prec, c)
	if err != nil {
		return nil, err
	}
	m := &Model{net: n, Name: c.Meta.Revision}
	if m.Name == "" {
		m.Name = filepath.Base(dir)
	}
	return m, nil
}

// LoadFolder is LoadFolderAs at the device's default precision
// (torch.DefaultPrecision).
func LoadFolder(f Folder, device string) (*Model, error) {
	return LoadFolderAs(f, device, torch.DefaultPrecision(device))
}

// LoadFolderAs loads a folder found by a Locator at precision prec, reading each of its files
// once, or from Folder.Contents when they were read before (Model.Digest
// is of the bytes loaded). The model is named after
// the revision its model.json names (the model that runs labels the
// outputs), else the revision it was found for, else its folder name. When
// the folder was found for a definite revision (Folder.Want) and model.json
// names another, loading fails rather than label one model's results with
// another's name. The model is demo when its folder is the demo fallback
// or its digest is a shipped demo model's (IsDemoDigest: a copy given
// with -m is demo too).
func LoadFolderAs(f Folder, device string, prec torch.Precision) (*Model, error) {
	c := f.Contents
	if c == nil {
		var err error
		if c, err = modelmeta.ReadFolder(f.Dir); err != nil {
			return nil, err
		}
	}
	if err := f.check(c.Meta); err != nil {
		return nil, err
	}
	m, err := loadOptimized(f.Dir, device, prec, c)
	if err != nil {
		return nil, err
	}
	m.Name = f.Name(m.Meta)
	m.Demo = f.Demo || IsDemoDigest(c.Digest)
	return m, nil
}

// Meta reads the folder's model.json (Contents' when set) and checks it is
// the revision the folder was found for: when Want is set and model.json names another
// revision, it fails rather than let one model's results (or a model trained
// from it) carry another's name. Every use of a located folder (classify,
// evaluate, train from --base) reads its metadata through Meta.
func (f Folder) Meta() (*modelmeta.Meta, error) {
	if f.Contents != nil {
		return f.Contents.Meta, f.check(f.Contents.Meta)
	}
	meta, err := modelmeta.Load(f.Dir)
	if err != nil {
		return nil, err
	}
	return meta, f.check(meta)
}

// check refuses metadata meta of the folder when it names another revision
// than the one the folder was found for (Want).
func (f Folder) check(meta *modelmeta.Meta) error {
	if f.Want != "" && meta.Revision != "" && meta.Revision != f.Want {
		return fmt.Errorf("%s: its %s says revision %s, not the %s asked for (fix the folder name or the revision)",
			f.Dir, modelmeta.MetaFile, meta.Revision, f.Want)
	}
	return nil
}

// Name is the name a model of this folder with metadata meta gets in
// outputs: the revision in model.json, else the revision the folder was
// found for, else the folder's name.
func (f Folder) Name(meta *modelmeta.Meta) string {
	switch {
	case meta != nil && meta.Revision != "":
		return meta.Revision
	case f.Revision != "":
		return f.Revision
	}
	return filepath.Base(filepath.Clean(f.Dir))
}

// Close releases the native module.
func (m *Model) Close() error {
	if m == nil {
		return nil
	}
	return m.net.close()
}

func (n *net) close() error {
	if n.Module == nil {
		return nil
	}
	return n.Module.Close()
}

// Size is the side of the square input in pixels.
func (n *net) Size() int { return n.Meta.Preprocess.Size }

// InputLen is the number of floats of one preprocessed page (3·Size·Size).
func (n *net) InputLen() int { return 3 * n.Size() * n.Size() }

// Preprocess resizes a decoded page to the model's input with the model's own
// mean and std: 3·Size·Size floats, CHW. It is safe for concurrent use.
func (n *net) Preprocess(img imageio.Image) ([]float32, error) {
	return torch.Preprocess(img.Pix, img.H, img.W, 3, n.Size(), n.mean, n.std)
}

// PreprocessEach prepares one decoded page for each of models, resizing it
// once per distinct input size: the antialiased resize (rounded to 8 bits)
// is the costly part, and the mean/std normalisation of each model is then
// applied to the shared resized page. out[i] is models[i]'s input, equal
// value for value to models[i].Preprocess(img); models with the same
// preprocessing share one slice.
func PreprocessEach(img imageio.Image, models []*Model) ([][]float32, error) {
	out := make([][]float32, len(models))
	resized := map[int][]float32{} // size -> the page resized, values k/255
	done := map[registry.Preprocess][]float32{}
	for i, m := range models {
		if t, ok := done[m.Meta.Preprocess]; ok {
			out[i] = t
			continue
		}
		// Only one model of this size: its own preprocessing, in one call.
		if countSize(models, m.Size()) == 1 {
			t, err := m.Preprocess(img)
			if err != nil {
				return nil, err
			}
			out[i], done[m.Meta.Preprocess] = t, t
			continue
		}
		r, ok := resized[m.Size()]
		if !ok {
			var err error
			// Mean 0 and std 1: the shim's resize, rounded to 8 bits and
			// divided by 255, which normalise below recovers exactly.
			if r, err = torch.Preprocess(img.Pix, img.H, img.W, 3, m.Size(), [3]float32{}, [3]float32{1, 1, 1}); err != nil {
				return nil, err
			}
			resized[m.Size()] = r
		}
		t := m.normalise(r)
		out[i], done[m.Meta.Preprocess] = t, t
	}
	return out, nil
}

func countSize(models []*Model, size int) int {
	n := 0
	for _, m := range models {
		if m.Size() == size {
			n++
		}
	}
	return n
}

// normalise turns a page resized to the model's size with values k/255 (k
// the 8-bit value) into the model's input, with the shim's arithmetic in
// float32: (k/255 - mean) / std per channel.
func (m *Model) normalise(r []float32) []float32 {
	out := make([]float32, len(r))
	plane := len(r) / 3
	for c := 0; c < 3; c++ {
		mean, std := m.mean[c], m.std[c]
		for i, v := range r[c*plane : (c+1)*plane] {
			k := float32(math.Round(float64(v) * 255))
			out[c*plane+i] = (k/255 - mean) / std
		}
	}
	return out
}

// cpuCallInput bounds the input of one forward pass on the CPU, in bytes:
// a batch is run in calls of at most this much input (ChunkPages). A
// CNN's largest activation is about 8 times its input (EfficientNet-Lite0
// at 224: 96 channels at 112×112, 4.8 MB a page against 0.6 MB of input),
// so 3 MiB of input keeps every activation under 32 MiB, the largest
// allocation that glibc's malloc serves from its heap and reuses. Larger
// ones are mapped and unmapped at each call, and the kernel then clears
// every page again: with the 16 pages of a batch in one call, page faults
// took a quarter of the pipeline's CPU time (docs/benchmarks.md).
var cpuCallInput = 3 << 20 // a variable for the benchmarks (export_test.go)

// ChunkPages is the number of pages of one forward pass: on the CPU as
// many as fit in cpuCallInput (5 at 224 px, 4 at 240, 1 from 363), on a
// GPU the whole batch (0).
func (n *net) ChunkPages() int {
	if n.Module.Device() != "cpu" {
		return 0
	}
	return max(1, cpuCallInput/(4*n.InputLen()))
}

// probabilities runs n pages (NCHW, the model's size) in forward passes of
// at most ChunkPages pages each, on threads intra-op threads (0: the
// process-wide count), and returns the module's n softmax rows. Every page
// is computed on its own in a forward pass (inference: no batch
// statistics), so the rows do not depend on the chunking beyond float
// rounding.
func (n *net) probabilities(data []float32, pages, threads int) ([][]float32, error) {
	s := int64(n.Size())
	step := n.ChunkPages()
	if step <= 0 || step >= pages {
		return n.Module.ProbabilitiesThreads(torch.Tensor{Data: data, Shape: []int64{int64(pages), 3, s, s}}, threads)
	}
	per := n.InputLen()
	rows := make([][]float32, 0, pages)
	for at := 0; at < pages; at += step {
		k := min(step, pages-at)
		r, err := n.Module.ProbabilitiesThreads(torch.Tensor{Data: data[at*per : (at+k)*per], Shape: []int64{int64(k), 3, s, s}}, threads)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

// Probabilities runs a NCHW batch of n pages through the model and returns
// n softmax rows in canonical category order (modelmeta.Categories;
// categories the model lacks score 0). It implements pipeline.Model.
func (m *Model) Probabilities(data []float32, n, c, h, w int) ([][]float32, error) {
	return m.ProbabilitiesThreads(data, n, c, h, w, 0)
}

// ProbabilitiesThreads is Probabilities on threads intra-op threads (0:
// the process-wide count, torch.SetNumThreads); callers that run several
// forward passes at once give each its share of the cores.
func (m *Model) ProbabilitiesThreads(data []float32, n, c, h, w, threads int) ([][]float32, error) {
	if n == 0 {
		return nil, nil
	}
	if c != 3 || h != m.Size() || w != m.Size() {
		return nil, fmt.Errorf("%s: input %dx%dx%d, model wants 3x%dx%d", m.Name, c, h, w, m.Size(), m.Size())
	}
	rows, err := m.probabilities(data, n, threads)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return m.canonical(rows, n)
}

// canonical checks the n rows of a forward pass and puts them in canonical
// category order.
func (m *Model) canonical(rows [][]float32, n int) ([][]float32, error) {
	var err error
	if len(rows) != n {
		return nil, fmt.Errorf("%s: %d rows for %d pages", m.Name, len(rows), n)
	}
	if m.Meta.Canonical() {
		for i, r := range rows {
			if len(r) != len(modelmeta.Categories) {
				return nil, fmt.Errorf("%s: page %d: %d scores for %d categories", m.Name, i, len(r), len(modelmeta.Categories))
			}
		}
		return rows, nil
	}
	out := make([][]float32, n)
	for i, r := range rows {
		if out[i], err = m.Meta.ToCanonical(r); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return out, nil
}

// CloseAll closes every model, returning the first error.
func CloseAll(ms []*Model) error {
	var errs []error
	for _, m := range ms {
		errs = append(errs, m.Close())
	}
	return errors.Join(errs...)
}
