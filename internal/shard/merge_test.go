package shard

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// logged collects what Select logs.
type logged []string

func (l *logged) Info(msg string, args ...any) {
	*l = append(*l, fmt.Sprint(append([]any{msg}, args...)...))
}

func TestSelect(t *testing.T) {
	// run is a completed shard run i/2 with inputs inputs, started at
	// minute at (and ended a minute later), resumed or not, of
	// configuration cfg.
	run := func(name string, i, inputs, at int, resumed bool, cfg string) Run {
		return Run{Path: "out/" + name + ".json", Spec: Spec{Index: i, Count: 2}, Status: "completed",
			Start: fmt.Sprintf("2026-11-23T06:%02d:00Z", at), End: fmt.Sprintf("2026-11-23T06:%02d:00Z", at+1),
			Config: map[string]any{"ledger_key": "k", "resume": resumed, "cfg": cfg}, Inputs: inputs}
	}
	// of3 makes r a share of three.
	of3 := func(r Run) Run { r.Spec.Count = 3; return r }
	for _, c := range []struct {
		name       string
		runs       []Run
		chosen     string
		superseded string
		err        string
		usage      bool
	}{
		{"two shards", []Run{run("b", 1, 3, 0, false, "x"), run("a", 0, 2, 0, false, "x")}, "[out/a.json out/b.json]", "map[]", "", false},
		// The first share held no input: the others are compared with the
		// first that had (an empty share set up nothing to compare).
		{"reference has inputs", []Run{run("a", 0, 0, 0, false, "-"), run("b", 1, 2, 0, false, "x")}, "[out/a.json out/b.json]", "map[]", "", false},
		// An empty first share is no reference: with it, nothing would be
		// compared, and shards of two configurations merged as one run.
		{"empty first share, the others differ", []Run{of3(run("a", 0, 0, 0, false, "-")), of3(run("b", 1, 2, 0, false, "x")), of3(run("c", 2, 2, 0, false, "y"))}, "", "",
			"out/b.json has x, out/c.json has y", true},
		{"other configuration", []Run{run("a", 0, 2, 0, false, "x"), run("b", 1, 2, 0, false, "y")}, "", "", "out/a.json has x, out/b.json has y", true},
		{"a continued run", []Run{run("a", 0, 2, 0, false, "x"), run("b", 1, 2, 0, false, "x"), run("b2", 1, 2, 5, true, "x")}, "[out/a.json out/b2.json]",
			"map[out/b2.json:[out/b.json]]", "", false},
		{"a continued run of another configuration", []Run{run("a", 0, 2, 0, false, "x"), run("b", 1, 2, 0, false, "y"), run("b2", 1, 2, 5, true, "x")}, "", "",
			"shard 1/2 completed twice: out/b.json has y, out/b2.json has x", true},
		{"missing", []Run{run("a", 0, 2, 0, false, "x")}, "", "", "missing shards 1/2", false},
		{"incomplete", []Run{run("a", 0, 2, 0, false, "x"), {Path: "out/b.json", Spec: Spec{1, 2}, Status: "running"}}, "", "", "did not complete", false},
	} {
		same := func(x, y Run) error {
			// Empty shares are not compared, as the tools do.
			if x.Inputs > 0 && y.Inputs > 0 && x.Config["cfg"] != y.Config["cfg"] {
				return fmt.Errorf("%s has %s, %s has %s", x.Path, x.Config["cfg"], y.Path, y.Config["cfg"])
			}
			return nil
		}
		var log logged
		chosen, sup, err := Select(c.runs, func(r Run) Run { return r }, "tool_", same, &log)
		var paths []string
		for _, r := range chosen {
			paths = append(paths, r.Path)
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || errors.Is(err, ErrUsage) != c.usage || errors.Is(err, ErrIncomplete) == c.usage {
				t.Errorf("%s: error %v (usage %v), want %q (usage %v)", c.name, err, errors.Is(err, ErrUsage), c.err, c.usage)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if fmt.Sprint(paths) != c.chosen || fmt.Sprint(sup) != c.superseded {
			t.Errorf("%s: chosen %v superseded %v, want %s %s", c.name, paths, sup, c.chosen, c.superseded)
		}
		if len(sup) != len(log) {
			t.Errorf("%s: logged %q for %v passed over", c.name, log, sup)
		}
	}
}
