package shard

import (
	"errors"
	"fmt"
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

// Select chooses the shard runs of a merge, both tools' --merge: Choose
// over the runs' Parts (RunPart, with the tool's ledger folder prefix, such
// as "translate_"), then every chosen run must agree with a reference run,
// the first chosen one whose share had inputs (a run whose share was empty
// set up nothing), and a completed run that a later one continued with
// that later one; same(a, b) compares two runs (positions in runs) and
// names the first difference. It returns the chosen runs in share order and,
// by the path of a chosen run, the earlier completed runs of its share it
// continued (logged as passed over). An error other than ErrIncomplete's
// wraps ErrUsage.
func Select(runs []Run, ledgerPrefix string, same func(a, b int) error, log Logger) ([]int, map[string][]string, error) {
	parts := make([]Part, len(runs))
	for i, r := range runs {
		parts[i] = RunPart(r.Path, r.Spec, r.Status, r.Start, r.End, r.Config, ledgerPrefix, r.Inputs)
	}
	picked, err := Choose(parts)
	if err != nil {
		if errors.Is(err, ErrIncomplete) {
			return nil, nil, err
		}
		return nil, nil, usage{err}
	}
	ref := picked[0].Part
	for _, p := range picked {
		if runs[p.Part].Inputs > 0 {
			ref = p.Part
			break
		}
	}
	chosen := make([]int, 0, len(picked))
	superseded := map[string][]string{}
	for _, p := range picked {
		b := runs[p.Part]
		if err := same(ref, p.Part); err != nil {
			return nil, nil, usage{err}
		}
		// A run continued by a later one must be of the same configuration.
		for _, k := range p.Supersedes {
			if err := same(k, p.Part); err != nil {
				return nil, nil, usage{fmt.Errorf("shard %s completed twice: %w", b.Spec, err)}
			}
			superseded[b.Path] = append(superseded[b.Path], runs[k].Path)
			log.Info("shard completed before and continued by a later run: the later is merged", "shard", b.Spec.String(), "merged", b.Path, "passed_over", runs[k].Path)
		}
		chosen = append(chosen, p.Part)
	}
	return chosen, superseded, nil
}
