// Package cliflags is the command-line handling every command shares: the
// exit codes (ExitOK, ExitUsage, ExitNoInput, ExitFailure, ExitInterrupted)
// and the errors that choose them (UsageError, NoInputError, Code); for the
// two batch commands a kong parser set up alike (NewKong); for the
// maintenance commands, the services and the health check a standard-library
// FlagSet with --version, no positional arguments, exit 0 for -h and
// --version and BadExit (1 unless set) for a bad flag or argument (New).
package cliflags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"archivekit/internal/version"
)

// Set is a FlagSet with the shared --version flag.
type Set struct {
	*flag.FlagSet
	// BadExit is the exit code for a bad flag or an unexpected argument
	// (1 from New; the services set their configuration-error code).
	BadExit int
	version *bool
}

// New returns the flag set of the command name; its messages go to stderr.
func New(name string, stderr io.Writer) *Set {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return &Set{FlagSet: fs, BadExit: 1, version: fs.Bool("version", false, "print the version and exit")}
}

// Parse parses args. When the command should stop here (help asked, a bad
// flag, --version, a positional argument) it returns the exit code and true;
// the message is already written. Help (-h) writes the usage (the set's
// Usage, or the flag list); a bad flag writes the flag package's message and
// where the flags are listed, not the whole list, whose length hid the one
// line that said what was wrong.
func (s *Set) Parse(args []string, stdout io.Writer) (code int, stop bool) {
	usage := s.FlagSet.Usage
	s.FlagSet.Usage = func() {}
	err := s.FlagSet.Parse(args)
	s.FlagSet.Usage = usage
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			// Asked for: on stdout, so that "-h | less" shows it.
			out := s.Output()
			s.SetOutput(stdout)
			if usage == nil {
				fmt.Fprintf(stdout, "Usage of %s:\n", s.Name())
				s.PrintDefaults()
			} else {
				usage()
			}
			s.SetOutput(out)
			return 0, true
		}
		fmt.Fprintf(s.Output(), "%s: %s -h lists its flags\n", s.Name(), s.Name())
		return s.BadExit, true
	}
	if *s.version {
		fmt.Fprintln(stdout, version.Line(s.Name()))
		return 0, true
	}
	if s.NArg() > 0 {
		fmt.Fprintf(s.Output(), "%s: unexpected argument %q\n", s.Name(), s.Arg(0))
		return s.BadExit, true
	}
	return 0, false
}

// Misuse writes "name: message" to the set's output (the command's stderr)
// for a usage mistake found after parsing, and returns BadExit.
func (s *Set) Misuse(format string, a ...any) int {
	fmt.Fprintf(s.Output(), "%s: %s\n", s.Name(), fmt.Sprintf(format, a...))
	return s.BadExit
}

// Wrap breaks text into lines of at most width columns (bytes; the texts
// of --help are ASCII) at spaces, each line after the first starting with
// indent, and the first counted as if it did too (the caller writes the
// indent before it); a word longer than a line stays whole. Newlines in
// text are kept.
func Wrap(text string, width int, indent string) string {
	var b strings.Builder
	for pi, para := range strings.Split(text, "\n") {
		if pi > 0 {
			b.WriteString("\n" + indent)
		}
		col := len(indent)
		for wi, word := range strings.Fields(para) {
			if wi > 0 && col+1+len(word) > width {
				b.WriteString("\n" + indent)
				col = len(indent)
			} else if wi > 0 {
				b.WriteByte(' ')
				col++
			}
			b.WriteString(word)
			col += len(word)
		}
	}
	return b.String()
}

// PrintDefaults writes the flags of the set as flag.PrintDefaults does,
// their usage wrapped to 80 columns.
func (s *Set) PrintDefaults() {
	w := s.Output()
	s.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if name != "" {
			line += " " + name
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			usage += fmt.Sprintf(" (default %q)", f.DefValue)
		}
		fmt.Fprintf(w, "%s\n        %s\n", line, Wrap(usage, 80, "        "))
	})
}
