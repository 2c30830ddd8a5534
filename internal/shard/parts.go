package shard

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Part is the run of one shard found for a merge: its share, a name for
// messages (its run-metadata file) and whether it completed, with what
// tells a continuation of an earlier run of the share from an independent
// one: the ledger folder it read and wrote, whether it continued from it
// (--resume, --retry-failed) and when it started and ended.
type Part struct {
	Spec      Spec
	Name      string
	Status    string
	Completed bool
	// Ledger is the run's ledger folder ("" when it has none): the folder
	// of its configuration key beside its run metadata.
	Ledger string
	// Resumed is set when the run took what the ledger recorded before it
	// started (--resume, --retry-failed) into its results.
	Resumed bool
	// Empty is set when the run's share held no input (it wrote only its
	// run metadata).
	Empty bool
	// Start and End are the run's times (zero when not recorded).
	Start, End time.Time
	// Inputs is the digest of the whole input list the run's share was
	// cut from (InputsDigest; "" in run metadata that predate it), and
	// Folder the input it was collected from, for messages.
	Inputs, Folder string
}

// InputsConfig and FolderConfig are the run-metadata config keys of a
// shard run's InputsDigest and input folder.
const (
	InputsConfig = "shard_inputs_digest"
	FolderConfig = "shard_input"
	// TriedConfig is set (true) by a run that tried every input of its
	// share and failed only for having no output (every document already
	// in the target language, every page unreadable): its share is done,
	// and a merge takes it as a completed one (a --resume of it would only
	// fail again, so the merge could never be made).
	TriedConfig = "all_inputs_tried"
)

