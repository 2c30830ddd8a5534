package rocrate

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func write(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fixture writes a record accreted by two runs, one run's metadata, one
// persistent output and returns the Input.
func fixture(t *testing.T) (Input, string) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "out", "doc_en.alto.xml"), "<alto/>")
	para := write(t, filepath.Join(dir, "runs", "260101-120000_page-classification.json"), `{"program":"page-classification","tool_version":"0.1.0",
 "run_id":"260101-120000","license":"MIT","license_url":"https://opensource.org/license/mit/","start_time":"2026-01-01T13:00:00+01:00",
 "end_time":"2026-01-01T12:00:05Z","docker_image":"reg.example/pageclass:sha-abc1234","runner_ref":"runner-7"}`)
	rec := write(t, filepath.Join(dir, "records", "CTX1.document.json"), `{
  "schema_version": "1.0", "doc_id": "CTX1",
  "source": {"sha256": "`+strings.Repeat("ab", 32)+`", "filename": "CTX1.pdf", "media_type": "application/pdf"},
  "derived_from": {"translated_xml": "../out/doc_en.alto.xml", "teitok": "TEITOK/CTX1.xml"},
  "regenerable": {"markdown": {"from": "../out/doc_en.alto.xml", "converter": "xml_to_md@0.3.0"}},
  "translations": {"source_lang": "cs", "target_lang": "en", "backend": "mtapi", "output_mode": "replace",
    "license": "CC BY-NC-SA 4.0", "license_url": "https://creativecommons.org/licenses/by-nc-sa/4.0/"},
  "provenance": {"contributors": [{"program": "translator", "run_id": "260102-090000", "version": "v0.1.0", "at": "2026-01-02T10:00:00+01:00"}]},
  "assembled": {"blocks": {
    "page_categories": {"program": "page-classification", "run_id": "260101-120000", "paradata_ref": "260101-120000_page-classification.json", "updated_at": "2026-01-01T12:00:05Z"},
    "translations": {"program": "translator", "run_id": "260102-090000", "paradata_ref": "missing/260102-090000_translator.json", "updated_at": "2026-01-02T08:59:59Z"}}}
}`)
	return Input{Document: rec, Paradata: []string{para}}, dir
}

func graphOf(t *testing.T, data []byte) map[string]map[string]any {
	t.Helper()
	var doc struct {
		Graph []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]any{}
	for _, e := range doc.Graph {
		m[e["@id"].(string)] = e
	}
	return m
}

func TestBuild(t *testing.T) {
	in, _ := fixture(t)
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if bad := Check(data, ""); len(bad) > 0 {
		t.Fatalf("check: %v\n%s", bad, data)
	}
	g := graphOf(t, data)
	root := g[RootID]
	// datePublished is the latest stamp (09:00Z from the contributor entry),
	// in UTC, whatever the offsets the stamps were written with.
	if root["datePublished"] != "2026-01-02T09:00:00Z" {
		t.Errorf("datePublished %v", root["datePublished"])
	}
	if got := refID(root["license"]); got != "https://creativecommons.org/licenses/by-nc-sa/4.0/" {
		t.Errorf("licence %s, want the most restrictive (CC BY-NC-SA over MIT)", got)
	}
	parts := refs(root["hasPart"])
	want := "CTX1.document.json,doc_en.alto.xml,paradata/260101-120000_page-classification.json"
	if strings.Join(parts, ",") != want {
		t.Errorf("hasPart %v, want %s", parts, want)
	}
	if refID(root["isBasedOn"]) != sourceID || g[sourceID]["identifier"] != "sha256:"+strings.Repeat("ab", 32) {
		t.Errorf("source not described: %v %v", root["isBasedOn"], g[sourceID])
	}
	if len(refs(root["mentions"])) != 1 || g["#regenerable-markdown"] == nil {
		t.Errorf("regenerable not mentioned: %v", root["mentions"])
	}
	var actions []string
	for id, e := range g {
		if e["@type"] == "CreateAction" {
			actions = append(actions, id)
			sw := g[refID(e["instrument"])]
			if sw["@type"] != "SoftwareApplication" {
				t.Errorf("%s: instrument %v", id, sw)
			}
		}
	}
	if len(actions) != 2 {
		t.Errorf("actions %v, want one per contributing run", actions)
	}
	pc := g["#run-page-classification-260101-120000"]
	if pc["startTime"] != "2026-01-01T12:00:00Z" || pc["endTime"] != "2026-01-01T12:00:05Z" || pc["containerImage"] != "reg.example/pageclass:sha-abc1234" ||
		refID(pc["subjectOf"]) != "paradata/260101-120000_page-classification.json" || !strings.Contains(pc["description"].(string), "runner runner-7") {
		t.Errorf("page-classification action %v", pc)
	}
	// The translator's run made the translated document as well as the
	// record (it was in hasPart, no action's result); the classifier's
	// made the record only.
	for _, id := range actions {
		got := refs(g[id]["result"])
		sort.Strings(got)
		want := "CTX1.document.json"
		if strings.HasPrefix(id, "#run-translator-") {
			want += ",doc_en.alto.xml"
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s: result %v, want %s", id, got, want)
		}
	}
	if sw := g["#software-translator-v0.1.0"]; sw == nil || sw["softwareVersion"] != "v0.1.0" {
		t.Errorf("translator software %v", sw)
	}
	if _, ok := root["conformsTo"]; ok {
		t.Error("process-run profile without ProcessRun")
	}
	if len(c.Warnings) != 2 || !strings.Contains(strings.Join(c.Warnings, "\n"), "derived_from.teitok: TEITOK/CTX1.xml not found") {
		t.Errorf("warnings %q", c.Warnings)
	}

	in.ProcessRun = true
	c2, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := c2.JSON()
	if g2 := graphOf(t, d2); refID(g2[RootID]["conformsTo"]) != ProcessRunSpec || g2[ProcessRunSpec] == nil {
		t.Errorf("--run: root conformsTo %v", g2[RootID]["conformsTo"])
	}
}

