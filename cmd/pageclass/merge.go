package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/summary"
	"archivekit/internal/paradata"
	"archivekit/internal/shard"
)

// shardRun is the run metadata of one shard run.
type shardRun = paradata.ShardRun[*paradata.Document]

// mergeSame are the configuration values every shard of one run must share:
// what decides the rows and the tables (models are compared by digest
// separately). The input folder may be mounted anywhere, so it is not one.
var mergeSame = []string{"topn", "raw", "best", "no_average_best", "save_intermediates", "file_format",
	"inner", "page_from_name", "shard_files_all", "chunk", "fastcls", "precision"}

// mergeDrop are the shard runs' values that describe one shard only.
var mergeDrop = map[string]bool{"shard": true, "shard_files_all": true, "ledger": true, "ledger_key": true,
	"results": true, "items_from_ledger": true, "resume": true, "retry_failed": true, "chunk_key": true,
	"directory": true, "config_file": true, "device": true, "merge": true, "merge_from": true,
	shard.InputsConfig: true, shard.FolderConfig: true}

// merger is the --merge mode: it combines the tables of finished shard
// runs.
type merger struct{ *runner }

// mergePlan is what a merge takes: the shard runs chosen, and by the path
// of each the earlier completed runs of its share it continued.
type mergePlan struct {
	chosen     []shardRun
	superseded map[string][]string
	// tables are the shards' tables by name without the stamp (suffixes,
	// sorted); merged, failures and sum what they add up to.
	tables   map[string][]string
	suffixes []string
	merged   map[string]*results.Merged
	failures []ledger.Failure
	sum      *summary.Summary
}

// planMerge reads and chooses the shard runs of c.MergeFrom (results
// folders, whose shard run metadata are all taken, or run-metadata files)
// and reads and merges their tables, all before the merge starts its own
// run metadata, so a refused merge writes nothing. Shards of different
// configurations or models and a shard given twice are usage errors; a
// shard missing or not completed, one that may run again later
// (cliflags.NotReadyError, exit 75); shards that wrote different tables
// and a row in two shards, failures.
func (r *runner) planMerge() (*mergePlan, error) {
	runs, err := shardRuns(r.cli.MergeFrom)
	if err != nil {
		return nil, err
	}
	chosen, superseded, err := shard.Select(runs, shardRun.Meta, "pageclass_", sameConfig, r.log)
	if err != nil {
		return nil, err // with its exit code (shard.Select)
	}
	// The tables, by name without the stamp.
	tables := map[string][]string{}
	var shape string
	for _, s := range chosen {
		var names []string
		for _, o := range s.Doc.Outputs {
			base := filepath.Base(o)
			if !strings.HasSuffix(base, ".csv") {
				continue // document records are per document: they stay where they are
			}
			at := strings.IndexByte(base, '_')
			if at < 0 {
				continue
			}
			suffix := base[at:]
			names = append(names, suffix)
			tables[suffix] = append(tables[suffix], filepath.Join(filepath.Dir(s.Path), base))
		}
		if len(names) == 0 {
			continue // an empty share writes no table
		}
		sort.Strings(names)
		if got := strings.Join(names, " "); shape == "" {
			shape = got
		} else if got != shape {
			return nil, fmt.Errorf("%s lists the tables %s, another shard %s: not shards of one run", s.Path, got, shape)
		}
	}
	if len(tables) == 0 {
		return nil, errors.New("the shards wrote no table")
	}
	suffixes := make([]string, 0, len(tables))
	for s := range tables {
		suffixes = append(suffixes, s)
	}
	sort.Strings(suffixes)
	// Every table is read and checked before any is written.
	merged := map[string]*results.Merged{}
	var failures []ledger.Failure
	var sum *summary.Summary
	for _, suffix := range suffixes {
		if suffix == "_"+summary.TableName {
			if sum, err = mergeSummaries(tables[suffix]); err != nil {
				return nil, err
			}
			continue
		}
		if suffix == "_"+FailuresTable {
			for _, in := range tables[suffix] {
				fs, err := ledger.ReadFailures(in)
				if err != nil {
					return nil, err
				}
				failures = append(failures, fs...)
			}
			continue
		}
		m, err := results.Merge(tables[suffix])
		if err != nil {
			return nil, err
		}
		merged[suffix] = m
	}
	return &mergePlan{chosen: chosen, superseded: superseded, tables: tables, suffixes: suffixes,
		merged: merged, failures: failures, sum: sum}, nil
}

