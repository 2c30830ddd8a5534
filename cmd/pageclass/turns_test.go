package main

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// pauseFirstFile makes the first file any run completes wait until the
// returned resume is called; paused is closed when it waits.
func pauseFirstFile(t *testing.T) (paused chan struct{}, resume func()) {
	paused = make(chan struct{})
	release := make(chan struct{})
	var held, done atomic.Bool
	fileHook = func(string) {
		if held.CompareAndSwap(false, true) {
			close(paused)
			<-release
		}
	}
	t.Cleanup(func() { fileHook = nil })
	return paused, func() {
		if done.CompareAndSwap(false, true) {
			close(release)
		}
	}
}

// Two --resume runs of the same inputs into one results folder take turns,
// as translate's do: the second logs that it waits, naming the lock and the
// run holding it, and then classifies nothing (the first run's ledger holds
// every file). Before, each classified every page.
func TestResumeRunsTakeTurns(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	type result struct {
		code int
		log  string
	}
	paused, resume := pauseFirstFile(t)
	defer resume()
	waiting := make(chan string, 1)
	turnWaitHook = func(lock string) { waiting <- lock }
	defer func() { turnWaitHook = nil }()
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		code, log := e.runCtx(t, context.Background(), "-d", e.in, "--resume")
		first <- result{code, log}
	}()
	<-paused
	go func() {
		code, log := e.runCtx(t, context.Background(), "-d", e.in, "--resume")
		second <- result{code, log}
	}()
	select {
	case lock := <-waiting:
		if filepath.Dir(filepath.Dir(lock)) != e.results || !strings.HasPrefix(filepath.Base(lock), "pageclass_") {
			t.Errorf("the second run waits for %s, want a pageclass lock in %s/ledger", lock, e.results)
		}
	case r := <-second:
		resume()
		<-first
		t.Fatalf("the second run did not wait for the first (exit %d): %s", r.code, r.log)
	}
	resume()
	a, b := <-first, <-second
	if a.code != exitOK || b.code != exitOK {
		t.Fatalf("exit %d and %d:\n%s\n%s", a.code, b.code, a.log, b.log)
	}
	if !strings.Contains(a.log, `"msg":"pages classified","pages":11,`) {
		t.Fatalf("the first run did not classify the 11 pages: %s", a.log)
	}
	if n := toClassify(t, b.log); n != 0 {
		t.Errorf("the second run classified %d files, want 0 (all in the first run's ledger)", n)
	}
	if !strings.Contains(b.log, "waiting for another run resuming the same inputs") ||
		!strings.Contains(b.log, `"holder":"pageclass process `) || !strings.Contains(b.log, `"lock":"`) {
		t.Errorf("the second run's log does not say what it waits for and who holds it:\n%s", b.log)
	}
}

// Runs that need not take turns do not wait: shards of one run into one
// results folder (the documented way to run in parallel), a run of other
// inputs and a run without --resume each finish while a --resume shard run
// is paused in the middle.
func TestRunsThatNeedNoTurnRunAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	files := e.linkPages(t, 1)
	e.model(t, "v4.4")
	paused, resume := pauseFirstFile(t)
	defer resume()
	turnWaitHook = func(lock string) { t.Errorf("a run waits for %s", lock); resume() }
	defer func() { turnWaitHook = nil }()
	first := make(chan int, 1)
	var log1 string
	go func() {
		code, log := e.runCtx(t, context.Background(), "-d", e.in, "--resume", "--shard", "0/2")
		log1 = log
		first <- code
	}()
	<-paused
	for _, args := range [][]string{
		{"-d", e.in, "--resume", "--shard", "1/2"},
		{"-f", files[0], "--resume"},
		{"-d", e.in},
	} {
		if code, log := e.runCtx(t, context.Background(), args...); code != exitOK {
			t.Errorf("%q: exit %d: %s", args, code, log)
		}
	}
	resume()
	if code := <-first; code != exitOK {
		t.Fatalf("shard 0/2: exit %d: %s", code, log1)
	}
}
