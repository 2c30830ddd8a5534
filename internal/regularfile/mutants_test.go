package regularfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without this, a socket given as an input would be named by its mode
// bits instead of "a socket", and a block device likewise.
func TestKindSocketAndBlockDevice(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.xml")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("no unix socket here: %v", err)
	}
	defer l.Close()
	if _, err := Read(sock); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a socket") {
		t.Errorf("Read of a socket: %v", err)
	}
	if got := Kind(os.ModeDevice); got != "a block device" {
		t.Errorf("Kind(block device) = %q", got)
	}
}

// Without this, a file whose read fails part-way would be returned as
// if read whole (what was read, no error).
func TestReadError(t *testing.T) {
	const p = "/proc/self/mem" // a regular file whose reads at offset 0 fail
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		t.Skip("no /proc/self/mem here")
	}
	if b, err := Read(p); err == nil {
		t.Errorf("Read(%s) = %d bytes, no error", p, len(b))
	}
}