// export builds in's crate, writes it into a new folder and self-tests
// it: the folder, the crate and its metadata file as written.
func export(t *testing.T, in Input) (out string, c *Crate, written []byte) {
	t.Helper()
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	out = t.TempDir()
	p, err := c.Write(out)
	if err != nil {
		t.Fatal(err)
	}
	written, _ = os.ReadFile(p)
	if bad := SelfTest(in, written, out); len(bad) > 0 {
		t.Fatal(bad)
	}
	return out, c, written
}

func TestWriteAndSelfTest(t *testing.T) {
	in, _ := fixture(t)
	out, _, written := export(t, in)
	for _, f := range []string{"CTX1.document.json", "doc_en.alto.xml", "paradata/260101-120000_page-classification.json"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// A changed file makes the self-test fail.
	if bad := SelfTest(in, append(written, ' '), out); len(bad) == 0 {
		t.Error("self-test passed a metadata file that differs from a rebuild")
	}
}

// Writing into a folder: a new or empty one is fine, one holding other
// files is refused, and over an earlier crate the parts the new crate does
// not have are removed (and only those).
func TestWriteOutDir(t *testing.T) {
	in, _ := fixture(t)
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	if _, err := c.Write(other); err == nil || !strings.Contains(err.Error(), "not a crate written before") {
		t.Errorf("Write into a folder of other files: %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(other, MetadataFile)); err == nil {
		t.Error("metadata written into a refused folder")
	}

	dir := filepath.Join(t.TempDir(), "crate")
	if _, err := c.Write(dir); err != nil {
		t.Fatal(err)
	}
	// An earlier crate with a part the next export lacks, plus a file it
	// never listed.
	stale := "old_en.alto.xml"
	os.WriteFile(filepath.Join(dir, stale), []byte("<alto/>"), 0o644)
	os.WriteFile(filepath.Join(dir, "unlisted.txt"), []byte("keep"), 0o644)
	var doc map[string]any
	data, _ := os.ReadFile(filepath.Join(dir, MetadataFile))
	json.Unmarshal(data, &doc)
	for _, e := range doc["@graph"].([]any) {
		if m := e.(map[string]any); m["@id"] == "./" {
			m["hasPart"] = append(m["hasPart"].([]any), map[string]any{"@id": stale}, map[string]any{"@id": "../outside.txt"})
		}
	}
	data, _ = json.Marshal(doc)
	os.WriteFile(filepath.Join(dir, MetadataFile), data, 0o644)
	outside := filepath.Join(filepath.Dir(dir), "outside.txt")
	os.WriteFile(outside, []byte("keep"), 0o644)

	c2, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	p, err := c2.Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(c2.Removed) != 1 || c2.Removed[0] != stale {
		t.Errorf("removed %q, want [%s]", c2.Removed, stale)
	}
	for _, f := range []string{filepath.Join(dir, "unlisted.txt"), outside} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("%s: %v (never listed by the crate in the folder, must stay)", f, err)
		}
	}
	written, _ := os.ReadFile(p)
	if bad := SelfTest(in, written, dir); len(bad) > 0 {
		t.Fatal(bad)
	}
}

