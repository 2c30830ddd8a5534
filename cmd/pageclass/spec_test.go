package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpecFlagNames: every flag of the table of spec page-classification 4.1,
// in each spelling the spec gives (long, short, and --no-x of the
// boolean-optional pairs), parses and reaches its setting. The --no-x rows
// run over a config file that sets the value true, so they show that --no-x
// overrides the file (rule 1).
func TestSpecFlagNames(t *testing.T) {
	on := map[string]string{"SETUP.inner": "True", "INPUT.chunking": "True", "SETUP.raw": "True", "HUB.use_hub": "True",
		"FASTCLS.use_fastcls": "True", "TRAIN.Training": "True", "TRAIN.Testing": "True", "DOCUMENT.strict": "True"}
	tests := []struct {
		args []string
		cfg  map[string]string
		ok   func(c *CLI) bool
	}{
		{[]string{"-f", "p.png"}, nil, func(c *CLI) bool { return c.File == "p.png" }},
		{[]string{"--file", "p.png"}, nil, func(c *CLI) bool { return c.File == "p.png" }},
		{[]string{"-d", "pages"}, nil, func(c *CLI) bool { return c.Directory == "pages" }},
		{[]string{"--directory", "pages"}, nil, func(c *CLI) bool { return c.Directory == "pages" }},
		{[]string{"--dir"}, nil, func(c *CLI) bool { return c.Dir }},
		{[]string{"-ff", "jpg"}, nil, func(c *CLI) bool { return c.FileFormat == "jpg" }},
		{[]string{"--file_format", "tif"}, nil, func(c *CLI) bool { return c.FileFormat == "tif" }},
		{[]string{"--inner"}, map[string]string{"SETUP.inner": "False"}, func(c *CLI) bool { return c.Inner }},
		{[]string{"--no-inner"}, on, func(c *CLI) bool { return !c.Inner }},
		{[]string{"--chunk"}, nil, func(c *CLI) bool { return c.Chunk }},
		{[]string{"--no-chunk"}, on, func(c *CLI) bool { return !c.Chunk }},
		{[]string{"-tn", "5"}, nil, func(c *CLI) bool { return c.TopN == 5 }},
		{[]string{"--topn", "11"}, nil, func(c *CLI) bool { return c.TopN == 11 }},
		{[]string{"--raw"}, nil, func(c *CLI) bool { return c.Raw }},
		{[]string{"--no-raw"}, on, func(c *CLI) bool { return !c.Raw }},
		{[]string{"-m", "mdir"}, nil, func(c *CLI) bool { return c.Model == "mdir" && c.ModelGiven }},
		{[]string{"--model", "mdir"}, nil, func(c *CLI) bool { return c.Model == "mdir" && c.ModelGiven }},
		{[]string{"-b", "v1.4", "--train"}, nil, func(c *CLI) bool { return c.Base == "v1.4" && c.Train }},
		{[]string{"--base", "v2.4", "--train"}, nil, func(c *CLI) bool { return c.Base == "v2.4" }},
		{[]string{"-rev", "v3.4"}, nil, func(c *CLI) bool { return c.Revision == "v3.4" }},
		{[]string{"--revision", "main"}, nil, func(c *CLI) bool { return c.Revision == "main" }},
		{[]string{"--hub"}, nil, func(c *CLI) bool { return c.Hub }},
		{[]string{"--no-hub"}, on, func(c *CLI) bool { return !c.Hub }},
		{[]string{"--fastcls"}, nil, func(c *CLI) bool { return c.FastCls }},
		{[]string{"--no-fastcls"}, on, func(c *CLI) bool { return !c.FastCls }},
		{[]string{"--fastcls_base", "tag"}, nil, func(c *CLI) bool { return c.FastClsBase == "tag" }},
		{[]string{"--best"}, nil, func(c *CLI) bool { return c.Best }},
		{[]string{"--best", "--parallel"}, nil, func(c *CLI) bool { return c.Parallel }},
		{[]string{"--best", "--no-average-best"}, nil, func(c *CLI) bool { return c.NoAverageBest }},
		{[]string{"--best", "--save-intermediates"}, nil, func(c *CLI) bool { return c.SaveIntermediates }},
		{[]string{"--train"}, nil, func(c *CLI) bool { return c.Train }},
		{[]string{"--no-train"}, on, func(c *CLI) bool { return !c.Train }},
		{[]string{"--eval"}, nil, func(c *CLI) bool { return c.Eval }},
		{[]string{"--no-eval"}, on, func(c *CLI) bool { return !c.Eval }},
		{[]string{"--train", "--folds", "5"}, nil, func(c *CLI) bool { return c.Folds == 5 }},
		{[]string{"--train", "--folds_csv", "f.csv"}, nil, func(c *CLI) bool { return c.FoldsCSV == "f.csv" }},
		{[]string{"--train", "--fold_column", "fold 2"}, nil, func(c *CLI) bool { return c.FoldColumn == "fold 2" }},
		{[]string{"--average", "-ap", "v4"}, nil, func(c *CLI) bool { return c.Average && c.AveragePattern == "v4" }},
		{[]string{"--average", "--average_pattern", "v5"}, nil, func(c *CLI) bool { return c.AveragePattern == "v5" }},
		{[]string{"--document-json", "b.json"}, nil, func(c *CLI) bool { return c.DocumentJSON == "b.json" }},
		{[]string{"--document-json-out", "o.json"}, nil, func(c *CLI) bool { return c.DocumentJSONOut == "o.json" }},
		{[]string{"--document-json-dir", "recs"}, nil, func(c *CLI) bool { return c.DocumentJSONDir == "recs" }},
		{[]string{"--document-json-out-dir", "out"}, nil, func(c *CLI) bool { return c.DocumentJSONOutDir == "out" }},
		{[]string{"--strict-document-json"}, nil, func(c *CLI) bool { return c.StrictDocumentJSON }},
		{[]string{"--no-strict-document-json"}, on, func(c *CLI) bool { return !c.StrictDocumentJSON }},
	}
	for _, tc := range tests {
		c, code, msg := parseWith(t, tc.cfg, tc.args...)
		if c == nil {
			t.Errorf("%q: exit %d: %s", tc.args, code, msg)
			continue
		}
		if !tc.ok(c) {
			t.Errorf("%q did not reach its setting", tc.args)
		}
	}
}

