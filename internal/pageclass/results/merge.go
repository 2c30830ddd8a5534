package results

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"archivekit/internal/atomicfile"
)

// Merged is one table made of the tables of several shards of one run.
type Merged struct {
	header []string
	rows   []mergedRow
}

type mergedRow struct {
	key Key
	rec []string
}

// Len returns the number of rows.
func (m *Merged) Len() int { return len(m.rows) }

// Merge reads the tables ins (shards of one run: the same header, disjoint
// rows) and sorts their rows as a one-shot run sorts them (FILE, then
// PAGE). Tables with another header, or a row key (FILE, PAGE) found in two
// of them, are refused with an error naming both files.
func Merge(ins []string) (*Merged, error) {
	var header []string
	var headerFrom string
	var rows []mergedRow
	seen := map[Key]string{}
	for _, in := range ins {
		recs, err := ReadTable(in)
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("%s: empty file, no header", in)
		}
		if header == nil {
			header, headerFrom = recs[0], in
		} else if strings.Join(recs[0], ",") != strings.Join(header, ",") {
			return nil, fmt.Errorf("%s and %s have different columns (%s / %s): not shards of one run",
				headerFrom, in, strings.Join(header, ","), strings.Join(recs[0], ","))
		}
		if len(header) < 2 || header[0] != "FILE" || header[1] != "PAGE" {
			return nil, fmt.Errorf("%s: not a result table (its columns start %q, want FILE,PAGE)", in, strings.Join(header, ","))
		}
		for n, rec := range recs[1:] {
			k, err := parseKey(rec)
			if err != nil {
				return nil, fmt.Errorf("%s: line %d: %w", in, n+2, err)
			}
			if first, dup := seen[k]; dup {
				return nil, fmt.Errorf("row %s is in %s and in %s: the shards overlap", k, first, in)
			}
			seen[k] = in
			rows = append(rows, mergedRow{k, rec})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].key.Less(rows[j].key) })
	return &Merged{header: header, rows: rows}, nil
}

// Write writes the table to path atomically.
func (m *Merged) Write(path string) error {
	return atomicfile.Write(path, 0o666, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(m.header)
		for _, r := range m.rows {
			cw.Write(r.rec)
		}
		cw.Flush()
		return cw.Error()
	})
}

// ReadTable reads a whole CSV table; every record must have the header's
// number of fields.
func ReadTable(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	recs, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return recs, nil
}