func TestCheckFindsProblems(t *testing.T) {
	in, _ := fixture(t)
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	base, _ := c.JSON()
	mutate := func(f func(g []Entity) []Entity) []byte {
		var doc struct {
			Context string   `json:"@context"`
			Graph   []Entity `json:"@graph"`
		}
		json.Unmarshal(base, &doc)
		doc.Graph = f(doc.Graph)
		b, _ := json.Marshal(map[string]any{"@context": doc.Context, "@graph": doc.Graph})
		return b
	}
	for _, tc := range []struct {
		name string
		f    func(g []Entity) []Entity
		want string
	}{
		{"descriptor not first", func(g []Entity) []Entity { g[0], g[1] = g[1], g[0]; return g }, "first entity is not the metadata descriptor"},
		{"unsorted", func(g []Entity) []Entity { g[2], g[3] = g[3], g[2]; return g }, "not sorted"},
		{"dangling", func(g []Entity) []Entity { g[1]["license"] = map[string]any{"@id": "#nowhere"}; return g }, "refers to #nowhere"},
		{"source in hasPart", func(g []Entity) []Entity {
			g[1]["hasPart"] = append(g[1]["hasPart"].([]any), map[string]any{"@id": sourceID})
			return g
		}, "hasPart holds #source"},
		{"no licence", func(g []Entity) []Entity { delete(g[1], "license"); return g }, "root Dataset has no license"},
	} {
		bad := Check(mutate(tc.f), "")
		if !strings.Contains(strings.Join(bad, "\n"), tc.want) {
			t.Errorf("%s: problems %q, want %q", tc.name, bad, tc.want)
		}
	}
	if bad := Check(base, t.TempDir()); !strings.Contains(strings.Join(bad, "\n"), "is not in the crate folder") {
		t.Errorf("missing files not found: %v", bad)
	}
}

func TestBuildErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, rec, want string }{
		{"no stamps", `{"schema_version":"1.0","doc_id":"D","translations":{"license":"MIT"}}`, "no stamps"},
		{"no licence", `{"schema_version":"1.0","doc_id":"D","assembled":{"blocks":{"x":{"program":"p","run_id":"1","updated_at":"2026-01-01T00:00:00Z"}}}}`, "no licence found"},
		{"bad stamp", `{"schema_version":"1.0","doc_id":"D","assembled":{"blocks":{"x":{"program":"p","run_id":"1","updated_at":"yesterday"}}}}`, "updated_at"},
		{"invalid record", `{"schema_version":"1.0","doc_id":""}`, "D.document.json"},
		{"not JSON", `{`, "D.document.json"},
	} {
		p := write(t, filepath.Join(dir, tc.name, "D.document.json"), tc.rec)
		_, err := Build(Input{Document: p})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	in, _ := fixture(t)
	in.Paradata = append(in.Paradata, filepath.Join(dir, "absent.json"))
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "absent.json") {
		t.Errorf("absent run metadata: %v", err)
	}
}

// TestValidatorRules: what rocrate-validator (profile ro-crate-1.1,
// REQUIRED) refused in every crate: the sha256 key, which RO-Crate 1.1's
// context does not define (the context now maps it), and a file's @id that
// is no URI reference ("page one #1 50%.xml": the validator resolved it to
// another name); and the run's endTime, which was its startTime when the
// record was stamped at the run's start (the run metadata's end_time wins).
func TestValidatorRules(t *testing.T) {
	in, dir := fixture(t)
	odd := "doc en #1 50%.alto.xml"
	if err := os.Rename(filepath.Join(dir, "out", "doc_en.alto.xml"), filepath.Join(dir, "out", odd)); err != nil {
		t.Fatal(err)
	}
	rec, _ := os.ReadFile(in.Document)
	write(t, in.Document, strings.ReplaceAll(string(rec), "../out/doc_en.alto.xml", "../out/"+odd))
	para, _ := os.ReadFile(in.Paradata[0])
	write(t, in.Paradata[0], strings.Replace(string(para), `"end_time":"2026-01-01T12:00:05Z"`, `"end_time":"2026-01-01T12:00:35Z"`, 1))
	out, c, written := export(t, in)
	var doc struct {
		Context []any `json:"@context"`
	}
	if err := json.Unmarshal(written, &doc); err != nil || len(doc.Context) != 2 || doc.Context[0] != Context ||
		doc.Context[1].(map[string]any)["sha256"] != SHA256Term {
		t.Errorf("@context %v (%v), want RO-Crate 1.1's and the sha256 term", doc.Context, err)
	}
	g := graphOf(t, written)
	const id = "doc%20en%20%231%2050%25.alto.xml"
	if e, ok := g[id]; !ok || e["sha256"] == nil {
		t.Errorf("no file entity %s with its sha256 (ids: %v)", id, keys(g))
	}
	if _, err := os.Stat(filepath.Join(out, odd)); err != nil {
		t.Errorf("the file is not written under its name: %v", err)
	}
	if e := g["#run-page-classification-260101-120000"]; e == nil || e["endTime"] != "2026-01-01T12:00:35Z" {
		t.Errorf("the classification run: %v, want its endTime the run metadata's 2026-01-01T12:00:35Z", e)
	}
	// Written again over itself, the crate keeps the file.
	if _, err := c.Write(out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, odd)); err != nil {
		t.Errorf("rewritten over itself, the crate lost %s: %v", odd, err)
	}
}

