package main

import (
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestSettingsRefused: settings that name nothing usable are usage errors
// (exit 1) saying which setting is at fault. An empty -o ended in exit 3
// with "mkdir : no such file or directory"; TRANSLATE_CONFIG naming no
// file is refused naming the variable and the path, as translate-api
// refuses it.
func TestSettingsRefused(t *testing.T) {
	record, err := filepath.Abs(testenv.Path(t, "records/C-9107617A.xml"))
	if err != nil {
		t.Fatal(err)
	}
	para, err := filepath.Abs(paraConfig)
	if err != nil {
		t.Fatal(err)
	}
	// In a folder of its own: a blank -o taken as a folder name is
	// written there, not among the sources.
	t.Chdir(t.TempDir())
	for _, tt := range []struct {
		name string
		env  env
		args []string
		says []string
	}{
		{"empty -o", nil, []string{record, "-o", ""}, []string{"-o is empty"}},
		{"blank --output", nil, []string{record, "--output", "  "}, []string{"-o is empty"}},
		{"empty -o with --merge", nil, []string{"--merge", t.TempDir(), "-o", ""}, []string{"-o is empty"}},
		{"TRANSLATE_CONFIG naming no file", env{"TRANSLATE_CONFIG": "/nonexistent/tc.txt"}, []string{record, "-o", t.TempDir()},
			[]string{"TRANSLATE_CONFIG", "/nonexistent/tc.txt"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(startAPI(t, translatortest.Config{}))
			e["TRANSLATE_PARA_CONFIG"] = para
			for k, v := range tt.env {
				e[k] = v
			}
			r := runCLI(t, e, tt.args...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want %d; stderr:\n%s", r.code, exitUsage, r.stderr)
			}
			for _, s := range tt.says {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr does not say %q:\n%s", s, r.stderr)
				}
			}
		})
	}
}
