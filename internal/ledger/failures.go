package ledger

import (
	"archivekit/internal/utf8name"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"archivekit/internal/atomicfile"
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
	return atomicfile.Write(path, 0o666, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(FailuresHeader)
		for _, f := range rows {
			// A name that is not UTF-8 is written as the tables write it.
			cw.Write([]string{utf8name.Escape(f.File), utf8name.Escape(f.Error)})
		}
		cw.Flush()
		return cw.Error()
	})
}

// ReadFailures reads a failures table written by WriteFailures.
func ReadFailures(path string) ([]Failure, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != strings.Join(FailuresHeader, ",") {
		return nil, fmt.Errorf("%s: not a failures table (want the header %s)", path, strings.Join(FailuresHeader, ","))
	}
	out := make([]Failure, 0, len(recs)-1)
	for _, r := range recs[1:] {
		out = append(out, Failure{File: r[0], Error: r[1]})
	}
	return out, nil
}
