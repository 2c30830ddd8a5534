package classify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/pipeline"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
)

// Ensemble is one or more models classifying the same pages. A single model
// is an Ensemble of one.
type Ensemble struct {
	// Models are the members, in output column order.
	Models []*Model
	// Orientation, when set, tells each page's rotation (Page.Condition);
	// it does not classify.
	Orientation *Orientation
}

// NewEnsemble groups loaded models; it refuses an empty list.
func NewEnsemble(models ...*Model) (*Ensemble, error) {
	if len(models) == 0 {
		return nil, errors.New("classify: an ensemble needs at least one model")
	}
	return &Ensemble{Models: models}, nil
}

// Names returns the model names in column order.
func (e *Ensemble) Names() []string {
	out := make([]string, len(e.Models))
	for i, m := range e.Models {
		out[i] = m.Name
	}
	return out
}

// Demo reports whether any member comes from the demo ensemble.
func (e *Ensemble) Demo() bool {
	for _, m := range e.Models {
		if m.Demo {
			return true
		}
	}
	return false
}

// Close closes every model.
func (e *Ensemble) Close() error { return errors.Join(CloseAll(e.Models), e.Orientation.Close()) }

// Options configure Predict. The zero value uses the pipeline's defaults.
type Options struct {
	// Workers is the number of decode/preprocess goroutines (0: NumCPU).
	Workers int
	// Batch is the number of pages per model call (0: pipeline.DefaultBatch).
	Batch int
	// Openers is the number of inputs read (or fetched) and opened at
	// once ahead of the rows; 0: pipeline.Config's default.
	Openers int
	// Decode sets the PDF DPI and the pixel cap (zero: imageio defaults).
	Decode imageio.Options
	// MaxPages, when > 0, refuses PDFs with more pages (the service's 50).
	MaxPages int
	// Concurrent runs the members' forward passes of one batch at the same
	// time (useful on a GPU; on a CPU libtorch already uses every core).
	Concurrent bool
	// Lanes is the number of batches in the models at once on the CPU,
	// each forward pass on its share of the intra-op threads
	// (torch.NumThreads()/Lanes, at least 1): two batches on one thread
	// each keep two cores busy without the synchronisation of two threads
	// on one batch, and while one lane waits for its pages the other runs.
	// 0 means DefaultLanes. Models on a GPU use GPULanes, each forward
	// pass on the process-wide thread count.
	Lanes int
	// OnOpen is called as each input is opened with its page count (0 when
	// it cannot be opened); see pipeline.Config.OnOpen.
	OnOpen func(in pipeline.Input, pages int)
	// Upload is how pages travel to the models' device (UploadAuto: the
	// decoded pages to a GPU, resized there; floats on the CPU). With
	// UploadPage, pages are decoded to at most PagePixels of the largest
	// input size, whatever Decode.MaxDecodePixels asks.
	Upload Upload
}

// Page is the prediction for one page of one input.
type Page struct {
	// Input is the index of the input in the slice given to Predict.
	Input int
	// Name is the input's name (its path for files).
	Name string
	// Page is the 1-based page number; 0 when the input could not be opened.
	Page int
	// Pages is the input's page count; 0 when it could not be opened.
	Pages int
	// Probs holds each model's full softmax vector in canonical category
	// order, in Ensemble.Models order; nil when Err is set.
	Probs [][]float64
	// Mean is the element-wise mean of Probs (equal to Probs[0] for a single
	// model); nil when Err is set.
	Mean []float64
	// Condition is the page-condition evidence measured on the decoded
	// page (review.Condition); members that were not measured are nil.
	Condition review.Condition
	// Err says why the page has no prediction; it names the file.
	Err error
	// Digest is pipeline.Result.Digest: the SHA-256 of the input's bytes
	// as decoded; "" when they could not be read.
	Digest string
	// Label is pipeline.Result.Label: the page's label in its PDF ("iv",
	// "12a"), "" when it has none.
	Label string
	// PDF is pipeline.Result.PDF: the page was drawn by the run's PDF
	// renderer.
	PDF bool
}

// Top returns the n best categories of the mean, best first.
func (p Page) Top(n int) []results.Ranked { return results.TopN(p.Mean, n) }

