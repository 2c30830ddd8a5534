package servicetest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"archivekit/internal/version"
)

// GoldenJSON compares the JSON document got with the file testdata/name,
// after normalising its layout (two-space indentation, keys sorted). With
// update set, the file is rewritten first. A top-level "version", or an
// OpenAPI document's info.version, equal to the project version
// (internal/version) is written as "{version}", so the golden files hold
// across releases and any other version still differs.
func GoldenJSON(t testing.TB, name string, got []byte, update bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("%s: not JSON: %v", name, err)
	}
	if m, ok := v.(map[string]any); ok {
		if m["version"] == version.String() {
			m["version"] = "{version}"
		}
		if info, ok := m["info"].(map[string]any); ok && info["version"] == version.String() {
			info["version"] = "{version}" // an OpenAPI document's
		}
	}
	norm, _ := json.MarshalIndent(v, "", "  ")
	norm = append(norm, '\n')
	path := filepath.Join("testdata", name)
	if update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, norm, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(norm, want) {
		t.Fatalf("%s differs from the golden file (run with -update after checking):\n%s", name, norm)
	}
}
