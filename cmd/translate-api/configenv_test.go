package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// TestTranslateConfigChecked: TRANSLATE_CONFIG naming no file (or a
// folder) is a setting at fault, named with its path, as the shared
// resolver's other variables are; before, the service started without a
// word. A file that is there, or the variable unset, starts it.
func TestTranslateConfigChecked(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.txt")
	writeTestFile(t, file, "[translate]\n")
	for _, tt := range []struct {
		name, value, want string
	}{
		{"missing", "/nonexistent/tc.txt", "TRANSLATE_CONFIG): stat /nonexistent/tc.txt"},
		{"folder", dir, dir + " (TRANSLATE_CONFIG): is a folder"},
		{"a file", file, ""},
		{"unset", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv("http://127.0.0.1:1", map[string]string{"TRANSLATE_CONFIG": tt.value})
			s, err := newServer(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
			if err == nil {
				s.close()
			}
			if tt.want == "" && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestTranslateConfigMissingExit: the binary exits 2 (a bad setting) on a
// TRANSLATE_CONFIG naming no file, and says which.
func TestTranslateConfigMissingExit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the service")
	}
	bin := servicetest.Build(t, "translate-api")
	// Bounded: a service that starts anyway would serve without end.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(), "TRANSLATE_CONFIG=/nonexistent/tc.txt", "TRANSLATION_URL=http://127.0.0.1:1",
		"PORT="+strconv.Itoa(servicetest.FreePort(t)))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != service.ExitConfig || !strings.Contains(string(out), "TRANSLATE_CONFIG") || !strings.Contains(string(out), "/nonexistent/tc.txt") {
		t.Fatalf("exit %v, want %d naming TRANSLATE_CONFIG and the path; output:\n%s", err, service.ExitConfig, out)
	}
}

// writeTestFile writes text to p.
func writeTestFile(t *testing.T, p, text string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
