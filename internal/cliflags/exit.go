package cliflags

import (
	"errors"
	"fmt"
)

// Exit codes of the commands (both tools' spec 4.1; the maintenance
// commands use the same numbers).
const (
	ExitOK = 0
	// ExitUsage: a bad flag, argument, configuration or environment value,
	// found before any work.
	ExitUsage = 1
	// ExitNoInput: nothing to work on.
	ExitNoInput = 2
	// ExitFailure: the run failed, or could not proceed.
	ExitFailure = 3
	// ExitIncomplete: the run left items to do after passing failures (a
	// full disk, an I/O error, a service that timed out, answered 5xx or
	// 429, or could not be reached); they are not recorded as failed, and
	// running again with --resume finishes them. 75 is EX_TEMPFAIL of
	// sysexits.h ("temporary failure; try again later"). A merge whose
	// shards have not all completed exits so too (NotReadyError).
	ExitIncomplete = 75
	// ExitInterrupted: stopped by Ctrl-C (128 + SIGINT).
	ExitInterrupted = 130
)

// ExitCodesHelp says the exit codes in a command's --help, as the README
// does.
const ExitCodesHelp = "Exit codes: 0 done (also when some inputs failed: the failures table names them), 1 usage error, 2 no input, 3 failure (nothing done), 75 incomplete (passing failures left items to do: run again with --resume), 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (the terminal closed)."

// IncompleteError marks a run that left Undone items to do after passing
// failures (Err, the last of them): exit code ExitIncomplete.
type IncompleteError struct {
	Undone int
	Err    error
}

func (e IncompleteError) Error() string {
	if e.Undone <= 0 {
		// The work is recorded, its outputs not written (the results
		// folder at the end): Err says what to do; "0 item(s) left to
		// do" contradicted it.
		return fmt.Sprintf("incomplete after a passing failure: %v", e.Err)
	}
	return fmt.Sprintf("%d item(s) left to do after a passing failure (run again with --resume to finish them): %v", e.Undone, e.Err)
}
func (e IncompleteError) Unwrap() error { return e.Err }

// Incomplete is true: the run metadata records such a run as incomplete
// (paradata.StatusIncomplete), not failed.
func (e IncompleteError) Incomplete() bool { return true }

// NotReadyError marks work that cannot be done yet because what it needs
// is not all there (a merge whose shards have not all completed): exit code
// ExitIncomplete, since running it again once they have may succeed.
type NotReadyError struct{ Err error }

func (e NotReadyError) Error() string { return e.Err.Error() }
func (e NotReadyError) Unwrap() error { return e.Err }

// NotReady marks err as work that cannot be done yet (NotReadyError).
func NotReady(err error) error { return NotReadyError{err} }

// UsageError marks a problem with the command line or the configuration:
// exit code ExitUsage.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef is a UsageError with a formatted message (%w wraps).
func Usagef(format string, a ...any) error { return UsageError{fmt.Errorf(format, a...)} }

// NoInputError marks a run without anything to work on: exit code
// ExitNoInput.
type NoInputError struct{ Err error }

func (e NoInputError) Error() string { return e.Err.Error() }
func (e NoInputError) Unwrap() error { return e.Err }

// Code is the exit code of a command that ended with err: ExitOK for nil,
// ExitUsage for a UsageError, ExitNoInput for a NoInputError (wrapped or
// not), ExitIncomplete for an IncompleteError or a NotReadyError,
// ExitFailure for any other.
func Code(err error) int {
	var ue UsageError
	var ni NoInputError
	var ie IncompleteError
	var nr NotReadyError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &ni):
		return ExitNoInput
	case errors.As(err, &ie), errors.As(err, &nr):
		return ExitIncomplete
	default:
		return ExitFailure
	}
}

// Usage marks err as a usage error (UsageError).
func Usage(err error) error { return UsageError{err} }

// NoInput marks err as a run without input (NoInputError).
func NoInput(err error) error { return NoInputError{err} }
