package results

import (
	"encoding/csv"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fullDisk is a table file whose next write stops half-way with ENOSPC, as
// a write does when the disk fills up during it.
type fullDisk struct{ *os.File }

func (f fullDisk) Write(b []byte) (int, error) {
	n, _ := f.File.Write(b[:len(b)/2])
	return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
}

// A chunk cut short by a full disk leaves no torn row: the table read
// mid-run holds its header and whole rows only, the error says ENOSPC, and
// the rows not written are written by Close once there is room. Before, half
// a row stayed at the end of the file.
func TestChunkRowsWholeOnFullDisk(t *testing.T) {
	p := filepath.Join(t.TempDir(), "chunk.csv")
	l, _ := TopNLayout(1, false)
	w, err := Create(p, l, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[:2] {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	openAppend = func(path string) (appendFile, error) {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		return fullDisk{f}, err
	}
	w.Add(rows[2])
	err = w.Add(rows[3])
	openAppend = func(path string) (appendFile, error) { return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0) }
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the chunk's error %v, want ENOSPC", err)
	}
	b, _ := os.ReadFile(p)
	if !strings.HasSuffix(string(b), "\n") {
		t.Errorf("the table ends in a torn row:\n%q", b)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("the table read mid-run: %d records, %v:\n%s", len(recs), err, b)
	}
	closeWithAll(t, w, l, rows[4:])
}

// closeWithAll adds rest to w, closes it and checks that its file is the
// table of all rows.
func closeWithAll(t *testing.T, w *Writer, l Layout, rest []Row) {
	t.Helper()
	for _, r := range rest {
		if err := w.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(w.Path())
	if want := writeAll(t, l, rows); string(got) != want {
		t.Errorf("closed file:\n%s\nwant\n%s", got, want)
	}
}
