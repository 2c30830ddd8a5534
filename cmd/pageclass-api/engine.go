package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/batcher"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/resources"
	"archivekit/internal/service"
)

// member is one loaded model with the queue to its forward pass.
type member struct {
	model *classify.Model
	// batch runs preprocessed pages through the model: one batcher per
	// model, shared by every request. Nil when cross-request batching is
	// off: each request then runs its own pages through the model.
	batch *batcher.Batcher[[]float32, []float32]
	// demo is set for a shipped demo model (its licence condition "demo").
	demo bool
	// digest is modelmeta.Digest of the bytes the model was loaded from
	// (classify.Model.Digest): a calibration applies to exactly these
	// weights.
	digest string
	// threads is the intra-op thread count of each forward pass (see
	// engine.forwardThreads).
	threads int
}

// probabilities runs pages (each model.InputLen floats) through the model.
func (m *member) probabilities(ctx context.Context, pages [][]float32) ([][]float32, error) {
	if m.batch != nil {
		return m.batch.Do(ctx, pages...)
	}
	return m.forward(pages)
}

// forward runs one NCHW batch made of pages.
func (m *member) forward(pages [][]float32) ([][]float32, error) {
	n, s := len(pages), m.model.Size()
	data := make([]float32, 0, n*m.model.InputLen())
	for _, p := range pages {
		data = append(data, p...)
	}
	return m.model.ProbabilitiesThreads(data, n, 3, s, s, m.threads)
}

// forwardThreads is the intra-op thread count of each forward pass. A
// request runs its models' forward passes side by side, and concurrent
// requests (or their batches) run beside each other: on the CPU each pass
// gets its share of the threads among the five ensemble members (at least
// one), so that the passes running at once do not put two or more busy
// threads on one core (on 2 cores: one thread each). On a GPU: the
// process-wide count.
func (e *engine) forwardThreads() int {
	if e.opt.Device != "cpu" {
		return 0
	}
	return max(1, torch.NumThreads()/len(registry.Ensemble))
}

// engineOptions configure the models and their batching.
type engineOptions struct {
	Locator *classify.Locator
	Device  string
	// Precision is the asked arithmetic (auto, fp32, tf32, bf16, fp16);
	// load resolves it on the device into engine.precision.
	Precision string
	// Rotation is the page-orientation model's folder; "" checks no page
	// for rotation.
	Rotation string
	// RotationOff says that an empty Rotation was asked for (the check
	// turned off), not a shipped model that was not found.
	RotationOff bool
	// Batching on: MaxBatch and MaxWait of each model's batcher.
	Batching bool
	MaxBatch int
	MaxWait  time.Duration
	Metrics  *service.Metrics
	Log      *slog.Logger
}

// engine holds the loaded models: the ensemble, loaded at warm-up, and any
// other revision, loaded at its first request and kept.
type engine struct {
	opt      engineOptions
	ensemble []*member // registry.Ensemble order
	// precision is the arithmetic the models run in on the device.
	precision torch.Precision
	demo      bool
	// orient tells each page's rotation; nil when no orientation model
	// was given.
	orient *classify.Orientation

	mu    sync.Mutex
	extra map[string]*member
	// cals caches the calibration of each member set (by names), found at
	// its first request.
	cals   map[string]calibration
	loadMu sync.Mutex // one revision download/load at a time

	closeOnce sync.Once
}

// errUnknownRevision is wrapped when a revision cannot be found.
var errUnknownRevision = errors.New("revision not available")

// resolveDevice turns --device auto into cuda:0 when a CUDA GPU is usable
// and cpu otherwise, saying which and why (the CUDA image runs with auto, so
// it starts on a machine without a GPU and says it fell back).
func (e *engine) resolveDevice() {
	if e.opt.Device != "auto" {
		return
	}
	if torch.CUDAAvailable() {
		e.opt.Device = "cuda:0"
		e.opt.Log.Info("device auto: a CUDA GPU is available", "device", e.opt.Device, "gpus", torch.DeviceCount())
		return
	}
	e.opt.Device = "cpu"
	if p := torch.CUDAProblem(); p != "" {
		e.opt.Log.Warn("device auto: an NVIDIA driver is present but CUDA could not be enabled: falling back to the CPU", "device", "cpu", "reason", p)
		return
	}
	e.opt.Log.Info("device auto: no CUDA GPU: running on the CPU", "device", "cpu")
}

