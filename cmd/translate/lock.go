package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"archivekit/internal/filelock"
	"archivekit/internal/shard"
)

// lockWaitHook, when set (tests), is called with the lock's path when a run
// finds another run writing to its output folder and starts to wait.
var lockWaitHook func(lock string)

// lockOutput makes runs into one output folder take turns: a whole run
// holds <output>/ledger/translate.lock alone; a shard run holds it shared
// with the other shards (they write different inputs' outputs and their own
// run metadata, ledger and failures files) and holds its own share's lock,
// translate_shard-<i>-of-<n>.lock, alone. A run that finds the folder taken
// logs which run holds it and waits; it opens the ledger only once it has the
// lock, so with --resume it continues from the other run's ledger. The
// returned unlock releases the locks; a killed holder releases them too.
func lockOutput(ctx context.Context, out string, sh shard.Spec, log *slog.Logger) (unlock func(), err error) {
	dir := filepath.Join(out, LedgerFolder)
	wait := func(path string) func() {
		return func() {
			holder := "shard runs of this folder"
			if b, _ := os.ReadFile(path); len(strings.TrimSpace(string(b))) > 0 {
				holder = strings.TrimSpace(string(b))
			}
			log.Warn("waiting for another run writing to the same output folder to finish; with --resume this run then continues from its ledger",
				"output", out, "holder", holder, "lock", path)
			if lockWaitHook != nil {
				lockWaitHook(path)
			}
		}
	}
	whole := filepath.Join(dir, "translate.lock")
	if sh.Whole() {
		return exclusive(ctx, whole, wait(whole))
	}
	unlockWhole, err := filelock.LockShared(ctx, whole, wait(whole))
	if err != nil {
		return nil, fmt.Errorf("output folder %s: %w", out, err)
	}
	share := filepath.Join(dir, "translate"+sh.FileSuffix()+".lock")
	unlockShare, err := exclusive(ctx, share, wait(share))
	if err != nil {
		unlockWhole()
		return nil, err
	}
	return func() { unlockShare(); unlockWhole() }, nil
}

// exclusive takes path alone and writes who holds it (process, start, in
// the lock file, for a waiting run's log line); unlock empties it again.
func exclusive(ctx context.Context, path string, onWait func()) (unlock func(), err error) {
	release, err := filelock.Lock(ctx, path, onWait)
	if err != nil {
		return nil, fmt.Errorf("output folder %s: %w", filepath.Dir(filepath.Dir(path)), err)
	}
	holder := fmt.Sprintf("translate process %d, started %s", os.Getpid(), time.Now().UTC().Format(time.RFC3339))
	os.WriteFile(path, []byte(holder+"\n"), 0o644) // only informs the log line of a waiting run
	return func() { os.Truncate(path, 0); release() }, nil
}
