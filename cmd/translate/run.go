package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"archivekit/internal/atomicfile"
	"archivekit/internal/book"
	"archivekit/internal/cliflags"
	"archivekit/internal/docrecord"
	"archivekit/internal/filekind"
	"archivekit/internal/ledger"
	"archivekit/internal/licence"
	"archivekit/internal/logging"
	"archivekit/internal/paradata"
	"archivekit/internal/progress"
	"archivekit/internal/regularfile"
	"archivekit/internal/resources"
	"archivekit/internal/shard"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chunker"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/langtag"
	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/session"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/transport"
	"archivekit/internal/translate/vocab"
	"archivekit/internal/translate/xsd"
)

var errNoInput = errors.New("no input")

// run is the whole command with the environment getenv (a variable set
// empty is taken as unset); it returns the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return runIn(ctx, args, func(k string) (string, bool) { v := getenv(k); return v, v != "" }, stdout, stderr)
}

// runIn is run with the environment lookup (os.LookupEnv), which tells a
// variable set empty from one unset.
func runIn(ctx context.Context, args []string, lookup func(string) (string, bool), stdout, stderr io.Writer) int {
	getenv := func(k string) string { v, _ := lookup(k); return v }
	log, err := logging.FromLookup(stderr, lookup)
	if err != nil {
		fmt.Fprintln(stderr, "translate:", err)
		return exitUsage
	}
	s, helped, err := parse(args, getenv, stdout)
	if helped {
		return exitOK
	}
	if err != nil {
		log.Error("usage error", "error", err, "hint", "translate --help lists the flags")
		return exitUsage
	}
	// The configuration's translation_url and public_services, read as
	// the variables they stand for from here on.
	if w := configURLNote(s, lookup); w != "" {
		log.Warn(w)
	}
	envLookup := lookup // the environment's own, without the file's
	envGetenv := func(k string) string { v, _ := envLookup(k); return v }
	lookup = withConfigEnv(s, lookup)
	getenv = func(k string) string { v, _ := lookup(k); return v }
	for _, k := range s.ConfigUnknown {
		// As pageclass says it: the file and the key apart.
		log.Warn("unknown config key (misspelt?)", "file", s.ConfigFile.Path, "key", k)
	}
	for _, w := range s.PathWarnings {
		log.Warn(w)
	}
	if w := cliflags.ZoneWarning(getenv("TZ"), "the run's stamps"); w != "" {
		log.Warn(w)
	}
	if !checkEnvironment(s, getenv, envGetenv, log) || !checkURLSettings(s, lookup, log) {
		return exitUsage
	}
	comps, err := loadComponents(s.ConfigFile, getenv)
	if err != nil {
		log.Error("licence components", "error", err)
		return exitFailure
	}
	if s.Merge {
		return mergeShards(s, comps, log)
	}
	r, ok := loadSetup(s, log)
	if !ok {
		return exitUsage
	}
	r.getenv, r.lookup, r.stderr, r.client = getenv, lookup, stderr, httpClient()
	r.trip, _ = circuitTrip(getenv) // checked by checkEnvironment
	inputs, all, code := r.gather(ctx)
	if code != exitOK {
		return code
	}
	if err := os.MkdirAll(s.Output, 0o777); err != nil {
		abs, _ := filepath.Abs(s.Output)
		log.Error("output directory", "dir", abs, "error", err,
			"hint", "give -o DIR, a folder you can write (the default is the configuration's output, else ./data_samples/translated_files of the current folder)")
		return exitFailure
	}
	if s.DocJSONOut != "" {
		// Written at the end: its folder is checked before the work.
		if err := atomicfile.PrepareDir(filepath.Dir(s.DocJSONOut), "--document-json-out: the folder of"); err != nil {
			log.Error("document record", "error", err)
			return exitFailure
		}
	}
	// Runs into one output folder take turns (shards of one run share it).
	unlock, err := lockOutput(ctx, s.Output, s.Shard, log)
	if err != nil {
		log.Error("output directory", "error", err)
		return exitFailure
	}
	defer unlock()
	return r.start(ctx, comps, inputs, all)
}

// lemmatizerAdvice is the error of a run that has no lemmatiser while the
// public one is refused (err, which names the variables): when the
// configuration file refused it (envGetenv, the environment without the
// file's settings, does not), the error says so and names the file's
// key that gives the way out (the variable it named was never set).
func lemmatizerAdvice(s *settings, envGetenv func(string) string, err error) error {
	fromFile := strings.EqualFold(strings.TrimSpace(s.EnvFromConfig[transport.EnvPublicServices]), "refuse") &&
		!strings.EqualFold(strings.TrimSpace(envGetenv(transport.EnvPublicServices)), "refuse")
	if !fromFile {
		return fmt.Errorf("%w (a configuration file may say it too: lemmatizer_url = off, or the address)", err)
	}
	return fmt.Errorf("no lemmatiser: public_services = refuse in %s refuses the public one; add lemmatizer_url = <the address of your UDPipe service> to that file, or lemmatizer_url = off to match no single vocabulary word (or set %s)",
		cmp.Or(s.ConfigFile.Path, s.ConfigPath, "the configuration file"), envLemmatizer)
}

// checkEnvironment refuses, as usage errors, a backend's missing or bad
// environment (LLM_BASE_URL, CT2_MODEL_DIR, ...) and the other environment
// values the run reads, before anything is read or written.
func checkEnvironment(s *settings, getenv, envGetenv func(string) string, log *slog.Logger) bool {
	if err := session.CheckConfig(s.Backend, getenv); err != nil {
		log.Error("usage error", "backend", s.Backend, "error", err)
		return false
	}
	if err := session.CheckEnv(getenv); err != nil {
		if strings.Contains(err.Error(), envLemmatizer) {
			err = lemmatizerAdvice(s, envGetenv, err)
		}
		log.Error("usage error", "error", err)
		return false
	}
	if _, err := circuitTrip(getenv); err != nil {
		log.Error("usage error", "error", err)
		return false
	}
	return true
}

// checkURLSettings refuses, for the mtapi backend, a variable naming the
// translation API that is set but empty (the text went to the public
// hosted service as if it were unset), and says which one is used when
// two name different addresses (mtapi.CheckURLSettings).
func checkURLSettings(s *settings, lookup func(string) (string, bool), log *slog.Logger) bool {
	if s.Backend != mtapi.Name {
		return true
	}
	note, err := mtapi.CheckURLSettings(lookup)
	if err != nil {
		log.Error("usage error", "backend", s.Backend, "error", err)
		return false
	}
	if note != "" {
		log.Warn(note)
	}
	return true
}

