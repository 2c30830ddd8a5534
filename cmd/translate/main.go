// Command translate translates the text of ALTO OCR documents and archival
// metadata XML, keeping every other byte (spec translation 4.1):
//
//	translate [input_path] [flags]
//
// input_path is a file, a directory (searched recursively for the --formats
// extensions), an http(s) URL, or a .txt file listing URLs one per line.
// URLs are downloaded to --download-dir first and then handled as files.
// For each document it writes <stem>_<lang><suffix> and <stem>_log.csv to
// --output, and once per run the run metadata YYMMDD-HHmmss_translator.json.
//
// --shard i/n translates only the inputs whose path relative to input_path
// (the URL, for URLs) hashes to i of n (internal/shard), so n runs on n machines
// translate each input exactly once; each writes its run metadata as
// YYMMDD-HHmmss_translator_shard-<i>-of-<n>.json, and a shard that holds
// none of the inputs exits 0 without writing anything.
//
// Exit codes: 0 success (at least one document translated), 1 usage error,
// 2 no input, 3 failure (nothing translated, or the run could not proceed),
// 75 incomplete (passing failures left files to do; --merge: a shard is
// missing or has not completed).
package main

import (
	"context"
	"os"

	"archivekit/internal/cliflags"
)

func main() {
	// Ctrl-C or SIGTERM cancels the run with the signal as the cause: the
	// run stops between documents, records itself interrupted and exits
	// 130 (143 after SIGTERM); a second one ends the program at once.
	ctx, stop := cliflags.SignalContext(context.Background())
	code := runIn(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
