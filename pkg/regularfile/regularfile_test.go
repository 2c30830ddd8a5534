package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "a.xml")
	if err := os.WriteFile(plain, []byte("<a/>"), 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.xml")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe.xml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.xml")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, want string // want: content, or the kind in the error
	}{
		{plain, "<a/>"},
		{link, "<a/>"},
		{zero, "a character device"},
		{dir, "a directory"},
		{fifo, "a named pipe"},
	} {
		b, err := Read(tc.path)
		if err != nil {
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Errorf("%s: %v, want content or ErrNotRegular naming %q", tc.path, err, tc.want)
			}
			continue
		}
		if string(b) != tc.want {
			t.Errorf("%s: read %q, want %q", tc.path, b, tc.want)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing.xml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

// TestReadWholeWhenSizeIsZero: a regular file whose size reads 0 but that
// has content (as under Linux's /proc) is read to its end.
func TestReadWholeWhenSizeIsZero(t *testing.T) {
	const p = "/proc/self/status"
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		t.Skip("no /proc file with size 0 here")
	}
	data, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "Name:") {
		t.Errorf("read %d bytes of %s, want its whole text", len(data), p)
	}
}
