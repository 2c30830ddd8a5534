package regularfile

import (
	"errors"
	"io/fs"
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

// ReadSized reads what Read reads from a file whose size tells its
// content, refuses what Open refuses, and refuses a file holding more
// bytes than its size (a /proc file, size 0) or fewer (a /sys file, size
// 4096): a file written to while read looks like these.
func TestReadSized(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "model.pt")
	want := strings.Repeat("weights ", 10000)
	if err := os.WriteFile(plain, []byte(want), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadSized(plain); err != nil || string(b) != want {
		t.Errorf("%s: %d bytes, %v; want its %d bytes", plain, len(b), err, len(want))
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadSized(empty); err != nil || len(b) != 0 {
		t.Errorf("empty file: %d bytes, %v", len(b), err)
	}
	if _, err := ReadSized(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("directory: %v, want ErrNotRegular", err)
	}
	if _, err := ReadSized(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	for _, c := range []struct{ path, says string }{
		{"/proc/self/status", "more than the 0 bytes"},
		{"/sys/devices/system/cpu/online", "its size said 4096"},
	} {
		if st, err := os.Stat(c.path); err != nil || !st.Mode().IsRegular() {
			t.Logf("%s: not here", c.path)
			continue
		}
		_, err := ReadSized(c.path)
		if !errors.Is(err, ErrSizeChanged) || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v, want ErrSizeChanged saying %q", c.path, err, c.says)
		}
	}
}

// A link whose target does not exist is said to be one, naming the target
// ("no such file or directory" named a file a listing shows); the error
// is still fs.ErrNotExist.
func TestBrokenLink(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "page-1.png")
	if err := os.Symlink("../scans/page-1.png", link); err != nil {
		t.Fatal(err)
	}
	_, err := Read(link)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "a link to ../scans/page-1.png, which does not exist") {
		t.Errorf("Read of a broken link: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "none.png")); !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "link") {
		t.Errorf("Read of a missing file: %v", err)
	}
}
