package filelock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// Shared holders hold a lock together; an exclusive one waits for them all
// (and says so), and a shared one waits for an exclusive holder.
func TestSharedAndExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.lock")
	ctx := context.Background()
	a, err := LockShared(ctx, path, func() { t.Error("a second shared holder waited") })
	if err != nil {
		t.Fatal(err)
	}
	b, err := LockShared(ctx, path, func() { t.Error("a second shared holder waited") })
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	got := make(chan func(), 1)
	go func() {
		u, err := Lock(ctx, path, func() { close(waited) })
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	<-waited // the exclusive holder found the shared ones
	a()
	b()
	unlock := <-got
	cctx, cancel := context.WithCancel(ctx)
	_, err = LockShared(cctx, path, cancel)
	if err == nil {
		t.Error("a shared lock was taken while an exclusive holder had it")
	}
	unlock()
}

// LockDir locks the folder itself: a second holder waits (and says so)
// until the first unlocks, and nothing is written into the folder.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	first, err := LockDir(ctx, dir, func() { t.Error("the first holder waited") })
	if err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	got := make(chan func(), 1)
	go func() {
		u, err := LockDir(ctx, dir, func() { close(waited) })
		if err != nil {
			t.Error(err)
		}
		got <- u
	}()
	<-waited // the second holder found the folder locked
	first()
	(<-got)()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the folder holds %d entries, want none", len(ents))
	}
	if _, err := LockDir(ctx, filepath.Join(dir, "missing"), nil); err == nil {
		t.Error("a missing folder was locked")
	}
}