// TestOddDocID: a doc_id with a space, a slash or a hash makes a record
// whose crate @id is escaped, and the runs' result names that @id (it
// named the unescaped one, which the graph lacked: the self-test failed).
func TestOddDocID(t *testing.T) {
	for _, id := range []string{"CTX 1", "bsb/123", "a#b", "urn:nbn:cz:aba001-000123"} {
		t.Run(id, func(t *testing.T) {
			in, _ := fixture(t)
			rec, _ := os.ReadFile(in.Document)
			write(t, in.Document, strings.Replace(string(rec), `"doc_id": "CTX1"`, `"doc_id": "`+id+`"`, 1))
			_, _, written := export(t, in)
			// No @id of a file reads as a URI with a scheme (a URN's
			// colons made the record a remote entity).
			for eid, e := range graphOf(t, written) {
				if e["@type"] == "File" && strings.Contains(eid, ":") {
					t.Errorf("file @id %q has a colon", eid)
				}
			}
		})
	}
}

// TestActionStatus: a run's CreateAction says how it ended, from its run
// metadata's status: completed, or failed with its error (a failed or
// canceled job read like a completed one).
func TestActionStatus(t *testing.T) {
	for _, c := range []struct{ status, errText, want, wantErr string }{
		{"completed", "", "http://schema.org/CompletedActionStatus", ""},
		{"failed", "every item failed", "http://schema.org/FailedActionStatus", "every item failed"},
		{"interrupted", "", "http://schema.org/FailedActionStatus", "interrupted"},
	} {
		in, _ := fixture(t)
		para, _ := os.ReadFile(in.Paradata[0])
		write(t, in.Paradata[0], strings.Replace(string(para), `"runner_ref":"runner-7"`, fmt.Sprintf(`"runner_ref":"runner-7","status":%q,"error":%q`, c.status, c.errText), 1))
		cr, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := cr.JSON()
		if bad := Check(data, ""); len(bad) > 0 {
			t.Errorf("%s: %v", c.status, bad)
		}
		act := graphOf(t, data)["#run-page-classification-260101-120000"]
		st, _ := act["actionStatus"].(map[string]any)
		if st["@id"] != c.want || c.wantErr != "" && act["error"] != c.wantErr {
			t.Errorf("%s: actionStatus %v, error %v; want %s, %q", c.status, act["actionStatus"], act["error"], c.want, c.wantErr)
		}
	}
}

// TestAbsoluteDerivedFrom: an output the record names by an absolute path
// is copied, and said in the warnings (a record from elsewhere may name
// any file the user can read; it was copied without a word).
func TestAbsoluteDerivedFrom(t *testing.T) {
	in, dir := fixture(t)
	abs := filepath.Join(dir, "out", "doc_en.alto.xml")
	rec, _ := os.ReadFile(in.Document)
	write(t, in.Document, strings.ReplaceAll(string(rec), `"translated_xml": "../out/doc_en.alto.xml"`, `"translated_xml": "`+abs+`"`))
	_, c, _ := export(t, in)
	var said bool
	for _, w := range c.Warnings {
		said = said || strings.Contains(w, abs+" is an absolute path")
	}
	if !said {
		t.Errorf("warnings %q: want the absolute path named", c.Warnings)
	}
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