// TestSpecFlagDefaults: with the shipped values of spec 2.8 in the config
// file and no flag, the flags of spec 4.1 take the defaults of its table.
func TestSpecFlagDefaults(t *testing.T) {
	c, code, msg := parseWith(t, nil)
	if c == nil {
		t.Fatalf("exit %d: %s", code, msg)
	}
	checks := []struct {
		flag      string
		got, want any
	}{
		{"-f", c.File, ""}, {"-d", c.Directory, ""}, {"--dir", c.Dir, false},
		{"-ff", c.FileFormat, "png"}, {"--inner", c.Inner, true}, {"--chunk", c.Chunk, false},
		{"-tn", c.TopN, 3}, {"--raw", c.Raw, false}, {"-b", c.Base, "v4.4"}, {"-rev", c.Revision, ""},
		{"--hub", c.Hub, false}, {"--fastcls", c.FastCls, false}, {"--fastcls_base", c.FastClsBase, "small"},
		{"--best", c.Best, false}, {"--parallel", c.Parallel, false}, {"--no-average-best", c.NoAverageBest, false},
		{"--save-intermediates", c.SaveIntermediates, false}, {"--train", c.Train, false}, {"--eval", c.Eval, false},
		{"--folds", c.Folds, 0}, {"--folds_csv", c.FoldsCSV, ""}, {"--fold_column", c.FoldColumn, ""},
		{"--average", c.Average, false}, {"-ap", c.AveragePattern, ""},
		{"--document-json", c.DocumentJSON, ""}, {"--document-json-out", c.DocumentJSONOut, ""},
		{"--document-json-dir", c.DocumentJSONDir, ""}, {"--document-json-out-dir", c.DocumentJSONOutDir, ""},
		{"--strict-document-json", c.StrictDocumentJSON, false},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s defaults to %v, want %v (spec 4.1)", ch.flag, ch.got, ch.want)
		}
	}
}

// TestSpecDocumentAdapterNeedsAnOutput: spec 4.1 rule 8, the document-record
// adapter does nothing unless an output path or folder is set, by flag or
// config. A baseline (file or folder) alone writes no record anywhere and
// the run succeeds, with a warning that it is not used; the config's document_json_out_dir alone does write.
func TestSpecDocumentAdapterNeedsAnOutput(t *testing.T) {
	records := func(root string) []string {
		var found []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".document.json") && !strings.Contains(p, string(filepath.Separator)+"baseline") {
				found = append(found, p)
			}
			return nil
		})
		return found
	}
	t.Run("baselines without an output", func(t *testing.T) {
		e := newEnv(t, nil)
		e.model(t, "v4.4")
		dir := filepath.Join(e.root, "baseline")
		write(t, filepath.Join(dir, "b.json"), baseline)
		write(t, filepath.Join(dir, "TEXT_caa_conference.document.json"), baseline)
		page := page15(t, e)
		code, log := e.run(t, "-f", page, "--document-json", filepath.Join(dir, "b.json"))
		if code != exitOK || !strings.Contains(log, "is not used: no record is written without --document-json-out FILE") {
			t.Fatalf("--document-json alone: exit %d, or no warning: %s", code, log)
		}
		code, log = e.run(t, "-f", page, "--document-json-dir", dir)
		if code != exitOK || !strings.Contains(log, "is not used: no record is written without --document-json-out-dir DIR") {
			t.Fatalf("--document-json-dir alone: exit %d, or no warning: %s", code, log)
		}
		if got := records(e.root); len(got) != 0 {
			t.Errorf("records written without an output path or folder: %v", got)
		}
	})
	t.Run("output folder from the config", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "records")
		e := newEnv(t, map[string]string{"DOCUMENT.document_json_out_dir": out})
		e.model(t, "v4.4")
		if code, log := e.run(t, "-f", page15(t, e)); code != exitOK {
			t.Fatalf("exit %d: %s", code, log)
		}
		if got := records(out); len(got) != 1 {
			t.Errorf("records %v, want one in %s", got, out)
		}
	})
}
