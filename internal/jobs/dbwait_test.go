package jobs_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/testenv"
)

// logSink keeps a JSON logger's records; hook, when not nil, is called
// (once) at the first record whose message is on.
type logSink struct {
	mu    sync.Mutex
	raw   strings.Builder
	recs  []map[string]any
	on    string
	hook  func()
	fired bool
}

func (s *logSink) Write(p []byte) (int, error) {
	var rec map[string]any
	if err := json.Unmarshal(p, &rec); err != nil {
		return 0, err
	}
	s.mu.Lock()
	s.raw.Write(p)
	s.recs = append(s.recs, rec)
	hook := s.hook
	call := hook != nil && !s.fired && rec["msg"] == s.on
	if call {
		s.fired = true
	}
	s.mu.Unlock()
	if call {
		hook()
	}
	return len(p), nil
}

func (s *logSink) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(s, nil)) }

// waits is the records of the queue's waits for its database.
func (s *logSink) waits() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w []map[string]any
	for _, r := range s.recs {
		if r["msg"] == waitMsg {
			w = append(w, r)
		}
	}
	return w
}

func (s *logSink) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw.String()
}

// waitMsg is the message of the queue's record of each wait for its
// database.
const waitMsg = "waiting for the job database"

// TestOpenWaitsForDatabase: a queue opened before its PostgreSQL server
// is started waits for it, logging each wait (the server's address, the
// attempt, the next wait, never the password), and opens once the server
// answers; the server is started only when the queue has logged its
// first wait. Then a wrong password and a missing database fail at once
// (no wait), naming the cause.
func TestOpenWaitsForDatabase(t *testing.T) {
	const password = "s3cret-Pw-7f2"
	srv := testenv.NewPostgresServer(t, password)
	started := make(chan error, 1)
	logs := &logSink{on: waitMsg, hook: func() { go func() { started <- srv.Start() }() }}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	q, err := jobs.Open(ctx, jobs.Options{DatabaseURL: srv.URL(password), Path: "/echo", Handler: &echo{}, Logger: logs.logger()})
	logs.mu.Lock()
	fired := logs.fired
	logs.mu.Unlock()
	if fired {
		if err := <-started; err != nil {
			t.Fatalf("starting PostgreSQL: %v", err)
		}
	}
	if err != nil {
		t.Fatalf("Open: %v (log: %s)", err, logs.text())
	}
	defer q.Close(context.Background())
	waits := logs.waits()
	if len(waits) == 0 {
		t.Fatalf("no wait logged before the server started: %s", logs.text())
	}
	for _, w := range waits {
		if w["address"] != srv.Address() || w["database"] != "postgres" || w["attempt"] == nil || w["next_wait"] == nil {
			t.Errorf("wait record %v: want address %s, database, attempt and next_wait", w, srv.Address())
		}
	}
	if strings.Contains(logs.text(), password) {
		t.Errorf("the password is in the log: %s", logs.text())
	}
	t.Logf("%d waits; first: %v", len(waits), waits[0])

	cases := []struct {
		name, url, pw string
		want          []string
	}{
		{"wrong password", srv.URL("wrong-Pw-9c1"), "wrong-Pw-9c1", []string{"password", "28P01", srv.Address(), "JOBS_DATABASE_URL"}},
		{"missing database", strings.Replace(srv.URL(password), "/postgres?", "/nosuchdb?", 1), password, []string{`"nosuchdb" does not exist`, "3D000", srv.Address()}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			logs := &logSink{}
			q, err := jobs.Open(ctx, jobs.Options{DatabaseURL: c.url, Path: "/echo", Handler: &echo{}, Logger: logs.logger(), DatabaseWait: 10 * time.Minute})
			if err == nil {
				q.Close(context.Background())
				t.Fatal("opened")
			}
			t.Logf("error: %v", err)
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q: want %q in it", err, w)
				}
			}
			if strings.Contains(err.Error(), c.pw) || strings.Contains(logs.text(), c.pw) {
				t.Errorf("the password is in the error or the log: %v\n%s", err, logs.text())
			}
			if w := logs.waits(); len(w) > 0 {
				t.Errorf("waited %d times for an error of the user's own: %v", len(w), w)
			}
		})
	}
}

// TestOpenWaitBound: with nothing listening at the database's address,
// Open tries again until DatabaseWait has passed, then fails naming the
// address.
func TestOpenWaitBound(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	const bound = 2 * time.Second
	logs := &logSink{}
	begin := time.Now()
	q, err := jobs.Open(context.Background(), jobs.Options{DatabaseURL: "postgres://postgres:pw-1x9@" + addr + "/jobs?sslmode=disable", Path: "/echo", Handler: &echo{}, Logger: logs.logger(), DatabaseWait: bound})
	took := time.Since(begin)
	if err == nil {
		q.Close(context.Background())
		t.Fatal("opened with nothing listening")
	}
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
	if !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "does not answer after 2s") {
		t.Errorf("error %q: want the address %s and the bound", err, addr)
	}
	if took < bound {
		t.Errorf("failed after %v, before the bound %v", took, bound)
	}
	if w := logs.waits(); len(w) < 2 {
		t.Errorf("%d waits logged, want at least 2 in %v", len(w), bound)
	}
	if strings.Contains(err.Error(), "pw-1x9") || strings.Contains(logs.text(), "pw-1x9") {
		t.Errorf("the password is in the error or the log: %v\n%s", err, logs.text())
	}
}