// loadSetup loads the set-up files into a new runner: the field list, the
// vocabulary and the baseline record, and checks the --xsd path. Files
// given explicitly must exist (a usage error, logged, and ok false); the
// configured defaults may be missing (with a warning for the vocabulary).
func loadSetup(s *settings, log *slog.Logger) (r *runner, ok bool) {
	r = &runner{s: s, log: log}
	r.fields, r.fieldsErr = translator.LoadFields(s.FieldsFile, s.FieldsErr)
	if r.fieldsErr != nil && s.FieldsExplicit {
		log.Error("usage error", "error", fmt.Errorf("--xpaths: %w", r.fieldsErr))
		return nil, false
	}
	if r.fieldsErr != nil {
		// Said once before the run, not only as each metadata document's
		// failure: ALTO, PAGE and hOCR need no field list.
		log.Warn("the metadata field list cannot be read; metadata records will fail, ALTO, PAGE and hOCR are translated",
			"error", r.fieldsErr, "hint", "give --xpaths FILE or set "+resources.Fields.Env)
	}
	// A schema path that is not there is a usage error too (before, each run
	// only warned that validation was skipped); a URL is fetched in the run.
	if s.XSD != "" {
		if err := xsd.CheckPath(s.XSD); err != nil {
			log.Error("usage error", "error", fmt.Errorf("--xsd: %w", err))
			return nil, false
		}
	}
	if s.Vocabulary != "" {
		v, err := vocab.Load(s.Vocabulary)
		switch {
		case err == nil:
			r.vocabulary = v
		case s.VocabularyExplicit:
			log.Error("usage error", "error", fmt.Errorf("--vocabulary: %w", err))
			return nil, false
		default:
			// The configured vocabulary (not given on the command line):
			// absent, as in a fresh install, is a note; present but
			// unreadable needs attention.
			level := slog.LevelWarn
			if errors.Is(err, fs.ErrNotExist) {
				level = slog.LevelInfo
			}
			log.Log(context.Background(), level, "vocabulary not loaded; translating without it", "error", err,
				"hint", "harvest one with load-vocab --out FILE, or give --vocabulary FILE (--vocabulary '' turns this off)")
		}
	}
	if s.DocJSON != "" {
		var err error
		if r.baseline, err = docrecord.Load(s.DocJSON); err != nil {
			log.Error("usage error", "error", fmt.Errorf("--document-json: %w", err))
			return nil, false
		}
		// Refused before anything is translated, not after the whole run.
		if err := docrecord.CheckBaseline(r.baseline); err != nil {
			log.Error("usage error", "error", fmt.Errorf("--document-json %s: %w; nothing translated", s.DocJSON, err))
			return nil, false
		}
	}
	return r, true
}

// gather collects the inputs: this run's share and all of them. A code
// other than exitOK ends the run (the reason is logged).
func (r *runner) gather(ctx context.Context) (inputs []input, all []string, code int) {
	s, log := r.s, r.log
	inputs, all, bk, err := collect(ctx, s, r.client, func(path, reason string) {
		r.notCollected = append(r.notCollected, map[string]string{"file": path, "reason": reason})
		log.Info(reason, "file", path)
	})
	if len(bk) == 1 && bk[0].Source == s.Input {
		r.book = bk[0] // the input is a book
	} else {
		r.books = bk // the books of a list or a folder
	}
	if err != nil {
		switch {
		case errors.Is(err, errBook):
			log.Error("cannot read the book", "input_path", s.Input, "error", err)
			return nil, nil, exitFailure
		case errors.Is(err, errNoInput):
			if s.InputFrom != "" {
				// A first run without arguments: say where the path came
				// from and how to give one.
				log.Error("no input", "error", err, "input_from", s.InputFrom,
					"hint", "give what to translate as the first argument: a file, a folder, a METS file, a IIIF manifest or a list of them (translate page.alto.xml -o out)")
				return nil, nil, exitNoInput
			}
			log.Error("no input", "error", err)
			return nil, nil, exitNoInput
		case errors.Is(err, book.ErrList):
			log.Error("usage error", "error", err)
			return nil, nil, exitUsage
		}
		log.Error("cannot read the inputs", "error", err)
		return nil, nil, exitFailure
	}
	unmatched := r.unmatchedFormats(all)
	r.warnNotCollected(unmatched)
	if err := bookFlagsWithoutBook(s, bk); err != nil {
		log.Error("usage error", "error", err, "input_path", s.Input)
		return nil, nil, exitUsage
	}
	if len(all) == 0 {
		// The cause in error, as every "no input" record (and
		// pageclass's) has it.
		log.Error("no input", "error", fmt.Sprintf("no file of %s to translate: none is ALTO, PAGE-XML or hOCR, and none ends in --formats %s", s.Input, s.FormatsRaw),
			"input_path", s.Input, "formats", s.FormatsRaw)
		return nil, nil, exitNoInput
	}
	if !s.Shard.Whole() {
		log.Info("shard", "shard", s.Shard.String(), "inputs", len(inputs), "inputs_all_shards", len(all))
	}
	return inputs, all, exitOK
}

// bookFlagsWithoutBook refuses --pages and --text-group for a whole run
// none of whose inputs is a book (a METS file or IIIF manifest): they
// select a book's pages, and a single ALTO file given --pages was
// translated whole without a word. A shard's share may hold no book of a
// run that has some, so a shard run is not refused.
func bookFlagsWithoutBook(s *settings, books []*bookInfo) error {
	if len(books) > 0 || !s.Shard.Whole() {
		return nil
	}
	var given []string
	if s.Pages != "" {
		given = append(given, "--pages")
	}
	if len(s.TextGroups) > 0 {
		given = append(given, "--text-group")
	}
	return book.SelectionWithoutBook(given, "translate")
}

// warnNotCollected says once, as a warning, how many files of a folder
// run were not collected (each is logged, and listed in the run
// metadata's config.not_collected) and, for those that are neither ALTO,
// PAGE-XML nor hOCR, the --formats that takes them as metadata records:
// a folder of records given without it is otherwise a run that
// translated nothing of it, with nothing above INFO to say why.
func (r *runner) warnNotCollected(unmatched []string) {
	if len(r.notCollected) == 0 {
		return
	}
	byExt := map[string]int{}
	for _, n := range r.notCollected {
		if strings.HasPrefix(n["reason"], notCollectedPrefix) {
			byExt[strings.TrimPrefix(strings.ToLower(filepath.Ext(n["file"])), ".")]++
		}
	}
	args := []any{"files", len(r.notCollected), "listed_in", "the run metadata's config.not_collected"}
	if len(byExt) > 0 {
		exts := slices.Sorted(maps.Keys(byExt))
		var given []string // the hint does not repeat a misspelt one
		for _, f := range r.s.Formats {
			if !slices.Contains(unmatched, f) {
				given = append(given, f)
			}
		}
		formats := strings.Join(append(given, exts...), ",")
		args = append(args, "not_text_files", byExt, "hint", "to translate them as metadata records, give --formats "+formats)
	}
	r.log.Warn("files of the folder not collected", args...)
}

// unmatchedFormats returns, and warns of, the extensions of a --formats
// given for a folder that no file of it ends in: a misspelt one
// (alto.xlm) was taken without a word, its files collected by their
// content all the same, and the hint to take more repeated it.
func (r *runner) unmatchedFormats(all []string) []string {
	s := r.s
	if fi, err := os.Stat(s.Input); !s.FormatsGiven || err != nil || !fi.IsDir() {
		return nil
	}
	names := slices.Clone(all)
	for _, n := range r.notCollected {
		names = append(names, n["file"])
	}
	var unmatched []string
	for _, f := range s.Formats {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(strings.ToLower(n), "."+f) }) {
			unmatched = append(unmatched, f)
		}
	}
	if len(unmatched) > 0 {
		r.log.Warn(fmt.Sprintf("--formats: no file of the folder ends in .%s (misspelt?)", strings.Join(unmatched, ", .")), "input_path", s.Input)
	}
	return unmatched
}

