package docrecord

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sharedSchema returns ../shared/spec/document.schema.json, read in place.
func sharedSchema(t *testing.T) *Schema {
	t.Helper()
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		p := filepath.Join(d, "shared", "spec", "document.schema.json")
		if _, err := os.Stat(p); err == nil {
			s, err := LoadSchema(p)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	t.Skip("shared/spec/document.schema.json not found")
	return nil
}

func baseline(t *testing.T) (*Record, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "baseline.document.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

func plain(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRoundTripKeepsEverything(t *testing.T) {
	r, in := baseline(t)
	out, err := r.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	var compact bytes.Buffer
	json.Compact(&compact, in)
	json.Indent(&want, compact.Bytes(), "", "  ")
	want.WriteByte('\n')
	if !bytes.Equal(out, want.Bytes()) {
		t.Errorf("round trip changed the record:\n%s\nwant\n%s", out, want.Bytes())
	}
	for _, s := range []string{`2.50`, `3e2`, `"<a & b>"`, `Příliš`, `"b": 1,`} {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("output lost %s", s)
		}
	}
}

func TestAccretePageCategories(t *testing.T) {
	r, in := baseline(t)
	preds := []PagePrediction{
		{Label: "1", Index: 1, Category: "TEXT_T", Confidence: 0.9731},
		{Label: "ii", Index: 2, Category: "DRAW", Confidence: 0.5},
	}
	if err := r.AccretePageCategories(preds, true); err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %v", r.Warnings)
	}
	out, _ := r.Bytes()
	got, base := plain(t, out), plain(t, in)
	// Every block but the classifier's is untouched.
	for k, v := range base {
		if k == "pages" || k == "page_categories" {
			continue
		}
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("block %s changed: %v -> %v", k, v, got[k])
		}
	}
	cats := got["page_categories"].(map[string]any)
	if cats["9"] != "TEXT" || cats["1"] != "TEXT_T" || cats["ii"] != "DRAW" {
		t.Errorf("page_categories %v", cats)
	}
	pages := got["pages"].([]any)
	p1, p2 := pages[0].(map[string]any), pages[1].(map[string]any)
	if p1["category"] != "TEXT_T" || p1["category_confidence"] != json.Number("0.9731") || p1["quality_score"] != json.Number("0.93") || p1["canvas"] == nil {
		t.Errorf("page 1 %v", p1)
	}
	if p2["category"] != "DRAW" || p2["teitok_surface"] != "s2" || len(pages) != 2 {
		t.Errorf("page ii %v", p2)
	}
	if err := sharedSchema(t).Validate(r); err != nil {
		t.Errorf("accreted record invalid: %v", err)
	}
	ps, err := ProjectSchema()
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.Validate(r); err != nil {
		t.Errorf("accreted record fails project schema: %v", err)
	}
}

func TestMissingPages(t *testing.T) {
	r, _ := baseline(t)
	preds := []PagePrediction{{Label: "3", Index: 3, Category: "PHOTO", Confidence: 1}}
	if err := r.AccretePageCategories(preds, true); err == nil || !strings.Contains(err.Error(), "strict") {
		t.Fatalf("strict: %v", err)
	}
	if _, ok := r.Get("page_categories", "3"); ok {
		t.Error("strict refusal changed the record")
	}
	if err := r.AccretePageCategories(preds, false); err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 {
		t.Errorf("warnings %v", r.Warnings)
	}
	pages, _ := r.Get("pages")
	last := pages.([]any)[2].(*Object)
	if v, _ := last.Get("page"); v != "3" {
		t.Errorf("added page %v", last)
	}
	if err := sharedSchema(t).Validate(r); err != nil {
		t.Error(err)
	}
}

