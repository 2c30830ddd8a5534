// Package jobs gives a service's synchronous endpoint a durable,
// asynchronous twin: POST /jobs takes the endpoint's own multipart form with
// any number of files, answers 202 with Location: /jobs/{id} at once, and
// workers run each file (an item) through the same handler the synchronous
// endpoint runs, storing its answer per item.
//
// The queue is River (github.com/riverqueue/river) on one of two stores.
// SQLite (River's riversqlite driver over modernc.org/sqlite, pure Go):
// one database file, jobs.db, in a state folder, which also holds the
// inputs (in/) and outputs (out/) of every job; one process owns a state
// folder at a time (an flock on it), so at start any job left running by a
// killed process is made available again and picked up at once.
// PostgreSQL (River's riverpgxv5 driver over pgx), shared by any number of
// replicas: the items' files and answers live in the item rows, so every
// replica reads every job's results; a job's run holds a lease on it,
// renewed while it runs, and every replica queues again the jobs whose
// lease ran out (their replica was killed), so another replica resumes
// them.
//
// An item is recorded done, with its answer, in one statement: a job
// interrupted by a stop or a kill resumes at its first item not done, and
// no item done runs again. The item in flight at a SIGKILL runs again from
// its start (its work is lost with the process); a drain (Close) finishes
// the item in flight and leaves the rest for the next start (SQLite) or
// another replica (PostgreSQL).
package jobs

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"archivekit/internal/atomicfile"
	"archivekit/internal/filelock"
	"archivekit/internal/fileowner"
	"archivekit/internal/service"
)

// EnvDir is the environment variable naming the state folder; unset or
// empty, a service has no job API.
const EnvDir = "JOBS_DIR"

// EnvDatabaseURL is the environment variable with a PostgreSQL connection
// string (postgres://user:password@host/db); set, jobs are shared by every
// replica using the same database, and EnvDir is not used.
const EnvDatabaseURL = "JOBS_DATABASE_URL"

// EnvWorkers is the environment variable with the number of jobs run at
// once (default 1); a job runs its items one after the other.
const EnvWorkers = "JOBS_WORKERS"

// EnvItemWorkers is the environment variable with the number of one job's
// items run at once (Options.ItemWorkers).
const EnvItemWorkers = "JOBS_ITEM_WORKERS"

// The states of a job.
const (
	Queued    = "queued"
	Running   = "running"
	Succeeded = "succeeded"
	Failed    = "failed"
	Canceled  = "canceled"
)

// Skipped is the state of an item that had nothing to run (a book's page
// without a text file, a file whose content is not what the endpoint
// takes): it ends so, with its reason, before or instead of running; it is
// counted apart from the items succeeded and failed, has no answer and
// never runs again. Only book jobs have such items (BookItem.Skip,
// SkipError).
const Skipped = "skipped"

// PickHead is how many of an item's first bytes Options.Pick is shown.
const PickHead = 4 << 10

// ItemFile is an item's file as Options.Pick sees it before the item runs.
type ItemFile struct {
	// ContentType and Name are the file's label and name as submitted (a
	// book page's: the type its server gave, and its name in the job).
	ContentType, Name string
	// Head is the file's first PickHead bytes (all of a shorter file).
	Head []byte
	// Open reads the whole file from its start, for what its head does
	// not tell (a TIFF's page count); the caller closes it. What it
	// returns is also an io.ReaderAt and an io.Seeker (the stored file,
	// or the file held in memory), so that a reader of headers at their
	// offsets reads those alone.
	Open func() (io.ReadCloser, error)
}

// Route is where Options.Pick sends an item: the synchronous endpoint's
// path and handler, the content type its file is sent with ("": its
// own), for an endpoint that takes a format by its label only, and the
// job's form fields that endpoint does not take (pageclass-api's pages,
// for an item run as /predict_image): the item is sent without them.
type Route struct {
	Path        string
	Handler     http.Handler
	ContentType string
	Omit        []string
}

