package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"archivekit/internal/fileowner"
)

// riverClient is what the queue uses of River's client, whichever its
// driver (*sql.Tx for SQLite, pgx.Tx for PostgreSQL).
type riverClient interface {
	Start(context.Context) error
	Stop(context.Context) error
	StopAndCancel(context.Context) error
	JobCancel(context.Context, int64) (*rivertype.JobRow, error)
}

// txn is one transaction over the queue's tables and River's, so that a
// job's rows and its River job are written together.
type txn interface {
	exec(ctx context.Context, query string, args ...any) (int64, error)
	queryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error }
	// insertJob queues a River job; it returns its id.
	insertJob(ctx context.Context, args river.JobArgs) (int64, error)
}

// pgSchema is the queue's tables on PostgreSQL: schema in PostgreSQL's
// types, with the items' files and answers in the rows (input, output), so
// that every replica reads them. owner and lease_ms, the lease of the
// process running a job, are added to SQLite's tables too (openSQLite).
var pgSchema = strings.NewReplacer(
	"INTEGER PRIMARY KEY AUTOINCREMENT", "BIGSERIAL PRIMARY KEY",
	"_ms INTEGER", "_ms BIGINT",
	"river_id INTEGER", "river_id BIGINT",
	"BLOB", "BYTEA",
).Replace(schema) + `
ALTER TABLE archivekit_job ADD COLUMN IF NOT EXISTS owner TEXT, ADD COLUMN IF NOT EXISTS lease_ms BIGINT;
ALTER TABLE archivekit_item ADD COLUMN IF NOT EXISTS input BYTEA, ADD COLUMN IF NOT EXISTS output BYTEA;
CREATE INDEX IF NOT EXISTS archivekit_job_lease ON archivekit_job (lease_ms) WHERE owner IS NOT NULL;` + pgAdded()

// addedColumns are the columns added to the tables after their first
// release, for both databases: a book job's URL and the error that ended
// it, an item's source URL and book identifiers (JSON), a job's run
// metadata (JSON, written when it ends), an item's summary (JSON,
// Annotate), a failed item's reason code, the times a book job's book
// could not be read for a passing failure and its book's record
// (AnnotateBook), the API_TOKENS_FILE client that submitted a job
// (service.ClientOf; NULL without one), the search keys of an item's
// name and a job's book URL (searchKey; NULL in rows written before them),
// why a job waits after a passing failure (Paused, JSON) and the headers
// an item's answer carried beside its type and name (answerHeaders, JSON).
var addedColumns = []struct{ table, column string }{
	{"archivekit_job", "book_url TEXT"},
	{"archivekit_job", "error TEXT"},
	{"archivekit_job", "run_meta TEXT"},
	{"archivekit_item", "source TEXT"},
	{"archivekit_item", "ref TEXT"},
	{"archivekit_item", "summary TEXT"},
	{"archivekit_item", "reason TEXT"},
	{"archivekit_job", "book_reads INTEGER"},
	{"archivekit_job", "book_note TEXT"},
	{"archivekit_job", "client TEXT"},
	{"archivekit_item", "name_key TEXT"},
	{"archivekit_job", "book_key TEXT"},
	{"archivekit_job", "paused TEXT"},
	{"archivekit_item", "out_headers TEXT"},
}

// pgAdded adds addedColumns on PostgreSQL.
func pgAdded() string {
	var b strings.Builder
	for _, c := range addedColumns {
		fmt.Fprintf(&b, "\nALTER TABLE %s ADD COLUMN IF NOT EXISTS %s;", c.table, c.column)
	}
	return b.String()
}

// migrate brings River's tables up to date.
func migrate[T any](ctx context.Context, drv riverdriver.Driver[T], log *slog.Logger, schema string) error {
	m, err := rivermigrate.New(drv, &rivermigrate.Config{Logger: log, Schema: schema})
	if err == nil {
		_, err = m.Migrate(ctx, rivermigrate.DirectionUp, nil)
	}
	if err != nil {
		return fmt.Errorf("jobs: migrations: %w", err)
	}
	return nil
}