// environ is the process environment, for the names of the variables set
// (os.Environ; the values are read through the runner's getenv).
var environ = os.Environ

// start starts the run metadata and translates the inputs (an empty share
// of a shard run has nothing to do); it returns the exit code.
func (r *runner) start(ctx context.Context, comps *licence.Components, inputs []input, all []string) int {
	s, log := r.s, r.log
	r.usage = &translator.Usage{}
	session.WarnUnknownVariables(log, s.Backend, environ())
	if len(inputs) > 0 {
		// The backend is opened (a ct2 model loaded) before anything is
		// written: one that cannot be is a usage error, exit 1, leaving no
		// run metadata of a run that never started (it was exit 3, with a
		// failed run metadata, an empty failures table and a licence
		// warning).
		sess, err := session.Open(s.Backend, r.getenv)
		if err != nil {
			log.Error("usage error", "error", fmt.Sprintf("--backend %s (from %s): %v", s.Backend, s.BackendFrom, err))
			return exitUsage
		}
		r.opened = sess
	}
	pd, err := newRunRecord(s.Output, time.Now(), s.Shard, comps, r.usage, r.getenv)
	if err != nil {
		if r.opened != nil {
			r.opened.Close()
		}
		log.Error("run metadata", "error", err)
		return exitFailure
	}
	r.pd = pd
	if !s.Shard.Whole() {
		pd.shard(s.Shard, len(all), shard.InputsDigest(all), s.Input)
	}
	if len(inputs) == 0 {
		// An empty share (only a shard has one): another shard translates
		// the inputs, so nothing to do here is success; its run metadata
		// (no inputs) tells --merge that the share was run.
		r.logSummary(log)
		if err := pd.Finish(nil); err != nil {
			log.Error("run metadata not written", "path", pd.path, "error", err)
			return exitFailure
		}
		log.Info("run metadata written", "path", pd.path)
		return exitOK
	}
	return r.finish(log, comps, r.run(ctx, inputs))
}

// outputsGone is the error of a run whose outputs are not all there at
// its end (the output folder removed or emptied while it ran: the run made
// it again and said "completed", listing files that were gone): incomplete,
// so that the run metadata and the exit code say to run it again.
func outputsGone(outputs []string, inputOf map[string]string) error {
	var gone []string
	inputs := map[string]bool{}
	for _, o := range outputs {
		if _, err := os.Lstat(o); errors.Is(err, fs.ErrNotExist) {
			gone = append(gone, o)
			inputs[cmp.Or(inputOf[o], o)] = true
		}
	}
	if len(gone) == 0 {
		return nil
	}
	return cliflags.IncompleteError{Undone: len(inputs), Err: fmt.Errorf("%d of the %d files this run wrote are not there any more (first %s): the output folder was removed or changed while the run went on; run again to write them",
		len(gone), len(outputs), gone[0])}
}

// finish writes the failures table and the run metadata of a run that
// ended with runErr, and returns the exit code. log is the command's
// logger (the run's own, r.log, may write through the progress bar).
func (r *runner) finish(log *slog.Logger, comps *licence.Components, runErr error) int {
	pd := r.pd
	if runErr == nil {
		runErr = outputsGone(pd.outputs(), r.claimed)
	}
	if err := ledger.WriteFailures(pd.failuresPath(), r.failures); err != nil {
		runErr = errors.Join(runErr, fmt.Errorf("failures table: %w", err))
	} else {
		// Named in the configuration, not the outputs: those (and their
		// counts) are the translations and their logs.
		pd.SetConfig("failures_table", pd.failuresPath())
		log.Info("failures table written", "path", pd.failuresPath(), "rows", len(r.failures))
	}
	// The licence resolution's warnings (undeclared or unrecognised
	// components, ties) go to the log as well as to the run metadata; a
	// run in which no component counted (nothing translated: every file
	// failed, or had no text) has its UNKNOWN licence in the run metadata
	// only, not as a last warning under the errors that said why.
	if used := r.usage.Components(); len(used) > 0 {
		for _, w := range translator.Resolve(comps, used).Warnings {
			r.log.Warn("licence: " + w)
		}
	}
	r.logSummary(log)
	if err := pd.Finish(runErr); err != nil {
		log.Error("run metadata not written", "path", pd.path, "error", err)
	} else {
		log.Info("run metadata written", "path", pd.path)
	}
	if r.led != nil {
		if err := r.led.Close(); err != nil {
			log.Error("ledger not closed", "path", r.led.Path(), "error", err)
		}
	}
	var stop cliflags.Stopped
	switch {
	case runErr == nil:
		return exitOK
	case errors.As(runErr, &stop):
		log.Error("interrupted: the run stopped before the end; the files translated so far are written and recorded in the ledger: run again with --resume to finish", "error", stop.Error())
		return stop.Code()
	case cliflags.Code(runErr) == exitIncomplete:
		log.Error("run incomplete", "error", runErr)
		return exitIncomplete
	case cliflags.Code(runErr) == exitUsage:
		log.Error("usage error", "error", runErr) // found once the backend answered (--target_lang it does not offer)
		return exitUsage
	case ledger.Transient(runErr):
		// The run itself stopped on a passing failure (its ledger or run
		// metadata could not be written on a full disk): what it did not
		// record is done by a --resume.
		log.Error("run stopped by a passing failure; run again with --resume to finish it", "error", runErr)
		return exitIncomplete
	}
	log.Error("run failed", "error", runErr)
	return exitFailure
}

// logSummary ends the run's log with what it did, as pageclass's "run
// summary" does: its files translated and failed (and, resumed, those an
// earlier run translated or failed), those it left untried when it
// stopped, the units it translated, the statuses of its log rows and the
// source languages, and where the outputs are (the run metadata holds the
// same and more). Every failure is also a skipped file of the run
// metadata; the untried ones are the rest.
func (r *runner) logSummary(log *slog.Logger) {
	st := r.pd.Snapshot().Statistics
	if logging.IsTerminal(r.stderr) {
		// On a terminal, a block people read, as pageclass's (a record of
		// key=value pairs with maps in braces was hard to read).
		fmt.Fprint(r.stderr, summaryText(summaryFigures{files: st.InputFilesTotal, translated: st.SuccessfullyProcessed - r.doneBefore, doneBefore: r.doneBefore,
			failed: len(r.failures) - r.failedBefore, failedBefore: r.failedBefore, untried: max(0, st.InputFilesTotal-st.SuccessfullyProcessed-len(r.failures)),
			withoutText: st.DocumentsWithoutText, units: st.UnitsTranslated, unitsSkipped: st.UnitsSkipped, segments: st.SegmentStatus,
			languages: st.Languages, notCollected: len(r.notCollected), output: r.s.Output}))
	} else {
		r.logSummaryRecord(log, st)
	}
	if r.warnedAgain > 0 {
		log.Warn(fmt.Sprintf("%d more warnings repeated an earlier file's in the same words and were not shown; the run metadata's warnings list every one", r.warnedAgain))
	}
}

