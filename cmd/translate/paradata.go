package main

import (
	"path/filepath"
	"slices"
	"time"

	"archivekit/internal/licence"
	"archivekit/internal/paradata"
	"archivekit/internal/shard"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
)

// stampLayout is the layout of the run's stamp in its output names.
const stampLayout = paradata.StampLayout

// runRecord is the run metadata of one run (internal/translate/runmeta),
// written atomically at start, after every document and at the end, so a
// run that fails part-way leaves a complete file describing what happened
// up to then.
type runRecord struct {
	*runmeta.Run
	path  string
	stamp string
	usage *translator.Usage
}

func newRunRecord(dir string, start time.Time, sh shard.Spec, comps *licence.Components, usage *translator.Usage, getenv func(string) string) (*runRecord, error) {
	name := func(stamp string) string { return stamp + "_translator" + sh.FileSuffix() + ".json" }
	stamp, err := paradata.Claim(dir, start.Format(stampLayout), name)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name(stamp))
	info := paradata.NewInfo(getenv)
	info.RunID = paradata.RunIDFor(stamp)
	return &runRecord{Run: runmeta.New(path, start, info, comps, usage), path: path, stamp: stamp, usage: usage}, nil
}

// shard labels the run metadata of one share of a sharded run: the share,
// the input count of the whole run, the digest of its input list
// (shard.InputsDigest, which --merge compares) and the input it was
// collected from, in its configuration (the share is in its file name from
// newRunRecord, so the n runs of one batch started in the same second on a
// shared output folder write n files).
func (p *runRecord) shard(s shard.Spec, total int, inputs, from string) {
	p.SetConfig("shard", s.String())
	p.SetConfig("shard_inputs_all", total)
	p.SetConfig(shard.InputsConfig, inputs)
	p.SetConfig(shard.FolderConfig, from)
}

// outputs are the files the run wrote (and kept), named as they are: the
// run metadata's outputs as written (Snapshot) have a name that is not
// UTF-8 escaped, \xNN, which names no file.
func (p *runRecord) outputs() []string {
	var out []string
	p.Update(func(d *runmeta.Doc) { out = slices.Clone(d.Outputs) })
	return out
}

func (p *runRecord) output(kind, file string) {
	p.CountOutput(kind, 1)
	p.AddOutputFile(file)
}

// thisRunOnly are the statistics a resumed run counts of its own work
// only: the ledger does not record them for the inputs it keeps.
var thisRunOnly = []string{"units_translated", "units_skipped", "backend_calls", "transport_errors",
	"line_count_mismatches", "pages", "segment_status", "lang_sources", "placeholder_calls",
	"placeholder_fallbacks", "terminology", "books"}

// kept records an input whose outputs a resumed run keeps from an earlier
// run (restored), and counts it, with its document and log, in the
// statistics' done_before.
func (p *runRecord) kept(name string, d itemData, files ...string) {
	p.restored(name, d, files...)
	p.KeptBefore(paradata.Before{Files: 1, SuccessfullyProcessed: 1,
		OutputCountsByType: map[string]int{d.Kind.OutputType(): 1, "csv": 1}, ThisRunOnly: thisRunOnly})
}

// failedBefore counts in done_before the inputs a resumed run kept failed.
func (p *runRecord) failedBefore(n int) {
	if n > 0 {
		p.KeptBefore(paradata.Before{Failed: n, ThisRunOnly: thisRunOnly})
	}
}
