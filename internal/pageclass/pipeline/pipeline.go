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
//	                          of Config.Batch pages, hands each to the model,
//	                          and hands the rows to the caller's emit
//	                          function in order as their batches come back
//	forwards (Config.InFlight goroutines at most) run the model on one
//	                          batch each
//
// The model never waits for decoding while pages are ready: the workers
// decode the next rows while a batch is in the model, and with
// Config.InFlight > 1 the next full batch goes to the model while the
// previous one is still there (on a CPU each call then runs on its share
// of the cores, see classify.Options.Lanes).
//
// An input that cannot be opened, or a page that cannot be decoded or
// preprocessed, still gets its row, with Result.Err set and no
// probabilities; it is never sent to the model and never shifts another
// row. Rows are admitted by a semaphore of Config.Batch + Config.Workers
// tokens, taken when the opener numbers a page and given back when the
// batcher takes the row in order, so at most that many decoded pages exist
// at once besides the batch being assembled and the Config.InFlight
// batches in the model: memory is O(workers + batch·(1 + in-flight)) pages
// whatever the input size, and a slow model or a slow emit function holds
// back the decoders (backpressure).
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"archivekit/internal/ledger"
	"archivekit/internal/lookahead"
	"archivekit/internal/pageclass/imageio"
)

// DefaultBatch is the batch size used when Config.Batch is 0 (spec §8).
const DefaultBatch = 16

// Model turns a batch of preprocessed pages into class probabilities.
// data holds n pages in NCHW order (n·c·h·w floats); the result has n rows.
// The pipeline reuses data after the call returns, so a Model must copy
// what it keeps. With Config.InFlight > 1, up to that many calls run at
// once (on different batches); otherwise one at a time.
type Model interface {
	Probabilities(data []float32, n, c, h, w int) ([][]float32, error)
}

// Preprocess turns a decoded page into the model's input tensor: c·h·w
// floats in CHW order. It is called from several goroutines at once.
type Preprocess func(img imageio.Image) ([]float32, error)

// Input is one input file. Data, when not nil, holds the file's bytes (an
// HTTP upload) and Name only labels it; else Fetch, when not nil, gets the
// bytes when the input is opened (a page of a book, fetched from a server
// only when its turn comes) and Name only labels it; otherwise Name is a
// path to read.
type Input struct {
	Name  string
	Data  []byte
	Fetch func(ctx context.Context) ([]byte, error)
	// Source, when set, is the file or URL the bytes come from where Name
	// is not it (a book's page: Name is "<book>#<page ID>"); an error
	// decoding them names it after Name ("<book>#PHYS_0002: image
	// <URL>: cannot read header: ...").
	Source string
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
	// InFlight is the number of batches handed to the model at once; 0 or
	// 1 means one batch at a time. Rows are emitted in order whatever it
	// is.
	InFlight int
	// Channels, Height and Width are the shape of one preprocessed page;
	// Preprocess must return exactly Channels·Height·Width floats.
	Channels, Height, Width int
	// Preprocess converts a decoded page to the model input. Required.
	Preprocess Preprocess
	// Decode sets the decoder options (PDF DPI, pixel cap); the zero value
	// means imageio's defaults.
	Decode imageio.Options
	// Openers is the number of inputs read and opened at once ahead of
	// the rows (a book's pages fetched at once); 0 means half of Workers,
	// at least one and at most 8. Rows keep input order whatever it is.
	Openers int
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
	// Digest is the SHA-256 (hex, as ledger.Digest) of the input's bytes
	// exactly as they were decoded; "" when they could not be read.
	Digest string
	// Label is the page's label in a PDF that defines page labels ("iv",
	// "12a"; imageio.Doc.Label), "" otherwise.
	Label string
	// PDF is set when the input is a PDF (imageio.Doc.IsPDF): its pages
	// were drawn by the run's PDF renderer.
	PDF bool
}

