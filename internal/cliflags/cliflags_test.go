package cliflags

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args      []string
		code      int
		stop      bool
		out, errs string
	}{
		{[]string{"--n", "3"}, 0, false, "", ""},
		{[]string{"--version"}, 0, true, "tool ", ""},
		{[]string{"-h"}, 0, true, "Usage of tool", ""},
		{[]string{"--bad"}, 1, true, "", "flag provided but not defined: -bad\ntool: tool -h lists its flags\n"},
		{[]string{"--n", "x"}, 1, true, "", "invalid value \"x\" for flag -n: parse error\ntool: tool -h lists its flags\n"},
		{[]string{"extra"}, 1, true, "", `tool: unexpected argument "extra"`},
	} {
		var out, errs bytes.Buffer
		fs := New("tool", &errs)
		n := fs.Int("n", 0, "a number")
		code, stop := fs.Parse(c.args, &out)
		if code != c.code || stop != c.stop || !strings.Contains(out.String(), c.out) || !strings.Contains(errs.String(), c.errs) {
			t.Errorf("%v: code %d stop %v out %q err %q", c.args, code, stop, out.String(), errs.String())
		}
		if !stop && *n != 3 {
			t.Errorf("n = %d", *n)
		}
		// A bad flag is said in two lines, not followed by the flag
		// list; help lists the flags.
		if listed := strings.Contains(out.String(), "a number"); listed != (c.args[0] == "-h") || strings.Contains(errs.String(), "a number") {
			t.Errorf("%v: flag list written %v:\n%s", c.args, listed, errs.String())
		}
	}
	// A service's configuration-error code for what a user typed wrong.
	for _, args := range [][]string{{"--bad"}, {"--port", "9000"}, {"extra"}} {
		fs := New("svc", &bytes.Buffer{})
		fs.BadExit = 2
		if code, stop := fs.Parse(args, &bytes.Buffer{}); code != 2 || !stop {
			t.Errorf("%v with BadExit 2: code %d stop %v", args, code, stop)
		}
	}
}

func TestZoneWarning(t *testing.T) {
	notZone := filepath.Join(t.TempDir(), "zone")
	if err := os.WriteFile(notZone, []byte("Europe/Prague\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tz   string
		warn bool
	}{
		{"", false}, {"UTC", false}, {"Europe/Prague", false}, {":Pacific/Chatham", false},
		{"/usr/share/zoneinfo/Asia/Kathmandu", false}, {":/usr/share/zoneinfo/Asia/Kathmandu", false},
		{"garbage/Nowhere", true}, {"XYZ-13:45", true},
		// A zone file that is missing, or is no zone file (it was taken as
		// UTC without a word).
		{filepath.Join(t.TempDir(), "missing"), true}, {":" + notZone, true}, {t.TempDir(), true},
	} {
		if name := strings.TrimPrefix(c.tz, ":"); !c.warn && name != "" {
			if _, err := time.LoadLocation(strings.TrimPrefix(name, "/usr/share/zoneinfo/")); err != nil {
				continue // no time zone database on this machine
			}
			if _, err := os.Stat(name); strings.HasPrefix(name, "/") && err != nil {
				continue
			}
		}
		if got := ZoneWarning(c.tz, "the run's stamps") != ""; got != c.warn {
			t.Errorf("TZ=%q: warned %v, want %v", c.tz, got, c.warn)
		}
	}
}

func TestWrap(t *testing.T) {
	text := "how long an idle model waits for a fuller batch (0: none, run at once)\nsecond paragraph"
	got := Wrap(text, 30, "    ")
	want := "how long an idle model\n    waits for a fuller batch\n    (0: none, run at once)\n    second paragraph"
	if got != want {
		t.Errorf("Wrap:\n%s\nwant:\n%s", got, want)
	}
	for _, l := range strings.Split("    "+got, "\n") {
		if len(l) > 30 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	if got := Wrap(strings.Repeat("x", 40)+" y", 30, ""); got != strings.Repeat("x", 40)+"\ny" {
		t.Errorf("a long word: %q", got)
	}
}

// TestOneDash: a long flag written with one dash is that flag (with a
// value after "=", its negation, an alias); short flags, unknown words and
// what follows "--" are left alone.
func TestOneDash(t *testing.T) {
	var grammar struct {
		Best    bool     `name:"best"`
		Raw     bool     `name:"raw" negatable:""`
		Base    string   `short:"b" name:"base"`
		Resume  bool     `aliases:"continue"`
		Dir     string   `short:"d"`
		Unknown []string `arg:"" optional:""`
	}
	k, err := NewKong("x", &grammar, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want []string }{
		{[]string{"-best", "-raw=false", "-no-raw", "-resume", "-continue"}, []string{"--best", "--raw=false", "--no-raw", "--resume", "--continue"}},
		{[]string{"-b", "x", "-bx", "-d", "y", "-unknown", "--best"}, []string{"-b", "x", "-bx", "-d", "y", "-unknown", "--best"}},
		{[]string{"-best", "--", "-best"}, []string{"--best", "--", "-best"}},
	} {
		if got := k.OneDash(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("OneDash(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, _, _, err := k.Parse([]string{"-best", "-base=v1"}); err != nil || !grammar.Best || grammar.Base != "v1" {
		t.Errorf("-best -base=v1: %v, %+v", err, grammar)
	}
}