// Options describe a queue.
type Options struct {
	// Dir is the state folder (created if missing).
	Dir string
	// Root is the path a reverse proxy publishes the service under
	// (ROOT_PATH; Setup sets it): the links a job's answers give begin
	// with it.
	Root service.RootPath
	// Path is the synchronous endpoint's path, e.g. "/translate": items are
	// requests to it.
	Path string
	// Handler is the synchronous endpoint's handler; every item is one
	// request to it with the job's form fields and one file.
	Handler http.Handler
	// Pick, when not nil, chooses for each item, by its file (its first
	// bytes, and the whole file where they do not settle it), the path and
	// handler that run it instead of Path and Handler (pageclass-api sends
	// PDFs and multi-page TIFFs to /predict_document, other images to
	// /predict_image). A Route without a handler runs the item at Path.
	Pick func(ItemFile) Route
	// CheckFields, when not nil, checks a submitted job's form fields
	// (each field's first value, the form's over the query's, uploads
	// other than the items included; the book URL aside) before the job is
	// queued: what it returns is the 422 list-form answer to POST /jobs, as
	// the synchronous endpoint would answer each item (pageclass-api: a
	// malformed pages field, a version it cannot serve; translate-api: a
	// language or output mode it refuses).
	CheckFields func(fields map[string]string) []service.ValidationError
	// ItemField is the form field of the files (default "file").
	ItemField string
	// Workers is the number of jobs run at once (default 1).
	Workers int
	// ItemWorkers is the number of one job's items run at once (default
	// 1; JOBS_ITEM_WORKERS; the caller's value is Setup's default), in
	// item order: a GPU service's batches are filled by a book job's
	// pages as by concurrent requests. Items whose files join
	// (BookInput.Joins) run one after the other whatever it is.
	ItemWorkers int
	// Logger receives the queue's records; nil discards them.
	Logger *slog.Logger
	// Service names the service whose jobs the store holds (Setup gives
	// the service's name): a state folder that holds another service's
	// jobs is refused (claimStore); on PostgreSQL the service's tables are
	// in a schema of its own (pgSchemaName). "" does neither.
	Service string
	// Stopping, when not nil, reports that the service is draining: a job
	// then stops after its item in flight and waits for the next start.
	Stopping func() bool
	// CallbackSecret signs callbacks (Sign); empty, a job with a
	// callback URL is refused.
	CallbackSecret []byte
	// CallbackBackoff is the wait after a callback's first failed attempt,
	// doubled after each (default 1 s); CallbackAttempts the attempts in
	// one run (default 6).
	CallbackBackoff  time.Duration
	CallbackAttempts int
	// CallbackPrivate lets callbacks go to private, loopback and
	// link-local addresses (JOBS_CALLBACK_ALLOW_PRIVATE=1).
	CallbackPrivate bool
	// Metrics, when not nil, counts jobs submitted, jobs ended by state
	// and items run by state (Setup gives the service's).
	Metrics *service.Metrics
	// ItemTimeout bounds one item's run (0: none; Setup gives the
	// service's REQUEST_TIMEOUT_S): an item past it fails with 504.
	ItemTimeout time.Duration
	// UnavailableTries is how many times an item answered 503 (the
	// service's backend not available, its memory taken) or backend_error
	// runs before that answer is recorded as its failure (default 10);
	// until then the job pauses and runs the item again, after
	// UnavailableBackoff (default 2 s) doubled with each run, at most a
	// minute, and at least the answer's Retry-After.
	UnavailableTries   int
	UnavailableBackoff time.Duration
	// Retention is how long an ended job is kept (0: for ever); see
	// Expire.
	Retention time.Duration
	// MaxActive bounds the jobs not yet ended (queued or running) the
	// service holds (JOBS_MAX_ACTIVE; 0: DefaultMaxActive): POST /jobs is
	// answered 503 with Retry-After beyond it, so a client submitting
	// without end meets a limit before the disk does.
	MaxActive int
	// ScratchLimit bounds the bytes one job's Scratch holds at once
	// (JOBS_SCRATCH_MB; 0: DefaultScratchLimit; below 0: nothing is
	// kept): a file over it is not kept, and its item fetches it again.
	ScratchLimit int64
	// DatabaseURL, when not empty, is a PostgreSQL database (a pgx
	// connection string) shared by every replica: the queue, the items'
	// files and their answers live in it, and Dir is not used.
	DatabaseURL string
	// DatabaseWait bounds how long Open waits for the PostgreSQL database
	// to answer (default DefaultDatabaseWait, 2 minutes): a replica started
	// before its database tries again, logging each wait, while nothing
	// listens yet, the name is not resolved yet, an attempt times out or
	// the server is starting up; a wrong password or database fails at
	// once.
	DatabaseWait time.Duration
	// Lease is how long a job's run holds it without renewing (default
	// 30 s; renewed every third of it): a replica killed mid-job leaves
	// it to another after at most Lease plus half of it.
	Lease time.Duration
	// Book, when not nil, lets a job name a book by its URL instead of
	// uploading files: its items are the book's pages or text files.
	Book *BookInput
	// RunMeta, when not nil, starts the run metadata of an ended job
	// (RunRecord): each job then has run metadata like a command line
	// run's, and an RO-Crate, in its results.
	RunMeta func(ctx context.Context, job RunJob) (RunRecord, error)
	// itemWorkersSet: JOBS_ITEM_WORKERS set ItemWorkers (Setup), which
	// DefaultItemWorkers then leaves.
	itemWorkersSet bool
	// pollEvery is how often River looks for new jobs (default 50 ms).
	pollEvery time.Duration
	// minFree is the free space under which the job folder is said to be
	// full by the deep health check (storageCheck; 0: minFreeDefault).
	minFree uint64
	// createPart creates an answer's file while it is written (newBody;
	// nil: os.Create); holdWait is the first wait before an answer held in
	// memory is written again (holdAnswer; 0: holdWaitDefault).
	createPart func(path string) (partFile, error)
	holdWait   time.Duration
}

