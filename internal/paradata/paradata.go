// Package paradata writes the run metadata of both tools: one Writer,
// parameterised by each tool's document (its statistics and own fields),
// keeps the shared header, configuration, counts, trail of skipped files,
// outputs and warnings, and the earlier runs found interrupted
// (RecordInterrupted). The classifier's document and run,
// "{stamp}_page-classification.json" (spec page-classification 2.7, 2.9),
// are Document and Run; the translator's document is its own
// (internal/translate/runmeta).
//
// A Run is created at the start of a run and written at once (status
// "running"); the caller updates it as the run proceeds and may Flush at any
// time; Finish records the outcome. Every write is atomic, so the file on
// disk is always a complete JSON document describing the run up to the last
// flush, also when the run fails part-way or is killed (status then stays
// "running", becomes "interrupted" after Ctrl-C or SIGTERM, or "failed" with
// the error).
package paradata

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"archivekit/internal/atomicfile"
	"archivekit/internal/licence"
	"archivekit/internal/version"
)

// SchemaVersion is the version of the metadata layout written here.
const SchemaVersion = "2.0"

// Program is the program name recorded in the metadata and file name.
const Program = "page-classification"

// Run states.
const (
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	// StatusInterrupted is set by a later run continuing this one
	// (MarkInterrupted): the process ended without recording an outcome
	// (killed or crashed), so its file still said "running"; or by the
	// run itself when a signal stopped it (SetOutcome).
	StatusInterrupted = "interrupted"
	// StatusIncomplete: the run stopped, or ended, with inputs left to do
	// after a passing failure (a service outage, a full disk; exit 75,
	// an error that says Incomplete()): a --resume finishes it.
	StatusIncomplete = "incomplete"
	// StatusCanceled: a service's job canceled by its client (DELETE
	// /jobs/{id}; an error that says Canceled()).
	StatusCanceled = "canceled"
)

// FileName is "{stamp}_page-classification.json".
func FileName(stamp string) string { return stamp + "_" + Program + ".json" }

// StampLayout is the layout of a run's stamp, {stamp} in both tools' output
// names (YYMMDD-HHMMSS).
const StampLayout = "060102-150405"

// Repository is the repository named in the run metadata.
const Repository = "archivekit"

// NewInfo is what a tool of this repository knows about itself at start:
// its version, and, inside the published images, the runner reference and
// image from RUNNER_REF and DOCKER_IMAGE (read with getenv).
func NewInfo(getenv func(string) string) Info {
	return Info{ToolVersion: version.String(), ToolCommit: version.Commit(), Repository: Repository,
		RunnerRef: getenv("RUNNER_REF"), DockerImage: getenv("DOCKER_IMAGE")}
}

// Info is what the tool knows about itself at start.
type Info struct {
	ToolVersion string
	// ToolCommit is the commit the binary was built from (version.Commit;
	// "" when unknown): two builds of one version differ by it.
	ToolCommit string
	Repository string
	// RunnerRef and DockerImage are set inside the published images.
	RunnerRef   string
	DockerImage string
	// RunID identifies the run; Start uses RunIDFor(stamp) when empty.
	RunID string
}

// Skipped is one input file that was not classified.
type Skipped struct {
	File   string `json:"file"`
	Reason string `json:"reason"`
}

// Model is one model used by the run.
type Model struct {
	Revision string `json:"revision,omitempty"`
	Path     string `json:"path"`
	Base     string `json:"base_architecture,omitempty"`
	License  string `json:"license,omitempty"`
	// Digest identifies the weights and metadata (modelmeta.Digest).
	Digest string `json:"digest,omitempty"`
	// Demo is true for a shipped demo model.
	Demo bool `json:"demo"`
}

// Statistics counts inputs and outputs.
type Statistics struct {
	// Unit is what the three input counts count when it is not a file:
	// "page" for the classifier, whose inputs are pages (a PDF's or a
	// multi-page TIFF's each, a book's each), so input_files_total,
	// successfully_processed and skipped_files are pages read, pages
	// classified and pages failed. Empty: files (the translator).
	Unit                  string `json:"unit,omitempty"`
	InputFilesTotal       int    `json:"input_files_total"`
	SuccessfullyProcessed int    `json:"successfully_processed"`
	SkippedFiles          int    `json:"skipped_files"`
	// OutputCountsByType counts output rows or files by kind ("csv" rows,
	// "png" images, "json" records).
	OutputCountsByType map[string]int `json:"output_counts_by_type"`
	// PerformancePerMinute is each output count of this run's own work
	// (less DoneBefore's) per minute of this run's time.
	PerformancePerMinute map[string]float64 `json:"performance_per_minute"`
	// DoneBefore is the part of the counts above that earlier runs did: a
	// resumed run counts the whole run (the outputs the folder holds, those
	// it kept from the ledger too), and says here what of it it kept; nil
	// when it kept nothing.
	DoneBefore *Before `json:"done_before,omitempty"`
}

