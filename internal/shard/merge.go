package shard

import (
	"errors"
	"fmt"

	"archivekit/internal/cliflags"
)

// Run is the run metadata of one shard run as a merge reads it: its file,
// its share, and what RunPart takes of it (status, start and end times,
// configuration, the number of inputs of its share).
type Run struct {
	Path       string
	Spec       Spec
	Status     string
	Start, End string
	Config     map[string]any
	Inputs     int
}

// ErrUsage is wrapped by Select's errors that say the runs given are not
// the shards of one run (every error but ErrIncomplete's): a usage mistake.
var ErrUsage = errors.New("not the shards of one run")

// usage wraps err in ErrUsage, keeping err's message.
type usage struct{ error }

func (u usage) Unwrap() []error { return []error{u.error, ErrUsage} }

// Logger is where Select says which runs it passed over.
type Logger interface {
	Info(msg string, args ...any)
}

// Select chooses the shard runs of a merge, both tools' --merge, among
// runs (a tool's run-metadata documents; meta tells what a merge reads of
// one): Choose over their Parts (RunPart, with the tool's ledger folder
// prefix, such as "translate_"), then every chosen run must agree with a
// reference run, the first chosen one whose share had inputs (a run whose
// share was empty set up nothing), and a completed run that a later one
// continued with that later one; same(a, b) compares two runs and names the
// first difference. It returns the chosen runs in share order and, by the
// path of a chosen run, the earlier completed runs of its share it
// continued (logged as passed over). An error other than ErrIncomplete's
// wraps ErrUsage. The errors carry the tools' exit codes (package
// cliflags): ErrIncomplete's is a cliflags.NotReadyError (75: merge again
// later), ErrUsage's a cliflags.UsageError (1).
func Select[R any](runs []R, meta func(R) Run, ledgerPrefix string, same func(a, b R) error, log Logger) ([]R, map[string][]string, error) {
	parts := make([]Part, len(runs))
	ms := make([]Run, len(runs))
	for i, r := range runs {
		ms[i] = meta(r)
		m := ms[i]
		parts[i] = RunPart(m.Path, m.Spec, m.Status, m.Start, m.End, m.Config, ledgerPrefix, m.Inputs)
	}
	picked, err := Choose(parts)
	if err != nil {
		if errors.Is(err, ErrIncomplete) {
			return nil, nil, cliflags.NotReady(err)
		}
		return nil, nil, cliflags.Usage(usage{err})
	}
	ref := picked[0].Part
	for _, p := range picked {
		if ms[p.Part].Inputs > 0 {
			ref = p.Part
			break
		}
	}
	chosen := make([]R, 0, len(picked))
	superseded := map[string][]string{}
	for _, p := range picked {
		b := ms[p.Part]
		if err := same(runs[ref], runs[p.Part]); err != nil {
			return nil, nil, cliflags.Usage(usage{err})
		}
		// A run continued by a later one must be of the same configuration.
		for _, k := range p.Supersedes {
			if err := same(runs[k], runs[p.Part]); err != nil {
				return nil, nil, cliflags.Usage(usage{fmt.Errorf("shard %s completed twice: %w", b.Spec, err)})
			}
			superseded[b.Path] = append(superseded[b.Path], ms[k].Path)
			log.Info("shard completed before and continued by a later run: the later is merged", "shard", b.Spec.String(), "merged", b.Path, "passed_over", ms[k].Path)
		}
		chosen = append(chosen, runs[p.Part])
	}
	return chosen, superseded, nil
}