// merge writes the tables r.plan merged as this run's, sorted as a
// one-shot run sorts them, and records the shards in this run's metadata.
func (r *merger) merge() error {
	c := r.cli
	p := r.plan
	merged, sum, failures, suffixes := p.merged, p.sum, p.failures, p.suffixes
	chosen, superseded, tables := p.chosen, p.superseded, p.tables
	for _, suffix := range suffixes {
		out := filepath.Join(c.Results, r.stamp+suffix)
		m := merged[suffix]
		if suffix == "_"+summary.TableName {
			r.para.SetSummary(sum.Filled())
			logSummary(r.runner, sum)
			if err := sum.WriteTable(out); err != nil {
				return err
			}
			r.para.AddOutputFile(out)
			r.log.Info("summary table written", "path", out)
			continue
		}
		if m == nil {
			if err := ledger.WriteFailures(out, failures); err != nil {
				return err
			}
			r.para.AddOutputFile(out)
			r.log.Info("failures table written", "path", out, "rows", len(failures))
			continue
		}
		if err := m.Write(out); err != nil {
			return err
		}
		r.para.AddOutputFile(out)
		r.para.CountOutput("csv", m.Len())
		r.log.Info("table written", "path", out, "rows", m.Len(), "shards", len(tables[suffix]))
	}
	r.recordMerged(chosen, superseded)
	return nil
}

// recordMerged makes this run's metadata that of the whole run: the shards'
// configuration, models, licence, counts, skipped files and warnings, and
// the list of shard runs merged (with the earlier completed runs of the same
// shard each continued, superseded).
func (r *merger) recordMerged(runs []shardRun, superseded map[string][]string) {
	// A shard whose share was empty loaded no model and recorded no review
	// or licence: the models are those of the first shard that ran them.
	first := runs[0].Doc
	for _, s := range runs {
		if len(s.Doc.Models) > 0 {
			first = s.Doc
			break
		}
	}
	for k, v := range first.Config {
		if !mergeDrop[k] {
			r.para.SetConfig(k, v)
		}
	}
	var list []map[string]any
	seenWarn := map[string]bool{}
	var start, end time.Time // the shards' span: the merged run's times and rates
	for _, s := range runs {
		d := s.Doc
		if t, err := time.Parse(time.RFC3339Nano, d.StartTime); err == nil && (start.IsZero() || t.Before(start)) {
			start = t
		}
		if t, err := time.Parse(time.RFC3339Nano, d.EndTime); err == nil && t.After(end) {
			end = t
		}
		list = append(list, s.Entry(superseded[s.Path], map[string]any{
			"input_files": d.Statistics.InputFilesTotal, "device": d.Config["device"]}))
		r.para.AddInputs(d.Statistics.InputFilesTotal)
		r.para.Processed(d.Statistics.SuccessfullyProcessed)
		for _, sk := range d.SkippedFilesDetail {
			r.para.Skip(sk.File, sk.Reason)
		}
		for _, w := range d.Warnings {
			if !seenWarn[w] {
				seenWarn[w] = true
				r.para.Warn(w)
			}
		}
	}
	for k, v := range first.Review {
		r.para.SetReview(k, v)
	}
	r.para.SetConfig("merged_shards", list)
	r.para.SetConfig("shards", len(runs))
	if !start.IsZero() && !end.Before(start) {
		r.para.Span(start, end)
	}
	for _, m := range first.Models {
		r.para.AddModel(m)
	}
	r.para.SetLicence(first.LicenseDetail)
}