// Before is what a resumed run kept from the ledger, done by the earlier
// runs it continued (Trail.ResumedFrom), as counted in its statistics:
// the statistics less these are this run's own work.
type Before struct {
	// Files counts the input files kept done, Failed those kept failed.
	Files  int `json:"files"`
	Failed int `json:"failed"`
	// SuccessfullyProcessed and OutputCountsByType are the kept part of
	// the statistics' fields of those names (pages for the classifier).
	SuccessfullyProcessed int            `json:"successfully_processed"`
	OutputCountsByType    map[string]int `json:"output_counts_by_type"`
	// ThisRunOnly names the statistics that count this run's work only,
	// the ledger not knowing the earlier runs' (the translator's units
	// translated and backend calls, say).
	ThisRunOnly []string `json:"this_run_only,omitempty"`
}

// add is b with o added (a new value: b is not changed).
func (b *Before) add(o Before) *Before {
	n := Before{OutputCountsByType: map[string]int{}}
	if b != nil {
		n = *b
		n.OutputCountsByType = copyMap(b.OutputCountsByType)
	}
	n.Files += o.Files
	n.Failed += o.Failed
	n.SuccessfullyProcessed += o.SuccessfullyProcessed
	for k, v := range o.OutputCountsByType {
		n.OutputCountsByType[k] += v
	}
	if o.ThisRunOnly != nil {
		n.ThisRunOnly = o.ThisRunOnly
	}
	return &n
}

// own is counts less those done before (b's; all of them when b is nil).
func (b *Before) own(counts map[string]int) map[string]int {
	if b == nil {
		return counts
	}
	out := copyMap(counts)
	for k, v := range b.OutputCountsByType {
		out[k] -= v
	}
	return out
}

// Header is the part of the run metadata that both tools (the classifier
// here, the translator in cmd/translate) write alike: the program and where
// it ran, the run's identity and outcome, its licence and its times. A
// tool's document embeds it first, so its fields come first in the JSON.
type Header struct {
	SchemaVersion   string             `json:"schema_version"`
	Program         string             `json:"program"`
	ToolVersion     string             `json:"tool_version"`
	ToolCommit      string             `json:"tool_commit,omitempty"`
	Repository      string             `json:"repository"`
	RunnerRef       string             `json:"runner_ref"`
	DockerImage     string             `json:"docker_image"`
	GoVersion       string             `json:"go_version"`
	Platform        string             `json:"platform"`
	RunID           string             `json:"run_id"`
	Status          string             `json:"status"`
	Error           string             `json:"error,omitempty"`
	License         string             `json:"license"`
	LicenseURL      string             `json:"license_url"`
	LicenseDetail   licence.Resolution `json:"license_detail"`
	StartTime       string             `json:"start_time"`
	EndTime         string             `json:"end_time"`
	DurationSeconds float64            `json:"duration_seconds"`
}

// NewHeader is the header of a run of program (with its Info) started at
// start: running, times in UTC.
func NewHeader(program string, start time.Time, info Info) Header {
	return Header{
		SchemaVersion: SchemaVersion, Program: program,
		ToolVersion: info.ToolVersion, ToolCommit: info.ToolCommit, Repository: info.Repository,
		RunnerRef: info.RunnerRef, DockerImage: info.DockerImage,
		GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		RunID: info.RunID, Status: StatusRunning,
		StartTime: start.UTC().Format(time.RFC3339Nano),
	}
}

// SetLicence records the resolved licence of the run.
func (h *Header) SetLicence(res licence.Resolution) {
	h.LicenseDetail = res
	h.License, h.LicenseURL = res.EffectiveLicense, res.EffectiveLicenseURL
}

// SetEnd records the end time and the duration since start.
func (h *Header) SetEnd(start, end time.Time) {
	h.EndTime = end.UTC().Format(time.RFC3339Nano)
	h.DurationSeconds = round(end.Sub(start).Seconds(), 3)
}