// resolvePrecision turns the asked precision into the one that runs on
// the device (auto: torch.DefaultPrecision; tf32 on the CPU is fp32, said
// in the log); fp16 on the CPU is refused. It also sets the graph
// optimisation for the device (torch.DefaultGraphOptimize).
func (e *engine) resolvePrecision() error {
	p := torch.DefaultPrecision(e.opt.Device)
	if a := e.opt.Precision; a != "" && a != "auto" {
		var err error
		if p, err = torch.ParsePrecision(a); err != nil {
			return err
		}
	}
	p, note, err := p.Effective(e.opt.Device)
	if err != nil {
		return err
	}
	e.precision = p
	e.opt.Log.Info("precision", "precision", p.String(), "device", e.opt.Device, "note", note)
	// TorchScript's graph optimisation as pageclass --jit-optimize auto:
	// off on a GPU, where each new batch size of cross-request batching
	// would otherwise be profiled and compiled again
	return torch.SetGraphOptimize(torch.DefaultGraphOptimize(e.opt.Device))
}

// load finds, loads and warms the ensemble.
func (e *engine) load(ctx context.Context) error {
	e.resolveDevice()
	if err := e.resolvePrecision(); err != nil {
		return err
	}
	folders, err := e.opt.Locator.Ensemble(ctx)
	if err != nil {
		return fmt.Errorf("ensemble models: %w", err)
	}
	for _, f := range folders {
		m, err := e.loadFolder(f)
		if err != nil {
			e.close()
			return err
		}
		e.ensemble = append(e.ensemble, m)
		e.demo = e.demo || m.demo
	}
	if e.opt.Rotation != "" {
		if e.orient, err = classify.LoadOrientationAs(e.opt.Rotation, e.opt.Device, e.precision); err != nil {
			e.close()
			return fmt.Errorf("orientation model: %w", err)
		}
		e.opt.Log.Info("orientation model loaded", "dir", e.opt.Rotation, "input", e.orient.Size())
	} else if e.opt.RotationOff {
		e.opt.Log.Info("pages are not checked for rotation: no orientation model (-rotation-model)")
	} else {
		e.opt.Log.Warn("pages are not checked for rotation: the shipped orientation model was not found",
			"looked_for", resources.RotationModel.Places(),
			"hint", "give -rotation-model DIR (or set "+resources.RotationModel.Env+"); -rotation-model \"\" turns the check off")
	}
	if e.demo {
		// The fallback, or the demo models copied to the models folder (known
		// by their digests).
		e.opt.Log.Warn("serving the shipped demo ensemble (fine-tuned on the sample pages only, CC BY-NC 4.0), not the published models", "models", e.opt.Locator.Models, "demo", e.opt.Locator.Demo)
	}
	return ctx.Err()
}

// loadFolder loads one model, warms it with a blank batch, records the
// time and starts its batcher.
func (e *engine) loadFolder(f classify.Folder) (*member, error) {
	t0 := time.Now()
	m, err := classify.LoadFolderAs(f, e.opt.Device, e.precision)
	if err != nil {
		return nil, err
	}
	mem := &member{model: m, demo: m.Demo, threads: e.forwardThreads()}
	if _, err := mem.forward([][]float32{make([]float32, m.InputLen())}); err != nil {
		m.Close()
		return nil, fmt.Errorf("warming %s: %w", m.Name, err)
	}
	d := time.Since(t0)
	e.opt.Metrics.SetModelLoadTime(m.Name, d)
	e.opt.Log.Info("model loaded", "model", m.Name, "dir", f.Dir, "demo", m.Demo, "input", m.Size(), "seconds", d.Seconds(),
		"optimized", int(m.Optimized), "threads", mem.threads)
	mem.digest = m.Digest
	if e.opt.Batching {
		mem.batch = batcher.New(mem.forward,
			batcher.Options{MaxBatch: e.opt.MaxBatch, MaxWait: e.opt.MaxWait,
				OnBatch: e.opt.Metrics.ObserveBatch, OnWait: e.opt.Metrics.ObserveQueueWait})
	}
	return mem, nil
}