// Predict classifies every page of inputs with every model and calls emit
// once per page, in input order, from one goroutine. A page that cannot be
// read is emitted with Err set and never shifts another page. Predict stops at
// the first model or emit error, or when ctx is cancelled.
//
// Every page is decoded once; each distinct preprocessing of the members is
// computed once per page and the members' forward passes run batch by batch.
func (e *Ensemble) Predict(ctx context.Context, inputs []pipeline.Input, o Options, emit func(Page) error) (pipeline.Stats, error) {
	device := e.device()
	j := newJoint(e.Models, e.Orientation, o.Concurrent, o.Upload.On(device), device)
	lanes := Lanes(device, o.Lanes)
	if lanes > 1 && device == "cpu" {
		j.threads = max(1, torch.NumThreads()/lanes)
	}
	dec := o.Decode
	if j.mode == UploadPage {
		dec = decodeFor(dec, j.carriers[len(j.carriers)-1].size)
	}
	cfg := pipeline.Config{
		Workers: o.Workers, Batch: o.Batch, InFlight: lanes, Decode: dec, MaxPages: o.MaxPages, OnOpen: o.OnOpen, Openers: o.Openers,
		Channels: 1, Height: 1, Width: j.width, Preprocess: j.preprocess,
	}
	return pipeline.Run(ctx, inputs, j, cfg, func(r pipeline.Result) error {
		p := Page{Input: r.Input, Name: r.Name, Page: r.Page, Pages: r.Pages, Err: r.Err, Digest: r.Digest, Label: r.Label, PDF: r.PDF}
		if r.Err == nil {
			var err error
			if p.Probs, p.Mean, p.Condition, err = j.page(r.Probs); err != nil {
				return err
			}
		}
		return emit(p)
	})
}

// Review is the page's review under the calibration cal (nil: none):
// review.Assess of its members' probabilities, their mean and its
// condition.
func (p Page) Review(cal *review.Applied) review.Page {
	return review.Assess(p.Probs, p.Mean, p.Condition, cal)
}

// Step is the joint per-page step of an ensemble, its one implementation:
// Predict runs it in its pipeline, and the HTTP service runs it over each
// request's pages with its own forward passes (batched across requests).
// Prepare turns a decoded page into one row of floats: every distinct
// preprocessing of the members (each computed once), the orientation
// model's input and the page's ink count; Run passes prepared pages through
// every member and the orientation model and gives each page's members'
// probabilities, their mean and its condition.
type Step struct{ j *joint }

// Forward runs pages (each model.InputLen floats) through the member i of
// a Step and returns one probability row per page in canonical category
// order (Model.Probabilities).
type Forward func(ctx context.Context, i int, pages [][]float32) ([][]float32, error)

// NewStep is the step of models (in column order) and orient (nil: pages
// are not checked for rotation). With forward set, it runs the members'
// forward passes, all members at once; with nil, each member runs its pages
// in turn with Model.Probabilities.
func NewStep(models []*Model, orient *Orientation, forward Forward) *Step {
	j := newJoint(models, orient, forward != nil, UploadFloat, "")
	j.forward = forward
	return &Step{j}
}

// Width is the number of floats of one prepared page.
func (s *Step) Width() int { return s.j.width }

// Prepare computes the row of one decoded page; the page's pixels are not
// kept.
func (s *Step) Prepare(img imageio.Image) ([]float32, error) { return s.j.preprocess(img) }

