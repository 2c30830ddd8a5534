package shard

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestChoose(t *testing.T) {
	part := func(i, n int, status string) Part {
		return Part{Spec: Spec{Index: i, Count: n}, Name: fmt.Sprintf("run-%d-%s", i, status), Status: status, Completed: status == "completed"}
	}
	for _, c := range []struct {
		name   string
		parts  []Part
		chosen string
		err    string
	}{
		{"in any order", []Part{part(2, 3, "completed"), part(0, 3, "completed"), part(1, 3, "completed")}, "[1 2 0]", ""},
		{"a failed try beside its retry", []Part{part(0, 2, "completed"), part(1, 2, "failed"), part(1, 2, "completed")}, "[0 2]", ""},
		{"missing", []Part{part(0, 3, "completed")}, "", "missing shards 1/3, 2/3 of 3"},
		{"twice", []Part{part(0, 2, "completed"), part(0, 2, "completed"), part(1, 2, "completed")}, "", "the shards overlap"},
		{"unfinished", []Part{part(0, 2, "completed"), part(1, 2, "running")}, "", "did not complete"},
		{"other count", []Part{part(0, 2, "completed"), part(1, 3, "completed")}, "", "shards of different runs"},
		{"none", nil, "", "no shard run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Choose(c.parts)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				if c.name == "unfinished" && !errors.Is(err, ErrIncomplete) {
					t.Errorf("not ErrIncomplete: %v", err)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != c.chosen {
				t.Errorf("Choose = %v, %v; want %s", got, err, c.chosen)
			}
		})
	}
}