// members returns the models answering version: the ensemble for "all",
// one of its members, or another revision (loaded at its first request).
func (e *engine) members(ctx context.Context, version string) ([]*member, error) {
	if version == "all" {
		return e.ensemble, nil
	}
	for i, rev := range registry.Ensemble {
		if rev == version && i < len(e.ensemble) {
			return e.ensemble[i : i+1], nil
		}
	}
	e.mu.Lock()
	m, ok := e.extra[version]
	e.mu.Unlock()
	if ok {
		return []*member{m}, nil
	}
	e.loadMu.Lock()
	defer e.loadMu.Unlock()
	e.mu.Lock()
	m, ok = e.extra[version]
	e.mu.Unlock()
	if ok {
		return []*member{m}, nil
	}
	f, err := e.opt.Locator.Folder(ctx, version, true)
	if err == nil && !classify.IsModelDir(f.Dir) {
		err = fmt.Errorf("no model folder %s", f.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errUnknownRevision, version, err)
	}
	m, err = e.loadFolder(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errUnknownRevision, version, err)
	}
	e.mu.Lock()
	if e.extra == nil {
		e.extra = map[string]*member{}
	}
	e.extra[version] = m
	e.mu.Unlock()
	return []*member{m}, nil
}

// modelsOf returns the models of ms, in order.
func modelsOf(ms []*member) []*classify.Model {
	out := make([]*classify.Model, len(ms))
	for i, m := range ms {
		out[i] = m.model
	}
	return out
}

// calibration is the doubt calibration of a member set, or why it has none.
type calibration struct {
	applied *review.Applied
	note    string
}

// calibration finds (once per member set) the calibration of ms in the
// calibration file of the folder holding their model folders. A file that
// cannot be read is an error; no calibration is not.
func (e *engine) calibration(ms []*member) (calibration, error) {
	names := make([]string, len(ms))
	dirs := make([]string, len(ms))
	members := make([]review.Member, len(ms))
	for i, m := range ms {
		names[i], dirs[i] = m.model.Name, m.model.Dir
		members[i] = review.Member{Name: m.model.Name, Digest: m.digest}
	}
	key := strings.Join(names, "\x00")
	e.mu.Lock()
	c, ok := e.cals[key]
	e.mu.Unlock()
	if ok {
		return c, nil
	}
	place, err := review.Place(dirs)
	if err != nil {
		c.note = err.Error()
	} else if c.applied, c.note, err = review.Resolve(place, members); err != nil {
		return c, err
	}
	if c.applied == nil {
		e.opt.Log.Warn("no doubt calibration for these models: pages are not flagged for doubt (needs_review is null unless a page condition flags the page)", "models", strings.Join(names, ","), "reason", c.note)
	} else {
		e.opt.Log.Info("doubt calibration", "models", strings.Join(names, ","), "file", c.applied.File, "digest", c.applied.FileDigest,
			"target_precision", c.applied.Target, "reachable", c.applied.Reachable)
		if msg := c.applied.Shortfall(); msg != "" {
			e.opt.Log.Warn(msg, "models", strings.Join(names, ","), "file", c.applied.File)
		}
	}
	e.mu.Lock()
	if e.cals == nil {
		e.cals = map[string]calibration{}
	}
	e.cals[key] = c
	e.mu.Unlock()
	return c, nil
}

// close stops the batchers and releases the models.
func (e *engine) close() {
	e.closeOnce.Do(e.release)
}

func (e *engine) release() {
	all := append([]*member(nil), e.ensemble...)
	e.mu.Lock()
	for _, m := range e.extra {
		all = append(all, m)
	}
	e.mu.Unlock()
	for _, m := range all {
		if m.batch != nil {
			m.batch.Close()
		}
		_ = m.model.Close()
	}
	_ = e.orient.Close()
}
