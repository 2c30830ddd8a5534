package main

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"archivekit/internal/version"
)

func TestRewriteShorts(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"-tn", "3"}, []string{"--topn", "3"}},
		{[]string{"-tn=3"}, []string{"--topn=3"}},
		{[]string{"-ff", "jpg", "-d", "x"}, []string{"--file_format", "jpg", "-d", "x"}},
		{[]string{"-rev=v4.4", "-ap", "v4"}, []string{"--revision=v4.4", "--average_pattern", "v4"}},
		{[]string{"-f", "a.png", "--raw"}, []string{"-f", "a.png", "--raw"}},
		{[]string{"--", "-tn"}, []string{"--", "-tn"}},
		{[]string{"-tnx"}, []string{"-tnx"}},
	}
	for _, tt := range tests {
		if got := rewriteShorts(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("rewriteShorts(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// parseWith parses args over a config written with overrides.
func parseWith(t *testing.T, overrides map[string]string, args ...string) (*CLI, int, string) {
	t.Helper()
	e := newEnv(t, overrides)
	var out, errb bytes.Buffer
	p, code, done := parseArgs(append([]string{"--config", e.cfg}, args...), &out, &errb, plainUsage(&errb))
	if done {
		return nil, code, out.String() + errb.String()
	}
	return p.cli, 0, ""
}

func TestConfigAndFlagPrecedence(t *testing.T) {
	cfg := map[string]string{"SETUP.top_N": "5", "SETUP.raw": "True", "SETUP.inner": "False", "SETUP.files_format": "jpg",
		"INPUT.chunking": "yes", "DOCUMENT.strict": "on", "TRAIN.cross_runs": "4", "FASTCLS.use_fastcls": "1",
		"DOCUMENT.document_json_out_dir": "recs"}
	tests := []struct {
		name  string
		cfg   map[string]string
		args  []string
		check func(c *CLI) bool
	}{
		{"shipped defaults", nil, nil, func(c *CLI) bool {
			return c.TopN == 3 && !c.Raw && c.Inner && c.FileFormat == "png" && !c.Chunk && !c.StrictDocumentJSON && c.Folds == 0 && !c.FastCls
		}},
		{"config supplies defaults", cfg, nil, func(c *CLI) bool {
			return c.TopN == 5 && c.Raw && !c.Inner && c.FileFormat == "jpg" && c.Chunk && c.StrictDocumentJSON && c.Folds == 4 && c.FastCls && c.DocumentJSONOutDir == "recs"
		}},
		{"flags beat the file", cfg, []string{"-tn", "2", "-ff=tif", "--inner", "--train", "--folds", "1", "--document-json-out-dir", "other"}, func(c *CLI) bool {
			return c.TopN == 2 && c.FileFormat == "tif" && c.Inner && c.Folds == 1 && c.DocumentJSONOutDir == "other"
		}},
		{"--no-x beats a true config value", cfg, []string{"--no-raw", "--no-chunk", "--no-strict-document-json", "--no-fastcls"}, func(c *CLI) bool {
			return !c.Raw && !c.Chunk && !c.StrictDocumentJSON && !c.FastCls
		}},
		{"long forms", nil, []string{"--topn=11", "--file_format", "pdf", "--revision", "v2.4", "--average", "--average_pattern", "v2"}, func(c *CLI) bool {
			return c.TopN == 11 && c.FileFormat == "pdf" && c.Revision == "v2.4" && c.Average && c.AveragePattern == "v2"
		}},
		{"two-letter shorts", nil, []string{"-tn=1", "-rev", "v5.4", "--average", "-ap=v5", "-f", "x.png"}, func(c *CLI) bool {
			return c.TopN == 1 && c.Revision == "v5.4" && c.AveragePattern == "v5" && c.File == "x.png"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, code, msg := parseWith(t, tt.cfg, tt.args...)
			if c == nil {
				t.Fatalf("exit %d: %s", code, msg)
			}
			if !tt.check(c) {
				t.Errorf("parsed %+v", *c)
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  map[string]string
		args []string
		want string
	}{
		{"topn zero", nil, []string{"-tn", "0"}, "-tn/--topn must be an integer from 1 to 11, got 0"},
		{"topn twelve", nil, []string{"--topn=12"}, "got 12"},
		{"topn from config", map[string]string{"SETUP.top_N": "20"}, nil, "top_n = \"20\": want an integer from 1 to 11"},
		{"topn not a number", nil, []string{"-tn", "three"}, "--topn"},
		{"unknown flag", nil, []string{"--bogus"}, "unknown flag --bogus"},
		{"bad revision", nil, []string{"-rev", "4.4"}, "-rev/--revision"},
		{"parallel without best", nil, []string{"--parallel"}, "--parallel applies to --best only"},
		{"average without pattern", nil, []string{"--average"}, "--average needs -ap"},
		{"calibrate without eval", nil, []string{"--calibrate"}, "--calibrate calibrates during an evaluation: add --eval"},
		{"calibrate with average", nil, []string{"--eval", "--calibrate", "--average", "-ap", "v1"}, "--calibrate calibrates during an evaluation"},
		{"resume with eval", nil, []string{"--eval", "--resume"}, "--resume and --retry-failed continue a classification run"},
		{"retry-failed with train", nil, []string{"--train", "--retry-failed"}, "--resume and --retry-failed continue a classification run"},
		{"two inputs", nil, []string{"-f", "a.png", "-d", "b"}, "give one input"},
		{"eval of one file", nil, []string{"--eval", "-f", "a.png"}, "--train and --eval read a folder of labelled pages, one sub-folder per category: give it with -d DIR"},
		{"train of the input folder", nil, []string{"--train", "--dir"}, "not -f or --dir"},
		{"review precision without calibrate", nil, []string{"-d", "pages", "--review-precision", "0.95"}, "--review-precision applies to --eval --calibrate only"},
		{"review precision with eval only", nil, []string{"--eval", "--review-precision=0.95"}, "--review-precision applies to --eval --calibrate only"},
		{"decode timeout in process", nil, []string{"-d", "pages", "--decode-in-process", "--decode-timeout", "30s"}, "--decode-timeout applies to decoder processes (not --decode-in-process) only"},
		{"decode timeout not positive", nil, []string{"-d", "pages", "--decode-timeout", "0s"}, "--decode-timeout must be positive"},
		{"decode memory in process", nil, []string{"-d", "pages", "--decode-in-process", "--decode-memory", "4096"}, "--decode-memory applies to decoder processes (not --decode-in-process) only"},
		{"decode memory too small", nil, []string{"-d", "pages", "--decode-memory", "256"}, "--decode-memory must be at least 512"},
		{"review rate without calibrate", nil, []string{"-d", "pages", "--review-rate", "0.2"}, "--review-rate applies to --eval --calibrate only"},
		{"average pattern without average", nil, []string{"-ap", "v4"}, "--average_pattern applies to --average only"},
		{"base without train", nil, []string{"--eval", "-b", "v4.4"}, "--base applies to --train only"},
		{"folds without train", nil, []string{"--eval", "--folds", "3"}, "--folds applies to --train only"},
		{"folds csv without train", nil, []string{"--folds_csv", "f.csv", "--fold_column", "fold 1"}, "--fold_column applies to --train only"},
		{"bad config value", map[string]string{"SETUP.raw": "maybe"}, nil, "raw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, code, msg := parseWith(t, tt.cfg, tt.args...)
			if c != nil || code != exitUsage {
				t.Fatalf("exit %d, parsed %+v", code, c)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q lacks %q", msg, tt.want)
			}
		})
	}
}

// A flag of a mode that does not run is refused only when given: its
// default, from the config file, is no error.
func TestOnlyWithDefaults(t *testing.T) {
	cfg := map[string]string{"TRAIN.cross_runs": "4", "TRAIN.folds_csv": "f.csv", "SETUP.base_model": "v2.4"}
	for _, args := range [][]string{nil, {"--eval", "--calibrate", "--review-precision", "0.8"}, {"--train", "-b", "v4.4", "--folds", "2"}} {
		if c, code, msg := parseWith(t, cfg, args...); c == nil {
			t.Errorf("%v: exit %d: %s", args, code, msg)
		}
	}
}

func TestHelp(t *testing.T) {
	e := newEnv(t, map[string]string{"SETUP.top_N": "7"})
	code, out := e.run(t, "--help")
	if code != exitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"Input:", "Output:", "Models:", "Training and evaluation:", "Document records:",
		"--[no-]inner", "--topn=N", "-tn for short", "top_N: 7", "--document-json-out-dir", "--no-average-best",
		"--review-rate=R", "share/doc/archivekit/docs/glossary.md", "LINE_T   typed text in a table or form",
		"Exit codes: 0 done", "75 incomplete"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	// Readable at 80 columns: no line over 100 (the category lines were
	// up to 116).
	for _, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 100 {
			t.Errorf("help line of %d columns: %q", len([]rune(l)), l)
		}
	}
}

// TestMissingExplicitConfig: a config file given that is not there is a
// usage error naming it, given as --config, -config or -c (translate's
// short form; it was an unknown flag).
func TestMissingExplicitConfig(t *testing.T) {
	for _, args := range [][]string{{"--config", "/nonexistent/config.txt"}, {"-c", "/nonexistent/config.txt"},
		{"-c=/nonexistent/config.txt"}, {"-config", "/nonexistent/config.txt"}, {"-config=/nonexistent/config.txt"},
		{"--config=/nonexistent/config.txt"}} {
		var out bytes.Buffer
		_, code, done := parseArgs(args, &out, &out, plainUsage(&out))
		if !done || code != exitUsage || !strings.Contains(out.String(), "/nonexistent/config.txt") {
			t.Errorf("%q: done %v code %d: %s", args, done, code, out.String())
		}
	}
}

func TestVersionFlag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"--version"}, &stdout, &stderr)
	if code != exitOK || strings.TrimSpace(stdout.String()) != version.Line("pageclass") {
		t.Errorf("--version: exit %d, %q (stderr %q); want %q", code, stdout.String(), stderr.String(), version.Line("pageclass"))
	}
}

// An -ff extension no decoder reads is a usage error naming it and the
// formats read, before any model is loaded; before, every such file failed
// after loading and the run ended with "no page was classified".
func TestUnreadableFileFormat(t *testing.T) {
	e := newEnv(t, nil)
	write(t, filepath.Join(e.in, "scan.gif"), "GIF89a")
	code, log := e.run(t, "-d", e.in, "-ff", "png,GIF")
	if code != exitUsage || !strings.Contains(log, ".gif is not a format pageclass reads (.png, .jpg, .jpeg, .tif, .tiff, .webp, .jp2, .j2k, .j2c, .pdf)") {
		t.Errorf("exit %d: %s", code, log)
	}
	if strings.Contains(log, "model loaded") {
		t.Errorf("models loaded before the usage error: %s", log)
	}
}

// TestSingleDashLongFlags: a long flag written with one dash is that flag;
// before, "-best" was read as "-b est" and answered "--base applies to
// --train only".
func TestSingleDashLongFlags(t *testing.T) {
	c, code, out := parseWith(t, nil, "-best", "-raw=false", "-no-inner", "-tn", "2")
	if c == nil || !c.Best || c.Given["base"] || c.Raw || c.Inner || c.TopN != 2 {
		t.Fatalf("-best -raw=false -no-inner -tn 2: exit %d: %s %+v", code, out, c)
	}
}