// logSummaryRecord logs the run summary as one record (off a terminal).
func (r *runner) logSummaryRecord(log *slog.Logger, st runmeta.Statistics) {
	log.Info("run summary", "files", st.InputFilesTotal, "translated", st.SuccessfullyProcessed-r.doneBefore, "done_before", r.doneBefore,
		"failed", len(r.failures)-r.failedBefore, "failed_before", r.failedBefore, "untried", max(0, st.InputFilesTotal-st.SuccessfullyProcessed-len(r.failures)),
		"without_text", st.DocumentsWithoutText, "units_translated", st.UnitsTranslated, "units_skipped", st.UnitsSkipped,
		"segments", st.SegmentStatus, "source_languages", st.Languages, "not_collected", r.notCollectedByExt(), "output", r.s.Output)
}

// notCollectedByExt counts the files of the folder not collected by their
// extension (".html"; "" for none), as pageclass's run summary record
// counts them: a number under the same field name in one tool and an
// object in the other broke a log pipeline's mapping.
func (r *runner) notCollectedByExt() map[string]int {
	byExt := map[string]int{}
	for _, n := range r.notCollected {
		byExt[strings.ToLower(filepath.Ext(n["file"]))]++
	}
	return byExt
}

type runner struct {
	s          *settings
	log        *slog.Logger
	pd         *runRecord
	usage      *translator.Usage
	fields     []*metadata.XPath
	fieldsErr  error
	vocabulary *vocab.Vocabulary
	baseline   *docrecord.Record
	getenv     func(string) string
	// lookup is the environment lookup getenv reads through (it tells a
	// variable set empty from one unset).
	lookup func(string) (string, bool)
	stderr io.Writer
	// quietClean says the log is drawn above a progress bar on a terminal,
	// where a document whose batches all came back clean is not announced
	// (its summary is logged at DEBUG): the bar counts it, and a run of a
	// thousand files does not scroll a thousand lines past its warnings.
	quietClean bool
	// warnedText and warnedAgain fold, on a terminal, a document's warning
	// that another document gave already in the same words (a language left
	// untouched in each page of a book): it is logged at DEBUG, counted, and
	// the count is said at the end (every one is in the run metadata).
	wmu         sync.Mutex
	warnedText  map[string]bool
	warnedAgain int
	// client fetches the URL inputs (a kept download found edited is
	// fetched again in the run).
	client *http.Client
	// claimed maps each output and log path written in this run to the
	// input that wrote it, so that a second input with the same names
	// ("doc.xml" and "doc.alto.xml" share doc_log.csv) is skipped, not
	// written over the first.
	claimed map[string]string
	// recordedOutputs holds, by output path, the earlier runs the ledgers
	// of this output folder record writing it, and when (read once, when
	// first needed: recordedOutputs), so that another run's output is told
	// from an edit (writtenBy) and one written from another input is not
	// replaced without a word (replacesOther).
	recordedOutputs map[string]map[writer]string
	// pageDone names the page done of the input being translated on the
	// progress line (set by item for each input).
	pageDone func(done, total int)
	// warnedLocalIDs says --book-out warned that the run's IIIF ids are
	// file:// URLs (once for all its books).
	warnedLocalIDs bool
	// failures are the inputs that gave no translation (the failures
	// table).
	failures []ledger.Failure
	// notCollected are the files of a directory run left out by their
	// content (file, reason).
	notCollected []map[string]string
	// book is the book input (nil when the input is not a book).
	book *bookInfo
	// books are the books of a list or a folder run.
	books []*bookInfo
	// kindModes is the output mode of each kind of document translated in
	// this run (ALTO, PAGE, ...).
	kindModes map[string]string
	// led is the run's ledger once opened; closed after the run metadata
	// is written.
	led *ledger.Ledger
	// doneBefore and failedBefore count the inputs a resumed run kept from
	// the ledger as translated, or failed, by an earlier run.
	doneBefore, failedBefore int
	// trip is the translation service's circuit breaker (EnvCircuitTrip).
	trip int
	// bookLang is each book's language, detected over its text files as
	// one document (bookstats.go, runmeta.Book): each of them is given it; bookIdx is
	// each book's record in statistics.books.
	bookLang map[*bookInfo]string
	bookIdx  map[*bookInfo]int
	// opened is the session opened before the run metadata was started
	// (start), which openSession takes.
	opened *session.Session
}

