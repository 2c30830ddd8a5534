package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
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

// TestStorageFull: the job store's errors of a full disk or quota are
// told (answered 507 storage_full, not 500 internal): ENOSPC and EDQUOT
// in the chain, PostgreSQL's disk_full, and SQLite's SQLITE_FULL, made
// here by a database capped at a few pages; other errors are not.
func TestStorageFull(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "full.db")+"?_pragma=max_page_count(8)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var full error
	if _, err := db.Exec(`CREATE TABLE t (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100 && full == nil; i++ {
		_, full = db.Exec(`INSERT INTO t VALUES (?)`, make([]byte, 4096))
	}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("job x: %w", full), true},
		{&os.PathError{Op: "write", Path: "in/0", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("keep: %w", syscall.EDQUOT), true},
		{fmt.Errorf("insert: %w", &pgconn.PgError{Code: pgDiskFull}), true},
		{&pgconn.PgError{Code: "23505"}, false},
		{syscall.EIO, false},
		{errors.New("no space left on device"), false}, // only as text: not told
	} {
		if got := storageFull(c.err); got != c.want {
			t.Errorf("storageFull(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestLinked: a job's items run several at once only when no queued item
// joins its neighbour: an item after a joined one done in an earlier run
// still needs that one's summary, so it links too.
func TestLinked(t *testing.T) {
	joins := func(a, b int) bool { return a == 1 && b == 2 }
	for _, c := range []struct {
		states []string
		want   bool
	}{
		{[]string{Queued, Queued, Queued, Queued}, true},
		{[]string{Succeeded, Succeeded, Queued, Queued}, true}, // item 2 needs item 1's summary
		{[]string{Queued, Queued, Succeeded, Queued}, true},    // item 1 is queued and joins item 2
		{[]string{Queued, Succeeded, Succeeded, Queued}, false},
	} {
		items := make([]item, len(c.states))
		for i, s := range c.states {
			items[i] = item{Index: i, State: s}
		}
		if got := linked(items, joins); got != c.want {
			t.Errorf("%v: linked %v, want %v", c.states, got, c.want)
		}
	}
	if linked([]item{{State: Queued}, {State: Queued}}, nil) {
		t.Error("no joins: linked")
	}
}
