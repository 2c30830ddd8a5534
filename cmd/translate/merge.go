package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"archivekit/internal/cliflags"
	"archivekit/internal/ledger"
	"archivekit/internal/licence"
	"archivekit/internal/paradata"
	"archivekit/internal/shard"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
	"archivekit/internal/utf8name"
)

// mergeSame are the configuration values every shard of one run must share.
// The ledger key covers the program version, languages, mode, backend and
// what it points at, fast alignment, the field list and the vocabulary.
var mergeSame = []string{"ledger_key", "formats", "shard_inputs_all", "mode", "output_mode", "translation_backend"}

// mergeDrop are the shard runs' values that describe one shard only.
var mergeDrop = map[string]bool{"shard": true, "shard_inputs_all": true, "ledger": true, "items_from_ledger": true,
	"resume": true, "retry_failed": true, "failures_table": true, "input_path": true, "config_file": true,
	shard.InputsConfig: true, shard.FolderConfig: true}

// shardDoc is the run metadata of one shard run.
type shardDoc = paradata.ShardRun[*runmeta.Doc]

// mergeShards combines the run metadata and failures tables of the shard
// runs in the output folder (<stamp>_translator_shard-<i>-of-<n>.json) into
// one run metadata, <stamp>_translator.json, and one failures table: the
// translations of the shards are already in the one output tree. It
// returns the exit code.
func mergeShards(s *settings, comps *licence.Components, log interface {
	Info(string, ...any)
	Warn(string, ...any)
	Error(string, ...any)
}) int {
	err := func() error {
		files, err := shardFiles(s.Output, s.MergeFrom, log)
		if err != nil {
			return err
		}
		var runs []shardDoc
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			var d runmeta.Doc
			if err := json.Unmarshal(b, &d); err != nil {
				return fmt.Errorf("%s: not run metadata: %w", f, err)
			}
			v, _ := d.Config["shard"].(string)
			sp, err := shard.Parse(v)
			if err != nil || sp.Whole() {
				return fmt.Errorf("%s: config.shard %q is not a shard", f, v)
			}
			runs = append(runs, shardDoc{Path: f, Spec: sp, Doc: &d})
		}
		chosen, superseded, err := shard.Select(runs, shardDoc.Meta, "translate_", sameShardConfig, log)
		if err != nil {
			return err // with its exit code (shard.Select)
		}
		if err := gather(s.Output, s.DownloadDir, chosen, log); err != nil {
			return err
		}
		return writeMerged(s, comps, chosen, superseded, log)
	}()
	var ue cliflags.UsageError
	var nr cliflags.NotReadyError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		log.Error("usage error", "error", err)
		return exitUsage
	case errors.As(err, &nr):
		log.Error("merge not possible yet", "error", err)
		return exitIncomplete
	default:
		log.Error("merge failed", "error", err)
		return exitFailure
	}
}

// shardFiles lists the shard run metadata in out and in the folders dirs,
// once each: a run's file copied into out by an earlier merge is taken
// from out. A folder of dirs that holds none (the input folder, given as
// the command that ran the shards had it) is passed over, said in the log:
// a shard missing for it is refused by the merge.
func shardFiles(out string, dirs []string, log interface{ Info(string, ...any) }) ([]string, error) {
	glob := func(dir string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, "*_translator_shard-*-of-*.json"))
		return m
	}
	files := glob(out)
	have := map[string]string{}
	for _, f := range files {
		have[filepath.Base(f)] = f
	}
	for _, dir := range dirs {
		if sameDir(dir, out) {
			continue
		}
		m := glob(dir)
		if len(m) == 0 {
			log.Info("--merge: no shard run metadata in this folder: passed over", "folder", dir)
			continue
		}
		for _, f := range m {
			if prev, ok := have[filepath.Base(f)]; ok {
				a, _ := os.ReadFile(prev)
				b, _ := os.ReadFile(f)
				if !bytes.Equal(a, b) {
					return nil, cliflags.Usage(fmt.Errorf("--merge: %s and %s are two runs of one name", prev, f))
				}
				continue
			}
			have[filepath.Base(f)] = f
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, cliflags.Usage(fmt.Errorf("--merge: no shard run metadata (*_translator_shard-<i>-of-<n>.json) in %s", strings.Join(append([]string{out}, dirs...), ", ")))
	}
	return files, nil
}

