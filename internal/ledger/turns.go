package ledger

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"archivekit/internal/filelock"
)

// Turn says which runs take turns (TakeTurn).
type Turn struct {
	// Lock is the lock file a whole run holds alone and the shards of a
	// run hold shared with each other (<output>/ledger/<name>.lock).
	Lock string
	// Shard is a shard run's file suffix ("_shard-<i>-of-<n>",
	// shard.Spec.FileSuffix); "" for a whole run. A shard also holds its
	// own share's lock alone (<lock without .lock><Shard>.lock).
	Shard string
	// Tool names the holder in the lock file ("<tool> process <pid> of
	// <user> on <host>, started <time>").
	Tool string
	// Output is the tool's output folder, named in the log line and errors.
	Output string
	// Waiting is the log line of a run that finds the lock taken and waits.
	Waiting string
	// OnWait, when set (tests), is called with the lock's path when the run
	// starts to wait.
	OnWait func(lock string)
}

// TakeTurn makes runs that write one output take turns: a whole run holds
// t.Lock alone; a shard run holds it shared with the other shards (they
// write different inputs and their own ledger files) and its own share's
// lock alone. A run that finds the lock taken logs t.Waiting with the
// output folder, the run holding it (read from the lock file) and the
// lock, and waits until it is free or ctx ends. A caller opens its ledger
// only once it has its turn, so it continues from the other run's ledger.
// The returned unlock releases the locks; a killed holder releases them
// too (flock).
func TakeTurn(ctx context.Context, t Turn, log *slog.Logger) (unlock func(), err error) {
	wait := func(path string) func() {
		return func() {
			holder := "shard runs of this folder"
			if b, _ := os.ReadFile(path); len(strings.TrimSpace(string(b))) > 0 {
				holder = strings.TrimSpace(string(b))
			}
			log.Warn(t.Waiting, "output", t.Output, "holder", holder, "lock", path)
			if t.OnWait != nil {
				t.OnWait(path)
			}
		}
	}
	if t.Shard == "" {
		return t.exclusive(ctx, t.Lock, wait(t.Lock))
	}
	unlockWhole, err := filelock.LockShared(ctx, t.Lock, wait(t.Lock))
	if err != nil {
		return nil, fmt.Errorf("output folder %s: %w", t.Output, err)
	}
	share := strings.TrimSuffix(t.Lock, ".lock") + t.Shard + ".lock"
	unlockShare, err := t.exclusive(ctx, share, wait(share))
	if err != nil {
		unlockWhole()
		return nil, err
	}
	return func() { unlockShare(); unlockWhole() }, nil
}

// exclusive takes path alone and writes who holds it (process, start, in
// the lock file, for a waiting run's log line); unlock empties it again.
func (t Turn) exclusive(ctx context.Context, path string, onWait func()) (unlock func(), err error) {
	release, err := filelock.Lock(ctx, path, onWait)
	if err != nil {
		return nil, fmt.Errorf("output folder %s: %w", t.Output, err)
	}
	_ = filelock.WriteHolder(path, filelock.Holder(t.Tool)) // only informs the log line of a waiting run
	return func() { filelock.ClearHolder(path); release() }, nil
}

// TurnLock is the path of the lock file <output>/ledger/<name>.lock.
func TurnLock(output, name string) string {
	return filepath.Join(output, Folder, name+".lock")
}
