package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/config"
	"archivekit/internal/resources"
)

// A value from an environment variable that is out of range or not one of
// the choices is refused naming the variable and its value, as kong's own
// parse errors do; the same value given as the flag names the flag alone.
// Before, the range errors named the flag only, so a user who never gave it
// looked for it on the command line.
func TestEnvValueProblemNamesVariable(t *testing.T) {
	e := newEnv(t, nil)
	page := filepath.Join(e.root, "page.png")
	for _, tc := range []struct {
		env, value string
		flag       string
		want       string
	}{
		{"DECODE_MEMORY", "-5", "--decode-memory", "--decode-memory must be at least"},
		{"DECODE_TIMEOUT", "-1s", "--decode-timeout", "--decode-timeout must be positive"},
		{"PDF_RENDERER", "bogus", "--pdf-renderer", "--pdf-renderer must be one of"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			named := `(from envar ` + tc.env + `=\"` + tc.value + `\")`
			t.Setenv(tc.env, tc.value)
			code, log := e.run(t, "-f", page)
			if code != exitUsage || !strings.Contains(log, tc.want) || !strings.Contains(log, named) {
				t.Errorf("%s=%s: exit %d, want %d naming %s: %s", tc.env, tc.value, code, exitUsage, named, log)
			}
			os.Unsetenv(tc.env) // restored by t.Setenv's clean-up
			code, log = e.run(t, "-f", page, tc.flag+"="+tc.value)
			if code != exitUsage || !strings.Contains(log, tc.want) || strings.Contains(log, "from envar") {
				t.Errorf("%s %s: exit %d, want %d naming the flag alone: %s", tc.flag, tc.value, code, exitUsage, log)
			}
		})
	}
}

// valueOrigins names the source of each value not given on the command
// line: the environment variable, or the config file and key.
func TestValueOrigins(t *testing.T) {
	t.Setenv("DECODE_MEMORY", "100")
	t.Setenv(resources.RotationModel.Env, " /nowhere ")
	ini, err := config.Parse("my.cfg", strings.NewReader("[SETUP]\nbatch = 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := resources.File{Path: "my.cfg"}
	got := valueOrigins(map[string]bool{"topn": true}, cfg, ini)
	for flag, want := range map[string]string{
		"decode-memory":  `(from envar DECODE_MEMORY="100")`,
		"rotation-model": `(from envar ARCHIVEKIT_ROTATION_MODEL="/nowhere")`,
		"batch":          "(from [SETUP] batch in my.cfg)",
		"topn":           "", // given on the command line
		"fetch-workers":  "", // [INPUT] fetch_workers not in the file: built-in
	} {
		if got[flag] != want {
			t.Errorf("origin of --%s = %q, want %q", flag, got[flag], want)
		}
	}
	c := &CLI{Origin: got}
	if s := c.source("batch"); s != "--batch (from [SETUP] batch in my.cfg)" {
		t.Errorf("source(batch) = %q", s)
	}
	if s := c.source("topn"); s != "--topn" {
		t.Errorf("source(topn) = %q", s)
	}
}

// ARCHIVEKIT_ROTATION_MODEL naming nothing is refused as --rotation-model
// naming nothing is (exit 3), naming the variable and the path. Before,
// the run went on without the rotation check, its warning naming neither.
func TestRotationModelEnvMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexist")
	t.Setenv(resources.RotationModel.Env, missing)
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	results := filepath.Join(e.root, "results-rotation")
	code, log := e.run(t, "-d", e.in, "--results", results)
	if code != exitFailure || !strings.Contains(log, resources.RotationModel.Env) || !strings.Contains(log, missing) {
		t.Errorf("%s=%s: exit %d, want %d naming both: %s", resources.RotationModel.Env, missing, code, exitFailure, log)
	}
	// Before the models are loaded and anything is written (it wrote
	// the run metadata of a failed run, seconds later).
	if _, err := os.Stat(results); err == nil || strings.Contains(log, "model loaded") {
		t.Errorf("the run wrote its results folder or loaded models before failing:\n%s", log)
	}
}

// ARCHIVEKIT_DEMO_WEIGHTS naming nothing, when the demo models are needed,
// fails naming the variable and the path. Before, the message named
// weights/demo, a folder the user had not given.
func TestDemoWeightsEnvMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexist")
	t.Setenv(resources.DemoWeights.Env, missing)
	// The shipped default models folder (not a given location) lacks the
	// models: the demo models are needed.
	e := newEnv(t, map[string]string{"OUTPUT.FOLDER_MODELS": "./model"})
	e.linkPages(t, 1)
	for _, args := range [][]string{{"-d", e.in}, {"-d", e.in, "--best"}} {
		code, log := e.run(t, append(args, "--rotation-model", "")...)
		if code != exitFailure || !strings.Contains(log, resources.DemoWeights.Env) || !strings.Contains(log, missing) {
			t.Errorf("%s=%s %v: exit %d, want %d naming both: %s", resources.DemoWeights.Env, missing, args, code, exitFailure, log)
		}
	}
}