func (r *runner) run(ctx context.Context, inputs []input) error {
	s, pd := r.s, r.pd
	defer func() {
		if r.opened != nil { // not taken by openSession: the run ended before
			r.opened.Close()
			r.opened = nil
		}
	}()
	if err := r.configure(inputs); err != nil {
		return err
	}
	sess, lem, err := r.openSession(ctx)
	if err != nil {
		return err
	}
	defer sess.Close()

	// Off a terminal, the bar's periodic lines and its summary go through
	// the logger, so the stream stays one record per line.
	bar := progress.New(r.stderr, len(inputs), progress.Options{Label: "translate", Unit: "files",
		Log: func(line string, f progress.Fields) { r.log.Info(line, f.Args()...) }})
	if logging.IsTerminal(r.stderr) {
		// Log lines go through the bar so they print above it.
		if l, err := logging.FromLookup(bar, r.lookup); err == nil {
			r.log = l
		}
		r.quietClean = true
	}
	schema := r.openSchema(ctx)
	if schema != nil {
		defer schema.Close()
	}
	led, err := r.openLedger(sess.Backend, sess.LemmatizerURL, sess.GlossaryTerms)
	if err != nil {
		return err
	}
	// The ledger file stays open (and flocked) until the run metadata is
	// written (finish closes it): a resume that starts in between must not
	// take this run for one that was killed.
	r.led = led
	if err := r.recordFetches(led, inputs); err != nil {
		return err
	}
	if s.Resume {
		// Earlier runs of this configuration killed or crashed are marked
		// interrupted, continued by this run (--retry-failed is a resume).
		pd.RecordInterrupted(r.log, pd.Snapshot().RunID, led.Ended(), paradata.MetaBeside(s.Output))
	}
	pd.SetConfig("resume", s.Resume)
	if s.Resume {
		pd.SetConfig("downloads_not_modified", notModified(inputs))
	}
	pd.SetConfig("retry_failed", s.RetryFailed)
	r.bookLanguages(inputs)
	p := &pass{sess: sess, lem: lem, bar: bar, schema: schema, led: led, carryAt: -1, keptAt: map[int]bool{}}
	outDir, _ := os.Stat(s.Output)
	for i := range inputs {
		if err := outputReplaced(s.Output, outDir); err != nil {
			r.outputGoneStop(p, inputs, i, err)
			break
		}
		if err := r.item(ctx, p, inputs, i); errors.Is(err, errCircuitOpen) {
			break
		} else if err != nil {
			return err
		}
	}
	r.report(p, inputs)
	if err := stopped(ctx); err != nil {
		// Nothing more is written from half a run (--book-out, the
		// document record): the --resume that finishes it writes them.
		return err
	}
	if err := p.incomplete(); err != nil {
		// The document record (with --document-json) names every output:
		// it is written by the run that finishes them.
		return err
	}
	if len(p.written) == 0 {
		r.pd.SetConfig(shard.TriedConfig, true) // its share is done: a merge takes it
		return errors.New("no document was translated")
	}
	if st := r.pd.Snapshot().Statistics; st.DocumentsWithoutText == st.SuccessfullyProcessed {
		// Not a failure: each page was done, written as it was. (Exit 3
		// made a shard holding only a book's endpapers fail on every
		// retry, and the service answered such a book 200.)
		r.warn(fmt.Sprintf("none of the %d documents holds text to translate (pages without text, written as they were): nothing was sent for translation", len(p.written)))
	}
	if err := r.bookOut(ctx, p, inputs); err != nil {
		return err
	}
	if r.baseline != nil {
		if err := r.record(p.written); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// pass is what the loop over the inputs of a run uses and counts.
type pass struct {
	sess *session.Session
	// lem is tripped once the lemmatiser's circuit opens: the translations
	// made from then on protect no single-word term, so they are not
	// recorded in the ledger (unprotected counts them) and a --resume
	// translates them again.
	lem         *lemCircuit
	unprotected int
	bar         *progress.Bar
	schema      *xsd.Validator // nil without --xsd or when it cannot be used
	led         *ledger.Ledger

	written                        []string // the outputs, kept ones included
	restored, failedKept, recorded int
	// undone counts the inputs left to do after passing failures (not
	// recorded in the ledger), streak those in a row (the breaker), and
	// lastPassing is the last such failure.
	undone, streak int
	lastPassing    error
	// books are the translated text files of a book, for --book-out.
	books []bookFile
	// carry is what the input at carryAt carried to its partner, the
	// next text file of its book (bookhyphen.go); keptAt are the inputs
	// kept from the ledger.
	carry   *alto.Carried
	carryAt int
	keptAt  map[int]bool
	// last are the inputs translated last in this run, at most
	// backend.SameItems: those a later refusal of their service's reply
	// can withdraw (withdraw.go).
	last []writtenDoc
}

// configure records the run's settings in the run metadata and writes it a
// first time.
func (r *runner) configure(inputs []input) error {
	s, pd := r.s, r.pd
	pd.SetConfig("input_path", s.Input)
	pd.SetConfig("output_dir", s.Output)
	pd.SetConfig("source_lang", s.Source)
	pd.SetConfig("target_lang", s.Target)
	pd.SetConfig("formats", s.FormatsRaw)
	pd.SetConfig("mode", map[bool]string{true: "alto", false: "metadata"}[s.Alto])
	pd.SetConfig("output_mode", s.Mode)
	pd.SetConfig("output_mode_from", s.ModeFrom)
	pd.SetConfig("output_mode_by_format", translator.ModeByFormat(s.outputMode()))
	pd.SetConfig("translation_backend", s.Backend)
	pd.SetConfig("translation_backend_from", s.BackendFrom)
	pd.SetConfig("fast_align", s.FastAlign)
	pd.SetConfig("xpaths_file", s.Fields)
	pd.SetConfig("xsd_url", s.XSD)
	pd.SetConfig("vocabulary", s.Vocabulary)
	pd.SetConfig("config_file", s.ConfigPath)
	pd.SetConfig("chunk_limit", chunker.DefaultLimit)
	pd.SetConfig("lang_id_model", langid.ModelID)
	pd.SetConfig("confidence_threshold", s.Order.MinConfidence)
	pd.SetConfig("source_lang_order", langOrderConfig(s))
	pd.SetConfig("download_dir", s.DownloadDir)
	pd.SetConfig("fetch_workers", s.FetchWorkers)
	pd.SetConfig("fetch_workers_from", s.FetchWorkersFrom)
	if r.notCollected != nil {
		pd.SetConfig("not_collected", r.notCollected)
	}
	if r.book != nil {
		pd.SetConfig("book", r.book)
	}
	if len(r.books) > 0 {
		pd.SetConfig("books", r.books)
	}
	if r.book != nil || len(r.books) > 0 {
		pd.SetConfig("pages", s.Pages)
		pd.SetConfig("text_groups", s.TextGroups)
	}
	for _, b := range append([]*bookInfo{r.book}, r.books...) {
		if b == nil {
			continue
		}
		for _, p := range b.Problems {
			r.warn("book: " + b.name(r.book != nil) + p)
		}
		if n := len(b.PagesWithoutText); n > 0 {
			r.log.Info("book pages without text: reported, not failed", "book", b.Source, "pages", n, "first", b.PagesWithoutText[:min(n, 5)])
		}
	}
	pd.AddInputs(len(inputs))
	if r.vocabulary != nil {
		r.usage.Add(translator.VocabularyComponents(r.vocabulary)...)
		pd.SetConfig("vocabulary_entries", r.vocabulary.Len())
		pd.SetConfig("vocabulary_source_lang", r.vocabulary.Lang)
		pd.SetConfig("vocabulary_source_lang_declared", r.vocabulary.LangDeclared)
		for _, e := range r.vocabulary.Skipped {
			pd.Warn(e.Error())
		}
	}
	if err := pd.Flush(); err != nil {
		return fmt.Errorf("run metadata %s: %w", pd.path, err)
	}
	return nil
}

// openSession takes the session start opened and sets it up (vocabulary, lemmatiser
// behind its circuit breaker, glossary size) and records what they point
// at in the run metadata. The circuit it returns is tripped when the
// lemmatiser's circuit breaker opens.
func (r *runner) openSession(ctx context.Context) (*session.Session, *lemCircuit, error) {
	s, pd := r.s, r.pd
	sess := r.opened // opened by start before the run metadata
	r.opened = nil
	be := sess.Backend
	if m, ok := be.(*mtapi.Backend); ok {
		if n := m.HostedNotice(); n != "" {
			r.log.Warn(n)
		}
		pd.SetConfig("translation_api", m.BaseURL())
		pairs, from := m.Models(ctx)
		pd.SetConfig("translation_models", pairs)
		pd.SetConfig("translation_models_from", from)
		if m.PairsGuessed(ctx) {
			r.warn(fmt.Sprintf("translation API model list unavailable, using the built-in pairs: %s", from))
		}
	}
	if err := backend.OffersTarget(ctx, be, s.Source, s.Target, langid.Languages()); err != nil {
		sess.Close()
		return nil, nil, cliflags.Usage(fmt.Errorf("--source_lang/--target_lang: %w", err))
	}
	if inf, ok := be.(interface{ Info() map[string]any }); ok {
		for k, v := range inf.Info() { // chat_compatible: URL, model, provider label, languages; never the key
			pd.SetConfig(k, v)
		}
	}
	lem := &lemCircuit{}
	// An unreachable lemmatiser is called (with retries) DefaultTrip
	// times, then not again in this run.
	if err := sess.UseVocabulary(r.vocabulary, session.Breaker{OnOpen: func(err error) {
		lem.trip(err)
		pd.SetConfig("lemmatizer_circuit", "open: "+err.Error())
		r.warn(fmt.Sprintf("lemmatiser failed %d times in a row; not called again in this run: single-word vocabulary terms are not protected, phrases still are, and the files translated so are not recorded (a --resume translates them again); without a lemmatiser set LEMMATIZER_URL=off (%v)", lemmatizer.DefaultTrip, err))
	}}); err != nil {
		sess.Close()
		return nil, nil, err
	}
	if sess.Lemmatizer != nil {
		pd.SetConfig("lemmatizer_url", sess.LemmatizerURL)
		pd.SetConfig("lemmatizer_circuit", "closed")
	} else if sess.LemmatizerURL != "" {
		pd.SetConfig("lemmatizer_url", sess.LemmatizerURL) // off
	}
	if n := sess.LemmatizerNotice(); n != "" {
		r.log.Warn(n)
	}
	return sess, lem, nil
}

// openSchema prepares the --xsd validator; nil without --xsd, or with a
// warning when it cannot be used. The caller closes it.
func (r *runner) openSchema(ctx context.Context) *xsd.Validator {
	s := r.s
	if s.XSD == "" {
		return nil
	}
	v, err := xsd.New(ctx, s.XSD)
	if err != nil {
		r.warn(fmt.Sprintf("--xsd %s: validation skipped: %v", s.XSD, err))
		return nil
	}
	r.pd.SetConfig("xsd_documents_fetched", v.Fetched)
	r.log.Info("--xsd: each metadata output is validated as written against the schema and what it imports or includes (the W3C xml: schema from the shipped catalog; other remote imports are not fetched); ALTO output is not validated",
		"xsd", s.XSD, "fetched", len(v.Fetched))
	return v
}

// item handles inputs[i]: it is skipped, kept from the ledger or
// translated, and recorded. Only errors that end the run are returned.
func (r *runner) item(ctx context.Context, p *pass, inputs []input, i int) error {
	in := inputs[i]
	name := r.itemName(in)
	p.bar.SetItem(name)
	if ctx.Err() != nil {
		// Not the input's failure: a --resume translates it.
		r.pd.Skip(in.Origin, "run interrupted: "+context.Cause(ctx).Error())
		return nil
	}
	if in.Err != nil {
		r.fail(name, in.Origin, in.Err)
		if ledger.Transient(in.Err) {
			p.bar.Leave(1)
			p.undone++ // a download that failed in passing: --resume tries it again
			p.lastPassing = in.Err
		} else {
			p.bar.Fail(1)
		}
		return nil
	}
	// The input is read once: its digest is taken from the bytes that
	// are translated.
	rd := readInput(in)
	if in.NotModified && rd.digest != in.Want {
		var ok bool
		if rd, ok = r.redownload(ctx, p, inputs, i, name); !ok {
			return nil
		}
		in = rd.in
	}
	if r.fromLedger(p, inputs, i, in, name, rd.digest) {
		return nil
	}
	replaced := r.replacesOther(p, in, name, rd.digest)
	// A long document's pages are named on the progress line as they are
	// done: it sat on the file's name until its end.
	r.pageDone = func(done, total int) {
		if total > 1 {
			p.bar.SetItem(fmt.Sprintf("%s (page %d of %d)", name, done, total))
		}
	}
	out, outPath, err := r.one(backend.ForItem(ctx, name), in, rd.src, rd.err, p.sess, r.link(p, inputs, i))
	if _, ok := transport.AsUnreachable(err); ok {
		// The service is not there, or refuses this program's
		// credentials: every other input would fail the same way, so the
		// run stops here and says what to check (err: its message with
		// the credentials taken out).
		r.fail(name, in.Origin, err)
		p.bar.Fail(1)
		p.bar.Finish()
		return fmt.Errorf("the run stops after %s, leaving %d more input(s) untried: %w", name, len(inputs)-i-1, err)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		// Stopped in the middle of the file (Ctrl-C): not its failure,
		// nothing is recorded, and a --resume translates it.
		r.pd.Skip(in.Origin, "run interrupted: "+context.Cause(ctx).Error())
		return nil
	case err != nil && r.outputUnwritable(err):
		err = r.outputStop(p, inputs, i, name, err)
	case err != nil && ledger.Transient(err):
		err = r.passing(p, inputs, i, name, err)
	case err != nil:
		err = r.failed(ctx, p, in, name, rd.digest, err)
	default:
		if len(replaced) > 0 {
			r.warn(fmt.Sprintf("%s: %s held what an earlier run wrote from another input of that name (another folder's file, or this file before it changed): that run's output is replaced by this translation",
				in.Origin, strings.Join(replaced, ", ")))
		}
		p.streak = 0
		p.carried(i, out.Carried)
		err = r.translated(ctx, p, in, name, rd.digest, out, outPath)
	}
	if err != nil {
		return err
	}
	if err := r.pd.Flush(); err != nil {
		r.log.Error("run metadata not written", "path", r.pd.path, "error", err)
	}
	if itemHook != nil {
		itemHook(p.recorded)
	}
	return nil
}

// read is an input's file as read for translation.
type read struct {
	in     input
	src    []byte
	err    error  // why it could not be read (the translation reports it)
	digest string // of src; "" when unreadable
}

// readInput reads the input's file (a link to /dev/zero is refused, not
// read) and takes its digest.
func readInput(in input) read {
	rd := read{in: in}
	if rd.src, rd.err = regularfile.Read(in.Path); rd.err == nil {
		rd.digest = ledger.DigestBytes(rd.src)
	}
	return rd
}

// redownload fetches again a URL input kept on the server's 304 whose
// bytes are not those downloaded (edited since), and reads it; ok is false
// when the download failed (the input is then recorded failed).
func (r *runner) redownload(ctx context.Context, p *pass, inputs []input, i int, name string) (read, bool) {
	in := inputs[i]
	r.log.Warn("earlier download changed since it was downloaded: downloading it in full", "url", in.Origin, "file", in.Path)
	in = download(ctx, r.client, in.Origin, r.s.DownloadDir, false)
	inputs[i] = in
	r.pd.SetConfig("downloads_not_modified", notModified(inputs))
	if in.Err != nil {
		r.fail(name, in.Origin, in.Err)
		p.bar.Fail(1)
		return read{in: in}, false
	}
	return readInput(in), true
}

// fromLedger handles a --resume input the ledger records with the same
// content: failed before (and not retried), or translated with its outputs
// still there. It reports whether the input is done with; an input whose
// outputs are gone is translated again.
func (r *runner) fromLedger(p *pass, inputs []input, i int, in input, name, digest string) bool {
	s := r.s
	e, ok := p.led.Lookup(name, digest)
	if !s.Resume || digest == "" || !ok || (e.State == ledger.Failed && s.RetryFailed) {
		return false
	}
	if e.State == ledger.Failed {
		// Kept, not tried: said at INFO (the failure was logged as an
		// error by the run that met it), and in the tables as before.
		r.log.Info("failed in an earlier run, kept (--retry-failed tries it again)", "file", in.Origin, "error", e.Reason)
		r.recordFailure(name, in.Origin, e.Reason)
		p.bar.Fail(1)
		p.failedKept++
		return true
	}
	files, changed, missing, d, ok := r.kept(e)
	if ok && len(changed) == 0 && !r.keepPartner(p, inputs, i, d) {
		return false
	}
	if !ok && len(changed) > 0 {
		r.fail(name, in.Origin, fmt.Errorf("%s changed since an earlier run wrote it and %s is missing: not translated again, so as not to overwrite the edit (remove the changed file, or run without --resume, to translate it again)",
			strings.Join(changed, ", "), strings.Join(missing, ", ")))
		p.bar.Fail(1)
		return true
	}
	if !ok {
		r.log.Info("translated before, but its outputs are missing since: translating again", "file", in.Origin)
		return false
	}
	if why := r.writtenBy(p, changed, e); why != "" {
		// Not an edit: a run with other settings (another service, source
		// language, ...) or of another input of that name (another input
		// folder into this output folder) wrote them since, and they would
		// be kept and listed as this run's outputs.
		r.log.Info("written since by "+why+": translating again", "file", in.Origin, "outputs", changed)
		return false
	}
	if len(changed) > 0 {
		r.warn(fmt.Sprintf("%s: %s changed since an earlier run wrote it: kept as it is, not translated again (remove it, or run without --resume, to translate it again)",
			in.Origin, strings.Join(changed, ", ")))
	}
	p.written = append(p.written, files[0])
	p.booked(in, files[0], d.NoText)
	p.keptAt[i] = true
	p.carried(i, d.HyphenNext)
	for _, f := range files {
		if r.claimed == nil {
			r.claimed = map[string]string{}
		}
		r.claimed[f] = in.Origin
	}
	r.pd.kept(filepath.ToSlash(filepath.Join(in.Dir, translator.Stem(in.Path))), d, files...)
	p.bar.Keep(1) // done before: not this run's work, rate or ETA
	p.restored++
	return true
}

// failed records an input whose translation failed, in the ledger too
// unless the run was interrupted.
func (r *runner) failed(ctx context.Context, p *pass, in input, name, digest string, err error) error {
	if in.NoPages != "" {
		err = fmt.Errorf("%w (%s)", err, in.NoPages)
	}
	r.fail(name, in.Origin, err)
	p.bar.Fail(1)
	if digest != "" && ctx.Err() == nil {
		if lerr := p.led.Record(ledger.Entry{Item: name, Digest: digest, State: ledger.Failed, Reason: err.Error()}); lerr != nil {
			return lerr
		}
		p.recorded++
	}
	return nil
}

// translated records a translated input in the ledger (unless the
// lemmatiser is down) and validates a metadata output against --xsd.
func (r *runner) translated(ctx context.Context, p *pass, in input, name, digest string, out *translator.Output, outPath string) error {
	s := r.s
	p.written = append(p.written, outPath)
	p.booked(in, outPath, out.NoText)
	p.bar.Add(1)
	p.wrote(r, in, name, out, outPath)
	switch {
	case digest == "":
	case p.lem.open():
		p.unprotected++ // written, not recorded: --resume translates it again
	default:
		_, logPath := r.outPaths(in)
		if err := r.recordDone(p.led, name, digest, out, outPath, logPath); err != nil {
			return fmt.Errorf("ledger: %w", err)
		}
		p.recorded++
	}
	if out.Kind == translator.KindMetadata && p.schema != nil {
		path := outPath
		problems, err := p.schema.ValidateDocument(ctx, path)
		switch {
		case err != nil:
			r.warn(fmt.Sprintf("--xsd: %s not validated: %v", path, err))
		case len(problems) > 0:
			r.warn(fmt.Sprintf("--xsd: %s does not validate against %s: %s", path, s.XSD, strings.Join(problems, "; ")))
		default:
			r.log.Info("valid against the schema", "file", path, "xsd", s.XSD)
		}
	}
	if out.Kind == translator.KindALTO && s.XSD != "" {
		r.log.Info("--xsd applies to metadata output only; ALTO output is not validated", "file", in.Origin)
	}
	return nil
}

// report logs and records what the pass over the inputs did.
func (r *runner) report(p *pass, inputs []input) {
	s := r.s
	r.pd.SetConfig("items_from_ledger", p.restored+p.failedKept)
	r.doneBefore, r.failedBefore = p.restored, p.failedKept
	r.pd.failedBefore(p.failedKept)
	// Counted once every input was read: a kept download found edited
	// since was downloaded in full and is not counted (as in the run
	// metadata's downloads_not_modified).
	if n := notModified(inputs); n > 0 {
		r.log.Info("earlier downloads kept: not modified since, says the server (HTTP 304)", "urls", n, "download_dir", s.DownloadDir)
	}
	if s.Resume {
		r.log.Info("resumed from the ledger", "ledger", p.led.Dir(), "runs_read", p.led.Files(), "inputs_done_before", p.restored,
			"failed_kept", p.failedKept, "inputs_translated", len(inputs)-p.restored-p.failedKept, "retry_failed", s.RetryFailed)
	}
	// Finish writes the summary line: drawn on a terminal, logged
	// elsewhere (Options.Log).
	p.bar.Finish()
}

// notModified counts the URL inputs whose earlier download was kept.
func notModified(inputs []input) int {
	n := 0
	for _, in := range inputs {
		if in.NotModified {
			n++
		}
	}
	return n
}

// writeOutput writes a translation (atomicfile.WriteFile; a variable so
// tests can make the disk full).
var writeOutput = atomicfile.WriteFile

// itemHook, when set (tests), is called after each input is done with the
// number recorded in the ledger so far in this run.
var itemHook func(recorded int)

// docWarn logs a warning the translation of the document name gave (its
// text begins with the name); see quietClean.
func (r *runner) docWarn(ctx context.Context, name, raw, msg string) {
	if !r.quietClean {
		r.log.Warn(msg)
		return
	}
	r.wmu.Lock()
	// The text begins with the document's name or its stem (raw; msg
	// begins with its path, placedWarning).
	text := strings.TrimPrefix(strings.TrimPrefix(raw, name+": "), translator.Stem(name)+": ")
	again := r.warnedText[text]
	if r.warnedText == nil {
		r.warnedText = map[string]bool{}
	}
	r.warnedText[text] = true
	if again {
		r.warnedAgain++
	}
	r.wmu.Unlock()
	if again {
		r.log.Log(ctx, slog.LevelDebug, msg)
		return
	}
	r.log.Warn(msg)
}

// placedWarning is a document's warning msg naming its path in the
// output folder (translator.PlaceWarning).
func placedWarning(msg string, in input) string {
	return translator.PlaceWarning(msg, filepath.ToSlash(in.Dir), filepath.Base(in.Path))
}

func (r *runner) warn(msg string) {
	r.log.Warn(msg)
	r.pd.Warn(msg)
}

// fail records an input that gave no translation: in the log, the run
// metadata and the failures table (by its ledger name).
func (r *runner) fail(name, origin string, err error) {
	r.log.Error("skipped", "file", origin, "error", err)
	r.recordFailure(name, origin, err.Error())
}

// recordFailure puts a failed input in the run metadata's skipped files
// and in the failures table, without a word in the log (fail's, or a
// failure kept from an earlier run).
func (r *runner) recordFailure(name, origin, reason string) {
	r.pd.Skip(origin, reason)
	r.failures = append(r.failures, ledger.Failure{File: name, Error: reason})
}

// one translates one input, read as src (or readErr), and writes its
// output and log into the input's folder under the output directory; it
// returns the output's path.
func (r *runner) one(ctx context.Context, in input, src []byte, readErr error, sess *session.Session, h hyphenLink) (*translator.Output, string, error) {
	s := r.s
	dir := filepath.Join(s.Output, in.Dir)
	outPath, logPath := r.outPaths(in)
	for _, p := range []string{outPath, logPath} {
		if first, ok := r.claimed[p]; ok {
			return nil, "", fmt.Errorf("%s: its output %s is already written by %s in this run", in.Origin, p, first)
		}
	}
	if readErr != nil {
		return nil, "", readErr
	}
	kind := translator.DetectKind(src)
	if kind == translator.KindMetadata {
		if r.fieldsErr != nil {
			if err := translator.CheckWellFormed(src); err != nil {
				return nil, "", fmt.Errorf("%s: %w", in.Path, err)
			}
			return nil, "", fmt.Errorf("%s: metadata document but the field list is unreadable: %w", in.Path, r.fieldsErr)
		}
		if s.Alto && strings.HasSuffix(strings.ToLower(in.Path), ".alto.xml") && len(bytes.TrimSpace(src)) > 0 && !sniffedALTO(src) && filekind.Of(src) == "" {
			r.warn(fmt.Sprintf("%s: named like ALTO but its root element is not <alto>; handled as metadata", in.Origin))
		}
	}
	opt := sess.Options()
	order := s.Order
	opt.Order, opt.RetryRounds = &order, s.RetryRounds
	if in.BookOf != nil {
		opt.DocumentLang = r.bookLang[in.BookOf]
	}
	opt.Source, opt.Target, opt.Mode = s.Source, s.Target, s.outputMode()
	opt.FastAlign, opt.Kind, opt.Fields = s.FastAlign, kind, r.fields
	opt.Usage, opt.Warn = r.usage, func(m string) { r.docWarn(ctx, filepath.Base(in.Path), m, placedWarning(m, in)) }
	opt.Next, opt.Prev, opt.PageDone = h.next, h.prev, r.pageDone
	t0 := time.Now()
	out, err := translator.Translate(ctx, src, filepath.Base(in.Path), opt)
	if err != nil {
		return nil, "", err
	}
	for _, w := range out.Warnings {
		r.pd.Warn(placedWarning(w, in))
	}
	if filepath.Base(outPath) != out.Name {
		return nil, "", fmt.Errorf("%s: output named %s, expected %s", in.Path, out.Name, filepath.Base(outPath))
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, "", err
	}
	if r.claimed == nil {
		r.claimed = map[string]string{}
	}
	r.claimed[outPath], r.claimed[logPath] = in.Origin, in.Origin
	if err := writeOutput(outPath, out.Data, 0o666); err != nil {
		return nil, "", err
	}
	if err := atomicfile.Write(logPath, 0o666, func(w io.Writer) error {
		return translator.WriteLog(w, out.Log, s.Source, s.Target)
	}); err != nil {
		return nil, "", err
	}
	// The summary ends the document's log on the log stream (the CSV
	// keeps the published column layout). It is the specification's
	// "WARNING summary", logged as a warning only when it counts something
	// that needs attention, so a clean run logs no warning; the level
	// says it, not the text (an INFO line reading "WARNING ..." misled).
	level := slog.LevelInfo
	if out.Stats.NeedsAttention() {
		level = slog.LevelWarn
	} else if r.quietClean {
		level = slog.LevelDebug
	}
	r.log.Log(ctx, level, out.Summary, "file", in.Origin, "seconds", time.Since(t0).Round(time.Millisecond).Seconds())
	if r.kindModes == nil {
		r.kindModes = map[string]string{}
	}
	r.kindModes[string(out.Kind)] = string(out.Mode)
	r.pd.Done(filepath.ToSlash(filepath.Join(in.Dir, out.Stem)), out, outPath, logPath)
	r.bookDone(in, out)
	return out, outPath, nil
}

// record accretes the translation block onto the baseline record and writes
// it, validated; an invalid record is never written.
func (r *runner) record(written []string) error {
	s, pd := r.s, r.pd
	snap := pd.Snapshot()
	src := s.Source
	if src == "auto" {
		best := 0
		for l, n := range snap.Statistics.Languages {
			if n > best || n == best && l < src {
				src, best = l, n
			}
		}
	}
	mode := s.Mode // alternative: recorded as append, output_form alternative (translator.AccreteRecord)
	var byKind map[string]string
	if s.outputMode() == "" {
		// Each format with its own default: append when every document
		// kept its original text (PAGE), else replace, which tells a
		// consumer not to count on the originals in the outputs (a book
		// of PAGE and ALTO files was recorded by its majority: "replace"
		// for appended PAGE files, or "append" for replaced ALTO ones);
		// the block then says each kind's mode.
		modes := map[string]bool{}
		for _, m := range r.kindModes {
			modes[m] = true
		}
		if modes[string(alto.Append)] && !modes[string(alto.Replace)] {
			mode = string(alto.Append)
		}
		if len(modes) > 1 {
			byKind = r.kindModes
		}
	}
	_, tag, _ := langtag.ForSources(s.Target, snap.Statistics.Languages)
	path := s.DocJSONOut
	if path == "" {
		path = filepath.Join(s.Output, docrecord.FileName(r.baseline.DocID()))
	}
	// Files as the record's folder reaches them (they were absolute paths
	// of the machine that ran it).
	recDir := filepath.Dir(path)
	info := translator.RecordInfo{SourceLang: src, TargetLang: s.Target, Backend: s.Backend, Mode: mode, ModeByKind: byKind, LanguageTag: tag,
		Licence: snap.LicenseDetail, RunID: snap.RunID, ParadataRef: docrecord.Ref(recDir, pd.path), At: time.Now(), HadBaseline: true,
		Version: snap.ToolVersion, ContainerImage: snap.DockerImage, RunnerRef: snap.RunnerRef}
	if len(written) == 1 {
		info.TranslatedXML = docrecord.Ref(recDir, written[0])
	} else {
		info.TranslatedXML = docrecord.Ref(recDir, s.Output)
		for _, w := range written {
			info.Files = append(info.Files, docrecord.Ref(recDir, w))
		}
	}
	if err := translator.AccreteRecord(r.baseline, info); err != nil {
		return fmt.Errorf("%s: %w", s.DocJSON, err)
	}
	schema, err := docrecord.ProjectSchema()
	if err != nil {
		return err
	}
	if err := r.baseline.WriteFile(path, schema); err != nil {
		return fmt.Errorf("document record %s not written: %w", path, err)
	}
	for _, w := range r.baseline.Warnings {
		r.warn(w)
	}
	pd.output("json", path)
	r.log.Info("document record written", "path", path, "doc_id", r.baseline.DocID())
	return nil
}

// loadComponents reads the licence components: TRANSLATE_PARA_CONFIG, else
// para_config.txt beside the configuration file, else
// setup/translate/para_config.txt through internal/resources.
func loadComponents(cfg resources.File, getenv func(string) string) (*licence.Components, error) {
	res := &resources.Resolver{Getenv: getenv}
	f, err := res.Beside(cfg, resources.TranslateComponents)
	if err != nil {
		return nil, err
	}
	return licence.ReadComponents(f)
}

// stopped is the cause of the run's stop when a signal (Ctrl-C, SIGTERM)
// cancelled ctx (cliflags.SignalContext), nil otherwise.
func stopped(ctx context.Context) error {
	if s, ok := cliflags.StoppedBy(ctx); ok {
		return s
	}
	return nil
}

// sniffedALTO says whether src's root element is alto (book.Sniff), as
// that of ALTO whose encoding is not read is: its error is the one to
// tell, not "its root element is not <alto>".
func sniffedALTO(src []byte) bool {
	f, _ := book.Sniff(src)
	return f == book.ALTO
}
