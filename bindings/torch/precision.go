package torch

/*
#include <stdlib.h>
#include "tshim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	pkghandles "archivekit/bindings/internal/handles"
)

// Precision is the arithmetic of a module's forward passes
// (Module.SetPrecision).
type Precision int

const (
	// FP32 is strict float32: TF32 off for matmuls and convolutions.
	FP32 Precision = C.TSHIM_PREC_FP32
	// TF32 keeps float32 tensors; on CUDA, matmuls (cuBLAS) and
	// convolutions (cuDNN) run in TF32. On the CPU it is FP32.
	TF32 Precision = C.TSHIM_PREC_TF32
	// BF16 converts the weights and each input to bfloat16 (CPU and CUDA).
	BF16 Precision = C.TSHIM_PREC_BF16
	// FP16 converts the weights and each input to float16 (CUDA only).
	FP16 Precision = C.TSHIM_PREC_FP16
)

// Precisions are the names ParsePrecision accepts, in order.
var Precisions = []string{"fp32", "tf32", "bf16", "fp16"}

// String is the precision's name: fp32, tf32, bf16 or fp16.
func (p Precision) String() string {
	if p >= 0 && int(p) < len(Precisions) {
		return Precisions[p]
	}
	return fmt.Sprintf("precision(%d)", int(p))
}

// ParsePrecision reads a precision's name (case-insensitive).
func ParsePrecision(s string) (Precision, error) {
	for i, n := range Precisions {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return Precision(i), nil
		}
	}
	return 0, fmt.Errorf("precision %q: want one of %s", s, strings.Join(Precisions, ", "))
}

// CheckDevice checks a device's name as the tools take it: cpu, auto (a
// CUDA GPU when one is usable, else the CPU), cuda or cuda:N. Whether a GPU
// is there is the caller's to check.
func CheckDevice(d string) error {
	switch {
	case d == "cpu", d == "auto", d == "cuda":
		return nil
	case strings.HasPrefix(d, "cuda:"):
		if n, err := strconv.Atoi(d[len("cuda:"):]); err == nil && n >= 0 {
			return nil
		}
	}
	return fmt.Errorf("device %q: want cpu, cuda:N (cuda:0 the first GPU) or auto", d)
}

// DefaultPrecision is the precision on device when none is asked for:
// TF32 on CUDA (libtorch's own default leaves matmuls in strict fp32,
// which left the ViTs matmul-bound on an H100), FP32 on the CPU.
func DefaultPrecision(device string) Precision {
	if strings.HasPrefix(device, "cuda") {
		return TF32
	}
	return FP32
}

// DefaultGraphOptimize is SetGraphOptimize's setting for forward passes on
// device when none is asked for: off on CUDA, on on the CPU. On an H100
// the optimising executor spent about 10 s profiling and compiling the
// full-size five-model ensemble's first batches (and again for each new
// batch size), so 800 pages ran at 54 pages/s with it and 122 without, at
// the same rate once warm (docs/benchmarks.md "GPU"); on the CPU the two
// ran at the same rate, and on stays, libtorch's default.
func DefaultGraphOptimize(device string) bool {
	return !strings.HasPrefix(device, "cuda")
}

// Effective is the precision that runs on device when p is asked for, and
// a note when they differ or p cannot run there: TF32 on the CPU is FP32
// (note), FP16 on the CPU is an error.
func (p Precision) Effective(device string) (Precision, string, error) {
	if strings.HasPrefix(device, "cuda") {
		return p, "", nil
	}
	switch p {
	case TF32:
		return FP32, "tf32 applies to CUDA matmuls and convolutions only: on the CPU it is fp32", nil
	case FP16:
		return p, "", fmt.Errorf("precision fp16 runs on CUDA only: on the CPU use fp32 or bf16")
	}
	return p, "", nil
}

// SetPrecision sets the precision of the module's forward passes: BF16 and
// FP16 convert its floating-point parameters and buffers and cast each
// input; logits come back as float32 and softmax is computed in float32.
// TF32 is a process-wide switch of libtorch on CUDA, set by each forward
// pass to its module's precision: one process runs one precision. Call it
// before Optimize; FP16 on the CPU is refused.
func (m *Module) SetPrecision(p Precision) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.h == nil {
		return ErrClosed
	}
	var msg *C.char
	if err := statusErr("set precision", C.tshim_module_set_precision(m.h, C.int(p), &msg), msg); err != nil {
		return err
	}
	m.precision = p
	return nil
}

// Precision returns the precision set by SetPrecision (FP32 at load).
func (m *Module) Precision() Precision {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.precision
}

// LoadedVersion is the version of the libtorch library loaded in this
// process, as its build configuration records it (Version is the one the
// shim was built against; the two differ when the shim is run against
// another library than its own).
func LoadedVersion() (string, error) {
	if err := ensureInit(); err != nil {
		return "", err
	}
	var out, msg *C.char
	if err := statusErr("loaded version", C.tshim_loaded_torch_version(&out, &msg), msg); err != nil {
		return "", err
	}
	defer C.tshim_free(unsafe.Pointer(out))
	return C.GoString(out), nil
}

// Batch is a batch of pages resized on a device (device-side
// preprocessing): each 8-bit page is uploaded as it is (on CUDA through
// pinned host memory, asynchronously on a copy stream of its own),
// resized there with Preprocess's arithmetic and kept as values 0..255, so
// that every model of the batch's size runs the same resized pages
// normalised with its own mean and std (Module.ProbabilitiesBatch). On
// the CPU the same code runs on CPU tensors. Set may be called from many
// goroutines at once for different pages.
type Batch struct {
	mu     sync.RWMutex
	h      *C.tshim_batch
	device string
	n      int
	size   int
}

// NewBatch allocates a batch of n pages of size x size on device.
func NewBatch(device string, n, size int) (*Batch, error) {
	if err := ensureInit(); err != nil {
		return nil, err
	}
	cd := C.CString(device)
	defer C.free(unsafe.Pointer(cd))
	var h *C.tshim_batch
	var msg *C.char
	if err := statusErr("new batch", C.tshim_batch_new(cd, C.int64_t(n), C.int64_t(size), &h, &msg), msg); err != nil {
		return nil, err
	}
	b := &Batch{h: h, device: device, n: n, size: size}
	pkghandles.Track(&handles, b, (*Batch).Close)
	return b, nil
}

// Len is the number of pages the batch holds; Size the side of each.
func (b *Batch) Len() int  { return b.n }
func (b *Batch) Size() int { return b.size }

// Device is the batch's device.
func (b *Batch) Device() string { return b.device }

// Close releases the batch's memory. It is safe to call more than once.
func (b *Batch) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.h != nil {
		C.tshim_batch_free(b.h)
		b.h = nil
		handles.Closed()
	}
	runtime.SetFinalizer(b, nil)
	return nil
}

// Set uploads page i, an 8-bit image (h x w x c, c = 1 or 3, row-major
// HWC), and resizes it into the batch.
func (b *Batch) Set(i int, pix []uint8, h, w, c int) error {
	if h <= 0 || w <= 0 || (c != 1 && c != 3) || len(pix) != h*w*c {
		return fmt.Errorf("torch: batch page: bad image %dx%dx%d with %d bytes", h, w, c, len(pix))
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return ErrClosed
	}
	var msg *C.char
	var st C.int
	preprocessing.run(func() {
		st = C.tshim_batch_set(b.h, C.int64_t(i), (*C.uint8_t)(unsafe.Pointer(&pix[0])), C.int64_t(h), C.int64_t(w), C.int64_t(c), &msg)
	})
	runtime.KeepAlive(pix)
	return statusErr("batch page", st, msg)
}

// SetAll uploads page i, an 8-bit image (h x w x c, c = 1 or 3,
// row-major HWC), to the batches' device once and resizes it there into
// page i of each of bs (distinct batches of different sizes on one
// device): the
// host sends the decoded page and the device makes every input size of it.
func SetAll(bs []*Batch, i int, pix []uint8, h, w, c int) error {
	if len(bs) == 0 {
		return errors.New("torch: SetAll: no batches")
	}
	if h <= 0 || w <= 0 || (c != 1 && c != 3) || len(pix) != h*w*c {
		return fmt.Errorf("torch: batch page: bad image %dx%dx%d with %d bytes", h, w, c, len(pix))
	}
	hs := make([]*C.tshim_batch, len(bs)) // C pointers in Go memory
	for k, b := range bs {
		b.mu.RLock()
		defer b.mu.RUnlock()
		if b.h == nil {
			return ErrClosed
		}
		hs[k] = b.h
	}
	var msg *C.char
	var st C.int
	preprocessing.run(func() {
		st = C.tshim_batch_set_all(&hs[0], C.int64_t(len(bs)), C.int64_t(i), (*C.uint8_t)(unsafe.Pointer(&pix[0])),
			C.int64_t(h), C.int64_t(w), C.int64_t(c), &msg)
	})
	runtime.KeepAlive(pix)
	return statusErr("batch page", st, msg)
}

// Page returns page i normalised with mean and std: 3·Size·Size floats
// (CHW), what Preprocess gives for the same image.
func (b *Batch) Page(i int, mean, std [3]float32) ([]float32, error) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return nil, ErrClosed
	}
	out := make([]float32, 3*b.size*b.size)
	var msg *C.char
	st := C.tshim_batch_read(b.h, C.int64_t(i), (*C.float)(unsafe.Pointer(&mean[0])), (*C.float)(unsafe.Pointer(&std[0])),
		(*C.float)(unsafe.Pointer(&out[0])), &msg)
	if err := statusErr("batch read", st, msg); err != nil {
		return nil, err
	}
	return out, nil
}

// ProbabilitiesBatch runs the first n pages of b, normalised with mean and
// std on the device, through the module (on b's device) and returns their
// softmax rows, as ProbabilitiesThreads does a float batch.
func (m *Module) ProbabilitiesBatch(b *Batch, n int, mean, std [3]float32, threads int) ([][]float32, error) {
	if threads < 0 {
		return nil, fmt.Errorf("torch: %d threads", threads)
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.h == nil {
		return nil, ErrClosed
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if b.h == nil {
		return nil, ErrClosed
	}
	var out *C.float
	var rows, cols C.int64_t
	var msg *C.char
	var st C.int
	poolFor(threads).run(func() {
		st = C.tshim_module_forward_batch(m.h, b.h, C.int64_t(n), (*C.float)(unsafe.Pointer(&mean[0])),
			(*C.float)(unsafe.Pointer(&std[0])), 1, C.int(threads), &out, &rows, &cols, &msg)
	})
	if err := statusErr("forward batch", st, msg); err != nil {
		return nil, err
	}
	return copyOut(out, rows, cols), nil
}
