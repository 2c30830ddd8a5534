package paradata

import (
	"archivekit/internal/utf8name"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"archivekit/internal/ledger"
	"archivekit/internal/licence"
	"archivekit/internal/shard"
)

// Parts are the parts of a run-metadata document that every tool keeps
// alike, handed to a Writer to fill in: the header, the configuration, the
// statistics both tools count and the trail of skipped files, outputs,
// warnings and interrupted runs.
type Parts struct {
	Header     *Header
	Config     map[string]any
	Statistics *Statistics
	Trail      *Trail
}

// Trail is the end of a tool's run metadata, the same in both tools: what
// was skipped and why, the files written, the warnings and the earlier runs
// found interrupted. A tool's document embeds it last.
type Trail struct {
	SkippedFilesDetail []Skipped `json:"skipped_files_detail"`
	Outputs            []string  `json:"outputs"`
	Warnings           []string  `json:"warnings"`
	// Interrupted lists the earlier runs this run continued whose process
	// had ended without recording an outcome (MarkInterrupted).
	Interrupted []Interrupted `json:"interrupted_runs,omitempty"`
	// ResumedFrom lists the earlier runs whose ledger files a resumed run
	// read (RecordInterrupted), in the order they began.
	ResumedFrom []Earlier `json:"resumed_from,omitempty"`
}

// Earlier is an earlier run a resumed run continued: its run id, its
// status as its run metadata says after the resume's check
// (MarkInterrupted; "unknown" when there is none), its run metadata and
// ledger files, and the items its ledger file records as finished (-1
// when it cannot be read).
type Earlier struct {
	RunID         string `json:"run_id"`
	Status        string `json:"status"`
	File          string `json:"file"`
	Ledger        string `json:"ledger"`
	ItemsFinished int    `json:"ledger_items_finished"`
}

// Interrupted is an earlier run found interrupted by the run that
// continued it: its run id and metadata file.
type Interrupted struct {
	RunID string `json:"run_id"`
	File  string `json:"file"`
}

// NewTrail is an empty trail (empty lists, not null, in the JSON).
func NewTrail() Trail {
	return Trail{SkippedFilesDetail: []Skipped{}, Outputs: []string{}, Warnings: []string{}}
}

// Clone copies the trail's lists, the outputs sorted.
func (t Trail) Clone() Trail {
	t.SkippedFilesDetail = append([]Skipped{}, t.SkippedFilesDetail...)
	t.Outputs = append([]string{}, t.Outputs...)
	sort.Strings(t.Outputs)
	t.Warnings = append([]string{}, t.Warnings...)
	t.Interrupted = append([]Interrupted(nil), t.Interrupted...)
	t.ResumedFrom = append([]Earlier(nil), t.ResumedFrom...)
	return t
}

// Doc is a tool's run-metadata document (a pointer to it) as a Writer
// keeps it: the tool's statistics and fields are its own, the shared parts
// it hands over (Parts), and View is what is written: a copy that shares
// nothing later updates change, with whatever the tool derives at write
// time (a licence from the components used, totals).
type Doc[D any] interface {
	Parts() Parts
	View() D
}

// Writer is the run metadata of one run in progress, written atomically to
// its file whenever the caller flushes and at the end (Finish), so that the
// file is always a complete JSON document describing the run up to its last
// write, also when the run fails part-way or is killed. Both tools write
// their run metadata through it, each with its own document type D. Its
// methods are safe for concurrent use.
type Writer[D Doc[D]] struct {
	mu    sync.Mutex
	path  string
	start time.Time
	now   func() time.Time
	doc   D
}

// NewWriter returns the writer of doc, the run metadata at path of a run
// started at start. It writes nothing yet.
func NewWriter[D Doc[D]](path string, start time.Time, doc D) *Writer[D] {
	return &Writer[D]{path: path, start: start, now: time.Now, doc: doc}
}

// Path is the metadata file.
func (w *Writer[D]) Path() string { return w.path }

// Update calls f with the document, under the writer's lock, for what only
// the tool knows how to record.
func (w *Writer[D]) Update(f func(D)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(w.doc)
}

// parts returns the shared parts; the caller holds the lock.
func (w *Writer[D]) parts() Parts { return w.doc.Parts() }

// SetLicence records the resolved licence of the run.
func (w *Writer[D]) SetLicence(res licence.Resolution) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parts().Header.SetLicence(res)
}

// SetConfig records one configuration value (flags after config-file
// defaults were applied).
func (w *Writer[D]) SetConfig(key string, value any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parts().Config[key] = value
}