// ids reads the first column of a query's rows.
func (q *Queue) ids(ctx context.Context, query string, args ...any) ([]string, error) {
	rows, err := q.query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// bind rewrites the ? placeholders of query as $1, $2... on PostgreSQL.
// The queries have no ? inside literals.
func (q *Queue) bind(query string) string {
	if q.pool == nil {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (q *Queue) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return q.db.ExecContext(ctx, q.bind(query), args...)
}

func (q *Queue) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return q.db.QueryContext(ctx, q.bind(query), args...)
}

func (q *Queue) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return q.db.QueryRowContext(ctx, q.bind(query), args...)
}

// inTx runs f in one transaction, committed when f returns nil.
func (q *Queue) inTx(ctx context.Context, f func(txn) error) error {
	if q.pool != nil {
		tx, err := q.pool.Begin(ctx)
		if err != nil {
			return err
		}
		defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
		if err := f(pgTxn{q, tx}); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	tx, err := q.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := f(sqliteTxn{q, tx}); err != nil {
		return err
	}
	return tx.Commit()
}

type sqliteTxn struct {
	q  *Queue
	tx *sql.Tx
}

func (t sqliteTxn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t sqliteTxn) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error } {
	return t.tx.QueryRowContext(ctx, query, args...)
}

func (t sqliteTxn) insertJob(ctx context.Context, args river.JobArgs) (int64, error) {
	res, err := t.q.river.(*river.Client[*sql.Tx]).InsertTx(ctx, t.tx, args, nil)
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

type pgTxn struct {
	q  *Queue
	tx pgx.Tx
}

func (t pgTxn) exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := t.tx.Exec(ctx, t.q.bind(query), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t pgTxn) queryRow(ctx context.Context, query string, args ...any) interface{ Scan(...any) error } {
	return noRows{t.tx.QueryRow(ctx, t.q.bind(query), args...)}
}

func (t pgTxn) insertJob(ctx context.Context, args river.JobArgs) (int64, error) {
	res, err := t.q.river.(*river.Client[pgx.Tx]).InsertTx(ctx, t.tx, args, nil)
	if err != nil {
		return 0, err
	}
	return res.Job.ID, nil
}

// noRows gives pgx's "no rows" as database/sql's.
type noRows struct{ r pgx.Row }

func (n noRows) Scan(dest ...any) error {
	err := n.r.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sql.ErrNoRows
	}
	return err
}

