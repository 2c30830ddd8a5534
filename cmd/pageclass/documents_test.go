package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"archivekit/pkg/docrecord"
)

// sharedSchema is ../shared/spec/document.schema.json, found by walking up.
func sharedSchema(t *testing.T) *docrecord.Schema {
	t.Helper()
	wd, _ := os.Getwd()
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "spec", "document.schema.json")
		if _, err := os.Stat(p); err == nil {
			s, err := docrecord.LoadSchema(p)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Skip("shared/spec/document.schema.json not found")
	return nil
}

var volatile = regexp.MustCompile(`("(?:run_id|updated_at|paradata_ref)": )"[^"]*"`)

// normalised is a record with its run-dependent values replaced.
func normalised(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return volatile.ReplaceAll(b, []byte(`$1"X"`))
}

const baseline = `{
  "schema_version": "1.0",
  "doc_id": "CTX000000042",
  "source": {"filename": "caa_conference.pdf", "page_count": 30},
  "pages": [
    {"page": "4", "page_index": 4, "text_chars": 1200}
  ],
  "ocr": {"engine": "kept as it was", "score": 0.870}
}
`

func TestDocumentRecordsBatch(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	base := filepath.Join(e.root, "baseline")
	write(t, filepath.Join(base, "TEXT_caa_conference.document.json"), baseline)
	out := filepath.Join(e.root, "records")
	code, log := e.run(t, "--dir", "--document-json-dir", base, "--document-json-out-dir", out)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	recs, _ := filepath.Glob(filepath.Join(out, "*.document.json"))
	if len(recs) != 11 {
		t.Fatalf("%d records, want 11 (one per document): %v", len(recs), recs)
	}
	// The baseline's doc_id is inherited; other documents take FILE.
	golden(t, "record_baseline.json", normalised(t, filepath.Join(out, "CTX000000042.document.json")))
	golden(t, "record_new.json", normalised(t, filepath.Join(out, "DRAW_atrium.document.json")))
	schema := sharedSchema(t)
	for _, p := range recs {
		r, err := docrecord.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(r); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	if d := readParadata(t, e); d.Statistics.OutputCountsByType["json"] != 11 {
		t.Errorf("json outputs %v", d.Statistics.OutputCountsByType)
	}
}

func TestDocumentRecordSingleAndStrict(t *testing.T) {
	page := func(t *testing.T, e *env) string {
		for _, p := range e.linkPages(t, 1) {
			if strings.Contains(p, "caa_conference-15") {
				return p
			}
		}
		t.Fatal("sample page PHOTO/caa_conference-15.png missing")
		return ""
	}
	t.Run("single file", func(t *testing.T) {
		e := newEnv(t, nil)
		e.model(t, "v4.4")
		base := filepath.Join(e.root, "b.json")
		write(t, base, strings.Replace(baseline, `"page": "4", "page_index": 4`, `"page": "15", "page_index": 15`, 1))
		out := filepath.Join(e.root, "out", "x.document.json")
		code, log := e.run(t, "-f", page(t, e), "--document-json", base, "--document-json-out", out)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, log)
		}
		b := string(normalised(t, out))
		for _, want := range []string{`"doc_id": "CTX000000042"`, `"page_categories"`, `"15": "`, `"category_confidence"`, `"text_chars": 1200`, `"score": 0.870`} {
			if !strings.Contains(b, want) {
				t.Errorf("record lacks %s:\n%s", want, b)
			}
		}
	})
	t.Run("strict refuses a page without an entry", func(t *testing.T) {
		e := newEnv(t, nil)
		e.model(t, "v4.4")
		base := filepath.Join(e.root, "b.json")
		write(t, base, baseline) // has page 4 only; the run classifies page 15
		out := filepath.Join(e.root, "out", "x.document.json")
		in := page(t, e)
		code, log := e.run(t, "-f", in, "--document-json", base, "--document-json-out", out, "--strict-document-json")
		if code != exitFailure || !strings.Contains(log, "15") {
			t.Fatalf("exit %d: %s", code, log)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("record written despite strict: %v", err)
		}
		// Without strict the page entry is added with a warning.
		code, log = e.run(t, "-f", in, "--document-json", base, "--document-json-out", out)
		if code != exitOK || !strings.Contains(log, "document record") {
			t.Fatalf("exit %d: %s", code, log)
		}
		if _, err := os.Stat(out); err != nil {
			t.Error(err)
		}
	})
	t.Run("newer schema refused", func(t *testing.T) {
		e := newEnv(t, nil)
		e.model(t, "v4.4")
		base := filepath.Join(e.root, "b.json")
		write(t, base, strings.Replace(baseline, `"1.0"`, `"2.0"`, 1))
		out := filepath.Join(e.root, "x.document.json")
		code, log := e.run(t, "-f", page(t, e), "--document-json", base, "--document-json-out", out)
		if code != exitFailure || !strings.Contains(log, "newer schema") {
			t.Fatalf("exit %d: %s", code, log)
		}
	})
}