// ownStateFolder refuses a state folder that another user could have
// planted things in: one owned by another user (not root) and writable by
// everyone (a folder made in a shared /tmp), or holding a symbolic link where the
// service keeps its files (jobs, the database, holder). Such a link made
// the service write its lock text, the uploads and the answers of every
// job into the folder it named.
func ownStateFolder(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("jobs: state folder: %w", err)
	}
	// Root's world-writable folders are left to their owner's reasons (a
	// Kubernetes emptyDir is one, and the service runs as another user).
	if uid, ok := fileowner.Of(fi); ok && uid != os.Getuid() && uid != 0 && fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("jobs: state folder %s is user %d's and writable by everyone (mode %v): another user could plant files in it; give %s a folder of this service's own (user %d)",
			dir, uid, fi.Mode().Perm(), EnvDir, os.Getuid())
	}
	for _, name := range []string{"jobs", "jobs.db", "jobs.db-wal", "jobs.db-shm", holderName} {
		p := filepath.Join(dir, name)
		if li, err := os.Lstat(p); err == nil && li.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("jobs: %s is a symbolic link, and the state folder's own files never are (one planted in a shared folder?): remove it", p)
		}
	}
	return nil
}

// holderName is the file in a state folder naming the process that holds
// it (filelock.Holder).
const holderName = "holder"

// Queue is a state folder's job queue. Its methods are safe for concurrent use;
// the methods of a nil *Queue do nothing.
type Queue struct {
	opts Options
	// db is the database; pool is the PostgreSQL pool under it (nil on
	// SQLite).
	db    *sql.DB
	pool  *pgxpool.Pool
	river riverClient
	// pgSchema is the PostgreSQL schema of the service's tables
	// (pgSchemaName; "" on SQLite or without Options.Service).
	pgSchema string
	log      *slog.Logger
	unlock   func()
	// callbacks sends the callbacks.
	callbacks *http.Client
	// owner names this process in the leases it takes.
	owner string
	// reaped is closed when the lease reaper has stopped.
	reaped chan struct{}

	mu      sync.Mutex
	started bool
	closed  bool
	stop    chan struct{} // closed by Close
	// changed is closed and replaced whenever an item or a job changes
	// state, for WaitState.
	changed chan struct{}
	// cancels cancels the context of each job running in this process.
	cancels map[string]context.CancelFunc
	// withdrawing orders Withdraw (held alone) against the recording of
	// items' ends (held shared); withdrawals are the items running here
	// that Withdraw named, whose success is recorded as the withdrawal's
	// failure (guarded by mu).
	withdrawing sync.RWMutex
	withdrawals map[itemRef]outcome
	running     map[itemRef]bool // the items running in this process (guarded by mu)
}

