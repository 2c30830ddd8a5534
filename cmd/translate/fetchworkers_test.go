package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --fetch-workers: flag, then config fetch_workers, then
// TRANSLATE_FETCH_WORKERS, then 4; a value outside 1 to 32 is a usage
// error naming where it came from.
func TestFetchWorkersSetting(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.txt")
	os.WriteFile(cfg, []byte("[translate]\nfetch_workers = 6\n"), 0o644)
	for _, c := range []struct {
		name string
		args []string
		env  env
		want int
		from string
	}{
		{"default", nil, nil, 4, "default"},
		{"environment", nil, env{EnvFetchWorkers: "2"}, 2, EnvFetchWorkers},
		{"config over environment", []string{"-c", cfg}, env{EnvFetchWorkers: "2"}, 6, "config fetch_workers"},
		{"flag over config", []string{"-c", cfg, "--fetch-workers", "1"}, nil, 1, "--fetch-workers"},
	} {
		s, _, err := parse(append([]string{"in"}, c.args...), c.env.get, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s.FetchWorkers != c.want || s.FetchWorkersFrom != c.from {
			t.Errorf("%s: %d from %s, want %d from %s", c.name, s.FetchWorkers, s.FetchWorkersFrom, c.want, c.from)
		}
	}
	for _, bad := range []struct {
		args []string
		env  env
		name string
	}{
		{[]string{"--fetch-workers", "0"}, nil, "--fetch-workers"},
		{[]string{"--fetch-workers", "33"}, nil, "--fetch-workers"},
		{nil, env{EnvFetchWorkers: "four"}, EnvFetchWorkers},
	} {
		if _, _, err := parse(append([]string{"in"}, bad.args...), bad.env.get, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), bad.name) {
			t.Errorf("%v %v: %v, want a usage error naming %s", bad.args, bad.env, err, bad.name)
		}
	}
}
