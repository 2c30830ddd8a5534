package cliflags

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

func TestCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{Usagef("--shard %q: want i/n", "x"), ExitUsage},
		{fmt.Errorf("merge: %w", Usage(errors.New("not shards of one run"))), ExitUsage},
		{NoInput(errors.New("no input")), ExitNoInput},
		{errors.New("disk full"), ExitFailure},
		{fmt.Errorf("run: %w", IncompleteError{Undone: 2, Err: errors.New("HTTP 503")}), ExitIncomplete},
		{fmt.Errorf("merge: %w", NotReady(errors.New("missing shards 1/3"))), ExitIncomplete},
	} {
		if got := Code(c.err); got != c.want {
			t.Errorf("Code(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestKong(t *testing.T) {
	type grammar struct {
		Version kong.VersionFlag `name:"version"`
		Out     string           `short:"o"`
	}
	for _, c := range []struct {
		args       []string
		code       int
		done       bool
		usage      bool
		out, errIn string
	}{
		{[]string{"-o", "x"}, ExitOK, false, false, "", ""},
		{[]string{"--help"}, ExitOK, true, false, "Usage: demo", ""},
		{[]string{"--version"}, ExitOK, true, false, "demo ", ""},
		{[]string{"--nope"}, ExitUsage, false, true, "", "--nope"},
		// In words, not kong's `expected string value but got "EOL" (<EOL>)`.
		{[]string{"-o"}, ExitUsage, false, true, "", "--out needs a value, and it is the last word of the command line"},
	} {
		var g grammar
		var stdout bytes.Buffer
		k, err := NewKong("demo", &g, &stdout, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		_, code, done, err := k.Parse(c.args)
		var ue UsageError
		if code != c.code || done != c.done || errors.As(err, &ue) != c.usage || !strings.Contains(stdout.String(), c.out) || (c.errIn != "" && !strings.Contains(fmt.Sprint(err), c.errIn)) {
			t.Errorf("%v: code %d done %v err %v, output %q", c.args, code, done, err, stdout.String())
		}
		if c.args[0] == "-o" && len(c.args) == 2 && g.Out != "x" {
			t.Errorf("-o x gave %q", g.Out)
		}
	}
}

// TestIncompleteErrorWords: an incomplete run names the items left to do,
// and one with none left (its outputs not written) does not say "0
// item(s) left to do ... to finish them".
func TestIncompleteErrorWords(t *testing.T) {
	if got := (IncompleteError{Undone: 2, Err: errors.New("disk full")}).Error(); got != "2 item(s) left to do after a passing failure (run again with --resume to finish them): disk full" {
		t.Errorf("two left: %q", got)
	}
	if got := (IncompleteError{Err: errors.New("the tables are not written; run again with --resume to write them")}).Error(); strings.Contains(got, "0 item") {
		t.Errorf("none left: %q", got)
	}
}