// argsKind is the River job kind of a job.
const argsKind = "archivekit_job"

// jobArgs is the River job of one job: its id in the jobs table.
type jobArgs struct {
	ID string `json:"id"`
}

// Kind is River's name of the job kind.
func (jobArgs) Kind() string { return argsKind }

// worker runs jobs for River.
type worker struct {
	river.WorkerDefaults[jobArgs]
	q *Queue
}

// Timeout: a job runs as long as its items take.
func (worker) Timeout(*river.Job[jobArgs]) time.Duration { return -1 }

// Work runs the job's items not yet done, holding the job's lease; a job
// whose lease another live process holds is left to it.
func (w *worker) Work(ctx context.Context, j *river.Job[jobArgs]) error {
	if w.q.stopping() {
		// Draining: no new job starts here.
		return river.JobSnooze(w.q.pauseFor())
	}
	if ok, err := w.q.take(ctx, j.Args.ID); err != nil || !ok {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hctx, stopHold := context.WithCancel(ctx)
	go w.q.hold(hctx, j.Args.ID, cancel)
	defer w.q.letGo(ctx, j.Args.ID)
	defer stopHold()
	w.q.mu.Lock()
	w.q.cancels[j.Args.ID] = cancel
	w.q.mu.Unlock()
	defer func() {
		w.q.mu.Lock()
		delete(w.q.cancels, j.Args.ID)
		w.q.mu.Unlock()
	}()
	err := w.q.work(ctx, j.Args.ID)
	var snooze *rivertype.JobSnoozeError
	if err != nil && j.Attempt >= j.MaxAttempts && !errors.As(err, &snooze) && !w.q.stopping() {
		// River gives up on it: so does the job.
		w.q.log.Error("job failed for good", "job", j.Args.ID, "error", err.Error())
		_, _ = w.q.setState(context.WithoutCancel(ctx), j.Args.ID, Failed, Queued, Running)
	}
	return err
}

// Running is how many jobs run in this process now.
func (q *Queue) Running() int {
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.cancels)
}

