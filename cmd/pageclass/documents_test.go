package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"archivekit/internal/docrecord"
	"archivekit/internal/pageclass/classify/classifytest"
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

var volatile = regexp.MustCompile(`("(?:run_id|updated_at|paradata_ref|at)": )"[^"]*"`)

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

// TestDocumentRecordFolderChecked: a records folder that cannot be made
// is said before any page is classified, naming the flag.
func TestDocumentRecordFolderChecked(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	file := filepath.Join(e.root, "a-file")
	write(t, file, "not a folder")
	for _, args := range [][]string{
		{"--dir", "--document-json-out-dir", filepath.Join(file, "records")},
		{"--dir", "--document-json-out", filepath.Join(file, "r.document.json")},
	} {
		code, log := e.run(t, args...)
		if code == exitOK || !strings.Contains(log, args[1]) || !strings.Contains(log, "can write") {
			t.Errorf("%v: exit %d, want a failure naming the flag:\n%s", args, code, log)
		}
		if strings.Contains(log, "classified") || strings.Contains(log, "pages/s") {
			t.Errorf("%v: pages were classified before the folder was checked:\n%s", args, log)
		}
	}
}

func TestDocumentRecordsBatch(t *testing.T) {
	// The golden records hold no image or runner reference.
	t.Setenv("DOCKER_IMAGE", "")
	t.Setenv("RUNNER_REF", "")
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
		// The run metadata is reached from the record's folder (its name
		// alone, which is in the results folder, did not lead there).
		ref, _ := r.Get("assembled", "blocks", "page_categories", "paradata_ref")
		if s, _ := ref.(string); s == "" || !fileExists(filepath.Join(out, filepath.FromSlash(s))) {
			t.Errorf("%s: paradata_ref %v does not lead to the run metadata from %s", p, ref, out)
		}
	}
	if d := readParadata(t, e); d.Statistics.OutputCountsByType["json"] != 11 {
		t.Errorf("json outputs %v", d.Statistics.OutputCountsByType)
	}
	if strings.Contains(log, "replaces the record") {
		t.Errorf("a first run warned of replacing records:\n%s", log)
	}

	// A second run into the same folder replaces the records without
	// adding to them: said for each (10: without its baseline the eleventh
	// document is TEXT_caa_conference, a record not there before), with how
	// to add to them instead; given the folder as its baselines, nothing is said.
	code, log = e.run(t, "--dir", "--document-json-out-dir", out)
	if n := strings.Count(log, "replaces the record there"); code != exitOK || n != 10 || !strings.Contains(log, "--document-json-dir") {
		t.Errorf("second run into the records' folder: exit %d, %d replacement warnings, want 10:\n%s", code, n, log)
	}
	code, log = e.run(t, "--dir", "--document-json-dir", out, "--document-json-out-dir", out)
	if code != exitOK || strings.Contains(log, "replaces the record") {
		t.Errorf("a run adding to its baselines in place: exit %d:\n%s", code, log)
	}
	// A resumed run, whose pages come from the ledger, names the source as
	// a fresh run does (it wrote records without it).
	resumed := filepath.Join(e.root, "resumed")
	if code, log := e.run(t, "--dir", "--resume", "--document-json-out-dir", resumed); code != exitOK {
		t.Fatalf("resumed run: exit %d: %s", code, log)
	}
	r, err := docrecord.Load(filepath.Join(resumed, "DRAW_atrium.document.json"))
	if err != nil {
		t.Fatal(err)
	}
	if sha, _ := r.Get("source", "sha256"); sha == nil || len(sha.(string)) != 64 {
		t.Errorf("resumed run's record: source.sha256 %v", sha)
	}
}

func TestDocumentRecordSingleAndStrict(t *testing.T) {
	t.Run("single file", func(t *testing.T) {
		e := newEnv(t, nil)
		e.model(t, "v4.4")
		base := filepath.Join(e.root, "b.json")
		write(t, base, strings.Replace(baseline, `"page": "4", "page_index": 4`, `"page": "15", "page_index": 15`, 1))
		out := filepath.Join(e.root, "out", "x.document.json")
		code, log := e.run(t, "-f", page15(t, e), "--document-json", base, "--document-json-out", out)
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
		in := page15(t, e)
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
		code, log := e.run(t, "-f", page15(t, e), "--document-json", base, "--document-json-out", out)
		if code != exitFailure || !strings.Contains(log, "newer schema") {
			t.Fatalf("exit %d: %s", code, log)
		}
	})
}

