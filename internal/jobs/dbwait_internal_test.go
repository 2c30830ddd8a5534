package jobs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPassing: the failures Open waits out (the database not there yet)
// and those it reports at once (the user's own).
func TestPassing(t *testing.T) {
	dial := func(err error) error {
		return fmt.Errorf("dial error: %w", &net.OpError{Op: "dial", Net: "tcp", Err: err})
	}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), true},
		{"name not found yet", fmt.Errorf("hostname resolving error: %w", errors.Join(&net.DNSError{Err: "no such host", Name: "jobs-postgres", IsNotFound: true})), true},
		{"attempt timed out", fmt.Errorf("connect: %w", context.DeadlineExceeded), true},
		{"starting up", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{"wrong password", &pgconn.PgError{Code: "28P01"}, false},
		{"missing database", &pgconn.PgError{Code: "3D000"}, false},
		{"syntax", &pgconn.PgError{Code: "42601"}, false},
		{"other", errors.New("tls: failed to verify certificate"), false},
	} {
		if got := passing(c.err); got != c.want {
			t.Errorf("%s: passing = %v, want %v", c.name, got, c.want)
		}
	}
}