// SetUnit says what the input counts count when not files
// (Statistics.Unit).
func (w *Writer[D]) SetUnit(unit string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parts().Statistics.Unit = unit
}

// AddInputs adds n to the number of input files.
func (w *Writer[D]) AddInputs(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parts().Statistics.InputFilesTotal += n
}

// Processed adds n successfully processed inputs.
func (w *Writer[D]) Processed(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parts().Statistics.SuccessfullyProcessed += n
}

// Skip records an input that gave no result and why.
func (w *Writer[D]) Skip(file, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.parts()
	// A name that is not UTF-8 is written as the tables write it (JSON
	// would give U+FFFD for its stray bytes).
	p.Trail.SkippedFilesDetail = append(p.Trail.SkippedFilesDetail, Skipped{utf8name.Escape(file), utf8name.Escape(reason)})
	p.Statistics.SkippedFiles = len(p.Trail.SkippedFilesDetail)
}

// CountOutput adds n outputs of a kind ("csv" rows, "png", "json", "xml").
func (w *Writer[D]) CountOutput(kind string, n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parts().Statistics.OutputCountsByType[kind] += n
}

// AddOutputFile records files the run wrote.
func (w *Writer[D]) AddOutputFile(paths ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.parts()
	p.Trail.Outputs = append(p.Trail.Outputs, paths...)
}

// Warn records a warning.
func (w *Writer[D]) Warn(msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.parts()
	p.Trail.Warnings = append(p.Trail.Warnings, msg)
}

// AddInterrupted records an earlier run this run continued that had been
// interrupted (MarkInterrupted).
func (w *Writer[D]) AddInterrupted(i Interrupted) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.parts()
	p.Trail.Interrupted = append(p.Trail.Interrupted, i)
}

// KeptBefore adds to the statistics' DoneBefore what a resumed run kept
// from the ledger (Before); the counts themselves are the caller's to add.
func (w *Writer[D]) KeptBefore(b Before) {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.parts().Statistics
	// A new value each time: views written or handed out share the old.
	st.DoneBefore = st.DoneBefore.add(b)
}

// Span records that the run's work went from start to end rather than
// from when the writer was made to when it writes: a merge of shard runs,
// which spans its first shard's start to its last shard's end. Its start
// and end times, duration and rates are then those of that span.
func (w *Writer[D]) Span(start, end time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.start, w.now = start, func() time.Time { return end }
	w.parts().Header.StartTime = start.UTC().Format(time.RFC3339Nano)
}

// Snapshot returns the document as it would be written now: end time,
// duration and rates computed as of now.
func (w *Writer[D]) Snapshot() D {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.viewLocked()
}

func (w *Writer[D]) viewLocked() D { return w.viewAt(w.now()) }

// viewAt is the document as written with the run ended at end; the caller
// holds the lock.
func (w *Writer[D]) viewAt(end time.Time) D {
	p := w.parts()
	p.Header.SetEnd(w.start, end)
	p.Statistics.PerformancePerMinute = PerMinute(p.Statistics.DoneBefore.own(p.Statistics.OutputCountsByType), end.Sub(w.start))
	return w.doc.View()
}

// Flush writes the current state atomically. Writes take turns, so an
// older state never replaces a newer one.
func (w *Writer[D]) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return WriteJSON(w.path, w.viewLocked())
}

// Finish records the outcome (failed with runErr's message when runErr is
// not nil) and writes the file. It returns the write error, if any.
func (w *Writer[D]) Finish(runErr error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parts().Header.SetOutcome(runErr)
	return WriteJSON(w.path, w.viewLocked())
}