// SetOutcome records the outcome: completed; interrupted when runErr says
// the run was stopped before the end (an error in its chain with an
// Interrupted() bool method that reports true: cliflags.Stopped, Ctrl-C or
// SIGTERM), with its message; else failed with runErr's message.
func (h *Header) SetOutcome(runErr error) {
	h.Status, h.Error = StatusCompleted, ""
	var stop interface{ Interrupted() bool }
	var inc interface{ Incomplete() bool }
	var canceled interface{ Canceled() bool }
	switch {
	case runErr == nil:
	case errors.As(runErr, &stop) && stop.Interrupted():
		h.Status, h.Error = StatusInterrupted, runErr.Error()
	case errors.As(runErr, &inc) && inc.Incomplete():
		h.Status, h.Error = StatusIncomplete, runErr.Error()
	case errors.As(runErr, &canceled) && canceled.Canceled():
		h.Status, h.Error = StatusCanceled, runErr.Error()
	default:
		h.Status, h.Error = StatusFailed, runErr.Error()
	}
}

// PerMinute is each count per minute of dur, to 4 decimals (0 when dur is
// not positive).
func PerMinute(counts map[string]int, dur time.Duration) map[string]float64 {
	out := make(map[string]float64, len(counts))
	for k, n := range counts {
		rate := 0.0
		if dur > 0 {
			rate = round(float64(n)/dur.Minutes(), 4)
		}
		out[k] = rate
	}
	return out
}

// WriteJSON writes v, indented, with a final newline, atomically to path.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return atomicfile.WriteFile(path, append(b, '\n'), 0o666)
}

// Document is the classifier's run metadata as written to disk.
type Document struct {
	Header
	// Demo is true when a shipped demo model answered instead of the
	// published ones; DemoEnsemble says the same (its older name).
	Demo         bool           `json:"demo"`
	DemoEnsemble bool           `json:"demo_ensemble"`
	Models       []Model        `json:"models"`
	Config       map[string]any `json:"config"`
	// Training records what a training run used and made (epochs, learning
	// rate, seed, folds, the models written); absent for other runs.
	Training map[string]any `json:"training,omitempty"`
	// Review records how the run's review fields were made: the
	// calibration in force (its file and digest, target and thresholds) or
	// why there is none, and the page-condition checks; absent for runs
	// that review no page.
	Review map[string]any `json:"review,omitempty"`
	// Summary is the run summary (the classifier's summary.Summary: pages
	// per category, per source file and in total, flagged, failures);
	// absent for runs that classify no page.
	Summary    any        `json:"summary,omitempty"`
	Statistics Statistics `json:"statistics"`
	Trail
}

// Parts hands the shared parts to the Writer.
func (d *Document) Parts() Parts {
	return Parts{Header: &d.Header, Config: d.Config, Statistics: &d.Statistics, Trail: &d.Trail}
}

// View is a copy of the document that shares no map or list with it.
func (d *Document) View() *Document {
	v := *d
	v.Statistics.OutputCountsByType = copyMap(v.Statistics.OutputCountsByType)
	v.Statistics.PerformancePerMinute = copyMap(v.Statistics.PerformancePerMinute)
	v.Config = copyMap(v.Config)
	if v.Training != nil {
		v.Training = copyMap(v.Training)
	}
	if v.Review != nil {
		v.Review = copyMap(v.Review)
	}
	v.Models = append([]Model{}, v.Models...)
	v.Trail = v.Trail.Clone()
	return &v
}

// MarkInterrupted records, in the metadata file at path of an earlier run
// whose process has ended (the caller knows it: its ledger file is no longer
// held), that it was interrupted when the file still says "running": status
// "interrupted" and an error naming the run that continued it (by); its
// end_time stays that of its last write. A file with any other status, or none, is left
// as it is and ok is false. Every other field is kept as written.
//
// finished is how many items the run's ledger file records as finished
// (ledger.Finished; negative when not known): the file says so, in
// ledger_items_finished and its error, since its counts are those of its
// last write (a run killed early wrote none).
func MarkInterrupted(path, by string, finished int) (Interrupted, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Interrupted{}, false, nil
	}
	if err != nil {
		return Interrupted{}, false, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return Interrupted{}, false, fmt.Errorf("%s: %w", path, err)
	}
	if doc["status"] != StatusRunning {
		return Interrupted{}, false, nil
	}
	doc["status"] = StatusInterrupted
	doc["error"] = "interrupted: the run ended without recording an outcome (killed or crashed); continued by run " + by
	if finished >= 0 {
		doc["ledger_items_finished"] = finished
		doc["error"] = fmt.Sprintf("%s; its ledger records %d items it finished (the runs that continue it count them as done before)", doc["error"], finished)
	}
	if err := WriteJSON(path, doc); err != nil {
		return Interrupted{}, false, err
	}
	id, _ := doc["run_id"].(string)
	return Interrupted{RunID: id, File: path}, true, nil
}