// Run runs n prepared pages (their rows one after another in data) and
// returns their predictions in order, with Probs, Mean and Condition set.
func (s *Step) Run(ctx context.Context, data []float32, n int) ([]Page, error) {
	if len(data) != n*s.j.width {
		return nil, fmt.Errorf("classify: %d floats for %d pages of %d", len(data), n, s.j.width)
	}
	rows, err := s.j.run(ctx, data, n)
	if err != nil {
		return nil, err
	}
	out := make([]Page, n)
	for i, row := range rows {
		p := &out[i]
		if p.Probs, p.Mean, p.Condition, err = s.j.page(row); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DefaultLanes is the number of lanes (Options.Lanes) on the CPU when none
// is asked for: two (each forward on half the threads). On 2 cores, for the
// shipped EfficientNet-Lite models, two lanes of one thread gave 1.13× (one
// model) to 1.25× (the five-model ensemble) the pages per second of one
// lane of two threads; for the earlier demo models under heavy load the
// figures ranged from 0.70 to 1.20 (docs/benchmarks.md).
const DefaultLanes = 2

// GPULanes is the number of batches in flight when the models are on a
// GPU: two, so that the next batch is assembled while the current one is
// in the models (the device runs their forward passes one after another).
// With one, the device waits while each landed batch's rows are emitted
// and the next batch is copied together. On the simulated device of
// BenchmarkSimulatedDevice at the H100's bf16 rate, with pages the host
// prepares in time, one lane kept it 93.5% busy and two 99.3% (at the
// TF32 rate 99.0% and 98.3%: within the noise; docs/benchmarks.md).
const GPULanes = 2

// device is "cpu" when every member is on the CPU, else the device of
// the first member that is not.
func (e *Ensemble) device() string {
	for _, m := range e.Models {
		if d := m.Module.Device(); d != "cpu" {
			return d
		}
	}
	return "cpu"
}

// Lanes is the number of batches Predict keeps in the models at once on
// device for asked (Options.Lanes): GPULanes on a GPU; on the CPU asked,
// DefaultLanes when 0, at most torch.NumThreads().
func Lanes(device string, asked int) int {
	if device != "" && device != "cpu" {
		return GPULanes
	}
	if asked <= 0 {
		asked = DefaultLanes
	}
	return max(1, min(asked, torch.NumThreads()))
}

// joint is the pipeline.Model of an ensemble (and the body of Step): one
// pipeline "page" is the concatenation of every distinct preprocessing of
// the members, then the orientation model's input (when there is one), then
// the ink count measured on the decoded page (review.InkSample: dark and
// sampled pixels); with UploadU8 it is instead one 8-bit carrier per
// distinct input size of the members and the orientation model, then the
// ink count; with UploadPage the number of the decoded page it holds
// until the upload (hold), then the ink count. Its output row is the concatenation of every member's
// canonical probabilities, then the ink count, then the orientation model's
// probabilities (the page-condition floats).
type joint struct {
	models     []*Model
	specs      []*Model // one model per distinct preprocessing
	offset     []int    // per model: offset of its tensor in a joint page
	orient     *Orientation
	orientAt   int // offset of the orientation input in a joint page
	width      int // floats per joint page
	concurrent bool
	threads    int // intra-op threads of each forward pass; 0: the process-wide count
	// forward, when set, runs the members' forward passes (Step).
	forward Forward
	// mode is how pages travel to device (UploadFloat, UploadU8 or
	// UploadPage: On resolved).
	mode   Upload
	device string
	// carriers are the input sizes, ascending, and with UploadU8 where
	// each one's 8-bit page lies in a joint page.
	carriers []carrier
	// held are the decoded pages of UploadPage until their upload, by
	// number (hold, take).
	held     sync.Map
	nextPage atomic.Uint64
}

// inkLen is the number of floats of the ink count in a joint page and an
// output row.
const inkLen = 2

// condLen is the number of page-condition floats at the end of an output
// row: the ink count, and the four orientation probabilities.
func (j *joint) condLen() int {
	if j.orient != nil {
		return inkLen + len(modelmeta.RotationLabels)
	}
	return inkLen
}

// condition reads back the page-condition floats of an output row.
func (j *joint) condition(v []float32) review.Condition {
	ink := review.InkSample{Dark: int(v[0]), Sampled: int(v[1])}.Ink()
	cond := review.Condition{Ink: &ink}
	if j.orient != nil {
		cond.Rotation = j.orient.Turn(v[inkLen:])
	}
	return cond
}

// page reads back an output row: each member's probabilities, their mean
// (results.Average, the ensemble average) and the page's condition.
func (j *joint) page(row []float32) (probs [][]float64, mean []float64, cond review.Condition, err error) {
	k, nm := len(modelmeta.Categories), len(j.models)
	if len(row) != nm*k+j.condLen() {
		return nil, nil, cond, fmt.Errorf("classify: %d scores for %d models", len(row), nm)
	}
	probs = make([][]float64, nm)
	for i := range probs {
		v := make([]float64, k)
		for c := range v {
			v[c] = float64(row[i*k+c])
		}
		probs[i] = v
	}
	return probs, results.Average(probs), j.condition(row[nm*k:]), nil
}

func newJoint(models []*Model, orient *Orientation, concurrent bool, mode Upload, device string) *joint {
	j := &joint{models: models, orient: orient, concurrent: concurrent, mode: mode, device: device}
	if mode == UploadU8 || mode == UploadPage {
		var sizes []int
		for _, m := range models {
			sizes = append(sizes, m.Size())
		}
		if orient != nil {
			sizes = append(sizes, orient.Size())
		}
		j.carriers, j.width = carriers(sizes, 0)
		if mode == UploadPage {
			j.width = pageRefLen
		}
		for _, m := range models {
			j.offset = append(j.offset, carrierOf(j.carriers, m.Size()).at)
		}
		if orient != nil {
			j.orientAt = carrierOf(j.carriers, orient.Size()).at
		}
		j.width += inkLen
		return j
	}
	at := map[registry.Preprocess]int{}
	for _, m := range models {
		off, ok := at[m.Meta.Preprocess]
		if !ok {
			off = j.width
			at[m.Meta.Preprocess] = off
			j.specs = append(j.specs, m)
			j.width += m.InputLen()
		}
		j.offset = append(j.offset, off)
	}
	if orient != nil {
		j.orientAt = j.width
		j.width += orient.InputLen()
	}
	j.width += inkLen
	return j
}

func (j *joint) preprocess(img imageio.Image) ([]float32, error) {
	switch j.mode {
	case UploadPage:
		out := make([]float32, j.width)
		j.hold(img, out)
		ink := review.SampleInk(img.Pix, img.W, img.H)
		out[j.width-2], out[j.width-1] = float32(ink.Dark), float32(ink.Sampled)
		return out, nil
	case UploadU8:
		out := make([]float32, j.width)
		resizes.host.Add(1)
		for _, c := range j.carriers {
			r, err := torch.Preprocess(img.Pix, img.H, img.W, 3, c.size, [3]float32{}, [3]float32{1, 1, 1})
			if err != nil {
				return nil, err
			}
			packU8(out[c.at:c.at+carrierLen(c.size)], r)
		}
		ink := review.SampleInk(img.Pix, img.W, img.H)
		out[j.width-2], out[j.width-1] = float32(ink.Dark), float32(ink.Sampled)
		return out, nil
	}
	resizes.host.Add(1)
	ts, err := PreprocessEach(img, j.specs)
	if err != nil {
		return nil, err
	}
	out := make([]float32, 0, j.width)
	for _, t := range ts {
		out = append(out, t...)
	}
	if j.orient != nil {
		t, err := j.orient.Preprocess(img)
		if err != nil {
			return nil, err
		}
		out = append(out, t...)
	}
	// the page-condition measure of the decoded page, last
	ink := review.SampleInk(img.Pix, img.W, img.H)
	return append(out, float32(ink.Dark), float32(ink.Sampled)), nil
}

// Probabilities implements pipeline.Model.
func (j *joint) Probabilities(data []float32, n, c, h, w int) ([][]float32, error) {
	if c != 1 || h != 1 || w != j.width {
		return nil, fmt.Errorf("classify: joint pages of %dx%dx%d, want 1x1x%d", c, h, w, j.width)
	}
	return j.run(context.Background(), data, n)
}

// run passes n joint pages through every member and the orientation model
// and returns their output rows.
func (j *joint) run(ctx context.Context, data []float32, n int) ([][]float32, error) {
	k, w := len(modelmeta.Categories), j.width
	per := make([][][]float32, len(j.models))
	var batches map[int]*torch.Batch
	onDevice := j.mode == UploadU8 || j.mode == UploadPage
	if onDevice {
		var err error
		if batches, err = j.upload(data, n); err != nil {
			return nil, err
		}
		defer closeBatches(batches)
	}
	run := func(i int) error {
		m := j.models[i]
		size := m.InputLen()
		var rows [][]float32
		var err error
		if onDevice {
			rows, err = m.Module.ProbabilitiesBatch(batches[m.Size()], n, m.mean, m.std, j.threads)
			if err == nil {
				rows, err = m.canonical(rows, n)
			} else {
				err = fmt.Errorf("%s: %w", m.Name, err)
			}
		} else if j.forward != nil {
			pages := make([][]float32, n)
			for p := range pages {
				at := p*w + j.offset[i]
				pages[p] = data[at : at+size : at+size]
			}
			rows, err = j.forward(ctx, i, pages)
		} else {
			batch := make([]float32, n*size)
			for p := 0; p < n; p++ {
				copy(batch[p*size:(p+1)*size], data[p*w+j.offset[i]:])
			}
			rows, err = m.ProbabilitiesThreads(batch, n, 3, m.Size(), m.Size(), j.threads)
		}
		if err == nil && len(rows) != n {
			err = fmt.Errorf("%s: %d rows for %d pages", m.Name, len(rows), n)
		}
		per[i] = rows
		return err
	}
	if j.concurrent && len(j.models) > 1 {
		errs := make([]error, len(j.models))
		var wg sync.WaitGroup
		for i := range j.models {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = run(i) }()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
	} else {
		for i := range j.models {
			if err := run(i); err != nil {
				return nil, err
			}
		}
	}
	var turns [][]float32
	if j.orient != nil && onDevice {
		rows, err := j.orient.Module.ProbabilitiesBatch(batches[j.orient.Size()], n, j.orient.mean, j.orient.std, j.threads)
		if err == nil {
			err = j.orient.check(rows, n)
		}
		if err != nil {
			return nil, err
		}
		turns = rows
	} else if j.orient != nil {
		size := j.orient.InputLen()
		batch := make([]float32, n*size)
		for p := 0; p < n; p++ {
			copy(batch[p*size:(p+1)*size], data[p*w+j.orientAt:])
		}
		var err error
		if turns, err = j.orient.probabilities(batch, n, j.threads); err != nil {
			return nil, err
		}
	}
	out := make([][]float32, n)
	for p := range out {
		row := make([]float32, 0, len(j.models)*k+j.condLen())
		for i := range j.models {
			row = append(row, per[i][p]...)
		}
		row = append(row, data[(p+1)*w-inkLen:(p+1)*w]...) // the ink count
		if turns != nil {
			row = append(row, turns[p]...)
		}
		out[p] = row
	}
	return out, nil
}
