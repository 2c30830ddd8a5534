// Command pageclass classifies scanned page images into 11 categories with
// one TorchScript model or the five-model ensemble (spec
// page-classification 4.1), and drives training, evaluation and fold
// averaging.
//
// setup/config.txt is read before the flags are parsed and supplies their
// defaults; a flag given on the command line wins. The two-letter short forms
// of the original tool (-tn, -ff, -rev, -ap) are accepted.
//
// Exit codes (the translator's): 0 success (also when some files could not be
// read: they are logged and listed in the run metadata); 1 usage error (bad
// flags or configuration); 2 no input (no file or folder, or nothing to
// classify in it); 3 failure (a model could not be loaded or failed, an output
// could not be written, or no page at all was classified); 75 incomplete: a
// passing failure (a full disk, an I/O error, the hub timed out or answered
// 5xx) left files to do, not recorded as failed; --resume finishes them (and
// --merge: a shard is missing or has not completed).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/alecthomas/kong"

	"archivekit/internal/cliflags"
	"archivekit/internal/ledger"
	"archivekit/internal/logging"
	"archivekit/internal/pageclass/glossary"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/settings"
	"archivekit/internal/resources"
)

// Exit codes (cliflags).
const (
	exitOK      = cliflags.ExitOK
	exitUsage   = cliflags.ExitUsage
	exitNoInput = cliflags.ExitNoInput
	exitFailure = cliflags.ExitFailure
)

func main() {
	// A decoder process of a run (imageio.Isolation) serves and exits here.
	imageio.ServeIfWorker()
	// Ctrl-C or SIGTERM cancels the run with the signal as the cause
	// (cliflags.Stopped); a second one ends the program at once.
	// A reader of stdout that goes away (| head -1) fails the writes there
	// (printed says so) instead of killing the run before its tables.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := cliflags.SignalContext(context.Background())
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// exitInterrupted is the exit code of a run stopped by Ctrl-C (128 + SIGINT);
// SIGTERM gives 143.
const exitInterrupted = cliflags.ExitInterrupted

// interrupted returns the exit code of a run whose context was cancelled:
// that of the signal that stopped it (cliflags.Stopped.Code), else
// exitInterrupted.
func interrupted(ctx context.Context) int {
	if s, ok := cliflags.StoppedBy(ctx); ok {
		return s.Code()
	}
	return exitInterrupted
}

// logSink is the log destination; it is switched to the progress bar while
// the bar is shown so log lines print above it.
type logSink struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool // the original destination is a terminal
}

// Terminal tells internal/logging whether the log reaches a terminal (readable
// text there, JSON lines otherwise).
func (s *logSink) Terminal() bool { return s.tty }

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	w := s.w
	s.mu.Unlock()
	return w.Write(p)
}

func (s *logSink) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

// run parses args and runs pageclass; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	sink := &logSink{w: stderr, tty: logging.IsTerminal(stderr)}
	log, err := logging.FromEnv(sink)
	if err != nil {
		fmt.Fprintln(stderr, "pageclass:", err)
		return exitUsage
	}
	// A usage error is a plain line on a terminal and a log record
	// otherwise, as translate's are: a script reading stderr as JSON
	// lines read this one line of plain text.
	usage := plainUsage(stderr)
	if !sink.tty {
		usage = func(err error) { log.Error("usage error", "error", err.Error()) }
	}
	p, code, done := parseArgs(args, stdout, stderr, usage)
	if done {
		return code
	}
	if p.config.Embedded {
		// The shipped defaults, as installed: nothing to attend to.
		log.Debug("no config file found: using the built-in copy of "+DefaultConfig, "looked_for", DefaultConfig)
	} else {
		log.Debug("config read", "file", p.configPath, "from", p.config.From)
	}
	for _, k := range p.settings.Unknown {
		log.Warn("unknown config key (misspelt?)", "file", p.configPath, "key", k)
	}
	warnAddressSpace(log)
	if w := cliflags.ZoneWarning(os.Getenv("TZ"), "the run's stamps"); w != "" {
		log.Warn(w)
	}
	r := &runner{cli: p.cli, settings: p.settings, configPath: p.configPath, config: p.config, log: log, logSink: sink, stdout: stdout, stderr: stderr}
	err = r.main(ctx)
	if err != nil && ctx.Err() != nil {
		msg := "interrupted: the run stopped before the end; the tables and the run metadata hold the pages done so far: run again with --resume to classify the rest"
		if c := p.cli; c.Train || c.Eval || c.Average {
			// --resume continues a classification only (it refuses
			// these): a training or evaluation is run again.
			msg = "interrupted: the training or evaluation stopped before its end and is not continued by --resume: run it again (the run metadata says what was done)"
		}
		log.Error(msg, "error", context.Cause(ctx).Error())
		return interrupted(ctx)
	}
	return exitCode(err, log)
}

// minAddressSpace is the address space below which a run is warned: the
// libtorch runtime, its threads and a model reserve about 3 GB of it (under
// ulimit -v 2000000 a run ended with "pthread_create failed" and a stack
// dump, or the models' "could not create a primitive").
const minAddressSpace = 3 << 30

