// Package shard splits the inputs of a batch run between machines: with
// --shard i/n, each of n runs takes the inputs whose key hashes to i, so the
// n runs together take every input exactly once, whatever order each
// machine lists a folder in, and without talking to each other.
//
// The key of an input is its path relative to the run's input folder, with
// forward slashes (Key), so machines that mount the shared folder at
// different places agree.
package shard

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strconv"
	"strings"
)

// Spec is one share of a run: Index of Count, Index from 0 (the numbering
// of a Kubernetes Indexed Job's JOB_COMPLETION_INDEX). The zero Spec is the
// whole run.
type Spec struct {
	Index, Count int
}

// Parse reads "i/n" with 0 <= i < n. The empty string is the whole run.
func Parse(s string) (Spec, error) {
	if s == "" {
		return Spec{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, errI := strconv.Atoi(strings.TrimSpace(a))
	n, errN := strconv.Atoi(strings.TrimSpace(b))
	if !ok || errI != nil || errN != nil {
		return Spec{}, fmt.Errorf("shard %q: want i/n, e.g. 0/4", s)
	}
	if n < 1 || i < 0 || i >= n {
		return Spec{}, fmt.Errorf("shard %q: want 0 <= i < n (shards are numbered from 0)", s)
	}
	return Spec{Index: i, Count: n}, nil
}

// Whole reports whether the spec is the whole run (no --shard, or 0/1).
func (s Spec) Whole() bool { return s.Count <= 1 }

// String is "i/n", or "" for the whole run.
func (s Spec) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// FileSuffix is what the files of one share's run add to their names:
// "_shard-<i>-of-<n>", or "" for the whole run.
func (s Spec) FileSuffix() string {
	if s.Whole() {
		return ""
	}
	return fmt.Sprintf("_shard-%d-of-%d", s.Index, s.Count)
}

// Has reports whether the input with this key belongs to the share: the
// 64-bit FNV-1a hash of the key, modulo Count, is Index.
func (s Spec) Has(key string) bool {
	if s.Whole() {
		return true
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	return h.Sum64()%uint64(s.Count) == uint64(s.Index)
}

// Key is the shard key of a file found under root: its path relative to
// root with forward slashes. A path outside root keys by its cleaned path.
func Key(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		rel = filepath.Clean(path)
	}
	return filepath.ToSlash(rel)
}