// sameShardConfig refuses a shard run b that is not of a's run: another
// program version or configuration (mergeSame). A run whose share was empty
// set up nothing, so only its version and the whole run's input count are
// compared.
func sameShardConfig(a, b shardDoc) error {
	if a.Doc.ToolVersion != b.Doc.ToolVersion {
		return fmt.Errorf("shards of different program versions: %s is %s, %s is %s", a.Path, a.Doc.ToolVersion, b.Path, b.Doc.ToolVersion)
	}
	for _, k := range mergeSame {
		if (a.Doc.Statistics.InputFilesTotal == 0 || b.Doc.Statistics.InputFilesTotal == 0) && k != "shard_inputs_all" {
			continue
		}
		va, _ := json.Marshal(a.Doc.Config[k])
		vb, _ := json.Marshal(b.Doc.Config[k])
		if string(va) != string(vb) {
			return fmt.Errorf("shards of different configurations: %s has %s = %s, %s has %s", a.Path, k, va, b.Path, vb)
		}
	}
	return nil
}

// writeMerged writes the merged run metadata and failures table; superseded
// names, for a merged shard run, the earlier completed runs of its shard it
// continued.
func writeMerged(s *settings, comps *licence.Components, runs []shardDoc, superseded map[string][]string, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) error {
	var failures []ledger.Failure
	for _, r := range runs {
		if p, _ := r.Doc.Config["failures_table"].(string); p != "" {
			fs, err := ledger.ReadFailures(filepath.Join(filepath.Dir(r.Path), filepath.Base(p)))
			if err != nil {
				return err
			}
			failures = append(failures, fs...)
		}
	}
	first := runs[0].Doc // the configuration of a shard that had inputs
	for _, r := range runs {
		if r.Doc.Statistics.InputFilesTotal > 0 {
			first = r.Doc
			break
		}
	}
	d := *first // a copy: the shards' documents are read below
	d.Config = map[string]any{}
	for k, v := range first.Config {
		if !mergeDrop[k] {
			d.Config[k] = v
		}
	}
	st := runmeta.NewStatistics()
	var start, end time.Time
	var used []string
	var list []map[string]any
	seenWarn := map[string]bool{}
	d.Trail = paradata.NewTrail() // the shards' lists, and no interrupted runs (each shard lists its own)
	terms := map[string]runmeta.TermRate{}
	var attempts []map[string]any
	attemptCalls := 0
	seenAttempt := map[string]bool{}
	for _, r := range runs {
		x := r.Doc
		list = append(list, r.Entry(superseded[r.Path], map[string]any{"input_path": x.Config["input_path"],
			"inputs": x.Statistics.InputFilesTotal}))
		xs := x.Statistics
		addStatistics(&st, xs)
		for _, a := range interruptedAttempts(x, seenAttempt, log) {
			// A killed attempt of the shard, continued by the run merged:
			// its calls were made (and paid for) too.
			st.BackendCalls += a.calls
			attemptCalls += a.calls
			attempts = append(attempts, map[string]any{"run_id": a.runID, "file": a.file, "backend_calls": a.calls})
		}
		if xs.Terminology != nil {
			for k, v := range xs.Terminology.Documents {
				terms[k] = runmeta.NewTermRate(terms[k].Expected+v.Expected, terms[k].Hit+v.Hit)
			}
		}
		d.SkippedFilesDetail = append(d.SkippedFilesDetail, x.SkippedFilesDetail...)
		d.Outputs = append(d.Outputs, x.Outputs...)
		for _, w := range x.Warnings {
			if !seenWarn[w] {
				seenWarn[w] = true
				d.Warnings = append(d.Warnings, w)
			}
		}
		for _, c := range x.LicenseDetail.Components {
			used = append(used, c.Name)
		}
		if t, err := time.Parse(time.RFC3339Nano, x.StartTime); err == nil && (start.IsZero() || t.Before(start)) {
			start = t
		}
		if t, err := time.Parse(time.RFC3339Nano, x.EndTime); err == nil && t.After(end) {
			end = t
		}
	}
	if len(terms) > 0 {
		st.Terminology = runmeta.NewTerminology(terms)
	}
	if len(attempts) > 0 {
		d.Config["interrupted_attempts"] = attempts
		d.Config["backend_calls_of_interrupted_attempts"] = attemptCalls
	}
	st.PerformancePerMinute = paradata.PerMinute(st.OutputCountsByType, end.Sub(start))
	// The tags of the merged languages, as a run's metadata has them (a
	// merge had none).
	if target, ok := d.Config["target_lang"].(string); ok {
		st.LanguageTags, _, _ = langtag.ForSources(target, st.Languages)
	}
	d.Statistics = st
	for i, o := range d.Outputs {
		d.Outputs[i] = utf8name.Escape(o) // a shard's outputs gathered here are named as on disk
	}
	sort.Strings(d.Outputs)
	d.SetLicence(translator.Resolve(comps, used))
	d.StartTime = start.UTC().Format(time.RFC3339Nano)
	d.SetEnd(start, end)
	// As a whole run: one that translated nothing is a failure (spec 4.1),
	// written, then exit 3.
	var runErr error
	if st.SuccessfullyProcessed == 0 && st.InputFilesTotal > 0 {
		runErr = errors.New("no document was translated")
	}
	d.SetOutcome(runErr)

	name := func(stamp string) string { return stamp + "_translator.json" }
	stamp, err := paradata.Claim(s.Output, time.Now().Format(stampLayout), name)
	if err != nil {
		return err
	}
	d.RunID = paradata.RunIDFor(stamp)
	path := filepath.Join(s.Output, name(stamp))
	fpath := filepath.Join(s.Output, stamp+"_translator_failures.csv")
	if err := ledger.WriteFailures(fpath, failures); err != nil {
		os.Remove(path)
		return err
	}
	d.Config["failures_table"] = fpath
	d.Config["output_dir"] = s.Output // the shards' own, for shards merged from folders of their own
	d.Config["merged_shards"] = list
	d.Config["shards"] = len(runs)
	// The shards wrote their names escaped; the paths added here (shard
	// files, the output folder) are escaped as a run's are (View).
	d.Config = runmeta.EscapeConfig(d.Config)
	if err := paradata.WriteJSON(path, d); err != nil {
		return err
	}
	log.Info("merged run metadata written", "path", path, "shards", len(runs), "processed", st.SuccessfullyProcessed, "skipped", st.SkippedFiles)
	log.Info("failures table written", "path", fpath, "rows", len(failures))
	return runErr
}

