package ledger

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
)

type flagged bool

func (f flagged) Error() string   { return "flagged" }
func (f flagged) Transient() bool { return bool(f) }

// TestTransient: a passing condition (a full disk, a network that failed,
// a deadline) is transient, an item's own error is not. If it failed, an
// input that met a dropped connection or a timeout would be recorded in the
// ledger as failed and skipped by every --resume, or a broken input retried
// forever.
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
		{"deadline itself", context.DeadlineExceeded, true},
		// An HTTP request past its deadline: url.Error, a net.Error whose
		// Timeout() is false here (its Err is a wrapped error), holds the
		// deadline deeper in its chain.
		{"deadline under a request", &url.Error{Op: "Post", URL: "https://api.example/v1", Err: fmt.Errorf("dial: %w", context.DeadlineExceeded)}, true},
		{"timeout of a read", &fs.PathError{Op: "read", Path: "|0", Err: os.ErrDeadlineExceeded}, true},
		// A network operation that failed, whatever its errno.
		{"dial failed", &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.EADDRNOTAVAIL}}, true},
		{"no such host", fmt.Errorf("post: %w", &net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}), true},
		// The errnos of a passing condition, outside a net.OpError.
		{"EPIPE", fmt.Errorf("send: %w", &os.SyscallError{Syscall: "write", Err: syscall.EPIPE}), true},
		{"EHOSTUNREACH", &os.SyscallError{Syscall: "connect", Err: syscall.EHOSTUNREACH}, true},
		{"ENETUNREACH", &os.SyscallError{Syscall: "connect", Err: syscall.ENETUNREACH}, true},
		{"ENETDOWN", &os.SyscallError{Syscall: "connect", Err: syscall.ENETDOWN}, true},
		{"ECONNREFUSED", &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}, true},
		{"ECONNABORTED", &os.SyscallError{Syscall: "read", Err: syscall.ECONNABORTED}, true},
		{"EDQUOT", &fs.PathError{Op: "write", Path: "out.xml", Err: syscall.EDQUOT}, true},
		{"ENFILE", &fs.PathError{Op: "open", Path: "a.tif", Err: syscall.ENFILE}, true},
		{"not permitted", &fs.PathError{Op: "open", Path: "a.tif", Err: syscall.EACCES}, false},
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