func TestNewRecordAndBlocks(t *testing.T) {
	r, err := New("CTX9")
	if err != nil {
		t.Fatal(err)
	}
	r.AccretePageCategories([]PagePrediction{{Label: "1", Index: 1, Category: "TEXT", Confidence: 0.25}}, false)
	at := time.Date(2026, 5, 30, 10, 20, 33, 0, time.UTC)
	if err := r.NoteBlocks("page-classification", "260530-102033", "result/260530-102033_page-classification.json", at, false, "page_categories", "pages"); err != nil {
		t.Fatal(err)
	}
	if err := r.Set(map[string]string{"source_lang": "cs", "target_lang": "en", "backend": "ct2", "output_mode": "append"}, "translations"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p, err := r.WriteToDir(dir, sharedSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(p) != "CTX9.document.json" {
		t.Errorf("path %s", p)
	}
	back, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := back.Get("assembled", "blocks", "pages"); v == nil {
		t.Error("assembled.blocks.pages missing")
	}
	ps, _ := ProjectSchema()
	r.Set("overwrite", "translations", "output_mode")
	if err := ps.Validate(r); err == nil {
		t.Error("project schema accepts output_mode overwrite")
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name, in, want string
		newer          bool
	}{
		{"newer major", `{"schema_version":"2.0","doc_id":"a"}`, "newer schema", true},
		{"no doc_id", `{"schema_version":"1.0"}`, "no doc_id", false},
		{"doc_id a number", `{"schema_version":"1.0","doc_id":5}`, "doc_id must be a non-empty string, got a number", false},
		{"doc_id empty", `{"schema_version":"1.0","doc_id":""}`, "doc_id must be a non-empty string, got a string", false},
		{"bad version", `{"schema_version":"one","doc_id":"a"}`, "MAJOR.MINOR", false},
		{"not object", `[1]`, "JSON object", false},
		{"broken", `{"doc_id":`, "not valid JSON", false},
		{"duplicate key", `{"doc_id":"a","doc_id":"b","schema_version":"1.0"}`, "duplicate key", false},
		{"trailing", `{"doc_id":"a","schema_version":"1.0"} {}`, "after the JSON value", false},
	}
	for _, tc := range tests {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, ErrNewerSchema) != tc.newer {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	r, err := Parse([]byte(`{"schema_version":"0.9","doc_id":"a"}`))
	if err != nil || len(r.Warnings) != 1 || r.rawVersion() != SchemaVersion {
		t.Errorf("older version not migrated: %v %v", err, r)
	}
	if r, err := Parse([]byte(`{"schema_version":"1.7","doc_id":"a"}`)); err != nil || r.rawVersion() != "1.7" {
		t.Errorf("newer minor: %v", err)
	}
	if err := r.Set("other", "doc_id"); err == nil {
		t.Error("doc_id replaced")
	}
	if err := r.Set(1, "doc_id", "x"); err == nil {
		t.Error("Set through a string accepted")
	}
}

func TestInvalidRecordNeverWritten(t *testing.T) {
	r, _ := baseline(t)
	r.AccretePageCategories([]PagePrediction{{Label: "1", Category: "TEXT", Confidence: 0.5}}, false)
	pages, _ := r.Get("pages")
	pages.([]any)[0].(*Object).Set("category_confidence", json.Number("1.5"))
	p := filepath.Join(t.TempDir(), "out.document.json")
	err := r.WriteFile(p, sharedSchema(t))
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "not written") {
		t.Errorf("invalid record: %v", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Error("invalid record was written")
	}
	if err := r.WriteFile(p, nil); err == nil {
		t.Error("written without a schema")
	}
	if err := r.AccretePageCategories([]PagePrediction{{Label: "1", Category: "TEXT", Confidence: 2}}, false); err == nil {
		t.Error("confidence 2 accepted")
	}
}

// FileName keeps an ordinary doc_id and gives a single name inside the
// folder for a hostile one.
func TestFileName(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"MTX201501307", "MTX201501307.document.json"},
		{"oai:kramerius:uuid-1.2_3", "oai:kramerius:uuid-1.2_3.document.json"},
		{"Praha – účty", "Praha – účty.document.json"},
		{"..", "...document.json"},
		{"../x", "..%2Fx.document.json"},
		{"a/b", "a%2Fb.document.json"},
		{`..\..\x`, "..%5C..%5Cx.document.json"},
		{"a\nb\x00c\x7f", "a%0Ab%00c%7F.document.json"},
		{"50%2F", "50%252F.document.json"}, // not the name of "50/"
	} {
		got := FileName(c.id)
		if got != c.want {
			t.Errorf("FileName(%q) = %q, want %q", c.id, got, c.want)
		}
		if filepath.Base(got) != got || got == "." || got == ".." {
			t.Errorf("FileName(%q) = %q is not one name in the folder", c.id, got)
		}
	}
}

func TestPageLabels(t *testing.T) {
	for _, tc := range []struct {
		name    string
		numbers []int
		labels  []string
		want    []string
	}{
		{"own labels", []int{1, 2, 3}, []string{"i", "ii", "1"}, []string{"i", "ii", "1"}},
		{"none", []int{1, 2}, []string{"", ""}, []string{"1", "2"}},
		{"no labels given", []int{4, 7}, nil, []string{"4", "7"}},
		{"a page without one", []int{1, 2}, []string{"i", ""}, []string{"1", "2"}},
		{"shared label", []int{1, 2, 3}, []string{"1", "2", "1"}, []string{"1", "2", "3"}},
		{"selected pages", []int{3, 9}, []string{"iii", "5"}, []string{"iii", "5"}},
	} {
		if got := PageLabels(tc.numbers, tc.labels); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestAccreteMatchesByIndex: a prediction finds the baseline's entry by its
// physical position (page_index) when the entry has one, under the
// entry's own label, whatever label the classifier would give the page.
func TestAccreteMatchesByIndex(t *testing.T) {
	r, err := Parse([]byte(`{"schema_version":"1.0","doc_id":"d","pages":[{"page":"7","page_index":1},{"page":"8","page_index":2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	preds := []PagePrediction{{Label: "i", Index: 1, Category: "TEXT", Confidence: 0.6}, {Label: "ii", Index: 2, Category: "DRAW", Confidence: 0.7}}
	if err := r.AccretePageCategories(preds, true); err != nil {
		t.Fatal(err)
	}
	out, _ := r.Bytes()
	got := plain(t, out)
	if cats := got["page_categories"].(map[string]any); len(cats) != 2 || cats["7"] != "TEXT" || cats["8"] != "DRAW" {
		t.Errorf("page_categories %v, want 7: TEXT, 8: DRAW", cats)
	}
	if pages := got["pages"].([]any); len(pages) != 2 || pages[0].(map[string]any)["category"] != "TEXT" {
		t.Errorf("pages %v", pages)
	}
}

// A new record names the one file classified as its source (sha256, the
// durable key with doc_id); a baseline's source is kept (first writer
// wins), and one naming another file by its sha256 is warned of (it was
// accreted without a word), an error with Strict.
func TestApplyPagesSource(t *testing.T) {
	s, err := ProjectSchema()
	if err != nil {
		t.Fatal(err)
	}
	src := &Source{SHA256: strings.Repeat("b", 64), Filename: "scan.pdf", MediaType: "application/pdf", PageCount: 2}
	pages := []PagePrediction{{Label: "1", Index: 1, Category: "TEXT", Confidence: 0.9}}
	rec, err := ApplyPages(s, PageUpdate{DocID: "d", Pages: pages, Program: "pageclass", Source: src})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := rec.Get("source", "sha256"); got != src.SHA256 || len(rec.Warnings) != 0 {
		t.Errorf("new record: source.sha256 %v, warnings %q", got, rec.Warnings)
	}
	for _, tc := range []struct {
		sha  string
		warn bool
	}{{src.SHA256, false}, {strings.Repeat("a", 64), true}} {
		for _, strict := range []bool{false, true} {
			base, err := Parse([]byte(`{"schema_version": "1.0", "doc_id": "d", "source": {"sha256": "` + tc.sha + `", "filename": "kept.pdf"}, "pages": [{"page": "1", "page_index": 1}]}`))
			if err != nil {
				t.Fatal(err)
			}
			rec, err := ApplyPages(s, PageUpdate{Baseline: base, DocID: "d", Pages: pages, Program: "pageclass", Source: src, Strict: strict})
			switch {
			case tc.warn && strict:
				if err == nil || !strings.Contains(err.Error(), "is not that of the file classified") {
					t.Errorf("strict, another file's baseline: %v", err)
				}
			case err != nil:
				t.Errorf("sha %.8s strict %v: %v", tc.sha, strict, err)
			default:
				name, _ := rec.Get("source", "filename")
				warned := strings.Contains(strings.Join(rec.Warnings, "\n"), "is not that of the file classified")
				if name != "kept.pdf" || warned != tc.warn {
					t.Errorf("sha %.8s: source filename %v (first writer wins), warnings %q", tc.sha, name, rec.Warnings)
				}
			}
		}
	}
}