// InputsDigest is the SHA-256 (hex) of the sorted shard keys (Key) of
// every input of a sharded run, before the shares are cut: runs of one
// sharded run agree on it; runs over another input list do not.
func InputsDigest(keys []string) string {
	k := append([]string(nil), keys...)
	sort.Strings(k)
	h := sha256.New()
	for _, s := range k {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RunPart is the Part of the run metadata at path of a shard spec: status,
// start and end times (RFC 3339) and config as the run recorded them
// (config.ledger_key, config.resume, config.retry_failed, config.chunk),
// inputs the number of inputs of its share, and ledgerPrefix the tool's
// prefix of a ledger folder name ("pageclass_"). The ledger folder is
// found where the run wrote it, <folder of the run metadata>/ledger/<prefix><key>,
// so runs on machines that mount the output folder at different places
// agree.
func RunPart(path string, spec Spec, status, start, end string, config map[string]any, ledgerPrefix string, inputs int) Part {
	tried, _ := config[TriedConfig].(bool)
	p := Part{Spec: spec, Name: path, Status: status, Completed: status == "completed" || status == "failed" && tried, Empty: inputs == 0}
	p.Start, _ = time.Parse(time.RFC3339Nano, start)
	p.End, _ = time.Parse(time.RFC3339Nano, end)
	p.Inputs, _ = config[InputsConfig].(string)
	p.Folder, _ = config[FolderConfig].(string)
	for _, k := range []string{"resume", "retry_failed", "chunk"} {
		if b, _ := config[k].(bool); b {
			p.Resumed = true
		}
	}
	if key, _ := config["ledger_key"].(string); key != "" {
		dir, err := filepath.Abs(filepath.Dir(path))
		if err != nil {
			dir = filepath.Dir(path)
		}
		p.Ledger = filepath.Join(dir, "ledger", ledgerPrefix+key)
	}
	return p
}

// Pick is the part chosen for one share, and the completed parts of the
// same share it supersedes (positions in the parts given to Choose).
type Pick struct {
	Part       int
	Supersedes []int
}

// ErrIncomplete is wrapped by Choose's error when a share has no completed
// run: only failed or running ones, or none found (the shard has not run
// yet, or its folder was not named).
var ErrIncomplete = errors.New("shard did not complete")

// notRun wraps the error naming the shards with no run in ErrIncomplete,
// keeping its message.
type notRun struct{ error }

func (m notRun) Unwrap() []error { return []error{m.error, ErrIncomplete} }

// Choose picks, for each share 0/n … n-1/n, the completed part to merge,
// and returns the picks in share order. Parts of different counts, a share
// with no completed run (only failed or running ones) and a share with no
// run at all (both ErrIncomplete) are errors naming the parts. Failed or
// unfinished runs of a share that also has a completed one are passed over
// (an Indexed Job's retries leave them).
//
// A share completed more than once is taken from its latest completed run
// when that run continues the others: it was started with --resume or
// --retry-failed on the same ledger after each of them had ended, so what
// they recorded is in its results (a shard resumed, or retried by an
// Indexed Job, after an earlier run of it had completed). Any other share
// completed twice (two independent runs, another ledger, runs at the same
// time) is an error: the shards overlap. Two runs whose share held no input
// have nothing to overlap: the later is taken.
func Choose(parts []Part) ([]Pick, error) {
	if len(parts) == 0 {
		return nil, errors.New("no shard run")
	}
	n := parts[0].Spec.Count
	byIndex := map[int][]int{}
	for i, p := range parts {
		if p.Spec.Count != n {
			return nil, fmt.Errorf("shards of different runs: %s is shard %s, %s is shard %s", parts[0].Name, parts[0].Spec, p.Name, p.Spec)
		}
		byIndex[p.Spec.Index] = append(byIndex[p.Spec.Index], i)
	}
	var chosen []Pick
	var missing []string
	for i := 0; i < n; i++ {
		var done []int
		var other []string
		for _, k := range byIndex[i] {
			if parts[k].Completed {
				done = append(done, k)
			} else {
				other = append(other, fmt.Sprintf("%s (%s)", parts[k].Name, parts[k].Status))
			}
		}
		switch {
		case len(done) == 0 && len(other) > 0:
			what := "finish it with"
			if slices.ContainsFunc(byIndex[i], func(k int) bool { return parts[k].Status == "running" }) {
				// Its metadata says running: the run goes on, or was
				// killed (SIGKILL leaves it so).
				what = "if it is still running, merge once it has ended; if it was killed, finish it with"
			}
			return nil, fmt.Errorf("shard %d/%d: %w: %s; %s --shard %d/%d --resume (same input, configuration and output folder)", i, n, ErrIncomplete, strings.Join(other, ", "), what, i, n)
		case len(done) == 0:
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
			continue
		}
		p, err := latest(parts, done)
		if err != nil {
			return nil, fmt.Errorf("shard %d/%d: %w", i, n, err)
		}
		chosen = append(chosen, p)
	}
	if len(missing) > 0 {
		return nil, notRun{fmt.Errorf("missing shards %s of %d (found %d): name the folders that hold their runs, or run them (--shard %s) first", strings.Join(missing, ", "), n, len(chosen), missing[0])}
	}
	first := parts[chosen[0].Part]
	for _, c := range chosen[1:] {
		if err := sameInputs(first, parts[c.Part]); err != nil {
			return nil, fmt.Errorf("not shards of one run: %w", err)
		}
	}
	return chosen, nil
}

// latest picks among the completed parts done of one share the latest,
// which must continue every other one.
func latest(parts []Part, done []int) (Pick, error) {
	sort.SliceStable(done, func(a, b int) bool {
		pa, pb := parts[done[a]], parts[done[b]]
		if !pa.Start.Equal(pb.Start) {
			return pa.Start.Before(pb.Start)
		}
		return pa.Name < pb.Name
	})
	last := done[len(done)-1]
	l := parts[last]
	pick := Pick{Part: last}
	for _, k := range done[:len(done)-1] {
		p := parts[k]
		var why string
		switch {
		case p.Empty && l.Empty:
			// Neither had an input: there is nothing to overlap.
		case !l.Resumed:
			why = "the later was not run with --resume or --retry-failed"
		case l.Ledger == "" || l.Ledger != p.Ledger:
			why = fmt.Sprintf("they used different ledgers (%s, %s)", orNone(p.Ledger), orNone(l.Ledger))
		case p.End.IsZero() || l.Start.IsZero() || p.End.After(l.Start):
			why = "the later started before the earlier ended"
		}
		if err := sameInputs(p, l); why == "" && err != nil {
			why = err.Error()
		}
		if why != "" {
			return Pick{}, fmt.Errorf("completed %d times (%s): %s is not a continuation of %s (%s), so the shards overlap; keep the run metadata of one and move the others away",
				len(done), names(parts, done), l.Name, p.Name, why)
		}
		pick.Supersedes = append(pick.Supersedes, k)
	}
	return pick, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func names(parts []Part, idx []int) string {
	s := make([]string, len(idx))
	for i, k := range idx {
		s[i] = parts[k].Name
	}
	return strings.Join(s, ", ")
}

// sameInputs is an error naming both runs when a and b were cut from
// different input lists (or one records its list and the other does not).
func sameInputs(a, b Part) error {
	if a.Inputs == b.Inputs {
		return nil
	}
	return fmt.Errorf("%s and %s were cut from different input lists (input %s, digest %s; input %s, digest %s)",
		a.Name, b.Name, orNone(a.Folder), orNone(a.Inputs), orNone(b.Folder), orNone(b.Inputs))
}
