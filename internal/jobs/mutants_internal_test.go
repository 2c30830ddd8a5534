package jobs

import (
	"context"
	"net/http"
	"testing"
	"time"

	"archivekit/internal/testenv"
)

// NoSearchKeys clears job id's search keys (its items' and its book's),
// as a job submitted before they were kept has none.
func NoSearchKeys(q *Queue, id string) error {
	if _, err := q.exec(context.Background(), `UPDATE archivekit_item SET name_key = NULL WHERE job_id = ?`, id); err != nil {
		return err
	}
	_, err := q.exec(context.Background(), `UPDATE archivekit_job SET book_key = NULL WHERE id = ?`, id)
	return err
}

// TestBackoff: the wait before an item's next run after a passing failure
// doubles from UnavailableBackoff with each run, at most a minute.
func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		first time.Duration
		run   int
		want  time.Duration
	}{
		{0, 1, 2 * time.Second}, // the default
		{0, 2, 4 * time.Second},
		{0, 5, 32 * time.Second},
		{0, 6, time.Minute},
		{0, 9, time.Minute},
		{10 * time.Second, 1, 10 * time.Second},
		{10 * time.Second, 3, 40 * time.Second},
		{10 * time.Second, 4, time.Minute},
		{2 * time.Minute, 1, time.Minute},
	} {
		q := &Queue{opts: Options{UnavailableBackoff: c.first}}
		if got := q.backoff(c.run); got != c.want {
			t.Errorf("backoff %v, run %d: %v, want %v", c.first, c.run, got, c.want)
		}
	}
}

// TestRetryLater: which answers pause the job to run the item again, and
// for how long: 503 always, 500 backend_error only with a Retry-After,
// until the item's last try; the wait is the backoff or the Retry-After,
// whichever is longer, at most a minute.
func TestRetryLater(t *testing.T) {
	const backendError = `{"status":500,"reason":"backend_error","detail":"x"}`
	for _, c := range []struct {
		name       string
		status     int
		retryAfter string
		body       string
		run        int
		wait       time.Duration
		again      bool
	}{
		{"503, first run", 503, "", "", 1, 2 * time.Second, true},
		{"503, third run", 503, "", "", 3, 8 * time.Second, true},
		{"503 with a longer Retry-After", 503, "10", "", 1, 10 * time.Second, true},
		{"503 with a shorter Retry-After", 503, "1", "", 3, 8 * time.Second, true},
		{"503 with an hour's Retry-After: a minute", 503, "3600", "", 1, time.Minute, true},
		{"503 on the run before the last", 503, "", "", 9, time.Minute, true},
		{"503 on the last run: its failure", 503, "", "", 10, 0, false},
		{"500 backend_error with Retry-After", 500, "0", backendError, 1, 2 * time.Second, true},
		{"500 backend_error without Retry-After", 500, "", backendError, 1, 0, false},
		{"500 internal with Retry-After", 500, "0", `{"status":500,"reason":"internal","detail":"x"}`, 1, 0, false},
		{"502", 502, "0", backendError, 1, 0, false},
		{"429", 429, "0", "", 1, 0, false},
		{"422", 422, "", "", 1, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := &Queue{}
			h := http.Header{}
			if c.retryAfter != "" {
				h.Set("Retry-After", c.retryAfter)
			}
			wait, again := q.retryLater(c.status, h, func() []byte { return []byte(c.body) }, c.run)
			if wait != c.wait || again != c.again {
				t.Errorf("retryLater: %v, %v; want %v, %v", wait, again, c.wait, c.again)
			}
		})
	}
}

// TestExpireEvery: expiry runs every tenth of the retention, at least
// every hour and at most every minute, so that a job is kept no more
// than a tenth longer than its retention (an hour's retention kept jobs
// up to two hours).
func TestExpireEvery(t *testing.T) {
	for _, c := range []struct{ retention, want time.Duration }{
		{30 * time.Second, time.Minute},
		{5 * time.Minute, time.Minute},
		{time.Hour, 6 * time.Minute},
		{5 * time.Hour, 30 * time.Minute},
		{168 * time.Hour, time.Hour},
	} {
		if got := expireEvery(c.retention); got != c.want {
			t.Errorf("retention %v: expiry every %v, want %v", c.retention, got, c.want)
		}
	}
}

// TestTakeLease: a job's run takes its lease when no live process holds
// it (none does, this one does, or the holder's lease ran out), and never
// from another process whose lease is live (the job would run twice), nor
// for a job that has ended.
func TestTakeLease(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			ctx := context.Background()
			o := Options{Path: "/x", Handler: http.NotFoundHandler(), Lease: time.Minute}
			if store == "sqlite" {
				o.Dir = t.TempDir()
			} else {
				o.DatabaseURL = testenv.Postgres(t)
			}
			q, err := Open(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close(ctx)
			const id = "0123456789abcdef0123456789abcdef"
			if err := q.insert(ctx, id, &form{}, nil, "", "", "", ""); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name  string
				owner any // nil: none
				lease time.Duration
				state string
				want  bool
			}{
				{"queued, held by none", nil, 0, Queued, true},
				{"held by this process", q.owner, time.Minute, Running, true},
				{"held by another, live", "another", time.Minute, Running, false},
				{"held by another, live, queued again", "another", time.Minute, Queued, false},
				{"held by another, run out", "another", -time.Second, Running, true},
				{"succeeded", nil, 0, Succeeded, false},
				{"canceled, its holder's lease run out", "another", -time.Second, Canceled, false},
			} {
				var lease any
				if c.owner != nil {
					lease = time.Now().Add(c.lease).UnixMilli()
				}
				if _, err := q.exec(ctx, `UPDATE archivekit_job SET owner = ?, lease_ms = ?, state = ? WHERE id = ?`, c.owner, lease, c.state, id); err != nil {
					t.Fatal(err)
				}
				if got, err := q.take(ctx, id); got != c.want || err != nil {
					t.Errorf("%s: take %v (%v), want %v", c.name, got, err, c.want)
				}
			}
		})
	}
}