// Spec 7: a baseline that fails the schema but can be handled gives a record
// noting the error, with a warning; strict refuses it. Strict without a
// baseline works. Another program's page_categories block is overwritten
// only with a warning. Confidences have 4 decimals, as in the service.
func TestDocumentRecordWarningsAndStrict(t *testing.T) {
	withPage15 := strings.Replace(baseline, `"page": "4", "page_index": 4`, `"page": "15", "page_index": 15`, 1)
	tests := []struct {
		name     string
		baseline string // "" for none
		strict   bool
		code     int
		want     []string // in the log
		record   []string // in the record ("" record: none written)
	}{
		{"invalid baseline noted", strings.Replace(withPage15, `"doc_id"`, `"record_type": 5, "doc_id"`, 1), false, exitOK,
			[]string{"does not follow the record schema"}, []string{`"document_json_schema_error": "`, `"record_type": 5`, `"category": "`}},
		{"invalid baseline strict", strings.Replace(withPage15, `"doc_id"`, `"record_type": 5, "doc_id"`, 1), true, exitFailure,
			[]string{"refused: --strict-document-json"}, nil},
		{"strict without a baseline", "", true, exitOK, nil, []string{`"doc_id": "caa_conference"`, `"category_confidence"`}},
		{"another program's block", strings.Replace(withPage15, `"doc_id"`, `"assembled": {"blocks": {"page_categories": {"program": "other-tool"}}}, "doc_id"`, 1), false, exitOK,
			[]string{`written by \"other-tool\"`}, []string{`"program": "page-classification"`}},
		{"another program's block strict", strings.Replace(withPage15, `"doc_id"`, `"assembled": {"blocks": {"page_categories": {"program": "other-tool"}}}, "doc_id"`, 1), true, exitFailure,
			[]string{"other-tool"}, nil},
	}
	conf := regexp.MustCompile(`"category_confidence": ([0-9.]+)`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			e.model(t, "v4.4")
			out := filepath.Join(e.root, "out", "x.document.json")
			args := []string{"-f", page15(t, e), "--document-json-out", out}
			if tt.baseline != "" {
				base := filepath.Join(e.root, "b.json")
				write(t, base, tt.baseline)
				args = append(args, "--document-json", base)
			}
			if tt.strict {
				args = append(args, "--strict-document-json")
			}
			code, log := e.run(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, log)
			}
			for _, w := range tt.want {
				if !strings.Contains(log, w) {
					t.Errorf("log lacks %s:\n%s", w, log)
				}
			}
			if tt.record == nil {
				if _, err := os.Stat(out); !os.IsNotExist(err) {
					t.Errorf("record written: %v", err)
				}
				return
			}
			b := string(normalised(t, out))
			for _, w := range tt.record {
				if !strings.Contains(b, w) {
					t.Errorf("record lacks %s:\n%s", w, b)
				}
			}
			m := conf.FindStringSubmatch(b)
			if m == nil || len(m[1]) > len("0.1234") {
				t.Errorf("category_confidence %v: want at most 4 decimals", m)
			}
		})
	}
}

// page15 links the sample pages into e.in and returns the one with a page
// number, PHOTO/caa_conference-15.png.
func page15(t *testing.T, e *env) string {
	t.Helper()
	for _, p := range e.linkPages(t, 1) {
		if strings.Contains(p, "caa_conference-15") {
			return p
		}
	}
	t.Fatal("sample page PHOTO/caa_conference-15.png missing")
	return ""
}

// fileExists says whether path names a file.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestDocumentRecordNameTooLong: a document whose record name is over the
// file system's limit is said (a warning, in the log and the run
// metadata), the others' records are written and the run succeeds; it
// failed the run, exit 3, after writing the tables.
func TestDocumentRecordNameTooLong(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	pages := classifytest.Pages(t, 1)
	mkdir(t, e.in)
	long := strings.Repeat("b", 245)
	for name, src := range map[string]string{long + ".png": pages[0], "short.png": pages[1]} {
		if err := os.Symlink(src, filepath.Join(e.in, name)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(e.root, "records")
	code, log := e.run(t, "-d", e.in, "--document-json-out-dir", out)
	if code != exitOK {
		t.Fatalf("exit %d, want 0 with the other record written: %s", code, log)
	}
	if _, err := os.Stat(filepath.Join(out, "short.document.json")); err != nil {
		t.Errorf("the other document's record: %v", err)
	}
	if !strings.Contains(log, "over the file system's name limit") {
		t.Errorf("the long name is not said:\n%s", log)
	}
}
