package shard

import (
	"errors"
	"fmt"
	"strings"
)

// Part is the run of one shard found for a merge: its share, a name for
// messages (its run-metadata file) and whether it completed.
type Part struct {
	Spec      Spec
	Name      string
	Status    string
	Completed bool
}

// ErrIncomplete is wrapped by Choose's error when a share has no completed
// run.
var ErrIncomplete = errors.New("shard did not complete")

// Choose picks, for each share 0/n … n-1/n, the one completed part, and
// returns their positions in parts in share order. Parts of different
// counts, a share completed twice (the shards overlap), a share with no
// completed run (only failed or running ones: ErrIncomplete) and a share
// with no run at all are errors naming the parts. Failed or unfinished runs
// of a share that also has a completed one are passed over (an Indexed
// Job's retries leave them).
func Choose(parts []Part) ([]int, error) {
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
	var chosen []int
	var missing []string
	for i := 0; i < n; i++ {
		var done, other []string
		pick := -1
		for _, k := range byIndex[i] {
			if parts[k].Completed {
				done = append(done, parts[k].Name)
				pick = k
			} else {
				other = append(other, fmt.Sprintf("%s (%s)", parts[k].Name, parts[k].Status))
			}
		}
		switch {
		case len(done) > 1:
			return nil, fmt.Errorf("shard %d/%d is there %d times (%s): the shards overlap; keep the run metadata of one and move the others away", i, n, len(done), strings.Join(done, ", "))
		case len(done) == 0 && len(other) > 0:
			return nil, fmt.Errorf("shard %d/%d: %w: %s; finish it with --shard %d/%d --resume (same input, configuration and output folder)", i, n, ErrIncomplete, strings.Join(other, ", "), i, n)
		case len(done) == 0:
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
			continue
		}
		chosen = append(chosen, pick)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing shards %s of %d (found %d)", strings.Join(missing, ", "), n, len(chosen))
	}
	return chosen, nil
}