// Encode records the outcome (as Finish) and returns the document as it
// would be written, the run ended at end, without writing it: the run
// metadata of a run recorded elsewhere (a service's job, kept in its job
// store).
func (w *Writer[D]) Encode(runErr error, end time.Time) ([]byte, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.parts().Header.SetOutcome(runErr)
	b, err := json.MarshalIndent(w.viewAt(end), "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// RecordInterrupted takes the earlier runs this run continues whose
// processes have ended (ended: their ledger files no live process holds,
// ledger.Ended, in the order they began), finds their run metadata (metaOf
// of each ledger file), marks those that still say "running" (killed with
// SIGKILL, or crashed) as interrupted, continued by this run (by: its run
// id), and lists them in this run's metadata: every one in resumed_from,
// with its status, those it marked in interrupted_runs too. A file that
// cannot be updated is logged and passed over.
func (w *Writer[D]) RecordInterrupted(log *slog.Logger, by string, ended []string, metaOf func(ledgerFile string) string) {
	for _, p := range ended {
		meta := metaOf(p)
		finished, ferr := ledger.Finished(p)
		if ferr != nil {
			finished = -1
		}
		in, ok, err := MarkInterrupted(meta, by, finished)
		if err != nil {
			log.Warn("run metadata of an earlier run not updated", "file", meta, "error", err.Error())
		}
		if ok {
			log.Warn("an earlier run of these inputs was interrupted (its run metadata still said running): recorded as interrupted", "run", in.RunID, "file", meta)
			w.AddInterrupted(in)
		}
		e := earlier(meta, p)
		e.ItemsFinished = finished
		w.mu.Lock()
		t := w.parts().Trail
		t.ResumedFrom = append(t.ResumedFrom, e)
		w.mu.Unlock()
	}
}

// earlier is what the run metadata at meta of the run of ledger file led
// says of it: run id and status; without a readable file, the run id is the
// stamp its ledger file is named by and the status "unknown" (the run's own
// id, RunIDFor(stamp), was in the file: the stamp says which run it was,
// and matches no run id of a record).
func earlier(meta, led string) Earlier {
	stamp, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(meta), ".json"), "_") // a stamp holds no "_"
	e := Earlier{File: meta, Ledger: led, Status: "unknown", RunID: stamp}
	var doc struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	if b, err := os.ReadFile(meta); err == nil && json.Unmarshal(b, &doc) == nil && doc.Status != "" {
		e.Status = doc.Status
		if doc.RunID != "" {
			e.RunID = doc.RunID
		}
	}
	return e
}

// MetaBeside returns, for RecordInterrupted, the run metadata in dir of a
// run whose ledger file is named after it: <name>.jsonl ↔ <name>.json
// (the translator's <stamp>_translator[_shard-<i>-of-<n>]).
func MetaBeside(dir string) func(ledgerFile string) string {
	return func(f string) string {
		return filepath.Join(dir, strings.TrimSuffix(filepath.Base(f), ".jsonl")+".json")
	}
}

// ClassifierMeta returns, for RecordInterrupted, the classifier's run
// metadata in dir (FileName of the stamp) of a ledger file named
// <stamp>.jsonl (a shard's stamp ends -shard-<i>-of-<n>; ledger files of
// earlier versions added _shard-<i>-of-<n> after it, which is dropped).
func ClassifierMeta(dir string) func(ledgerFile string) string {
	return func(f string) string {
		stamp := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		if i := strings.Index(stamp, "_shard-"); i >= 0 {
			stamp = stamp[:i]
		}
		return filepath.Join(dir, FileName(stamp))
	}
}

// ShardRun is the run metadata of one shard run read for a merge (both
// tools' --merge): its file, its share and its document (a tool's Doc).
type ShardRun[D Doc[D]] struct {
	Path string
	Spec shard.Spec
	Doc  D
}

// Meta is what shard.Select reads of the run: its status and times, its
// configuration and the number of inputs of its share.
func (s ShardRun[D]) Meta() shard.Run {
	p := s.Doc.Parts()
	return shard.Run{Path: s.Path, Spec: s.Spec, Status: p.Header.Status, Start: p.Header.StartTime, End: p.Header.EndTime,
		Config: p.Config, Inputs: p.Statistics.InputFilesTotal}
}

// Entry is the run's entry in the merged run's config.merged_shards: its
// share, file, run id, the version (and commit, when known) of the tool
// that ran it, status and times, the inputs it processed and
// skipped, those it took from the ledger, the earlier completed runs of its
// share it continued (supersedes, when any: shard.Select's), and the tool's
// own keys in extra.
func (s ShardRun[D]) Entry(supersedes []string, extra map[string]any) map[string]any {
	p := s.Doc.Parts()
	e := map[string]any{"shard": s.Spec.String(), "run_metadata": s.Path, "run_id": p.Header.RunID, "tool_version": p.Header.ToolVersion,
		"status": p.Header.Status, "start_time": p.Header.StartTime, "end_time": p.Header.EndTime,
		"processed": p.Statistics.SuccessfullyProcessed, "skipped": p.Statistics.SkippedFiles,
		"items_from_ledger": p.Config["items_from_ledger"]}
	if p.Header.ToolCommit != "" {
		e["tool_commit"] = p.Header.ToolCommit
	}
	for k, v := range extra {
		e[k] = v
	}
	if len(supersedes) > 0 {
		e["supersedes"] = supersedes
	}
	return e
}
