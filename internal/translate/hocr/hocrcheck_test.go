package hocr

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"archivekit/internal/translate/backend/backendtest"
)

// TestHOCRCheck: hocr-tools' hocr-check (PyPI hocr-tools, in the tools
// virtualenv of test/requirements-tools.txt) gives each real file and its
// translation the same verdict, word for word.
func TestHOCRCheck(t *testing.T) {
	py := os.Getenv("ARCHIVEKIT_PYTOOLS")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTOOLS not set (make test sets it): hocr-check not available")
	}
	check := filepath.Join(filepath.Dir(py), "hocr-check")
	verdict := func(path string) string {
		var out bytes.Buffer
		cmd := exec.Command(check, path)
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
			t.Fatalf("hocr-check: %v", err)
		}
		return out.String() + " exit " + cmd.ProcessState.String()
	}
	dir := t.TempDir()
	for _, f := range realFiles {
		in := filepath.Join("testdata", "real", f.name)
		src, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Translate(context.Background(), src, Options{Backend: &backendtest.Backend{}, Source: f.src, Target: f.tgt})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, f.name)
		if err := os.WriteFile(out, res.Output, 0o644); err != nil {
			t.Fatal(err)
		}
		if a, b := verdict(in), verdict(out); a != b {
			t.Errorf("%s: hocr-check on the input:\n%s\non the output:\n%s", f.name, a, b)
		}
	}
}