// cutRunning ends the context of job id's run in this process, if any.
func (q *Queue) cutRunning(id string) {
	q.mu.Lock()
	cancel := q.cancels[id]
	q.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// Open opens (or creates) the state folder's queue: it takes the folder's
// lock, migrates River's tables and the job tables, and makes the jobs a
// stopped process left running available again. Workers start with Start.
func Open(ctx context.Context, opts Options) (*Queue, error) {
	if (opts.Dir == "" && opts.DatabaseURL == "") || opts.Handler == nil || opts.Path == "" {
		return nil, errors.New("jobs: Options.Dir or DatabaseURL, Path and Handler are required")
	}
	if opts.Lease <= 0 {
		opts.Lease = 30 * time.Second
	}
	if opts.ItemField == "" {
		opts.ItemField = "file"
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.CallbackBackoff <= 0 {
		opts.CallbackBackoff = time.Second
	}
	if opts.CallbackAttempts <= 0 {
		opts.CallbackAttempts = 6
	}
	if opts.DatabaseWait <= 0 {
		opts.DatabaseWait = DefaultDatabaseWait
	}
	if opts.pollEvery == 0 {
		opts.pollEvery = 50 * time.Millisecond
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	q := &Queue{opts: opts, log: log, owner: newID(), stop: make(chan struct{}), changed: make(chan struct{}), cancels: map[string]context.CancelFunc{}}
	q.callbacks = q.callbackClient()
	if opts.DatabaseURL != "" {
		q.pgSchema = pgSchemaName(opts.Service)
		if err := q.open(ctx); err != nil {
			q.release()
			return nil, err
		}
		q.declare()
		return q, nil
	}
	if err := os.MkdirAll(opts.Dir, 0o777); err != nil {
		return nil, fmt.Errorf("jobs: state folder: %w", err)
	}
	// A folder this user cannot write fails later, in the database's
	// migrations, with "unable to open database file (14)".
	if err := atomicfile.CheckDir(opts.Dir); err != nil {
		return nil, fmt.Errorf("jobs: state folder %s is not writable by this process (user %d): %w", opts.Dir, os.Getuid(), err)
	}
	if err := ownStateFolder(opts.Dir); err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	held := false
	unlock, err := filelock.LockDir(lctx, opts.Dir, func() { held = true; cancel() })
	cancel()
	holderFile := filepath.Join(opts.Dir, holderName)
	if held {
		// Another process holds the folder (one waits for none: it
		// would wait for ever on a running replica).
		who := "another process"
		if b, _ := os.ReadFile(holderFile); len(bytes.TrimSpace(b)) > 0 {
			who = string(bytes.TrimSpace(b))
		}
		return nil, fmt.Errorf("jobs: state folder %s is in use by %s (another replica, or this service still stopping): "+
			"give each replica its own %s, or share jobs between replicas with %s", opts.Dir, who, EnvDir, EnvDatabaseURL)
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: state folder %s: %w", opts.Dir, err)
	}
	// Who holds the folder, for the refusal of another process.
	if err := filelock.WriteHolder(holderFile, filelock.Holder(opts.Service)); err != nil {
		unlock()
		return nil, fmt.Errorf("jobs: state folder %s: %w", opts.Dir, err)
	}
	unlock = func(release func()) func() { return func() { filelock.ClearHolder(holderFile); release() } }(unlock)
	// Uploads a stopped process left half stored.
	if left, _ := filepath.Glob(filepath.Join(opts.Dir, "upload-*")); len(left) > 0 {
		for _, d := range left {
			_ = os.RemoveAll(d)
		}
	}
	q.unlock = unlock
	if err := q.open(ctx); err != nil {
		q.release()
		return nil, err
	}
	q.declare()
	return q, nil
}

func (q *Queue) open(ctx context.Context) error {
	cfg := &river.Config{
		Logger:            q.log,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: q.opts.Workers}, callbackQueue: {MaxWorkers: callbackWorkers}},
		FetchCooldown:     q.opts.pollEvery,
		FetchPollInterval: q.opts.pollEvery,
		JobTimeout:        -1,
		MaxAttempts:       5,
		// SQLite: never rescued while a process lives: the lock says no
		// other process runs this folder's jobs, and a restart takes them
		// back. PostgreSQL: the job leases (reap) take back a killed
		// replica's jobs; River's rescue is a backstop for a River job
		// fetched by a replica killed before it took the lease.
		RescueStuckJobsAfter: 365 * 24 * time.Hour,
	}
	workers := river.NewWorkers()
	if err := river.AddWorkerSafely(workers, &worker{q: q}); err != nil {
		return err
	}
	if err := river.AddWorkerSafely(workers, &callbackWorker{q: q}); err != nil {
		return err
	}
	cfg.Workers = workers
	if q.opts.Retention > 0 {
		if err := river.AddWorkerSafely(workers, &expireWorker{q: q}); err != nil {
			return err
		}
		cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(expireEvery(q.opts.Retention)),
			func() (river.JobArgs, *river.InsertOpts) { return expireArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true}))
	}
	var err error
	if q.opts.DatabaseURL != "" {
		drv, err := q.openPostgres(ctx, q.opts.DatabaseURL)
		if err != nil {
			return err
		}
		cfg.RescueStuckJobsAfter = max(10*q.opts.Lease, 5*time.Minute)
		cfg.Schema = q.pgSchema
		q.river, err = river.NewClient(drv, cfg)
		if err != nil {
			return fmt.Errorf("jobs: River client: %w", err)
		}
		return nil
	}
	drv, err := q.openSQLite(ctx)
	if err != nil {
		return err
	}
	q.river, err = river.NewClient(drv, cfg)
	if err != nil {
		return fmt.Errorf("jobs: River client: %w", err)
	}
	return nil
}

// Start starts the workers; jobs submitted before wait for it.
func (q *Queue) Start(ctx context.Context) error {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.started || q.closed {
		return nil
	}
	q.started = true
	if err := q.river.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	if q.pool != nil {
		q.reaped = make(chan struct{})
		go q.reap()
	}
	return nil
}

