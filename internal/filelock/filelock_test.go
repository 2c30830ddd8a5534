package filelock

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// TestLockRefusesLink: a lock file that is a symbolic link (planted by
// another user in a shared folder) is refused, naming it, and the file it
// names is neither written nor emptied (it was emptied by the holder's
// text and its clearing).
func TestLockRefusesLink(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, "run.lock")
	if err := os.Symlink(victim, lockPath); err != nil {
		t.Fatal(err)
	}
	if unlock, err := Lock(context.Background(), lockPath, nil); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		if unlock != nil {
			unlock()
		}
		t.Errorf("Lock of a link: %v", err)
	}
	if err := WriteHolder(lockPath, "pageclass process 1"); err == nil {
		t.Error("WriteHolder wrote through a link")
	}
	ClearHolder(lockPath)
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the linked file holds %q, want keep", b)
	}
	// A lock file of its own is written and emptied.
	own := filepath.Join(dir, "own.lock")
	unlock, err := Lock(context.Background(), own, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := WriteHolder(own, "pageclass process 1"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(own); string(b) != "pageclass process 1\n" {
		t.Errorf("holder %q", b)
	}
	ClearHolder(own)
	if b, _ := os.ReadFile(own); len(b) != 0 {
		t.Errorf("cleared holder %q", b)
	}
}
