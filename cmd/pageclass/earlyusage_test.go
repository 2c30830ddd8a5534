package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrorsWriteNothing: a -ff naming no format pageclass reads, a
// bad --shard, and a config file's files_format naming none, are usage
// errors before anything is written (they left a results folder with the
// run metadata of a failed run), the config file's naming its key and file.
func TestUsageErrorsWriteNothing(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	bad := newEnv(t, map[string]string{"SETUP.files_format": "bmpx"})
	for _, c := range []struct {
		e    *env
		args []string
		want string
	}{
		{e, []string{"-ff", "bmpx"}, ".bmpx is not a format pageclass reads"},
		{e, []string{"--shard", "3/2"}, "--shard: "},
		{bad, nil, ".bmpx is not a format pageclass reads (.png, .jpg, .jpeg, .tif, .tiff, .webp, .jp2, .j2k, .j2c, .pdf) (from [SETUP] files_format in " + bad.cfg + ")"},
	} {
		results := filepath.Join(e.root, fmt.Sprint("results-", len(c.args), c.args))
		code, log := c.e.run(t, append([]string{"-d", e.in, "--results", results}, c.args...)...)
		if code != exitUsage || !strings.Contains(log, c.want) {
			t.Errorf("%v: exit %d, want %d saying %q:\n%s", c.args, code, exitUsage, c.want, log)
		}
		if _, err := os.Stat(results); err == nil {
			t.Errorf("%v: the results folder was made", c.args)
		}
	}
}
