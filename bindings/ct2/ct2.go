// Package ct2 binds the CTranslate2 bridge in native/ (header
// native/include/ct2bridge.h), a Rust static library over the ct2rs crate.
//
// Translator and Generator each wrap one native handle and must be released
// with Close. Tokenisation happens natively from the files of the model
// directory (tokenizer.json, or source.spm/target.spm). Every string the
// bridge returns is copied into Go memory and freed before a call returns.
//
// Concurrency: Translate and Generate may be called from many goroutines at
// once; CTranslate2 queues batches to its replicas internally. Close waits
// for calls in flight and must not be called twice concurrently with them.
//
// Leaks: LiveHandles counts the handles not yet closed; a handle collected
// without Close is freed by a finalizer but counted by Leaked.
package ct2

/*
#cgo CFLAGS: -I${SRCDIR}/../../native/include
#cgo LDFLAGS: -lct2bridge -lstdc++ -lm -ldl -lpthread
#include <stdlib.h>
#include "ct2bridge.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	pkghandles "archivekit/bindings/internal/handles"
)

// handles counts the native handles (translators and generators).
var handles pkghandles.Counter

// LiveHandles is the number of native handles (translators and generators) opened and not
// yet closed.
func LiveHandles() int64 { return handles.Live() }

// Leaked is the number of handles freed by the garbage collector because
// nobody called Close.
func Leaked() int64 { return handles.Leaked() }

// Error is a failure reported by the bridge.
type Error struct {
	Code    int
	Op      string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("ct2 %s: %s", e.Op, e.Message) }

// ErrClosed is returned when a closed handle is used.
var ErrClosed = errors.New("ct2: use of closed handle")

func statusErr(op string, st C.int, msg *C.char) error {
	if st == C.CT2B_OK {
		return nil
	}
	m := "unknown error"
	if msg != nil {
		m = C.GoString(msg)
		C.ct2b_free(msg)
	}
	return &Error{Code: int(st), Op: op, Message: m}
}

// Version returns the version of the bundled CTranslate2.
func Version() string { return C.GoString(C.ct2b_ctranslate2_version()) }

// Config selects where and how a model runs.
type Config struct {
	Device      string // "cpu" (default) or "cuda"
	ComputeType string // "default", "auto", "float32", "int8", ... (default "default")
	Threads     int    // intra-op threads; 0 = CTranslate2's default
}

func (c Config) strings() (*C.char, *C.char) {
	d, ct := c.Device, c.ComputeType
	if d == "" {
		d = "cpu"
	}
	if ct == "" {
		ct = "default"
	}
	return C.CString(d), C.CString(ct)
}

// Result is one output: the detokenised text, the hypothesis score
// (cumulative log-probability; NaN when the model gave none), the number of
// tokens decoded (a forced target prefix included, the end token not) and
// whether decoding stopped at the maximum length instead of at an end token,
// in which case Text is cut short.
type Result struct {
	Text      string
	Score     float32
	Length    int
	Truncated bool
}

// cStrings copies ss into a C array of C strings; free releases it.
func cStrings(ss []string) (arr **C.char, free func()) {
	n := len(ss)
	if n == 0 {
		return nil, func() {}
	}
	p := (*[1 << 28]*C.char)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof(uintptr(0)))))[:n:n]
	for i, s := range ss {
		p[i] = C.CString(s)
	}
	return &p[0], func() {
		for _, q := range p {
			C.free(unsafe.Pointer(q))
		}
		C.free(unsafe.Pointer(&p[0]))
	}
}

// outputs holds the per-item arrays the bridge fills.
type outputs struct {
	scores    []float32
	lengths   []C.int
	truncated []C.int
}

func newOutputs(n int) outputs {
	return outputs{make([]float32, n), make([]C.int, n), make([]C.int, n)}
}

func (o outputs) ptrs() (*C.float, *C.int, *C.int) {
	return (*C.float)(unsafe.Pointer(&o.scores[0])), &o.lengths[0], &o.truncated[0]
}

func collect(out **C.char, o outputs, n int) []Result {
	defer C.ct2b_free_strings(out, C.int(n))
	strs := unsafe.Slice(out, n)
	res := make([]Result, n)
	for i := range res {
		res[i] = Result{Text: C.GoString(strs[i]), Score: o.scores[i], Length: int(o.lengths[i]), Truncated: o.truncated[i] != 0}
	}
	return res
}

// handle guards a native pointer: calls take a read lock, Close the write lock.
type handle struct {
	mu     sync.RWMutex
	closed bool
}

// Translator is a sequence-to-sequence CTranslate2 model.
type Translator struct {
	handle
	h *C.ct2b_translator
}

// NewTranslator loads a converted model directory.
func NewTranslator(dir string, cfg Config) (*Translator, error) {
	cd := C.CString(dir)
	defer C.free(unsafe.Pointer(cd))
	dev, ct := cfg.strings()
	defer C.free(unsafe.Pointer(dev))
	defer C.free(unsafe.Pointer(ct))
	var h *C.ct2b_translator
	var msg *C.char
	if err := statusErr("load translator", C.ct2b_translator_new(cd, dev, ct, C.int(cfg.Threads), &h, &msg), msg); err != nil {
		return nil, err
	}
	t := &Translator{h: h}
	pkghandles.Track(&handles, t, (*Translator).Close)
	return t, nil
}

// Close releases the model.
func (t *Translator) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		C.ct2b_translator_free(t.h)
		t.h, t.closed = nil, true
		handles.Closed()
	}
	runtime.SetFinalizer(t, nil)
	return nil
}

// TranslateOptions control decoding.
type TranslateOptions struct {
	BeamSize          int        // default 1 (greedy)
	MaxDecodingLength int        // default 256
	TargetPrefix      [][]string // optional: per source, tokens forced at the start
	// SourcePrefix, optional: per source, tokens put at the start of the
	// encoded source (NLLB's source-language token). A FLORES-200 code
	// here replaces the one NLLB's tokenizer.json puts there itself.
	SourcePrefix [][]string
}

// joinTokens makes the bridge's per-item token lists: nil when lists is nil.
func joinTokens(lists [][]string) (**C.char, func()) {
	if lists == nil {
		return nil, func() {}
	}
	joined := make([]string, len(lists))
	for i, p := range lists {
		joined[i] = strings.Join(p, " ")
	}
	return cStrings(joined)
}

// Tokenize returns the tokens the translator's source tokenizer makes of
// text, special tokens included.
func (t *Translator) Tokenize(text string) ([]string, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return nil, ErrClosed
	}
	ct := C.CString(text)
	defer C.free(unsafe.Pointer(ct))
	var out **C.char
	var n C.int
	var msg *C.char
	if err := statusErr("tokenize", C.ct2b_translator_tokenize(t.h, ct, &out, &n, &msg), msg); err != nil {
		return nil, err
	}
	defer C.ct2b_free_strings(out, n)
	toks := make([]string, int(n))
	for i, p := range unsafe.Slice(out, int(n)) {
		toks[i] = C.GoString(p)
	}
	return toks, nil
}

// Translate translates a batch of plain strings.
func (t *Translator) Translate(sources []string, opt TranslateOptions) ([]Result, error) {
	if len(sources) == 0 {
		return nil, nil
	}
	if opt.BeamSize == 0 {
		opt.BeamSize = 1
	}
	if opt.MaxDecodingLength == 0 {
		opt.MaxDecodingLength = 256
	}
	for _, p := range []struct {
		name  string
		lists [][]string
	}{{"target", opt.TargetPrefix}, {"source", opt.SourcePrefix}} {
		if p.lists != nil && len(p.lists) != len(sources) {
			return nil, fmt.Errorf("ct2: %d %s prefixes for %d sources", len(p.lists), p.name, len(sources))
		}
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if t.closed {
		return nil, ErrClosed
	}
	src, freeSrc := cStrings(sources)
	defer freeSrc()
	tprefix, freeT := joinTokens(opt.TargetPrefix)
	defer freeT()
	sprefix, freeS := joinTokens(opt.SourcePrefix)
	defer freeS()
	o := newOutputs(len(sources))
	sc, ln, tr := o.ptrs()
	var out **C.char
	var msg *C.char
	st := C.ct2b_translate(t.h, src, C.int(len(sources)), sprefix, tprefix, C.int(opt.BeamSize), C.int(opt.MaxDecodingLength),
		&out, sc, ln, tr, &msg)
	if err := statusErr("translate", st, msg); err != nil {
		return nil, err
	}
	return collect(out, o, len(sources)), nil
}

// Generator is a decoder-only (language) CTranslate2 model.
type Generator struct {
	handle
	h *C.ct2b_generator
}

// NewGenerator loads a converted decoder-only model directory.
func NewGenerator(dir string, cfg Config) (*Generator, error) {
	cd := C.CString(dir)
	defer C.free(unsafe.Pointer(cd))
	dev, ct := cfg.strings()
	defer C.free(unsafe.Pointer(dev))
	defer C.free(unsafe.Pointer(ct))
	var h *C.ct2b_generator
	var msg *C.char
	if err := statusErr("load generator", C.ct2b_generator_new(cd, dev, ct, C.int(cfg.Threads), &h, &msg), msg); err != nil {
		return nil, err
	}
	g := &Generator{h: h}
	pkghandles.Track(&handles, g, (*Generator).Close)
	return g, nil
}

// Close releases the model.
func (g *Generator) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.closed {
		C.ct2b_generator_free(g.h)
		g.h, g.closed = nil, true
		handles.Closed()
	}
	runtime.SetFinalizer(g, nil)
	return nil
}

// GenerateOptions control decoding; the zero value is greedy decoding of up
// to 256 tokens, ended by the model's own end token.
type GenerateOptions struct {
	BeamSize     int
	MaxLength    int
	SamplingTopK int
	// EndTokens, when set, end decoding instead of the model's end token
	// (e.g. a chat template's "<|im_end|>"). A token must not contain spaces.
	EndTokens []string
}

// Generate continues each prompt; the prompt is not part of the result.
func (g *Generator) Generate(prompts []string, opt GenerateOptions) ([]Result, error) {
	if len(prompts) == 0 {
		return nil, nil
	}
	if opt.BeamSize == 0 {
		opt.BeamSize = 1
	}
	if opt.MaxLength == 0 {
		opt.MaxLength = 256
	}
	if opt.SamplingTopK == 0 {
		opt.SamplingTopK = 1
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.closed {
		return nil, ErrClosed
	}
	var ends *C.char
	if len(opt.EndTokens) > 0 {
		for _, e := range opt.EndTokens {
			if e == "" || strings.ContainsAny(e, " \t\n") {
				return nil, fmt.Errorf("ct2: end token %q: empty or contains white space", e)
			}
		}
		ends = C.CString(strings.Join(opt.EndTokens, " "))
		defer C.free(unsafe.Pointer(ends))
	}
	ps, free := cStrings(prompts)
	defer free()
	o := newOutputs(len(prompts))
	sc, ln, tr := o.ptrs()
	var out **C.char
	var msg *C.char
	st := C.ct2b_generate(g.h, ps, C.int(len(prompts)), C.int(opt.BeamSize), C.int(opt.MaxLength),
		C.int(opt.SamplingTopK), ends, &out, sc, ln, tr, &msg)
	if err := statusErr("generate", st, msg); err != nil {
		return nil, err
	}
	return collect(out, o, len(prompts)), nil
}

// ScoreMissing reports whether a result carries no score.
func (r Result) ScoreMissing() bool { return math.IsNaN(float64(r.Score)) }