// warnAddressSpace says, before the run, that an address-space limit
// (ulimit -v) below minAddressSpace is likely to end it with a crash.
func warnAddressSpace(log *slog.Logger) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil || lim.Cur >= minAddressSpace {
		return
	}
	log.Warn(fmt.Sprintf("the address-space limit (ulimit -v) is %.1f GB: the models need about 3 GB, and a lower limit ends the run with a crash (pthread_create failed, or could not create a primitive)", float64(lim.Cur)/(1<<30)),
		"hint", "raise it (ulimit -v unlimited, or at least 3000000 KB); --decode-memory caps the decoders alone")
}

// plainUsage writes a usage error as a line of text to w.
func plainUsage(w io.Writer) func(error) {
	return func(err error) { fmt.Fprintln(w, "pageclass:", err) }
}

// parsed is a parsed and validated command line.
type parsed struct {
	cli        *CLI
	settings   settings.Settings
	configPath string
	config     resources.File
}

// parseArgs reads the config file, parses args over its defaults and
// validates the result. When done is set the program ends with code (after
// --help, or on a usage error, already reported on stderr).
func parseArgs(args []string, stdout, stderr io.Writer, usage func(error)) (p parsed, code int, done bool) {
	args = rewriteShorts(args)
	cfgPath, err := findConfig(args)
	if err != nil {
		usage(err)
		return p, exitUsage, true
	}
	settings, ini, err := loadSettings(cfgPath)
	if err != nil {
		usage(err)
		return p, exitUsage, true
	}
	var cli CLI
	parser, err := cliflags.NewKong("pageclass", &cli, stdout, stderr,
		kong.Description(description()),
		kong.ExplicitGroups(groups),
		vars(settings),
	)
	if err != nil {
		fmt.Fprintln(stderr, "pageclass:", err)
		return p, exitFailure, true
	}
	kctx, code, done, err := parser.Parse(args)
	if done {
		return p, code, true
	}
	var pe *kong.ParseError
	if kctx == nil && errors.As(err, &pe) {
		kctx = pe.Context
	}
	cli.Given = givenIn(kctx)
	cli.Origin = valueOrigins(cli.Given, cfgPath, ini)
	if err != nil {
		usage(fmt.Errorf("%v (see pageclass --help)", withOrigin(err, kongFlag(err), cli.Origin)))
		return p, exitUsage, true
	}
	cli.applyDefaults(settings)
	cli.labelledPages(&settings)
	settings.Setup.Batch = cli.Batch // --batch, else [SETUP] batch
	if err := cli.validate(); err != nil {
		usage(err)
		return p, exitUsage, true
	}
	return parsed{cli: &cli, settings: settings, configPath: cfgPath.Path, config: cfgPath}, 0, false
}

func exitCode(err error, log interface{ Error(string, ...any) }) int {
	code := cliflags.Code(err)
	if code == exitFailure && ledger.Transient(err) {
		// A passing failure stopped the run (a full disk, the hub timed
		// out or answered 5xx): nothing it did not record was recorded
		// failed, so a --resume finishes it.
		code = cliflags.ExitIncomplete
	}
	var notReady cliflags.NotReadyError
	switch {
	case code == exitOK:
	case errors.As(err, &notReady):
		log.Error("merge not possible yet", "error", err.Error())
		return code
	}
	switch code {
	case exitOK:
	case exitFailure:
		log.Error("run failed", "error", err.Error())
	case cliflags.ExitIncomplete:
		log.Error("run incomplete after a passing failure; run again with --resume to finish it", "error", err.Error())
	case exitUsage:
		log.Error("usage error", "error", err.Error())
	case exitNoInput:
		// As translate's: the same message, the cause in error.
		log.Error("no input", "error", err.Error())
	default:
		log.Error(err.Error())
	}
	return code
}

// checkRevision is registry.CheckRevision naming the flag.
func checkRevision(rev string) error {
	if err := registry.CheckRevision(rev); err != nil {
		return fmt.Errorf("-rev/--revision: %w", err)
	}
	return nil
}

// description is the text of --help above the flags: what pageclass does
// and the 11 categories in words, with where their glossary is.
func description() string {
	var b strings.Builder
	b.WriteString("Classify scanned pages (PNG, JPEG, TIFF, WebP, JPEG 2000, PDF; folders, files, and books by their METS file or IIIF manifest, as a path or URL) into 11 categories with one model or the five-model ensemble; train, evaluate and average models.\n\n")
	fmt.Fprintf(&b, "Categories (glossary: %s of the release tree, %s in the source):\n", glossary.Installed, glossary.Document)
	for _, e := range glossary.Entries {
		fmt.Fprintf(&b, "  %-8s %s\n", e.Category, cliflags.Wrap(e.Description, 76, strings.Repeat(" ", 11)))
	}
	b.WriteString("\n" + cliflags.ExitCodesHelp)
	return b.String()
}
