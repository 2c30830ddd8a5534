package filelock

import (
	"context"
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