// openSQLite opens the state folder's database and migrates it.
func (q *Queue) openSQLite(ctx context.Context) (*riversqlite.Driver, error) {
	if err := stateFiles(q.opts.Dir); err != nil {
		return nil, err
	}
	// secure_delete overwrites what is deleted (an expired job's file
	// names, fields and errors) rather than leaving it in free pages;
	// auto_vacuum lets Expire give the pages back (compact).
	dsn := "file:" + q.opts.Dir + "/jobs.db?_pragma=auto_vacuum(INCREMENTAL)&_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(FULL)&_pragma=secure_delete(ON)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("jobs: database: %w", err)
	}
	// River's SQLite driver wants one connection (SQLite runs one
	// operation at a time).
	db.SetMaxOpenConns(1)
	q.db = db
	drv := riversqlite.New(db)
	if err := migrate(ctx, drv, q.log, ""); err != nil {
		return nil, err
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, fmt.Errorf("jobs: tables: %w", err)
	}
	// The columns added since the first tables, added to a folder made
	// before them: the lease, and a book job's URL, error and items'
	// sources and identifiers.
	for _, c := range []string{"archivekit_job ADD COLUMN owner TEXT", "archivekit_job ADD COLUMN lease_ms INTEGER"} {
		if _, err := db.ExecContext(ctx, `ALTER TABLE `+c); err != nil && !strings.Contains(err.Error(), "duplicate column") {
			return nil, fmt.Errorf("jobs: tables: %w", err)
		}
	}
	for _, c := range addedColumns {
		if _, err := db.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.column); err != nil && !strings.Contains(err.Error(), "duplicate column") {
			return nil, fmt.Errorf("jobs: tables: %w", err)
		}
	}
	if err := q.claimStore(ctx); err != nil {
		return nil, err
	}
	// A database made before auto_vacuum is rebuilt with it, once (the
	// folder is ours alone, and jobs.db holds rows, not files).
	var vacuum int
	if err := db.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&vacuum); err != nil {
		return nil, fmt.Errorf("jobs: database: %w", err)
	}
	if vacuum == 0 {
		if _, err := db.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
			return nil, fmt.Errorf("jobs: database: %w", err)
		}
		if _, err := db.ExecContext(ctx, `VACUUM`); err != nil {
			return nil, fmt.Errorf("jobs: database: compacting: %w", err)
		}
	}
	// The folder is ours alone (its lock): a job River has as running was
	// left by a process killed before finishing it, one scheduled or
	// retryable was paused by a stop; all run again at once, their leases
	// void.
	if _, err := db.ExecContext(ctx, `UPDATE river_job SET state = 'available', scheduled_at = min(scheduled_at, datetime('now', 'subsec')) WHERE state IN ('running', 'scheduled', 'retryable') AND kind IN (?, ?)`, argsKind, callbackArgs{}.Kind()); err != nil {
		return nil, fmt.Errorf("jobs: taking back jobs left running: %w", err)
	}
	if _, err := db.ExecContext(ctx, `UPDATE archivekit_job SET owner = NULL, lease_ms = NULL`); err != nil {
		return nil, fmt.Errorf("jobs: taking back jobs left running: %w", err)
	}
	return drv, nil
}

// compact gives the pages of deleted rows back to the file system and
// empties the write-ahead log, so that what was deleted (overwritten by
// secure_delete) is in neither file; PostgreSQL's own VACUUM does its part
// there.
func (q *Queue) compact(ctx context.Context) error {
	if q.pool != nil || q.db == nil {
		return nil
	}
	if _, err := q.db.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
		return fmt.Errorf("jobs: compacting the database: %w", err)
	}
	if _, err := q.db.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		return fmt.Errorf("jobs: compacting the database: %w", err)
	}
	return nil
}

// openPostgres connects to the database of url, waiting for it
// (acquireWaiting), and migrates it (River's tables and the queue's), under
// an advisory lock so that replicas starting together migrate one after
// the other.
func (q *Queue) openPostgres(ctx context.Context, url string) (*riverpgxv5.Driver, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("jobs: %s: %w", EnvDatabaseURL, err)
	}
	if q.pgSchema != "" {
		// Every table of this service (River's and the queue's) is in its
		// own schema, so two services share one database without taking
		// each other's jobs.
		cfg.ConnConfig.RuntimeParams["search_path"] = q.pgSchema
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("jobs: database: %w", err)
	}
	q.pool = pool
	q.db = stdlib.OpenDBFromPool(pool)
	conn, err := q.acquireWaiting(ctx, pool, cfg, q.opts.DatabaseWait)
	if err != nil {
		return nil, err
	}
	defer conn.Release()
	cctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	h := fnv.New64a()
	h.Write([]byte("archivekit jobs migrations"))
	key := int64(h.Sum64())
	if _, err := conn.Exec(cctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return nil, fmt.Errorf("jobs: migrations: %w", err)
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key) }()
	if q.pgSchema != "" {
		if _, err := conn.Exec(cctx, `CREATE SCHEMA IF NOT EXISTS `+q.pgSchema); err != nil {
			return nil, fmt.Errorf("jobs: schema %s: %w", q.pgSchema, err)
		}
		var old bool
		if err := conn.QueryRow(cctx, `SELECT to_regclass('public.archivekit_job') IS NOT NULL`).Scan(&old); err == nil && old {
			q.log.Warn("jobs kept by a version before 2026-11-29 are in the database's schema public, which this service no longer reads (each service has its own schema now)",
				"schema", q.pgSchema, "old_schema", "public")
		}
	}
	drv := riverpgxv5.New(pool)
	if err := migrate(cctx, drv, q.log, q.pgSchema); err != nil {
		return nil, err
	}
	if _, err := conn.Exec(cctx, pgSchema); err != nil {
		return nil, fmt.Errorf("jobs: tables: %w", err)
	}
	return drv, nil
}

