package ledger

import (
	"encoding/csv"
	"io"
	"sort"

	"archivekit/pkg/atomicfile"
)

// Failure is one row of a failures table: an input that gave no result
// (or only part of one), and why.
type Failure struct {
	// File is the input's path relative to the input root ("/"
	// separators), or its URL.
	File  string
	Error string
}

// FailuresHeader is the header of a failures table.
var FailuresHeader = []string{"FILE", "ERROR"}

// WriteFailures writes a failures table (FailuresHeader, then the rows
// sorted by file and error) atomically; with no failure it holds only the
// header, so every run has one to read.
func WriteFailures(path string, fs []Failure) error {
	rows := append([]Failure(nil), fs...)
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].File != rows[j].File {
			return rows[i].File < rows[j].File
		}
		return rows[i].Error < rows[j].Error
	})
	return atomicfile.Write(path, 0o644, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(FailuresHeader)
		for _, f := range rows {
			cw.Write([]string{f.File, f.Error})
		}
		cw.Flush()
		return cw.Error()
	})
}