// Run is the metadata of one classifier run in progress (a Writer of its
// Document). Its methods are safe for concurrent use.
type Run struct {
	*Writer[*Document]
}

// Start creates the run metadata file in dir for a run started at start
// (named from its stamp, StampLayout) and writes it, replacing a file
// of the same name. Runs that may share a folder use Create.
func Start(dir, stamp string, start time.Time, info Info) (*Run, error) {
	return startWithClock(dir, stamp, start, info, time.Now)
}

// Create starts the run metadata in dir under the first stamp of base,
// base-2, base-3, ... that no other run in dir holds, and returns it with
// that stamp. The file is claimed with an exclusive create, so runs started
// in the same second, one after the other or at once, each get their own
// stamp and with it their own output names.
func Create(dir, base string, start time.Time, info Info) (*Run, string, error) {
	stamp, err := Claim(dir, base, FileName)
	if err != nil {
		return nil, "", err
	}
	r, err := startWithClock(dir, stamp, start, info, time.Now)
	return r, stamp, err
}

// Claim reserves a run stamp in dir for a run-metadata file named
// name(stamp): base when that file can be created exclusively, else base-2,
// base-3, …. The empty file it leaves is replaced atomically by the run's
// first write, so runs started in the same second into one folder never
// share a file. Both tools name their run metadata through it.
func Claim(dir, base string, name func(stamp string) string) (string, error) {
	for i := 1; i <= 10000; i++ {
		stamp := base
		if i > 1 {
			stamp = fmt.Sprintf("%s-%d", base, i)
		}
		f, err := os.OpenFile(filepath.Join(dir, name(stamp)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		f.Close()
		return stamp, nil
	}
	return "", fmt.Errorf("%s: no free run stamp for %s", dir, base)
}

func startWithClock(dir, stamp string, start time.Time, info Info, now func() time.Time) (*Run, error) {
	if info.RunID == "" {
		info.RunID = RunIDFor(stamp)
	}
	r := &Run{NewWriter(filepath.Join(dir, FileName(stamp)), start, newDocument(start, info))}
	r.now = now
	if err := r.Flush(); err != nil {
		return nil, err
	}
	return r, nil
}

// Record is the run metadata of a classifier run kept elsewhere than in a
// file (a service's job, in its job store): the same document as Start's,
// with info's run id, encoded at its end (Encode), never written.
func Record(start time.Time, info Info) *Run {
	return &Run{NewWriter("", start, newDocument(start, info))}
}

// newDocument is the document of a run started at start, running, with
// the licence unknown until the caller resolves it.
func newDocument(start time.Time, info Info) *Document {
	doc := &Document{
		Header: NewHeader(Program, start, info),
		Models: []Model{}, Config: map[string]any{},
		Statistics: Statistics{OutputCountsByType: map[string]int{}, PerformancePerMinute: map[string]float64{}},
		Trail:      NewTrail(),
	}
	// Until the caller resolves the licence, the record says it is unknown.
	doc.SetLicence((&licence.Components{}).Resolve())
	return doc
}

// SetTraining records one fact of a training run.
func (r *Run) SetTraining(key string, value any) {
	r.Update(func(d *Document) {
		if d.Training == nil {
			d.Training = map[string]any{}
		}
		d.Training[key] = value
	})
}

// SetReview records one fact of the run's page review.
func (r *Run) SetReview(key string, value any) {
	r.Update(func(d *Document) {
		if d.Review == nil {
			d.Review = map[string]any{}
		}
		d.Review[key] = value
	})
}

// SetSummary records the run summary (a value that marshals to JSON).
func (r *Run) SetSummary(s any) {
	r.Update(func(d *Document) { d.Summary = s })
}

// AddModel records a model used by the run; a demo model marks the run as
// using the demo ensemble.
func (r *Run) AddModel(m Model) {
	r.Update(func(d *Document) {
		d.Models = append(d.Models, m)
		d.DemoEnsemble = d.DemoEnsemble || m.Demo
		d.Demo = d.DemoEnsemble
	})
}

// Snapshot returns a copy of the current document with end time, duration
// and rates computed as of now.
func (r *Run) Snapshot() Document { return *r.Writer.Snapshot() }

func round(x float64, dec int) float64 {
	p := 1.0
	for i := 0; i < dec; i++ {
		p *= 10
	}
	if x < 0 {
		return -float64(int64(-x*p+0.5)) / p
	}
	return float64(int64(x*p+0.5)) / p
}

func copyMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
