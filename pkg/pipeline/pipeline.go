// Package pipeline runs page images through a classification model:
// parallel decode and preprocessing workers feed fixed-size batches to the
// model, and results come back in input order, one per page.
//
// The stages are:
//
//	opener (1 goroutine)      opens inputs in order, expands a PDF into its
//	                          pages, numbers every page (its row)
//	workers (Config.Workers)  decode a page (imageio) and preprocess it
//	batcher (1 goroutine)     takes rows back in order, packs NCHW batches
//	                          of Config.Batch pages, calls the model, hands
//	                          the rows to the caller's emit function
//
// An input that cannot be opened, or a page that cannot be decoded or
// preprocessed, still gets its row, with Result.Err set and no
// probabilities; it is never sent to the model and never shifts another
// row. Rows are admitted by a semaphore of Config.Batch + Config.Workers
// tokens, taken when the opener numbers a page and given back when the
// batcher takes the row in order, so at most that many decoded pages exist
// at once besides the batch being assembled: memory is O(workers + batch)
// pages whatever the input size, and a slow model or a slow emit function
// holds back the decoders (backpressure).
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"archivekit/pkg/imageio"
)

// DefaultBatch is the batch size used when Config.Batch is 0 (spec §8).
const DefaultBatch = 16

// Model turns a batch of preprocessed pages into class probabilities.
// data holds n pages in NCHW order (n·c·h·w floats); the result has n rows.
// The pipeline reuses data after the call returns, so a Model must copy
// what it keeps. Calls are made from one goroutine, one at a time.
type Model interface {
	Probabilities(data []float32, n, c, h, w int) ([][]float32, error)
}

// Preprocess turns a decoded page into the model's input tensor: c·h·w
// floats in CHW order. It is called from several goroutines at once.
type Preprocess func(img imageio.Image) ([]float32, error)

// Input is one input file. Data, when not nil, holds the file's bytes (an
// HTTP upload) and Name only labels it; otherwise Name is a path to read.
type Input struct {
	Name string
	Data []byte
}

// Files returns one Input per path, in the same order.
func Files(paths []string) []Input {
	in := make([]Input, len(paths))
	for i, p := range paths {
		in[i] = Input{Name: p}
	}
	return in
}

// Config sets up a run.
type Config struct {
	// Workers is the number of decode/preprocess goroutines;
	// 0 means runtime.NumCPU().
	Workers int
	// Batch is the number of pages per model call; 0 means DefaultBatch.
	// Only the last batch of a run may be smaller.
	Batch int
	// Channels, Height and Width are the shape of one preprocessed page;
	// Preprocess must return exactly Channels·Height·Width floats.
	Channels, Height, Width int
	// Preprocess converts a decoded page to the model input. Required.
	Preprocess Preprocess
	// Decode sets the decoder options (PDF DPI, pixel cap); the zero value
	// means imageio's defaults.
	Decode imageio.Options
	// MaxPages, when > 0, refuses a PDF with more pages than this (its row
	// gets the error); the HTTP service uses 50.
	MaxPages int
	// OnOpen, when set, is called from the opener goroutine with the
	// number of pages (rows) of every input as it is opened, 0 for an
	// input that cannot be opened (it still takes one row). A progress bar
	// can grow its total from here.
	OnOpen func(in Input, pages int)
}

// Result is one row: one page of one input, in input order.
type Result struct {
	Row   int    // 0-based position in the output, consecutive
	Input int    // index of the input in the slice given to Run
	Name  string // Input.Name
	Page  int    // 1-based page number; 0 when the input could not be opened
	Pages int    // pages of the input; 0 when it could not be opened
	// Probs holds the model's probabilities; nil when Err is set.
	Probs []float32
	// Err says why this row has no probabilities (unreadable file, bad
	// page, preprocessing failure). It names the file.
	Err error
}

// Stats summarises a run.
type Stats struct {
	Inputs  int           // inputs given
	Rows    int           // rows emitted
	Failed  int           // rows emitted with Err set
	Batches int           // model calls
	Elapsed time.Duration // wall time of Run
}

// ErrTooManyPages is the Result.Err of a PDF over Config.MaxPages.
var ErrTooManyPages = errors.New("too many pages")

// task is one numbered row travelling from the opener to the batcher.
type task struct {
	row   int
	input int
	name  string
	doc   *imageio.Doc // nil when err is set by the opener
	page  int          // 0-based
	pages int
	data  []float32 // preprocessed page, until copied into a batch
	probs []float32
	err   error
}