// Close stops the workers: a job stops after its item in flight (waiting
// up to ctx's deadline; after it the item is cut and runs again at the next
// start), then the database and the folder's lock are released.
func (q *Queue) Close(ctx context.Context) error {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	close(q.stop)
	started := q.started
	q.mu.Unlock()
	var err error
	if started {
		if err = q.river.Stop(ctx); err != nil {
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err = errors.Join(err, q.river.StopAndCancel(cctx))
			cancel()
		}
	}
	if q.reaped != nil {
		<-q.reaped
	}
	q.release()
	return err
}

func (q *Queue) release() {
	if q.db != nil {
		q.db.Close()
	}
	if q.pool != nil {
		q.pool.Close()
	}
	if q.unlock != nil {
		q.unlock()
	}
}

// pauseFor is how long a job paused by a stop waits: on SQLite until the
// next start, which makes it available at once; on PostgreSQL a second,
// for another replica.
func (q *Queue) pauseFor() time.Duration {
	if q.pool != nil {
		return time.Second
	}
	return time.Hour
}

// stopping reports whether jobs should stop after their item in flight.
func (q *Queue) stopping() bool {
	select {
	case <-q.stop:
		return true
	default:
	}
	return q.opts.Stopping != nil && q.opts.Stopping()
}

// notify wakes those waiting for a change.
func (q *Queue) notify() {
	q.mu.Lock()
	close(q.changed)
	q.changed = make(chan struct{})
	q.mu.Unlock()
}

// Changed is a channel closed at the next change of a job or item state in
// this process (tests wait on it instead of sleeping).
func (q *Queue) Changed() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.changed
}

// Counter names in /metrics.
const (
	metricSubmitted = "jobs_submitted_total"
	metricEnded     = "jobs_ended_total"
	metricItems     = "job_items_total"
	metricCurrent   = "jobs_current"
	metricHere      = "jobs_running_here"
	metricDuration  = "job_duration_seconds"
)

// durationBuckets are the bounds of job_duration_seconds: a second to
// three hours.
var durationBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 10800}

// declare registers the counters.
func (q *Queue) declare() {
	if m := q.opts.Metrics; m != nil {
		m.DeclareCounter(metricSubmitted, "Jobs submitted (POST /jobs, Prefer: respond-async).", "")
		m.DeclareCounter(metricEnded, "Jobs ended, by state (succeeded, failed, canceled).", "state")
		m.DeclareCounter(metricItems, "Job items ended, by state (succeeded, failed; skipped: a book's item with nothing to run; canceled: left unrun by its job's cancel; withdrawn: a success taken back, the item run again, so it ends once more).", "state")
		m.DeclareGauge(metricCurrent, "Jobs queued (the queue's depth) and running, in the whole store (every replica's on PostgreSQL).", "state", q.current)
		m.DeclareGauge(metricHere, "Jobs running in this process.", "", func() map[string]float64 {
			q.mu.Lock()
			defer q.mu.Unlock()
			return map[string]float64{"": float64(len(q.cancels))}
		})
		m.DeclareHistogram(metricDuration, "Time from a job's start to its end (succeeded or failed), for the jobs that ended in this process.", durationBuckets)
	}
}

// current counts the store's jobs queued and running (for /metrics).
func (q *Queue) current() map[string]float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out := map[string]float64{Queued: 0, Running: 0}
	for st := range out {
		var n int64
		if err := q.queryRow(ctx, `SELECT COUNT(*) FROM archivekit_job WHERE state = ?`, st).Scan(&n); err != nil {
			q.log.Warn("counting jobs for /metrics", "error", err.Error())
			return nil
		}
		out[st] = float64(n)
	}
	return out
}

// count adds one to a counter.
func (q *Queue) count(name, value string) {
	if q.opts.Metrics != nil {
		q.opts.Metrics.AddCount(name, value, 1)
	}
}

// jobDir is the folder of a job's files.
func (q *Queue) jobDir(id string) string { return filepath.Join(q.opts.Dir, "jobs", id) }

// inPath and outPath are the files of item i's input and answer.
func (q *Queue) inPath(id string, i int) string {
	return filepath.Join(q.jobDir(id), "in", strconv.Itoa(i))
}

func (q *Queue) outPath(id string, i int) string {
	return filepath.Join(q.jobDir(id), "out", strconv.Itoa(i))
}
