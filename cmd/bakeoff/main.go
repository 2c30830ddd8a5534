// Command bakeoff compares translation backends on real segments (spec
// translation 4.1 eval/bakeoff.py): ALTO TextBlocks and the targeted fields
// of metadata records, each translated by every backend named, scored with
// reference-free checks (length ratio, numbers kept, vocabulary terms hit)
// and, with a references file, sentence chrF and BLEU equal to sacrebleu's.
// A failing backend call is recorded in its row and the run goes on. It
// prints a summary table and writes one CSV row per segment and backend.
//
// Usage:
//
//	bakeoff --samples PATH[,PATH...] [--backends mtapi,ct2,...] [--refs REFS.csv]
//	        [--limit N] [--out bakeoff.csv] [--src auto] [--tgt en]
//	        [--xpaths FIELDS] [--vocabulary VOCAB.csv]
//
// Backends are configured from the environment exactly as translate's are
// (TRANSLATION_URL and MTAPI_* for mtapi, LLM_* for chat_compatible, CT2_*
// for ct2). The references file is a CSV with the header
// segment_id,reference; segment ids are the first column of the output.
// With --src auto (the default) each segment's language is detected as the
// translator does; "auto" is never sent to a backend.
//
// Exit codes: 0 finished; 1 usage or input error; 3 no backend call
// succeeded.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"archivekit/internal/cliflags"
	"archivekit/internal/resources"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/bakeoff"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/session"
	"archivekit/internal/translate/vocab"
)

const (
	exitOK      = cliflags.ExitOK
	exitUsage   = cliflags.ExitUsage
	exitFailure = cliflags.ExitFailure
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := cliflags.New("bakeoff", stderr)
	var f flags
	f.define(fs.FlagSet)
	if code, stop := fs.Parse(args, stdout); stop {
		return code
	}
	usage := fs.Misuse
	names := splitList(f.backends)
	if msg := f.check(names, getenv); msg != "" {
		return usage("%s", msg)
	}
	segs, err := f.segments(getenv, stderr)
	if err != nil {
		return usage("%v", err)
	}
	cfg, err := f.config(segs, stderr)
	if err != nil {
		return usage("%v", err)
	}
	for _, n := range names {
		b, err := session.OpenBackend(n, getenv)
		if err != nil {
			closeAll(cfg.Backends)
			return usage("backend %s: %v", n, err)
		}
		cfg.Backends = append(cfg.Backends, b)
	}
	defer closeAll(cfg.Backends)

	rows, runErr := bakeoff.Run(ctx, segs, cfg)
	if err := bakeoff.WriteCSV(f.out, rows, cfg.Vocabulary != nil); err != nil {
		fmt.Fprintln(stderr, "bakeoff:", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "%d segments × %d backends, source %s, target %s; rows in %s\n", len(segs), len(names), f.src, f.tgt, f.out)
	sums := bakeoff.Summarise(rows)
	bakeoff.WriteTable(stdout, sums)
	if runErr != nil {
		fmt.Fprintln(stderr, "bakeoff: stopped:", runErr)
		return exitFailure
	}
	return verdict(sums, f.out, stderr)
}

// flags are the command's flags.
type flags struct {
	samples, backends, refs, out, src, tgt, xpaths, vocabulary string
	limit                                                      int
}

func (f *flags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.samples, "samples", "", "comma-separated ALTO or metadata XML files or folders (required)")
	fs.StringVar(&f.backends, "backends", "mtapi", "comma-separated backends: mtapi, chat_compatible, ct2")
	fs.StringVar(&f.refs, "refs", "", "references CSV (segment_id,reference)")
	fs.IntVar(&f.limit, "limit", 0, "use at most this many segments (0: all)")
	fs.StringVar(&f.out, "out", "bakeoff.csv", "the per-segment CSV to write")
	fs.StringVar(&f.src, "src", "auto", "source language, or auto to detect per segment")
	fs.StringVar(&f.tgt, "tgt", "en", "target language")
	fs.StringVar(&f.xpaths, "xpaths", "", "field list of metadata mode (default: the translator's)")
	fs.StringVar(&f.vocabulary, "vocabulary", "", "vocabulary CSV for the terminology check")
}