// shardRuns reads the run metadata of the shard runs: every
// *_page-classification.json with a shard in each folder given (other runs
// there, a one-shot or a merge, are passed over), and each file given.
func shardRuns(from []string) ([]shardRun, error) {
	var out []shardRun
	read := map[string]bool{} // a run metadata named twice (a folder and its file, or a folder twice) is read once
	for _, arg := range from {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, usagef("--merge: %v", err)
		}
		files := []string{arg}
		if st.IsDir() {
			files, _ = filepath.Glob(filepath.Join(arg, "*_"+paradata.Program+".json"))
		}
		found := 0
		for _, f := range files {
			abs, _ := filepath.Abs(f)
			if read[abs] {
				found++ // the folder holds a shard run, taken once already
				continue
			}
			read[abs] = true
			b, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			var d paradata.Document
			if err := json.Unmarshal(b, &d); err != nil {
				return nil, fmt.Errorf("%s: not run metadata: %w", f, err)
			}
			spec, _ := d.Config["shard"].(string)
			if spec == "" {
				if !st.IsDir() {
					return nil, usagef("%s is not the run metadata of a shard (no config.shard): give the shards' run metadata or their results folders", f)
				}
				continue
			}
			s, err := shard.Parse(spec)
			if err != nil {
				return nil, fmt.Errorf("%s: config.shard: %w", f, err)
			}
			out = append(out, shardRun{Path: f, Spec: s, Doc: &d})
			found++
		}
		if found == 0 {
			return nil, usagef("--merge: no shard run metadata (*_%s.json with config.shard) in %s", paradata.Program, arg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// mergeSummaries adds the shards' summary tables. The readable files not
// collected are the input folder's, which every shard saw whole: they are
// taken from the first shard, not added.
func mergeSummaries(paths []string) (*summary.Summary, error) {
	sum := &summary.Summary{}
	for i, p := range paths {
		s, err := summary.ReadTable(p)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			s.NotCollected = nil
		}
		sum.Add(s)
	}
	return sum, nil
}

// sameConfig refuses shards whose models (by digest) or table options
// differ, naming the first difference.
func sameConfig(a, b shardRun) error {
	models := func(d *paradata.Document) string {
		var s []string
		for _, m := range d.Models {
			s = append(s, m.Revision+"="+m.Digest)
		}
		return strings.Join(s, ", ")
	}
	// A shard whose share was empty loaded no model.
	if ma, mb := models(a.Doc), models(b.Doc); ma != mb && ma != "" && mb != "" {
		return fmt.Errorf("shards of different models: %s ran %s, %s ran %s", a.Path, ma, b.Path, mb)
	}
	if a.Doc.ToolVersion != b.Doc.ToolVersion {
		return fmt.Errorf("shards of different program versions: %s is %s, %s is %s", a.Path, a.Doc.ToolVersion, b.Path, b.Doc.ToolVersion)
	}
	// review names the digest of a review entry (the orientation model, the
	// doubt calibration) of a shard run, "none" when it had none.
	review := func(d *paradata.Document, k string) string {
		m, _ := d.Review[k].(map[string]any)
		if m == nil {
			return "none"
		}
		return fmt.Sprint(m["digest"])
	}
	if ra, rb := review(a.Doc, "rotation_model"), review(b.Doc, "rotation_model"); ra != rb && len(a.Doc.Models) > 0 && len(b.Doc.Models) > 0 {
		return fmt.Errorf("shards of different orientation models: %s ran %s, %s ran %s", a.Path, ra, b.Path, rb)
	}
	// The merged review table and run metadata carry one calibration: a
	// calibration file written between shard runs would mix flags.
	if ca, cb := review(a.Doc, "calibration"), review(b.Doc, "calibration"); ca != cb && len(a.Doc.Models) > 0 && len(b.Doc.Models) > 0 {
		return fmt.Errorf("shards of different doubt calibrations: %s applied %s, %s applied %s", a.Path, ca, b.Path, cb)
	}
	for _, k := range mergeSame {
		va, _ := json.Marshal(a.Doc.Config[k])
		vb, _ := json.Marshal(b.Doc.Config[k])
		if string(va) != string(vb) {
			return fmt.Errorf("shards of different configurations: %s has %s = %s, %s has %s", a.Path, k, va, b.Path, vb)
		}
	}
	return nil
}