// Run classifies every page of inputs with model and calls emit once per
// row, in row order, from one goroutine. It stops at the first model error
// or emit error, or when ctx is cancelled, and returns that error; the rows
// emitted until then stand. Per-page failures are not errors of Run: they
// are rows with Result.Err set.
func Run(ctx context.Context, inputs []Input, model Model, cfg Config, emit func(Result) error) (Stats, error) {
	start := time.Now()
	st := Stats{Inputs: len(inputs)}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.NumCPU()
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Preprocess == nil {
		return st, errors.New("pipeline: Config.Preprocess is nil")
	}
	if cfg.Channels <= 0 || cfg.Height <= 0 || cfg.Width <= 0 {
		return st, fmt.Errorf("pipeline: invalid input shape %d×%d×%d", cfg.Channels, cfg.Height, cfg.Width)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	window := cfg.Batch + cfg.Workers
	tokens := make(chan struct{}, window)
	tasks := make(chan *task, cfg.Workers)
	done := make(chan *task, window) // never blocks a worker: at most window tasks exist

	go open(ctx, inputs, cfg, tokens, tasks, done)
	for i := 0; i < cfg.Workers; i++ {
		go work(ctx, cfg, tasks, done)
	}
	err := batch(ctx, model, cfg, tokens, done, emit, &st)
	cancel() // release the opener and the workers on any exit
	st.Elapsed = time.Since(start)
	return st, err
}

// open numbers the rows and hands them to the workers. A final nil task
// marks the end; it goes straight to the batcher.
func open(ctx context.Context, inputs []Input, cfg Config, tokens chan struct{}, tasks, done chan<- *task) {
	defer close(tasks)
	row := 0
	send := func(t *task) bool {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		t.row = row
		row++
		select {
		case tasks <- t:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for i, in := range inputs {
		if ctx.Err() != nil {
			return
		}
		var doc *imageio.Doc
		var err error
		if in.Data != nil {
			doc, err = cfg.Decode.Decode(in.Data, in.Name)
		} else {
			doc, err = cfg.Decode.Open(in.Name)
		}
		if err == nil && cfg.MaxPages > 0 && doc.Pages() > cfg.MaxPages {
			err = fmt.Errorf("%s: %w: %d, limit %d", in.Name, ErrTooManyPages, doc.Pages(), cfg.MaxPages)
		}
		if err != nil {
			if cfg.OnOpen != nil {
				cfg.OnOpen(in, 0)
			}
			if !send(&task{input: i, name: in.Name, err: err}) {
				return
			}
			continue
		}
		if cfg.OnOpen != nil {
			cfg.OnOpen(in, doc.Pages())
		}
		for p := 0; p < doc.Pages(); p++ {
			if !send(&task{input: i, name: in.Name, doc: doc, page: p, pages: doc.Pages()}) {
				return
			}
		}
	}
	// The end marker carries the row count and takes no token.
	select {
	case done <- &task{row: row, input: -1}:
	case <-ctx.Done():
	}
}

// work decodes and preprocesses pages.
func work(ctx context.Context, cfg Config, tasks <-chan *task, done chan<- *task) {
	want := cfg.Channels * cfg.Height * cfg.Width
	for t := range tasks {
		if t.err == nil {
			t.data, t.err = prepare(ctx, t, cfg.Preprocess, want)
		}
		t.doc = nil
		select {
		case done <- t:
		case <-ctx.Done():
			return
		}
	}
}

// prepare decodes a page and preprocesses it inside imageio's pixel
// budget (Doc.Use), so that the workers of every run in the process hold
// at most imageio.MaxPixelsInFlight decoded pixels at once.
func prepare(ctx context.Context, t *task, pre Preprocess, want int) (data []float32, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: page %d: preprocessing panicked: %v", t.name, t.page+1, r)
		}
	}()
	var preErr error
	err = t.doc.Use(ctx, t.page, func(img imageio.Image) error {
		data, preErr = pre(img)
		return preErr
	})
	if preErr != nil {
		return nil, fmt.Errorf("%s: page %d: preprocessing: %w", t.name, t.page+1, preErr)
	}
	if err != nil {
		return nil, err
	}
	if len(data) != want {
		return nil, fmt.Errorf("%s: page %d: preprocessing gave %d values, want %d", t.name, t.page+1, len(data), want)
	}
	return data, nil
}

// batch takes rows in order, runs full batches through the model and
// emits every row in order.
func batch(ctx context.Context, model Model, cfg Config, tokens <-chan struct{}, done <-chan *task, emit func(Result) error, st *Stats) error {
	chw := cfg.Channels * cfg.Height * cfg.Width
	buf := make([]float32, cfg.Batch*chw)
	waiting := map[int]*task{} // rows arrived out of order
	var pending []*task        // rows taken in order, not yet emitted
	good := 0                  // rows of pending that go to the model
	next := 0                  // next row to take
	end := -1                  // row count, once the opener has finished

	flush := func() error {
		if good > 0 {
			n := 0
			var first, last *task
			for _, t := range pending {
				if t.err != nil {
					continue
				}
				copy(buf[n*chw:], t.data)
				t.data = nil
				if first == nil {
					first = t
				}
				last = t
				n++
			}
			probs, err := model.Probabilities(buf[:n*chw], n, cfg.Channels, cfg.Height, cfg.Width)
			st.Batches++
			if err == nil && len(probs) != n {
				err = fmt.Errorf("returned %d rows for %d pages", len(probs), n)
			}
			if err != nil {
				return fmt.Errorf("model failed on the batch from %s page %d to %s page %d: %w",
					first.name, first.page+1, last.name, last.page+1, err)
			}
			k := 0
			for _, t := range pending {
				if t.err == nil {
					t.probs = probs[k]
					k++
				}
			}
		}
		for _, t := range pending {
			r := Result{Row: t.row, Input: t.input, Name: t.name, Err: t.err}
			if t.err == nil {
				r.Page, r.Pages, r.Probs = t.page+1, t.pages, t.probs
			} else if t.pages > 0 {
				r.Page, r.Pages = t.page+1, t.pages
			}
			if r.Err != nil {
				st.Failed++
			}
			st.Rows++
			if err := emit(r); err != nil {
				return err
			}
		}
		pending, good = pending[:0], 0
		return nil
	}

	for {
		for {
			t, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			<-tokens
			next++
			pending = append(pending, t)
			if t.err == nil {
				good++
				if good == cfg.Batch {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		if next == end {
			return flush()
		}
		select {
		case t := <-done:
			if t.input < 0 {
				end = t.row
			} else {
				waiting[t.row] = t
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
