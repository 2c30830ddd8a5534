package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"archivekit/pkg/results"
)

// inputSet is what a run classifies: files under a root folder, which the
// FILE column is relative to.
type inputSet struct {
	Root  string
	Files []string
	// Exts are the collected extensions (lower case, with the dot).
	Exts []string
}

// extAliases are extensions collected together.
var extAliases = map[string][]string{
	".jpg":  {".jpg", ".jpeg"},
	".jpeg": {".jpg", ".jpeg"},
	".tif":  {".tif", ".tiff"},
	".tiff": {".tif", ".tiff"},
}

// parseExts turns "png" or "png,pdf" (dots optional) into lower-case
// extensions with the dot, aliases included.
func parseExts(list string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, e := range strings.Split(list, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		all := extAliases[e]
		if all == nil {
			all = []string{e}
		}
		for _, a := range all {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-ff/--file_format: no extension in %q", list)
	}
	return out, nil
}

// collect finds the inputs: -f one file (any extension), -d or --dir a folder
// (files whose extension is one of exts, sorted by path, nested folders
// only with inner). Hidden files and folders (".name") are skipped.
func collect(file, dir string, exts []string, inner bool) (*inputSet, error) {
	if file != "" {
		st, err := os.Stat(file)
		if err != nil {
			return nil, noInputError{fmt.Errorf("input file: %w", err)}
		}
		if st.IsDir() {
			return nil, noInputError{fmt.Errorf("input file %s is a folder (use -d)", file)}
		}
		return &inputSet{Root: filepath.Dir(file), Files: []string{file}, Exts: exts}, nil
	}
	if dir == "" {
		return nil, noInputError{errors.New("no input: give -f FILE, -d DIR or --dir")}
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, noInputError{fmt.Errorf("input folder: %w", err)}
	}
	if !st.IsDir() {
		return nil, noInputError{fmt.Errorf("input folder %s is not a folder (use -f for one file)", dir)}
	}
	want := map[string]bool{}
	for _, e := range exts {
		want[e] = true
	}
	set := &inputSet{Root: dir, Exts: exts}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if !inner {
				return filepath.SkipDir
			}
			return nil
		}
		if want[strings.ToLower(filepath.Ext(p))] {
			set.Files = append(set.Files, p)
		}
		return nil
	})
	if err != nil {
		return nil, noInputError{fmt.Errorf("reading input folder: %w", err)}
	}
	sort.Strings(set.Files)
	if len(set.Files) == 0 {
		return nil, noInputError{fmt.Errorf("no %s files in %s%s", strings.Join(exts, "/"), dir, map[bool]string{true: " or its sub-folders", false: " (nested folders not searched: --inner)"}[inner])}
	}
	return set, nil
}

// isPDF reports whether an input is read as a PDF (by extension: its rows
// are keyed by page number).
func isPDF(path string) bool { return strings.EqualFold(filepath.Ext(path), ".pdf") }

// rowKey is the output row key of page (1-based) of file.
func rowKey(root, file string, page int) (results.Key, error) {
	if isPDF(file) {
		return results.PDFKey(root, file, page)
	}
	return results.ImageKey(root, file)
}

// chunkStamp replaces the time stamp in output names of a chunked run: it is
// derived from the input (absolute root, extensions, inner, the single file),
// so a re-run over the same input finds and continues the same files.
func chunkStamp(set *inputSet, file string, inner bool) string {
	root, err := filepath.Abs(set.Root)
	if err != nil {
		root = set.Root
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%v\x00%s", root, strings.Join(set.Exts, ","), inner, file)
	return "chunk-" + hex.EncodeToString(h.Sum(nil))[:10]
}
