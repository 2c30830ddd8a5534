package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"archivekit/internal/cliflags"
)

// EnvCircuitTrip names the setting of the translation service's circuit
// breaker: after this many inputs in a row failed on a passing failure of
// the service (a timeout, a lost connection, HTTP 429 or 5xx after every
// retry), the run stops and leaves the rest to do; 0 turns it off.
const EnvCircuitTrip = "TRANSLATE_CIRCUIT_TRIP"

// DefaultCircuitTrip is EnvCircuitTrip's default.
const DefaultCircuitTrip = 3

// exitIncomplete is the exit code of a run that left inputs to do after
// passing failures (cliflags.ExitIncomplete).
const exitIncomplete = cliflags.ExitIncomplete

// circuitTrip reads EnvCircuitTrip: unset or blank is the default; a value
// that is not a whole number >= 0 is an error naming it.
func circuitTrip(getenv func(string) string) (int, error) {
	v := strings.TrimSpace(getenv(EnvCircuitTrip))
	if v == "" {
		return DefaultCircuitTrip, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a whole number >= 0 (0: never stop the run)", EnvCircuitTrip, v)
	}
	return n, nil
}

// errCircuitOpen ends the loop over the inputs when the breaker opens.
var errCircuitOpen = errors.New("circuit open")

// passing handles an input that failed on a passing failure (a full disk,
// an I/O error, the service timed out, answered 429 or 5xx after every
// retry, or was lost): it is logged and listed in the failures table, but
// not recorded in the ledger, so it stays to do and --resume does it. After
// r.trip such inputs in a row the breaker opens: errCircuitOpen, and the
// inputs after this one are left untried.
func (r *runner) passing(p *pass, inputs []input, i int, name string, err error) error {
	in := inputs[i]
	r.fail(name, in.Origin, err)
	p.bar.Leave(1)
	p.undone++
	p.streak++
	p.lastPassing = err
	r.withdraw(p, name, err)
	if r.trip <= 0 || p.streak < r.trip {
		return nil
	}
	left := len(inputs) - i - 1
	p.undone += left
	r.pd.SetConfig("translation_circuit", fmt.Sprintf("open after %d inputs in a row failed: %v", p.streak, err))
	who := "the translation service failed"
	var pe *fs.PathError
	if errors.As(err, &pe) {
		// A file of this machine (too many open files, a full disk, an
		// I/O error): the service was blamed for it.
		who = "this machine failed"
	}
	r.warn(fmt.Sprintf("%s %d inputs in a row (%s=%d): the run stops here, leaving %d more input(s) untried; run again with --resume to finish them (%v)",
		who, p.streak, EnvCircuitTrip, r.trip, left, err))
	return errCircuitOpen
}

// outputUnwritable reports whether err is a failure to write a file under
// the run's output folder (permission denied, a read-only file system, the
// folder removed or replaced by a file): the input is not at fault, and
// every input after it would fail the same way.
func (r *runner) outputUnwritable(err error) bool {
	if errors.Is(err, syscall.ENAMETOOLONG) {
		// The input's own name, with the output's suffixes, is over the
		// file system's limit: that input fails, the others go on (the
		// run stopped at it, and at every --resume).
		return false
	}
	var paths []string
	var pe *fs.PathError
	var le *os.LinkError
	if errors.As(err, &pe) {
		paths = append(paths, pe.Path)
	}
	if errors.As(err, &le) {
		paths = append(paths, le.New)
	}
	out, aerr := filepath.Abs(r.s.Output)
	if aerr != nil {
		return false
	}
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil && (abs == out || strings.HasPrefix(abs, out+string(filepath.Separator))) {
			return true
		}
	}
	return false
}

// outputStop handles an input whose output could not be written
// (outputUnwritable): as a passing failure it is not recorded in the
// ledger (it was recorded failed, and a --resume kept it failed, its
// output missing, and exited 0), and the run stops here, leaving the rest
// untried: nothing more is sent to the translation service (the inputs
// after it were translated and billed, then failed one after another, and
// the breaker blamed the service).
func (r *runner) outputStop(p *pass, inputs []input, i int, name string, err error) error {
	in := inputs[i]
	r.fail(name, in.Origin, err)
	p.bar.Leave(1)
	left := len(inputs) - i - 1
	r.withdraw(p, name, err)
	r.stopOnOutput(p, 1+left, err, fmt.Sprintf("the output folder cannot be written (%v): the run stops after %s, leaving %d more input(s) untried", err, name, left))
	return errCircuitOpen
}

// stopOnOutput records a run stopped by its output folder (outputStop,
// outputGoneStop) with undone inputs left to do, and says why (what) and
// how to finish.
func (r *runner) stopOnOutput(p *pass, undone int, err error, what string) {
	p.undone += undone
	p.lastPassing = err
	r.pd.SetConfig("output_unwritable", err.Error())
	r.warn(what + ", so nothing more is sent to the translation service; make the output folder writable or put it back (or give another -o) " +
		"and run again with --resume to finish them")
}

// outputReplaced says how the output folder is not the one the run began
// with (at, nil when it could not be read then): removed, or replaced by
// another folder or a file. nil while it is the same.
func outputReplaced(dir string, at fs.FileInfo) error {
	if at == nil {
		return nil
	}
	now, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("the output folder %s is gone: %w", dir, err)
	case !now.IsDir():
		return fmt.Errorf("the output folder %s was replaced by a file", dir)
	case !os.SameFile(at, now):
		return fmt.Errorf("the output folder %s was removed and made again", dir)
	}
	return nil
}

// outputGoneStop stops the run before inputs[i] when the output folder was
// removed or replaced (outputReplaced): every input after that was
// translated, billed and written into a new folder without its ledger, so
// a --resume translated them all again.
func (r *runner) outputGoneStop(p *pass, inputs []input, i int, err error) {
	left := len(inputs) - i
	r.stopOnOutput(p, left, err, fmt.Sprintf("%v while the run went on: the run stops, leaving %d input(s) untried", err, left))
}

// incomplete is the run's error when inputs were left to do after passing
// failures, or were translated after the lemmatiser's circuit opened
// (single-word vocabulary terms not protected): neither is recorded in the
// ledger, and a --resume does them (exit code exitIncomplete).
func (p *pass) incomplete() error {
	if p.undone == 0 && p.unprotected == 0 {
		return nil
	}
	err := p.lastPassing
	if p.unprotected > 0 {
		lerr := fmt.Errorf("%d input(s) translated after the lemmatiser failed, without single-word vocabulary terms protected (written, not recorded): %w",
			p.unprotected, p.lem.err())
		if err == nil {
			err = lerr
		} else {
			err = fmt.Errorf("%w; %w", err, lerr)
		}
	}
	return cliflags.IncompleteError{Undone: p.undone + p.unprotected, Err: err}
}

// lemCircuit is tripped, once, when the lemmatiser's circuit breaker
// opens, keeping the failure that opened it.
type lemCircuit struct{ cause atomic.Pointer[error] }

func (c *lemCircuit) trip(err error) { c.cause.Store(&err) }

// open says whether the circuit was tripped.
func (c *lemCircuit) open() bool { return c.cause.Load() != nil }

// err is the failure that tripped the circuit (nil before).
func (c *lemCircuit) err() error {
	if p := c.cause.Load(); p != nil {
		return *p
	}
	return nil
}
