package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"
)

type flagged bool

func (f flagged) Error() string   { return "flagged" }
func (f flagged) Transient() bool { return bool(f) }

func TestTransient(t *testing.T) {
	// A real ENOSPC, from the kernel: a write to /dev/full.
	var full error
	if f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil {
		_, full = f.Write([]byte("x"))
		f.Close()
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"bad input", errors.New("not well-formed XML: line 1"), false},
		{"missing file", fmt.Errorf("read: %w", fs.ErrNotExist), false},
		{"ENOSPC wrapped", &fs.PathError{Op: "write", Path: "out.xml", Err: syscall.ENOSPC}, true},
		{"file size limit (ulimit -f)", &fs.PathError{Op: "write", Path: "ledger/x.jsonl", Err: syscall.EFBIG}, true},
		{"EIO", fmt.Errorf("page 3: %w", &fs.PathError{Op: "read", Path: "a.tif", Err: syscall.EIO}), true},
		{"connection reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true},
		// ulimit -n and ulimit -u: the process's limits, not the item
		{"EMFILE", fmt.Errorf("decoder processes: %w", &os.SyscallError{Syscall: "pipe2", Err: syscall.EMFILE}), true},
		{"EAGAIN fork", fmt.Errorf("cannot start: %w", &os.SyscallError{Syscall: "fork/exec", Err: syscall.EAGAIN}), true},
		{"deadline", fmt.Errorf("chunk 1: %w", context.DeadlineExceeded), true},
		{"cancelled", fmt.Errorf("chunk 1: %w", context.Canceled), false},
		{"says transient", fmt.Errorf("backend: %w", flagged(true)), true},
		{"says permanent", fmt.Errorf("backend: %w", flagged(false)), false},
	} {
		if got := Transient(c.err); got != c.want {
			t.Errorf("%s: Transient(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
	if full != nil && !Transient(fmt.Errorf("output: %w", full)) {
		t.Errorf("a write to /dev/full (%v) is not transient", full)
	}
}
