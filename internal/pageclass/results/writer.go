package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"

	"archivekit/internal/atomicfile"
)

// Writer collects rows of one table and writes them to a CSV file.
//
// Without chunking (chunkSize 0) nothing touches the disk until Close,
// which writes the sorted table atomically, replacing any old file.
//
// With chunking, Create starts the file (header only, replacing an old
// one), and every chunkSize added rows are appended to it (each chunk
// sorted) as the run proceeds, so a long run leaves usable partial output;
// Close appends the rest and then rewrites the whole file sorted,
// atomically. What an interrupted run had done is the run ledger's to say
// (internal/ledger), not the old file's: a continued run adds those rows again.
type Writer struct {
	path      string
	layout    Layout
	header    []string
	chunkSize int
	records   map[Key][]string
	pending   []Key
	closed    bool
}

// ErrDuplicate is returned by Add for a key already added in this run.
var ErrDuplicate = errors.New("duplicate row key")

// Create starts a table at path. chunkSize 0 disables chunking.
func Create(path string, l Layout, chunkSize int) (*Writer, error) {
	if chunkSize < 0 {
		return nil, fmt.Errorf("%s: chunk size %d: want 0 (off) or more", path, chunkSize)
	}
	w := &Writer{path: path, layout: l, header: l.Header(), chunkSize: chunkSize, records: map[Key][]string{}}
	if chunkSize == 0 {
		return w, nil
	}
	if err := w.rewrite(); err != nil {
		return nil, err
	}
	return w, nil
}

func parseKey(rec []string) (Key, error) {
	k := Key{File: rec[0]}
	if rec[1] != "" {
		n, err := strconv.Atoi(rec[1])
		if err != nil || n < 1 {
			return k, fmt.Errorf("PAGE %q is not a page number", rec[1])
		}
		k.Page = n
	}
	return k, nil
}

// Len returns the number of rows in the table.
func (w *Writer) Len() int { return len(w.records) }

// Add adds a row; a key added twice is ErrDuplicate.
func (w *Writer) Add(r Row) error {
	if w.closed {
		return fmt.Errorf("%s: add after close", w.path)
	}
	if _, dup := w.records[r.Key]; dup {
		return fmt.Errorf("%s: %s: %w", w.path, r.Key, ErrDuplicate)
	}
	c, err := w.layout.Cells(r)
	if err != nil {
		return fmt.Errorf("%s: %w", w.path, err)
	}
	w.records[r.Key] = c
	if w.chunkSize > 0 {
		w.pending = append(w.pending, r.Key)
		if len(w.pending) >= w.chunkSize {
			return w.flushChunk()
		}
	}
	return nil
}

// flushChunk appends the pending rows, sorted, to the file.
func (w *Writer) flushChunk() error {
	if len(w.pending) == 0 {
		return nil
	}
	sortKeys(w.pending)
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	for _, k := range w.pending {
		cw.Write(w.records[k])
	}
	cw.Flush()
	f, err := openAppend(w.path)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", w.path, err)
	}
	// The chunk goes in one write. A write cut short (a full disk, a
	// quota) would leave a torn row for whoever reads the table mid-run:
	// the file is cut back to where the chunk started, so every row in it
	// is whole; the rows stay pending for the next flush or Close.
	if _, err := f.Write(buf.Bytes()); err != nil {
		if terr := f.Truncate(st.Size()); terr != nil {
			err = errors.Join(err, fmt.Errorf("a torn row may remain: %w", terr))
		}
		f.Close()
		return fmt.Errorf("%s: %w", w.path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	w.pending = w.pending[:0]
	return nil
}

// appendFile is the file a chunk is appended to.
type appendFile interface {
	io.WriteCloser
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
}

// openAppend opens a table to append a chunk (a variable so tests can make
// the disk full part-way through a write).
var openAppend = func(path string) (appendFile, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
}

// rewrite replaces the file atomically with the header and all rows, sorted.
func (w *Writer) rewrite() error {
	keys := make([]Key, 0, len(w.records))
	for k := range w.records {
		keys = append(keys, k)
	}
	sortKeys(keys)
	return atomicfile.Write(w.path, 0o666, func(out io.Writer) error {
		cw := csv.NewWriter(out)
		cw.Write(w.header)
		for _, k := range keys {
			cw.Write(w.records[k])
		}
		cw.Flush()
		return cw.Error()
	})
}

// Close writes the complete table, sorted. It is safe to call twice.
func (w *Writer) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	w.pending = nil
	return w.rewrite()
}

// Cells returns the row of key k as the table holds it (the cells Close
// writes), by column name; ok is false when no row has that key.
func (w *Writer) Cells(k Key) (cells map[string]string, ok bool) {
	rec, ok := w.records[k]
	if !ok {
		return nil, false
	}
	cells = make(map[string]string, len(rec))
	for i, c := range rec {
		cells[w.header[i]] = c
	}
	return cells, true
}

// Path returns the output file.
func (w *Writer) Path() string { return w.path }

func sortKeys(ks []Key) { sort.Slice(ks, func(i, j int) bool { return ks[i].Less(ks[j]) }) }
