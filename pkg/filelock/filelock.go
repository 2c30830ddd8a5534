// Package filelock takes exclusive advisory locks (flock) on files, so that
// processes sharing a folder take turns at one piece of work. A lock dies
// with its process: a killed holder never leaves the work locked.
package filelock

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
)

// Lock takes an exclusive flock on path (created, with its folder, if
// missing). When another process holds it, onWait (if not nil) is called
// once, and Lock waits until the lock is free or ctx ends; unlock releases
// it.
func Lock(ctx context.Context, path string, onWait func()) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	release := func() { syscall.Flock(fd, syscall.LOCK_UN); f.Close() }
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return release, nil
	}
	if onWait != nil {
		onWait()
	}
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(fd, syscall.LOCK_EX) }()
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, err
		}
		return release, nil
	case <-ctx.Done():
		go func() { <-got; f.Close() }() // closing releases a lock taken late
		return nil, ctx.Err()
	}
}
