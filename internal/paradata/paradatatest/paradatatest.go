// Package paradatatest reads run metadata in the tests of the tools that
// write it.
package paradatatest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// ByStatus reads the run metadata files in dir whose names end with suffix
// ("_translator.json"), each as a D, by their status; two files of one
// status fail the test.
func ByStatus[D any](t testing.TB, dir, suffix string) map[string]D {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*"+suffix))
	docs := map[string]D{}
	for _, f := range m {
		var d D
		var head struct {
			Status string `json:"status"`
		}
		b, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(b, &d)
		}
		if err == nil {
			err = json.Unmarshal(b, &head)
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, dup := docs[head.Status]; dup {
			t.Fatalf("two run metadata files in %s say %q", dir, head.Status)
		}
		docs[head.Status] = d
	}
	return docs
}
