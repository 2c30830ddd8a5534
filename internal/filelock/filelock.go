// Package filelock takes exclusive advisory locks (flock) on files, so that
// processes sharing a folder take turns at one piece of work. A lock dies
// with its process: a killed holder never leaves the work locked.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Lock takes an exclusive flock on path (created, with its folder, if
// missing). When another process holds it, onWait (if not nil) is called
// once, and Lock waits until the lock is free or ctx ends; unlock releases
// it.
func Lock(ctx context.Context, path string, onWait func()) (unlock func(), err error) {
	return lock(ctx, path, onWait, syscall.LOCK_EX)
}

// LockShared takes a shared flock on path, as Lock does: any number of
// shared holders at once, none while an exclusive (Lock) holder has it. It
// lets runs that may work side by side hold off one that must work alone.
func LockShared(ctx context.Context, path string, onWait func()) (unlock func(), err error) {
	return lock(ctx, path, onWait, syscall.LOCK_SH)
}

// LockDir takes an exclusive flock on the folder dir itself (it must
// exist), as Lock does on a file: no lock file is left in the folder, and
// every process that reaches the folder, whatever its temporary folder,
// takes the same lock.
func LockDir(ctx context.Context, dir string, onWait func()) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	return wait(ctx, f, onWait, syscall.LOCK_EX)
}

// lock takes a flock of kind (LOCK_EX or LOCK_SH) on path.
func lock(ctx context.Context, path string, onWait func(), kind int) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, err
	}
	f, err := openNoLink(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
	}
	return wait(ctx, f, onWait, kind)
}

// openNoLink opens path with flag, refusing a symbolic link (O_NOFOLLOW)
// and anything but a regular file: a link another user planted in a
// shared folder under a lock's name had the file it named written, and
// emptied, by the run that took the lock.
func openNoLink(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW, 0o666)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link, and a lock file never is (one planted in a shared folder?): remove it", path)
	}
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file, and a lock file always is: remove it", path)
	}
	return f, nil
}

// WriteHolder writes text (Holder's) into the file at path, emptied
// first, for a waiting process's log line; a link or anything but a
// regular file is refused, not written through.
func WriteHolder(path, text string) error {
	f, err := openNoLink(path, os.O_WRONLY|os.O_CREATE)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err = f.WriteString(text + "\n")
	return err
}

// ClearHolder empties the file at path that WriteHolder wrote (a link is
// left alone).
func ClearHolder(path string) {
	if f, err := openNoLink(path, os.O_WRONLY); err == nil {
		_ = f.Truncate(0)
		f.Close()
	}
}

// wait takes a flock of kind on the open file f, waiting as Lock does; f
// is closed with the unlock or on failure.
func wait(ctx context.Context, f *os.File, onWait func(), kind int) (unlock func(), err error) {
	fd := int(f.Fd())
	release := func() { syscall.Flock(fd, syscall.LOCK_UN); f.Close() }
	if syscall.Flock(fd, kind|syscall.LOCK_NB) == nil {
		return release, nil
	}
	if onWait != nil {
		onWait()
	}
	got := make(chan error, 1)
	go func() { got <- syscall.Flock(fd, kind) }()
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

// Holder names this process for the others that find its lock taken:
// "<tool> process <pid> of <user> on <host>, started <time>" (written in a
// lock file or beside the locked folder). In a folder a team shares, or
// one on a network disk, the process number alone does not say whose run
// to ask about.
func Holder(tool string) string {
	name := strconv.Itoa(os.Getuid())
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		name += " on " + host
	}
	return fmt.Sprintf("%s process %d of %s, started %s", tool, os.Getpid(), name, time.Now().UTC().Format(time.RFC3339))
}
