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
