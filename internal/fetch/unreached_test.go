package fetch

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

// TestUnreached: a server never reached is told by its error, wrapped as
// net and url errors wrap it; any other error is not.
func TestUnreached(t *testing.T) {
	dial := func(err error) error { return fmt.Errorf("Get x: %w", &net.OpError{Op: "dial", Net: "tcp", Err: err}) }
	for _, c := range []struct {
		err  error
		why  Unreachability
		host string
	}{
		{nil, NotUnreached, ""},
		{dial(syscall.ECONNREFUSED), ConnRefused, ""},
		{dial(&net.DNSError{Err: "no such host", Name: "gone.example", IsNotFound: true}), NoSuchHost, "gone.example"},
		{dial(syscall.ENETUNREACH), NoRoute, ""},
		{dial(syscall.ECONNRESET), NotUnreached, ""},
		{errors.New("HTTP 503"), NotUnreached, ""},
	} {
		if why, host := Unreached(c.err); why != c.why || host != c.host {
			t.Errorf("Unreached(%v) = %v %q, want %v %q", c.err, why, host, c.why, c.host)
		}
	}
}