// claimStore records the service whose jobs a state folder holds, the
// first time, and refuses a folder that holds another service's: its
// jobs' items would be sent to the wrong endpoint and fail (a
// translate-api job run by pageclass-api failed every item with 400). On
// PostgreSQL each service has its own schema (pgSchemaName) instead.
func (q *Queue) claimStore(ctx context.Context) error {
	if q.opts.Service == "" {
		return nil
	}
	if _, err := q.exec(ctx, `CREATE TABLE IF NOT EXISTS archivekit_service (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("jobs: tables: %w", err)
	}
	if _, err := q.exec(ctx, `INSERT INTO archivekit_service (id, name) VALUES (1, ?) ON CONFLICT (id) DO NOTHING`, q.opts.Service); err != nil {
		return fmt.Errorf("jobs: tables: %w", err)
	}
	var name string
	if err := q.queryRow(ctx, `SELECT name FROM archivekit_service WHERE id = 1`).Scan(&name); err != nil {
		return fmt.Errorf("jobs: tables: %w", err)
	}
	if name != q.opts.Service {
		return fmt.Errorf("jobs: the state folder %s holds the jobs of %s, not %s: give each service its own %s", q.opts.Dir, name, q.opts.Service, EnvDir)
	}
	return nil
}

// pgSchemaName is the PostgreSQL schema of service's jobs: archivekit_
// and its name, each character other than a letter or digit an
// underscore ("archivekit_translate_api"); "" for no service (the
// connection's own search path).
func pgSchemaName(service string) string {
	if service == "" {
		return ""
	}
	b := []byte("archivekit_" + strings.ToLower(service))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b[:min(len(b), 63)])
}

// stateFiles checks, before SQLite opens them, that this process can write
// the state folder's database files, and creates the database with the
// umask's mode when there is none (SQLite gives its WAL and shared-memory
// files the database's mode: 0644 whatever the umask, so a team's second
// user could not take over). A file another user owns and this one cannot
// write is named with its owner and mode: SQLite said "attempt to write a
// readonly database" and, before failing, left WAL files of its own that
// then kept the first user's service from starting again.
func stateFiles(dir string) error {
	db := filepath.Join(dir, "jobs.db")
	if _, err := os.Lstat(db); errors.Is(err, fs.ErrNotExist) {
		f, err := os.OpenFile(db, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil && !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("jobs: %s: %w", db, err)
		}
		if f != nil {
			f.Close()
		}
	}
	for _, name := range []string{"jobs.db", "jobs.db-wal", "jobs.db-shm"} {
		p := filepath.Join(dir, name)
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err == nil {
			f.Close()
			continue
		}
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		owner := ""
		if fi, serr := os.Stat(p); serr == nil {
			if uid, ok := fileowner.Of(fi); ok {
				owner = fmt.Sprintf("; owned by user %d, mode %v", uid, fi.Mode().Perm())
			}
		}
		return fmt.Errorf("jobs: %s cannot be written by this process (user %d%s): %w; give this service's user write access to the state folder's files (chmod g+rw for a group sharing it, and umask 002 for the files it makes), or its own %s",
			p, os.Getuid(), owner, err, EnvDir)
	}
	return nil
}