// attempt is a killed attempt of a shard that the merged run continued:
// its run metadata file, run id and backend calls.
type attempt struct {
	file, runID string
	calls       int
}

// interruptedAttempts reads the run metadata of the runs x continued that
// had been killed (interrupted_runs), and of those they continued in turn,
// each file once (seen). A file that cannot be read is logged and left out.
func interruptedAttempts(x *runmeta.Doc, seen map[string]bool, log interface{ Warn(string, ...any) }) []attempt {
	var out []attempt
	queue := append([]paradata.Interrupted(nil), x.Interrupted...)
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if seen[it.File] {
			continue
		}
		seen[it.File] = true
		b, err := os.ReadFile(it.File)
		var d runmeta.Doc
		if err == nil {
			err = json.Unmarshal(b, &d)
		}
		if err != nil {
			log.Warn("an interrupted attempt's run metadata cannot be read: its backend calls are not counted", "file", it.File, "error", err.Error())
			continue
		}
		out = append(out, attempt{file: it.File, runID: it.RunID, calls: d.Statistics.BackendCalls})
		queue = append(queue, d.Interrupted...)
	}
	return out
}

// addStatistics adds a shard run's statistics xs to st (terminology and
// the performance rate are made by the caller).
func addStatistics(st *runmeta.Statistics, xs runmeta.Statistics) {
	st.InputFilesTotal += xs.InputFilesTotal
	st.SuccessfullyProcessed += xs.SuccessfullyProcessed
	st.SkippedFiles += xs.SkippedFiles
	st.BackendCalls += xs.BackendCalls
	st.TransportErrors += xs.TransportErrors
	st.LineCountMismatches += xs.LineCountMismatches
	st.Pages += xs.Pages
	st.UnitsTranslated += xs.UnitsTranslated
	st.UnitsSkipped += xs.UnitsSkipped
	st.DocumentsWithoutText += xs.DocumentsWithoutText
	st.WithoutText = append(st.WithoutText, xs.WithoutText...)
	st.PlaceholderCalls += xs.PlaceholderCalls
	st.PlaceholderFallbacks += xs.PlaceholderFallbacks
	for k, v := range xs.OutputCountsByType {
		st.OutputCountsByType[k] += v
	}
	for k, v := range xs.DocumentKinds {
		if st.DocumentKinds == nil {
			st.DocumentKinds = map[string]int{}
		}
		st.DocumentKinds[k] += v
	}
	for k, v := range xs.Languages {
		st.Languages[k] += v
	}
	for k, v := range xs.SegmentStatus {
		st.SegmentStatus[k] += v
	}
	for k, v := range xs.LangSources {
		st.LangSources[k] += v
	}
	st.Books = runmeta.MergeBooks(st.Books, xs.Books)
}
