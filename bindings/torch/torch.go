// Package torch binds the libtorch shim in csrc/ (header csrc/include/tshim.h).
//
// Each Go type wraps exactly one native handle and must be released with
// Close. Native errors become Go errors; every buffer the shim returns is
// copied into Go memory and freed before a call returns, so no native memory
// outlives a call.
//
// Concurrency: Forward, Probabilities and Preprocess may be called from many
// goroutines at once on the same Module (libtorch inference on a shared
// module is re-entrant; the intra-op thread pool is process-wide). Training
// (Trainer), SetTrain, Save and Close must not run concurrently with any other
// call on the same Module; the Go types guard this with a lock, so misuse
// waits rather than corrupts.
//
// Leaks: LiveHandles counts the native handles not yet closed, so tests can
// check that a command closed everything it opened. A handle that is garbage
// collected without Close is still freed by a finalizer, but counted by
// Leaked: the finalizer is a safety net, not the way handles are released.
package torch

/*
#cgo CFLAGS: -I${SRCDIR}/../../csrc/include
#cgo LDFLAGS: -ltshim
#include <stdlib.h>
#include "tshim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	pkghandles "archivekit/bindings/internal/handles"
)

// handles counts the native handles (modules and trainers).
var handles pkghandles.Counter

// LiveHandles is the number of native handles (modules and trainers) opened and not
// yet closed.
func LiveHandles() int64 { return handles.Live() }

// Leaked is the number of handles freed by the garbage collector because
// nobody called Close.
func Leaked() int64 { return handles.Leaked() }

// Error is a failure reported by the native shim.
type Error struct {
	Code    int    // one of the TSHIM_ERR_* codes
	Op      string // the operation, e.g. "load"
	Message string // libtorch's message, first line kept whole
}

func (e *Error) Error() string { return fmt.Sprintf("torch %s: %s", e.Op, e.Message) }

// ErrClosed is returned when a closed handle is used.
var ErrClosed = errors.New("torch: use of closed handle")

func statusErr(op string, st C.int, msg *C.char) error {
	if st == C.TSHIM_OK {
		return nil
	}
	m := "unknown error"
	if msg != nil {
		m = C.GoString(msg)
		C.tshim_free(unsafe.Pointer(msg))
	}
	return &Error{Code: int(st), Op: op, Message: m}
}

var (
	initOnce    sync.Once
	initErr     error
	cudaProblem string
)

func ensureInit() error {
	initOnce.Do(func() {
		var msg *C.char
		st := C.tshim_init(&msg)
		if st == C.TSHIM_WARN_CUDA {
			cudaProblem = "unknown reason"
			if msg != nil {
				cudaProblem = C.GoString(msg)
				C.tshim_free(unsafe.Pointer(msg))
			}
			return
		}
		initErr = statusErr("init", st, msg)
	})
	return initErr
}

// CUDAProblem says why CUDA could not be enabled although an NVIDIA driver
// is present ("" when there is no driver or CUDA works). CPU work is not
// affected; commands report it when a GPU was asked for or expected.
func CUDAProblem() string {
	if err := ensureInit(); err != nil {
		return err.Error()
	}
	return cudaProblem
}

// Version returns the libtorch version the shim was built against.
func Version() string { return C.GoString(C.tshim_torch_version()) }

// CUDAAvailable reports whether a CUDA device can be used.
func CUDAAvailable() bool {
	if ensureInit() != nil {
		return false
	}
	var v C.int
	C.tshim_cuda_available(&v)
	return v != 0
}

// DeviceCount returns the number of CUDA devices (0 without CUDA).
func DeviceCount() int {
	if ensureInit() != nil {
		return 0
	}
	var v C.int
	C.tshim_cuda_device_count(&v)
	return int(v)
}

// MemoryInfo returns free and total bytes of CUDA device dev.
func MemoryInfo(dev int) (free, total uint64, err error) {
	if err := ensureInit(); err != nil {
		return 0, 0, err
	}
	var f, t C.uint64_t
	var msg *C.char
	if err := statusErr("cuda memory info", C.tshim_cuda_mem_info(C.int(dev), &f, &t, &msg), msg); err != nil {
		return 0, 0, err
	}
	return uint64(f), uint64(t), nil
}

// SetNumThreads sets libtorch's intra-op thread count for the process.
func SetNumThreads(n int) error {
	if err := ensureInit(); err != nil {
		return err
	}
	var msg *C.char
	return statusErr("set threads", C.tshim_set_num_threads(C.int(n), &msg), msg)
}

// SetCUDAStreamPool sets how forward passes on CUDA share the device, for
// the process: pooled (the default), each call on a stream of its own from
// libtorch's pool, so calls from several goroutines (lanes, the models of
// a group) overlap on the device; not pooled, every call on the calling
// thread's current stream, one after another. No effect on the CPU.
func SetCUDAStreamPool(pooled bool) error {
	if err := ensureInit(); err != nil {
		return err
	}
	v := 0
	if pooled {
		v = 1
	}
	C.tshim_set_cuda_stream_pool(C.int(v))
	return nil
}

// CUDAStreamPool reports SetCUDAStreamPool's setting.
func CUDAStreamPool() bool {
	var v C.int
	C.tshim_get_cuda_stream_pool(&v)
	return v != 0
}

// SetGraphOptimize sets, for the process, whether TorchScript's graph
// executor optimises the graphs of inference forward passes: on (the
// default, libtorch's own), the first calls of each input shape profile
// the graph and then compile fused, specialised versions of it; off,
// every call runs the graph as scripted, with no profiling and no
// compilation (the outputs agree within float rounding). Training is not
// affected.
func SetGraphOptimize(on bool) error {
	if err := ensureInit(); err != nil {
		return err
	}
	v := 0
	if on {
		v = 1
	}
	C.tshim_set_graph_optimize(C.int(v))
	return nil
}

// GraphOptimize reports SetGraphOptimize's setting.
func GraphOptimize() bool {
	var v C.int
	C.tshim_get_graph_optimize(&v)
	return v != 0
}

// NumThreads returns libtorch's intra-op thread count.
func NumThreads() int {
	var v C.int
	C.tshim_get_num_threads(&v)
	return int(v)
}

// ManualSeed seeds libtorch's random generators (weight init, dropout).
func ManualSeed(seed uint64) { C.tshim_manual_seed(C.uint64_t(seed)) }

// Module is a TorchScript module loaded on one device.
type Module struct {
	mu        sync.RWMutex
	h         *C.tshim_module
	device    string
	precision Precision
}

// Load reads a TorchScript file onto device "cpu" or "cuda:N".
func Load(path, device string) (*Module, error) {
	if err := ensureInit(); err != nil {
		return nil, err
	}
	if device == "" {
		device = "cpu"
	}
	cp, cd := C.CString(path), C.CString(device)
	defer C.free(unsafe.Pointer(cp))
	defer C.free(unsafe.Pointer(cd))
	var h *C.tshim_module
	var msg *C.char
	if err := statusErr("load", C.tshim_module_load(cp, cd, &h, &msg), msg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return track(h, device), nil
}

// LoadBytes loads a TorchScript module from data, the bytes of a file
// that Load accepts, onto device "cpu" or "cuda:N". The bytes are only
// read during the call, so a caller that hashes the bytes it loads knows
// the module is the one hashed. Bytes that are not a whole TorchScript
// file (empty, truncated, another format) give an *Error saying they are
// not a loadable TorchScript file; errors name no file, so callers add its
// name.
func LoadBytes(data []byte, device string) (*Module, error) {
	if err := ensureInit(); err != nil {
		return nil, err
	}
	if device == "" {
		device = "cpu"
	}
	cd := C.CString(device)
	defer C.free(unsafe.Pointer(cd))
	var h *C.tshim_module
	var msg *C.char
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0]) // Go memory, read during the call only (cgo pointer rules)
	}
	st := C.tshim_module_load_buffer(p, C.size_t(len(data)), cd, &h, &msg)
	runtime.KeepAlive(data)
	if err := statusErr("load", st, msg); err != nil {
		return nil, err
	}
	return track(h, device), nil
}

// track wraps a handle the shim loaded and counts it.
func track(h *C.tshim_module, device string) *Module {
	m := &Module{h: h, device: device}
	pkghandles.Track(&handles, m, (*Module).Close)
	return m
}

// Device returns the device the module was loaded on.
func (m *Module) Device() string { return m.device }

// Close releases the native module. It is safe to call more than once.
func (m *Module) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h != nil {
		C.tshim_module_free(m.h)
		m.h = nil
		handles.Closed()
	}
	runtime.SetFinalizer(m, nil)
	return nil
}

// Optimization is how far Optimize prepares a module for inference only.
type Optimization int

const (
	// Freeze inlines parameters and attributes as constants
	// (torch::jit::freeze).
	Freeze Optimization = 1
	// FreezeOptimize also runs torch::jit::optimize_for_inference:
	// conv/batch-norm folding and oneDNN layouts where libtorch finds them
	// worth it.
	FreezeOptimize Optimization = 2
	// ChannelsLast, added to Freeze or FreezeOptimize, first converts the
	// 4-d weights to the channels-last layout; Forward then passes its
	// input in that layout too (same results; the convolutions of a CNN
	// run without reordering: 1.5–2.4× faster on the demo CNNs and
	// EfficientNet-Lite0, README "Benchmarks").
	ChannelsLast Optimization = C.TSHIM_OPT_CHANNELS_LAST
)

// Optimize freezes the module for inference only (see Optimization).
// Forward gives the same results within floating-point rounding; the module
// can no longer be trained, averaged or saved.
func (m *Module) Optimize(level Optimization) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		return ErrClosed
	}
	var msg *C.char
	return statusErr("optimize", C.tshim_module_optimize(m.h, C.int(level), &msg), msg)
}

// SetTrain switches the module to training (true) or evaluation mode.
func (m *Module) SetTrain(train bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		return ErrClosed
	}
	t := C.int(0)
	if train {
		t = 1
	}
	var msg *C.char
	return statusErr("set train", C.tshim_module_set_train(m.h, t, &msg), msg)
}

// ParamBytes returns the bytes held by parameters and buffers.
func (m *Module) ParamBytes() (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return 0, ErrClosed
	}
	var v C.int64_t
	var msg *C.char
	if err := statusErr("param bytes", C.tshim_module_param_bytes(m.h, &v, &msg), msg); err != nil {
		return 0, err
	}
	return int64(v), nil
}

// ParamCounts returns the number of parameter elements that training
// changes (those requiring gradients) and the number in all.
func (m *Module) ParamCounts() (trainable, total int64, err error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return 0, 0, ErrClosed
	}
	var t, n C.int64_t
	var msg *C.char
	if err := statusErr("param counts", C.tshim_module_param_counts(m.h, &t, &n, &msg), msg); err != nil {
		return 0, 0, err
	}
	return int64(t), int64(n), nil
}

// Tensor is a dense float32 tensor in row-major order.
type Tensor struct {
	Data  []float32
	Shape []int64
}

func checkShape(t Tensor) error {
	n := int64(1)
	for _, d := range t.Shape {
		if d <= 0 {
			return fmt.Errorf("torch: bad tensor shape %v", t.Shape)
		}
		n *= d
	}
	if len(t.Shape) == 0 || n != int64(len(t.Data)) {
		return fmt.Errorf("torch: tensor shape %v does not match %d values", t.Shape, len(t.Data))
	}
	return nil
}

// copyOut copies a shim-owned rows x cols buffer into Go memory and frees it.
func copyOut(p *C.float, rows, cols C.int64_t) [][]float32 {
	defer C.tshim_free(unsafe.Pointer(p))
	n := int(rows) * int(cols)
	src := unsafe.Slice((*float32)(unsafe.Pointer(p)), n)
	flat := make([]float32, n)
	copy(flat, src)
	out := make([][]float32, int(rows))
	for i := range out {
		out[i] = flat[i*int(cols) : (i+1)*int(cols) : (i+1)*int(cols)]
	}
	return out
}

// forward runs method (forward when "") on in without gradients.
func (m *Module) forward(in Tensor, softmax bool, threads int) ([][]float32, error) {
	return m.run("", in, softmax, threads)
}

// run calls tshim_module_forward (method "") or tshim_module_run_method.
func (m *Module) run(method string, in Tensor, softmax bool, threads int) ([][]float32, error) {
	if threads < 0 {
		return nil, fmt.Errorf("torch: %d threads", threads)
	}
	if err := checkShape(in); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return nil, ErrClosed
	}
	sm := C.int(0)
	if softmax {
		sm = 1
	}
	var cm *C.char
	if method != "" {
		cm = C.CString(method)
		defer C.free(unsafe.Pointer(cm))
	}
	var out *C.float
	var rows, cols C.int64_t
	var msg *C.char
	var st C.int
	poolFor(threads).run(func() {
		data, shape, ndim := (*C.float)(unsafe.Pointer(&in.Data[0])), (*C.int64_t)(unsafe.Pointer(&in.Shape[0])), C.int(len(in.Shape))
		if cm == nil {
			st = C.tshim_module_forward(m.h, data, shape, ndim, sm, C.int(threads), &out, &rows, &cols, &msg)
		} else {
			st = C.tshim_module_run_method(m.h, cm, data, shape, ndim, sm, C.int(threads), &out, &rows, &cols, &msg)
		}
	})
	runtime.KeepAlive(in.Data)
	op := "forward"
	if method != "" {
		op = "run " + method
	}
	if err := statusErr(op, st, msg); err != nil {
		return nil, err
	}
	return copyOut(out, rows, cols), nil
}

// Forward runs the module on a float32 NCHW batch in inference mode and
// returns one row of logits per batch item.
func (m *Module) Forward(in Tensor) ([][]float32, error) { return m.forward(in, false, 0) }

// Probabilities is Forward followed by a softmax over classes.
func (m *Module) Probabilities(in Tensor) ([][]float32, error) { return m.forward(in, true, 0) }

// ProbabilitiesThreads is Probabilities on threads intra-op threads for
// this call instead of the process-wide count (0 means that count). Two
// calls with one thread each use two cores without the synchronisation of
// one call's threads: a pipeline that keeps several batches in flight
// runs them this way.
func (m *Module) ProbabilitiesThreads(in Tensor, threads int) ([][]float32, error) {
	return m.forward(in, true, threads)
}

// HasMethod reports whether the module has a TorchScript method called
// name: forward, and those a scripted module exports (@torch.jit.export),
// such as the features and head of a base exported with
// tools/export_models.py --freeze-backbone. An optimised (frozen) module
// keeps forward alone.
func (m *Module) HasMethod(name string) (bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return false, ErrClosed
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var v C.int
	var msg *C.char
	if err := statusErr("has method", C.tshim_module_has_method(m.h, cn, &v, &msg), msg); err != nil {
		return false, err
	}
	return v != 0, nil
}

// RunMethod runs the module's method name on a float32 tensor of 1 to 8
// dimensions (the first is the batch) without gradients, in the module's
// current mode (SetTrain), as Forward runs forward. The method must return
// one row per batch item; softmax applies a softmax over each row.
func (m *Module) RunMethod(name string, in Tensor, softmax bool) ([][]float32, error) {
	if name == "" {
		return nil, errors.New("torch: run method: empty method name")
	}
	return m.run(name, in, softmax, 0)
}

// MethodTrainableParams runs the module's method name once on in, in the
// module's current mode, with autograd recording, and returns how many
// elements of the parameters that require gradients (those training
// changes) its output depends on. 0 means training cannot change what the
// method computes from in; ParamCounts' trainable count means every
// trainable parameter takes part. No parameter's gradient is touched.
func (m *Module) MethodTrainableParams(name string, in Tensor) (int64, error) {
	if err := checkShape(in); err != nil {
		return 0, err
	}
	// The write lock: the shim marks the module as trained (gradients ran
	// through it), which a concurrent forward pass reads.
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		return 0, ErrClosed
	}
	cn := C.CString(name)
	defer C.free(unsafe.Pointer(cn))
	var v C.int64_t
	var msg *C.char
	var st C.int
	inference.run(func() {
		st = C.tshim_module_method_trainable(m.h, cn, (*C.float)(unsafe.Pointer(&in.Data[0])),
			(*C.int64_t)(unsafe.Pointer(&in.Shape[0])), C.int(len(in.Shape)), &v, &msg)
	})
	runtime.KeepAlive(in.Data)
	if err := statusErr("method trainable params", st, msg); err != nil {
		return 0, err
	}
	return int64(v), nil
}

// Save writes the module as TorchScript to path. The caller is responsible
// for atomic replacement (write to a temporary name, then rename).
func (m *Module) Save(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		return ErrClosed
	}
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	var msg *C.char
	return statusErr("save", C.tshim_module_save(m.h, cp, &msg), msg)
}

// Clone returns a deep copy of the module in memory: its own parameters
// (requiring gradients where m's do), buffers and training mode, on m's
// device. Nothing run on the copy changes m. A module frozen by Optimize is
// refused.
func (m *Module) Clone() (*Module, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return nil, ErrClosed
	}
	var out *C.tshim_module
	var msg *C.char
	if err := statusErr("clone", C.tshim_module_clone(m.h, &out, &msg), msg); err != nil {
		return nil, err
	}
	c := track(out, m.device)
	c.precision = m.precision
	return c, nil
}

// Average returns a new module whose parameters and floating buffers are the
// element-wise mean of mods. All modules must have the same names and shapes.
func Average(mods ...*Module) (*Module, error) {
	if len(mods) == 0 {
		return nil, errors.New("torch: average of no modules")
	}
	hs := (*[1 << 20]*C.tshim_module)(C.malloc(C.size_t(len(mods)) * C.size_t(unsafe.Sizeof(uintptr(0)))))[:len(mods):len(mods)]
	defer C.free(unsafe.Pointer(&hs[0]))
	// Each distinct module is read-locked once: a module given twice
	// (Average(m, m)) must not take its read lock twice, which deadlocks
	// when a writer queues between the two.
	locked := map[*Module]bool{}
	for i, m := range mods {
		if !locked[m] {
			m.mu.RLock()
			defer m.mu.RUnlock()
			locked[m] = true
		}
		if m.h == nil {
			return nil, ErrClosed
		}
		hs[i] = m.h
	}
	var out *C.tshim_module
	var msg *C.char
	if err := statusErr("average", C.tshim_average(&hs[0], C.int(len(mods)), &out, &msg), msg); err != nil {
		return nil, err
	}
	r := &Module{h: out, device: mods[0].device}
	pkghandles.Track(&handles, r, (*Module).Close)
	return r, nil
}

// Preprocess resizes an 8-bit image (h x w x c, c = 1 or 3, row-major HWC)
// to size x size with antialiased bilinear interpolation, rounds to 8 bits,
// scales to [0,1] and normalises with mean/std. It returns 3*size*size CHW
// floats, ready to be stacked into an NCHW batch.
func Preprocess(pix []uint8, h, w, c, size int, mean, std [3]float32) ([]float32, error) {
	if err := ensureInit(); err != nil {
		return nil, err
	}
	if h <= 0 || w <= 0 || (c != 1 && c != 3) || len(pix) != h*w*c || size <= 0 {
		return nil, fmt.Errorf("torch: preprocess: bad image %dx%dx%d with %d bytes, size %d", h, w, c, len(pix), size)
	}
	out := make([]float32, 3*size*size)
	var msg *C.char
	var st C.int
	preprocessing.run(func() { // the shim preprocesses on one intra-op thread
		st = C.tshim_preprocess((*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int64_t(h), C.int64_t(w), C.int64_t(c),
			C.int64_t(size), C.int64_t(size), (*C.float)(unsafe.Pointer(&mean[0])), (*C.float)(unsafe.Pointer(&std[0])),
			(*C.float)(unsafe.Pointer(&out[0])), &msg)
	})
	runtime.KeepAlive(pix)
	if err := statusErr("preprocess", st, msg); err != nil {
		return nil, err
	}
	return out, nil
}

// Trainer runs AdamW optimisation steps on one module.
type Trainer struct {
	mu sync.Mutex
	m  *Module
	h  *C.tshim_trainer
}

// AdamWConfig holds the optimiser's hyper-parameters.
type AdamWConfig struct {
	LR, WeightDecay, Beta1, Beta2, Eps float64
}

// DefaultAdamW is PyTorch's AdamW default (weight decay 0.01) at a given rate.
func DefaultAdamW(lr float64) AdamWConfig {
	return AdamWConfig{LR: lr, WeightDecay: 0.01, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
}

// NewTrainer creates an AdamW trainer over all parameters of m. m must stay
// open while the trainer is used. It holds m's exclusive lock: the native
// side switches the module to training mode.
func NewTrainer(m *Module, cfg AdamWConfig) (*Trainer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		return nil, ErrClosed
	}
	var h *C.tshim_trainer
	var msg *C.char
	st := C.tshim_trainer_new(m.h, C.double(cfg.LR), C.double(cfg.WeightDecay), C.double(cfg.Beta1),
		C.double(cfg.Beta2), C.double(cfg.Eps), &h, &msg)
	if err := statusErr("trainer", st, msg); err != nil {
		return nil, err
	}
	t := &Trainer{m: m, h: h}
	pkghandles.Track(&handles, t, (*Trainer).Close)
	return t, nil
}

// Close releases the optimiser state.
func (t *Trainer) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h != nil {
		C.tshim_trainer_free(t.h)
		t.h = nil
		handles.Closed()
	}
	runtime.SetFinalizer(t, nil)
	return nil
}

// SetLR sets the learning rate used by the next steps.
func (t *Trainer) SetLR(lr float64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h == nil {
		return ErrClosed
	}
	var msg *C.char
	return statusErr("set lr", C.tshim_trainer_set_lr(t.h, C.double(lr), &msg), msg)
}

// ZeroGrad clears all parameter gradients.
func (t *Trainer) ZeroGrad() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h == nil {
		return ErrClosed
	}
	var msg *C.char
	return statusErr("zero grad", C.tshim_trainer_zero_grad(t.h, &msg), msg)
}

// Step runs one optimisation step on a batch with integer class labels and
// returns the mean cross-entropy loss and the logits of the batch.
func (t *Trainer) Step(in Tensor, labels []int64) (float32, [][]float32, error) {
	return t.step("", in, labels)
}

// StepMethod is Step through the module's method name instead of forward,
// on a float32 input of 1 to 8 dimensions whose first is the batch: e.g.
// the head of a base with a frozen backbone on features computed once.
func (t *Trainer) StepMethod(name string, in Tensor, labels []int64) (float32, [][]float32, error) {
	if name == "" {
		return 0, nil, errors.New("torch: train step: empty method name")
	}
	return t.step(name, in, labels)
}

// step calls tshim_trainer_step (method "") or tshim_trainer_step_method.
func (t *Trainer) step(method string, in Tensor, labels []int64) (float32, [][]float32, error) {
	if err := checkShape(in); err != nil {
		return 0, nil, err
	}
	if int64(len(labels)) != in.Shape[0] {
		return 0, nil, fmt.Errorf("torch: %d labels for a batch of %d", len(labels), in.Shape[0])
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.h == nil {
		return 0, nil, ErrClosed
	}
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	if t.m.h == nil {
		return 0, nil, ErrClosed
	}
	var loss C.float
	var out *C.float
	var rows, cols C.int64_t
	var msg *C.char
	data, shape, ndim := (*C.float)(unsafe.Pointer(&in.Data[0])), (*C.int64_t)(unsafe.Pointer(&in.Shape[0])), C.int(len(in.Shape))
	lab := (*C.int64_t)(unsafe.Pointer(&labels[0]))
	var st C.int
	if method == "" {
		st = C.tshim_trainer_step(t.h, data, shape, ndim, lab, &loss, &out, &rows, &cols, &msg)
	} else {
		cm := C.CString(method)
		defer C.free(unsafe.Pointer(cm))
		st = C.tshim_trainer_step_method(t.h, cm, data, shape, ndim, lab, &loss, &out, &rows, &cols, &msg)
	}
	runtime.KeepAlive(in.Data)
	runtime.KeepAlive(labels)
	if err := statusErr("train step", st, msg); err != nil {
		return 0, nil, err
	}
	return float32(loss), copyOut(out, rows, cols), nil
}

// inference runs the inference calls into libtorch (forward passes and
// preprocessing) on a fixed set of OS threads. libtorch keeps state per
// calling thread (its OpenMP team, oneDNN and allocator caches); called
// from whichever OS thread the Go scheduler picks, a long-running service
// grew that state on ever more threads: pageclass-api's resident memory
// rose from 350 MB warm to 1.4 GB after 3,000 requests. On a fixed set it
// stays flat. The set has one thread per CPU (at least two), which also
// bounds the inference calls running at once.
//
// The intra-op thread count is a property of an OS thread in libtorch, and
// changing it costs (its thread pools are remade), so each set of threads
// keeps one count: inference holds the process-wide count (SetNumThreads),
// and poolFor(n) a set whose calls use n threads. Preprocessing (one
// thread) has a set of its own, so that pages are prepared while forward
// passes hold the others.
var (
	inference     = newThreadPool(max(2, runtime.NumCPU()))
	preprocessing = newThreadPool(max(2, runtime.NumCPU()))
)

var (
	poolsMu sync.Mutex
	pools   = map[int]*threadPool{}
)

// poolFor returns the thread set of calls with n intra-op threads; 0 is
// the process-wide count.
func poolFor(n int) *threadPool {
	if n <= 0 {
		return inference
	}
	poolsMu.Lock()
	defer poolsMu.Unlock()
	p, ok := pools[n]
	if !ok {
		p = newThreadPool(max(2, runtime.NumCPU()))
		pools[n] = p
	}
	return p
}

// threadPool runs functions on goroutines locked to their OS threads.
type threadPool struct{ jobs chan func() }

func newThreadPool(n int) *threadPool {
	p := &threadPool{jobs: make(chan func())}
	for range n {
		go func() {
			runtime.LockOSThread() // for the life of the process
			for f := range p.jobs {
				f()
			}
		}()
	}
	return p
}

// run calls f on one of the pool's threads and waits for it.
func (p *threadPool) run(f func()) {
	done := make(chan struct{})
	p.jobs <- func() { defer close(done); f() }
	<-done
}
