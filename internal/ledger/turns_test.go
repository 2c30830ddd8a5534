package ledger

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A run that finds the output taken says whose run holds it: the tool, its
// process, the user and the machine (a team's shared folder, a network
// disk), and waits until it is released.
func TestTakeTurnNamesHolder(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, Folder), 0o777)
	turn := Turn{Lock: TurnLock(dir, "run"), Tool: "pageclass", Output: dir, Waiting: "waiting for the other run"}
	ctx := context.Background()
	unlock, err := TakeTurn(ctx, turn, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	waited := make(chan struct{})
	second := turn
	second.OnWait = func(string) { close(waited) }
	done := make(chan error, 1)
	go func() {
		u, err := TakeTurn(ctx, second, slog.New(slog.NewTextHandler(&logged, nil)))
		if err == nil {
			u()
		}
		done <- err
	}()
	<-waited
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	me, err := user.Current()
	if err != nil {
		t.Skip("no user name here:", err)
	}
	host, _ := os.Hostname()
	want := "pageclass process " + strconv.Itoa(os.Getpid()) + " of " + me.Username + " on " + host + ", started "
	if !strings.Contains(logged.String(), want) {
		t.Errorf("waiting line %q does not name %q", logged.String(), want)
	}
}

// TestTakeTurnShards: the shards of one run take their turns side by side
// (each holds the run's lock shared and its own share's lock alone), while a
// whole run waits for every shard, a shard for a whole run, and a shard run
// twice for itself. If it failed, the shards of a run on a cluster would run
// one after another instead of at once, or a whole run would write the
// output folder, and ledger, beside its shards (or a shard beside itself).
func TestTakeTurnShards(t *testing.T) {
	whole := Turn{Tool: "pageclass", Waiting: "waiting for the other run"}
	shard := func(suffix string) Turn { s := whole; s.Shard = suffix; return s }
	for _, c := range []struct {
		name    string
		holders []Turn // take their turns first, in order, without waiting
		next    Turn
		waits   string // the lock next waits for (its base name), "" none
	}{
		{"two shards of one run", []Turn{shard("_shard-0-of-2")}, shard("_shard-1-of-2"), ""},
		{"three shards of one run", []Turn{shard("_shard-0-of-3"), shard("_shard-2-of-3")}, shard("_shard-1-of-3"), ""},
		{"a whole run while a shard runs", []Turn{shard("_shard-0-of-2")}, whole, "run.lock"},
		{"a whole run while two shards run", []Turn{shard("_shard-0-of-2"), shard("_shard-1-of-2")}, whole, "run.lock"},
		{"a shard while a whole run runs", []Turn{whole}, shard("_shard-0-of-2"), "run.lock"},
		{"one shard twice", []Turn{shard("_shard-0-of-2")}, shard("_shard-0-of-2"), "run_shard-0-of-2.lock"},
		{"a whole run twice", []Turn{whole}, whole, "run.lock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel) // a run left waiting by a failure gives up
			type taken struct {
				unlock func()
				err    error
			}
			// start takes turn in a goroutine: waited receives each lock it
			// waits for, done its unlock once it has its turn.
			start := func(turn Turn) (waited chan string, done chan taken) {
				waited, done = make(chan string, 4), make(chan taken, 1)
				turn.Lock, turn.Output = TurnLock(dir, "run"), dir
				turn.OnWait = func(lock string) {
					select {
					case waited <- lock:
					default:
					}
				}
				go func() {
					u, err := TakeTurn(ctx, turn, slog.New(slog.DiscardHandler))
					done <- taken{u, err}
				}()
				return waited, done
			}
			var held []func()
			release := func() {
				for _, u := range held {
					u()
				}
				held = nil
			}
			t.Cleanup(release)
			for i, h := range c.holders {
				waited, done := start(h)
				select {
				case r := <-done:
					if r.err != nil {
						t.Fatal(r.err)
					}
					held = append(held, r.unlock)
				case lock := <-waited:
					t.Fatalf("holder %d (%q) waited for %s", i, h.Shard, filepath.Base(lock))
				}
			}
			waited, done := start(c.next)
			select {
			case r := <-done:
				if r.err != nil {
					t.Fatal(r.err)
				}
				if c.waits != "" {
					t.Errorf("took its turn while the others held theirs, want it to wait for %s", c.waits)
				}
				// It holds its turn while every other still holds theirs.
				r.unlock()
			case lock := <-waited:
				if c.waits == "" {
					t.Errorf("waited for %s, want it to take its turn beside the others", filepath.Base(lock))
				} else if filepath.Base(lock) != c.waits {
					t.Errorf("waited for %s, want %s", filepath.Base(lock), c.waits)
				}
				// Once the others are done, it has its turn.
				release()
				select {
				case r := <-done:
					if r.err != nil {
						t.Fatal(r.err)
					}
					r.unlock()
				case lock := <-waited:
					t.Fatalf("waited again, for %s, once the others had ended", filepath.Base(lock))
				}
			}
		})
	}
}
