package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"archivekit/internal/ledger"
)

// DefaultDatabaseWait is how long Open waits for a PostgreSQL database
// that does not answer yet when Options.DatabaseWait is zero.
const DefaultDatabaseWait = 2 * time.Minute

// The waits between attempts to reach the database: the first, doubled
// after each attempt up to the last; one attempt is bounded by
// dbAttemptTimeout.
const (
	dbFirstWait      = 500 * time.Millisecond
	dbLastWait       = 5 * time.Second
	dbAttemptTimeout = 15 * time.Second
)

// PostgreSQL's error codes that Open tells apart.
const (
	pgCannotConnectNow  = "57P03" // the database system is starting up
	pgInvalidPassword   = "28P01"
	pgInvalidAuth       = "28000" // no pg_hba.conf entry, role cannot log in
	pgInvalidCatalog    = "3D000" // the database does not exist
	pgTooManyConnection = "53300"
)

// dbAddress is the host and port the pool connects to first, for logs and
// errors (a connection string's password is never in them).
func dbAddress(cfg *pgxpool.Config) string {
	return net.JoinHostPort(cfg.ConnConfig.Host, strconv.Itoa(int(cfg.ConnConfig.Port)))
}

// acquireWaiting acquires a connection of pool, waiting for a database
// that does not answer yet: a replica started with its database (both
// made together in Kubernetes) waits for it rather than exiting. Only a
// passing failure (passing) is tried again, after a wait doubled at each
// attempt, each logged, until wait has passed since the first attempt; a
// wrong password or database fails at once.
func (q *Queue) acquireWaiting(ctx context.Context, pool *pgxpool.Pool, cfg *pgxpool.Config, wait time.Duration) (*pgxpool.Conn, error) {
	addr, db, user := dbAddress(cfg), cfg.ConnConfig.Database, cfg.ConnConfig.User
	deadline := time.Now().Add(wait)
	pause := dbFirstWait
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, min(dbAttemptTimeout, max(time.Until(deadline), time.Second)))
		conn, err := pool.Acquire(actx)
		cancel()
		if err == nil {
			if attempt > 1 {
				q.log.Info("job database answers", "address", addr, "database", db, "attempts", attempt)
			}
			return conn, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("jobs: database at %s: %w", addr, ctx.Err())
		}
		if err := refused(err, addr, db, user); err != nil {
			return nil, err
		}
		if !passing(err) {
			return nil, fmt.Errorf("jobs: database %s at %s: %w", db, addr, err)
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, fmt.Errorf("jobs: database %s at %s does not answer after %v (%d attempts; %s): %w", db, addr, wait.Round(time.Second), attempt, EnvDatabaseURL, err)
		}
		next := min(pause, left)
		q.log.Info("waiting for the job database", "address", addr, "database", db, "attempt", attempt, "next_wait", next.String(), "error", err.Error())
		t := time.NewTimer(next)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("jobs: database at %s: %w", addr, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, dbLastWait)
	}
}

// refused is the error of a database that answered and refused the
// connection for a reason of the user's own (a wrong password, a missing
// database or role): waiting does not mend it. It is nil for any other
// err.
func refused(err error, addr, db, user string) error {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code {
	case pgInvalidPassword:
		return fmt.Errorf("jobs: the job database at %s refused the password of user %q (%s): check %s and the database's Secret", addr, user, pe.Code, EnvDatabaseURL)
	case pgInvalidCatalog:
		return fmt.Errorf("jobs: the job database %q does not exist at %s (%s): create it or correct %s", db, addr, pe.Code, EnvDatabaseURL)
	case pgInvalidAuth:
		return fmt.Errorf("jobs: the job database at %s refused user %q (%s: %s): check %s", addr, user, pe.Code, pe.Message, EnvDatabaseURL)
	}
	return nil
}

// passing reports whether err, a failed connection, may mend with time:
// nothing listening yet, a name not resolved yet (a Kubernetes Service
// whose pods are not ready), a timeout, a connection cut, or a server
// still starting up (or at its connection limit).
func passing(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == pgCannotConnectNow || pe.Code == pgTooManyConnection
	}
	// The network's passing failures as everywhere else (refused, reset,
	// unreachable, a name not resolved, a timeout), and a connection the
	// server closed while starting.
	return ledger.Transient(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
