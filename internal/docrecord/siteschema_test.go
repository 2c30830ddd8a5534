package docrecord

import (
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/testenv"
)

// With the site's schema named (EnvSiteSchema), a record must pass it too:
// a baseline whose source.sha256 is not hex passes the project schema,
// which keeps the source block open, and fails the pipeline's, so it is
// not written (translate wrote it).
func TestSiteSchema(t *testing.T) {
	site := testenv.Data(t, "../spec/document.schema.json")
	rec, err := Parse([]byte(`{"schema_version":"1.0","doc_id":"CTX1","source":{"sha256":"nothex"}}`))
	if err != nil {
		t.Fatal(err)
	}
	project, err := projectWith("")
	if err != nil {
		t.Fatal(err)
	}
	if err := project.Validate(rec); err != nil {
		t.Errorf("the project schema alone: %v", err)
	}
	both, err := projectWith(site)
	if err != nil {
		t.Fatal(err)
	}
	if err := both.Validate(rec); err == nil || !strings.Contains(err.Error(), "sha256") || !strings.Contains(err.Error(), "document.schema.json") {
		t.Errorf("with the site's schema: %v, want the sha256 named", err)
	}
	if _, err := rec.ValidBytes(both); err == nil {
		t.Error("a record failing the site's schema was given out")
	}
	if _, err := projectWith(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), EnvSiteSchema) {
		t.Errorf("a missing site schema: %v", err)
	}
}