// Stats summarises a run.
type Stats struct {
	Inputs  int           // inputs given
	Rows    int           // rows emitted
	Failed  int           // rows emitted with Err set
	Batches int           // model calls
	Elapsed time.Duration // wall time of Run

	// Where the time went, for telling a run held up by the host
	// (opening, decoding, preprocessing) from one held up by the model.
	FirstBatch   time.Duration // from Run's start until the first batch went to the model
	FirstForward time.Duration // the first model call
	Forward      time.Duration // every model call, summed (calls at once each count)
	ModelBusy    time.Duration // time with at least one batch in the model
}

// Busy is the fraction of the run's wall time with at least one batch in
// the model (ModelBusy / Elapsed): near 1 the model is the limit, well
// under 1 the host does not feed it fast enough (or the run was short).
func (s Stats) Busy() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return min(1, s.ModelBusy.Seconds()/s.Elapsed.Seconds())
}

// ForwardMean is the mean duration of a model call after the first (the
// first carries the model's own start-up); 0 with fewer than two calls.
func (s Stats) ForwardMean() time.Duration {
	if s.Batches < 2 {
		return 0
	}
	return (s.Forward - s.FirstForward) / time.Duration(s.Batches-1)
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
	// digest is the SHA-256 of the bytes the opener decoded
	digest string
	label  string    // the page's PDF page label (imageio.Doc.Label)
	pdf    bool      // the input is a PDF (imageio.Doc.IsPDF)
	data   []float32 // preprocessed page, until copied into a batch
	err    error
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
	if cfg.InFlight <= 0 {
		cfg.InFlight = 1
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
	err := batch(ctx, model, cfg, tokens, done, emit, &st, start)
	cancel() // release the opener and the workers on any exit
	st.Elapsed = time.Since(start)
	return st, err
}

// windowFull, when set (tests), is called by the opener each time it finds
// the window of rows full and waits, with the number of rows numbered so far
// and the window's tokens (a test reads their count; it must not use them).
var windowFull func(rows int, tokens chan struct{})

// open numbers the rows and hands them to the workers. A final nil task
// marks the end; it goes straight to the batcher.
func open(ctx context.Context, inputs []Input, cfg Config, tokens chan struct{}, tasks, done chan<- *task) {
	defer close(tasks)
	row := 0
	send := func(t *task) bool {
		select {
		case tokens <- struct{}{}:
		default:
			// The window is full: the opener waits for the batcher.
			if windowFull != nil {
				windowFull(row, tokens)
			}
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return false
			}
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
	// Inputs are read, hashed and opened (their headers parsed) by up to
	// Openers goroutines ahead of the numbering, in input order: one
	// opener alone capped a GPU run at the rate it opened files.
	next, stop := lookahead.Run(ctx, len(inputs), openers(cfg), func(ctx context.Context, i int) openedInput {
		return openInput(ctx, inputs[i], cfg)
	})
	defer stop()
	for i, in := range inputs {
		if ctx.Err() != nil {
			return
		}
		o, ok := next()
		if !ok {
			return
		}
		doc, digest, err := o.doc, o.digest, o.err
		if err == nil && cfg.MaxPages > 0 && doc.Pages() > cfg.MaxPages {
			err = fmt.Errorf("%s: %w: %d, limit %d", in.Name, ErrTooManyPages, doc.Pages(), cfg.MaxPages)
		}
		if err != nil {
			if cfg.OnOpen != nil {
				cfg.OnOpen(in, 0)
			}
			if !send(&task{input: i, name: in.Name, digest: digest, err: err}) {
				return
			}
			continue
		}
		if cfg.OnOpen != nil {
			cfg.OnOpen(in, doc.Pages())
		}
		for p := 0; p < doc.Pages(); p++ {
			if !send(&task{input: i, name: in.Name, doc: doc, page: p, pages: doc.Pages(), digest: digest}) {
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

// openedInput is an input read and opened (openInput).
type openedInput struct {
	doc    *imageio.Doc
	digest string
	err    error
}

// openers is the number of inputs opened at once ahead of the numbering:
// Config.Openers, else half the workers (at least one, at most 8).
func openers(cfg Config) int {
	if cfg.Openers > 0 {
		return cfg.Openers
	}
	return max(1, min(8, cfg.Workers/2))
}

// openInput reads (or fetches) an input's bytes, hashes them and opens
// them.
func openInput(ctx context.Context, in Input, cfg Config) openedInput {
	var o openedInput
	data, err := in.Data, error(nil)
	switch {
	case data != nil:
	case in.Fetch != nil:
		data, err = in.Fetch(ctx)
	default:
		data, err = imageio.ReadFile(in.Name)
	}
	if err == nil {
		// The digest of the very bytes decoded: a file rewritten
		// later is not recorded with content that was not classified.
		o.digest = ledger.DigestBytes(data)
		name := in.Name
		if in.Source != "" {
			name += ": image " + in.Source
		}
		o.doc, err = cfg.Decode.Decode(data, name)
	}
	o.err = err
	return o
}

// work decodes and preprocesses pages.
func work(ctx context.Context, cfg Config, tasks <-chan *task, done chan<- *task) {
	want := cfg.Channels * cfg.Height * cfg.Width
	for t := range tasks {
		if t.err == nil {
			t.data, t.err = prepare(ctx, t, cfg.Preprocess, want)
		}
		if t.doc != nil {
			t.label, t.pdf = t.doc.Label(t.page), t.doc.IsPDF()
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

// flight is one batch handed to the model: its rows in order (the failed
// ones included, which skip the model), and the model's answer once done
// is closed.
type flight struct {
	rows       []*task
	buf        []float32
	n          int // rows sent to the model
	probs      [][]float32
	err        error
	start, end time.Time // the model call, once done is closed
	done       chan struct{}
}

// batch takes rows in order, hands full batches to the model (up to
// cfg.InFlight at once) and emits every row in order.
func batch(ctx context.Context, model Model, cfg Config, tokens <-chan struct{}, done <-chan *task, emit func(Result) error, st *Stats, start time.Time) error {
	b := &batching{ctx: ctx, model: model, cfg: cfg, emit: emit, st: st, start: start,
		chw:     cfg.Channels * cfg.Height * cfg.Width,
		free:    make(chan []float32, cfg.InFlight),
		waiting: map[int]*task{},
		end:     -1,
	}
	for range cfg.InFlight {
		b.free <- nil // allocated on first use: a short run needs one
	}
	// Every flight has ended when batch returns: the model is never
	// called after Run returns.
	defer func() {
		for _, f := range b.queue {
			<-f.done
		}
	}()
	for {
		// Rows are taken (their tokens given back) only while a flight can
		// start: with cfg.InFlight batches in the model, the decoded rows
		// wait in the window, which keeps memory bounded.
		b.take(tokens)
		if b.next == b.end && len(b.queue) < cfg.InFlight {
			b.launch()
			for len(b.queue) > 0 {
				if err := b.land(); err != nil {
					return err
				}
			}
			return nil
		}
		// Rows of a landed flight go out as soon as it is back, while the
		// next rows arrive.
		var landed <-chan struct{}
		if len(b.queue) > 0 {
			landed = b.queue[0].done
		}
		select {
		case t := <-done:
			if t.input < 0 {
				b.end = t.row
			} else {
				b.waiting[t.row] = t
			}
		case <-landed:
			if err := b.land(); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// batching is the state of batch.
type batching struct {
	ctx     context.Context
	model   Model
	cfg     Config
	emit    func(Result) error
	st      *Stats
	chw     int            // values of one page
	free    chan []float32 // batch buffers not in the model
	waiting map[int]*task  // rows arrived out of order
	pending []*task        // rows taken in order, not yet in a flight
	good    int            // rows of pending that go to the model
	next    int            // next row to take
	end     int            // row count, once the opener has finished (-1 before)
	queue   []*flight      // flights in row order, not yet emitted
	start   time.Time      // Run's start
	busyEnd time.Time      // end of the latest model call landed (ModelBusy's sweep)
	calls   int            // model calls landed
}

// take takes the rows that arrived in order while fewer than cfg.InFlight
// flights are out, launching each full batch.
func (b *batching) take(tokens <-chan struct{}) {
	for len(b.queue) < b.cfg.InFlight {
		t, ok := b.waiting[b.next]
		if !ok {
			return
		}
		delete(b.waiting, b.next)
		<-tokens
		b.next++
		b.pending = append(b.pending, t)
		if t.err == nil {
			b.good++
			if b.good == b.cfg.Batch {
				b.launch()
			}
		}
	}
}

// land waits for the oldest flight and emits its rows.
func (b *batching) land() error {
	f := b.queue[0]
	select {
	case <-f.done:
	case <-b.ctx.Done():
		return b.ctx.Err()
	}
	b.queue = b.queue[1:]
	b.timed(f)
	if f.err == nil && len(f.probs) != f.n {
		f.err = fmt.Errorf("returned %d rows for %d pages", len(f.probs), f.n)
	}
	if f.err != nil {
		return f.failure()
	}
	k := 0
	for _, t := range f.rows {
		r := Result{Row: t.row, Input: t.input, Name: t.name, Err: t.err, Digest: t.digest, Label: t.label, PDF: t.pdf}
		if t.err == nil {
			r.Page, r.Pages, r.Probs = t.page+1, t.pages, f.probs[k]
			k++
		} else if t.pages > 0 {
			r.Page, r.Pages = t.page+1, t.pages
		}
		if r.Err != nil {
			b.st.Failed++
		}
		b.st.Rows++
		if err := b.emit(r); err != nil {
			return err
		}
	}
	return nil
}

// timed adds a landed flight's model call to the statistics. Flights land
// in the order they were launched, so their starts come sorted and the
// union of the calls (ModelBusy) is one sweep.
func (b *batching) timed(f *flight) {
	if f.n == 0 {
		return
	}
	d := f.end.Sub(f.start)
	b.st.Forward += d
	if b.calls == 0 {
		b.st.FirstForward = d
	}
	b.calls++
	switch {
	case !f.start.Before(b.busyEnd):
		b.st.ModelBusy += d
		b.busyEnd = f.end
	case f.end.After(b.busyEnd):
		b.st.ModelBusy += f.end.Sub(b.busyEnd)
		b.busyEnd = f.end
	}
}

// failure is the error of a flight the model failed on, naming its first
// and last page.
func (f *flight) failure() error {
	var first, last *task
	for _, t := range f.rows {
		if t.err == nil {
			if first == nil {
				first = t
			}
			last = t
		}
	}
	return fmt.Errorf("model failed on the batch from %s page %d to %s page %d: %w",
		first.name, first.page+1, last.name, last.page+1, f.err)
}

// launch hands the pending rows to the model as one flight; the caller
// makes sure fewer than cfg.InFlight are in the model.
func (b *batching) launch() {
	if len(b.pending) == 0 {
		return
	}
	f := &flight{rows: b.pending, n: b.good, done: make(chan struct{})}
	b.pending, b.good = nil, 0
	b.queue = append(b.queue, f)
	if f.n == 0 { // only failed rows: nothing for the model
		close(f.done)
		return
	}
	f.buf = <-b.free // one is free: at most InFlight flights are in the model
	chw, cfg := b.chw, b.cfg
	if f.buf == nil {
		f.buf = make([]float32, cfg.Batch*chw)
	}
	n := 0
	for _, t := range f.rows {
		if t.err == nil {
			copy(f.buf[n*chw:], t.data)
			t.data = nil
			n++
		}
	}
	if b.st.Batches == 0 {
		b.st.FirstBatch = time.Since(b.start)
	}
	b.st.Batches++
	go func() {
		defer close(f.done)
		f.start = time.Now()
		f.probs, f.err = b.model.Probabilities(f.buf[:n*chw], n, cfg.Channels, cfg.Height, cfg.Width)
		f.end = time.Now()
		b.free <- f.buf
	}()
}
