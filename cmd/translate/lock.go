package main

import (
	"context"
	"log/slog"

	"archivekit/internal/ledger"
	"archivekit/internal/shard"
)

// lockWaitHook, when set (tests), is called with the lock's path when a run
// finds another run writing to its output folder and starts to wait.
var lockWaitHook func(lock string)

// lockOutput makes runs into one output folder take turns
// (ledger.TakeTurn): a whole run holds <output>/ledger/translate.lock
// alone; a shard run holds it shared with the other shards (they write
// different inputs' outputs and their own run metadata, ledger and failures
// files) and holds its own share's lock, translate_shard-<i>-of-<n>.lock,
// alone. A run that finds the folder taken logs which run holds it and
// waits; it opens the ledger only once it has the lock, so with --resume it
// continues from the other run's ledger.
func lockOutput(ctx context.Context, out string, sh shard.Spec, log *slog.Logger) (unlock func(), err error) {
	return ledger.TakeTurn(ctx, ledger.Turn{Lock: ledger.TurnLock(out, "translate"), Shard: sh.FileSuffix(), Tool: "translate", Output: out,
		Waiting: "waiting for another run writing to the same output folder to finish; with --resume this run then continues from its ledger",
		OnWait:  lockWaitHook}, log)
}
