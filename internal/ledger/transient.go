package ledger

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// transientErrnos are the system errors of a passing condition: a full
// disk or quota, a file-size limit (EFBIG: ulimit -f; a run that met it
// was failed, exit 3, where a full disk leaves it to --resume), an I/O error, the process's or the system's limit of open
// files or processes (EMFILE, ENFILE, EAGAIN: ulimit -n, ulimit -u), and a
// network that failed under a request.
var transientErrnos = []syscall.Errno{
	syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG, syscall.EIO, syscall.EMFILE, syscall.ENFILE, syscall.EAGAIN,
	syscall.ETIMEDOUT, syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED,
	syscall.EPIPE, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN,
}

// Transient reports whether err is a passing failure that says nothing
// about the item itself: the disk was full (ENOSPC, EDQUOT), an I/O error
// (EIO), a limit of open files or processes was met (EMFILE, ENFILE,
// EAGAIN), a network operation failed or timed out, a deadline passed, or an
// error in its chain says so with a method Transient() bool (a remote
// service's answer of HTTP 429 or 5xx after every retry, for example).
// Such an item is not recorded in the ledger: it stays to do, and a
// --resume does it. Any other error is the item's own (bad input) and is
// recorded as failed. A cancelled context is neither: the caller handles
// an interrupted run.
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var t interface{ Transient() bool }
	if errors.As(err, &t) {
		return t.Transient()
	}
	for _, e := range transientErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	var op *net.OpError
	var dns *net.DNSError
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) ||
		errors.As(err, &op) || errors.As(err, &dns)
}