// check validates the flags and the environment of each backend named; it
// returns the usage error's message, or "".
func (f *flags) check(names []string, getenv func(string) string) string {
	switch {
	case f.samples == "":
		return "--samples is required"
	case len(names) == 0:
		return "--backends names no backend"
	case f.limit < 0:
		return fmt.Sprintf("--limit %d: want 0 (all) or more", f.limit)
	case f.tgt == "" || f.tgt == "auto":
		return "--tgt must be a language code"
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return fmt.Sprintf("backend %s named twice", n)
		}
		seen[n] = true
		if err := session.CheckConfig(n, getenv); err != nil {
			return fmt.Sprintf("backend %s: %v", n, err)
		}
	}
	return ""
}

// segments loads the segments of the samples (at most --limit), with the
// field list of metadata mode; loading warnings go to stderr.
func (f *flags) segments(getenv func(string) string, stderr io.Writer) ([]bakeoff.Segment, error) {
	res := &resources.Resolver{Getenv: getenv}
	ff, err := res.Find(resources.Fields, f.xpaths)
	if err != nil {
		return nil, fmt.Errorf("field list: %v", err)
	}
	data, err := ff.ReadFile()
	if err != nil {
		return nil, fmt.Errorf("field list: %v", err)
	}
	fields, err := metadata.ParseFields(ff.String(), data)
	if err != nil {
		return nil, err
	}
	segs, warnings, err := bakeoff.LoadSegments(splitList(f.samples), fields)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "bakeoff: warning:", w)
	}
	if f.limit > 0 && len(segs) > f.limit {
		segs = segs[:f.limit]
	}
	if len(segs) == 0 {
		return nil, fmt.Errorf("no segments in %s", f.samples)
	}
	return segs, nil
}

// config is the bakeoff's configuration but its backends: languages,
// references (a warning counts those naming no segment of segs),
// vocabulary, and the language detector when the source is detected.
func (f *flags) config(segs []bakeoff.Segment, stderr io.Writer) (bakeoff.Config, error) {
	cfg := bakeoff.Config{Source: f.src, Target: f.tgt}
	var err error
	if f.refs != "" {
		if cfg.Refs, err = bakeoff.LoadRefs(f.refs); err != nil {
			return cfg, err
		}
		ids := map[string]bool{}
		for _, s := range segs {
			ids[s.ID] = true
		}
		unknown := 0
		for id := range cfg.Refs {
			if !ids[id] {
				unknown++
			}
		}
		if unknown > 0 {
			fmt.Fprintf(stderr, "bakeoff: warning: %d references name no segment of this run\n", unknown)
		}
	}
	if f.vocabulary != "" {
		if cfg.Vocabulary, err = vocab.Load(f.vocabulary); err != nil {
			return cfg, err
		}
	}
	if f.src == "" || f.src == "auto" {
		cfg.Detector = langid.Shared()
	}
	return cfg, nil
}

// verdict is the exit code of a finished run: a failure when no call
// succeeded or every call to one backend failed.
func verdict(sums []bakeoff.Summary, out string, stderr io.Writer) int {
	ok := 0
	var dead []string
	for _, s := range sums {
		ok += s.OK
		if s.OK == 0 && s.Failed > 0 {
			dead = append(dead, s.Backend)
		}
	}
	if ok == 0 {
		fmt.Fprintln(stderr, "bakeoff: no backend call succeeded; see the error column of", out)
		return exitFailure
	}
	if len(dead) > 0 {
		// Its summary line compares nothing: a comparison that silently
		// lacks a backend must not pass as a finished one.
		fmt.Fprintf(stderr, "bakeoff: every call to %s failed; see the error column of %s\n", strings.Join(dead, ", "), out)
		return exitFailure
	}
	return exitOK
}

func closeAll(bs []backend.Backend) {
	for _, b := range bs {
		b.Close()
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
