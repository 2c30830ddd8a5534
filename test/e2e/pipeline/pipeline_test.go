// Package pipeline holds end-to-end checks that chain both tools the way an
// archive's pipeline does: their binaries are built from this tree and run
// on the shared sample data.
package pipeline

import (
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatal("go.mod not found")
	return ""
}

func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// TestCrateOfRealRecord makes a record the way a pipeline does (pageclass
// classifies a sample page onto a baseline, translate translates a sample
// metadata record onto the result against a local stand-in of the MT API),
// exports it twice under different time zones and file times, and loads the
// crate with the independent Python rocrate library.
func TestCrateOfRealRecord(t *testing.T) {
	if !strings.Contains(os.Getenv("CGO_LDFLAGS"), "tshim") {
		t.Skip("needs the native environment to build pageclass and translate: make test, or eval \"$(make -s env)\"")
	}
	root := repoRoot(t)
	records := testenv.Path(t, "records")
	pages := filepath.Join(filepath.Dir(filepath.Dir(records)), "pages")
	bin := t.TempDir()
	runIn(t, root, nil, "go", "build", "-o", bin+"/", "archivekit/cmd/pageclass", "archivekit/cmd/translate", "archivekit/cmd/rocrate")

	work := t.TempDir()
	page := filepath.Join(pages, "TEXT", "caa_conference-04.png")
	data, err := os.ReadFile(page)
	if err != nil {
		if os.Getenv("ARCHIVEKIT_SHARED") != "" { // make test: the pages must be there
			t.Fatal("sample page not found: ", err)
		}
		t.Skip("sample page not found: ", err)
	}
	in := filepath.Join(work, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "caa_conference-04.png"), data, 0o644)
	sum := sha256.Sum256(data)
	baseline := filepath.Join(work, "baseline.document.json")
	os.WriteFile(baseline, []byte(`{"schema_version":"1.0","record_type":"atrium-document","doc_id":"CTX000000042",
 "source":{"sha256":"`+hex.EncodeToString(sum[:])+`","filename":"caa_conference-04.png","media_type":"image/png","page_count":1},
 "regenerable":{"markdown":{"from":"alto/CTX000000042.alto.xml","converter":"xml_to_md@0.3.0"}}}`), 0o644)

	runIn(t, root, nil, filepath.Join(bin, "pageclass"), "--best", "-d", in, "--results", filepath.Join(work, "result"),
		"--document-json", baseline, "--document-json-out", filepath.Join(work, "stage1", "CTX000000042.document.json"))
	paras, _ := filepath.Glob(filepath.Join(work, "result", "*_page-classification.json"))
	if len(paras) != 1 {
		t.Fatalf("pageclass run metadata: %v", paras)
	}
	api := translatortest.New(translatortest.Config{})
	defer api.Close()
	runIn(t, work, []string{"TRANSLATION_URL=" + api.URL, "TRANSLATE_PARA_CONFIG=" + filepath.Join(root, "setup", "translate", "para_config.txt")},
		filepath.Join(bin, "translate"), filepath.Join(records, "C-9100725A.xml"), "-o", "out", "--formats", "xml",
		"--xpaths", filepath.Join(filepath.Dir(records), "fields.txt"), "--vocabulary", "", "-src", "cs",
		"-c", filepath.Join(root, "setup", "translate", "config.txt"),
		"--document-json", "stage1/CTX000000042.document.json", "--document-json-out", "records/CTX000000042.document.json")

	export := func(tz, out string) []byte {
		runIn(t, work, []string{"TZ=" + tz}, filepath.Join(bin, "rocrate"), "--document", "records/CTX000000042.document.json",
			"--paradata", paras[0], "--out-dir", out, "--run", "--selftest")
		b, err := os.ReadFile(filepath.Join(work, out, "ro-crate-metadata.json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := export("UTC", "crate1")
	// Another time zone and other file times give the same bytes.
	later := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	filepath.Walk(work, func(p string, _ os.FileInfo, _ error) error { os.Chtimes(p, later, later); return nil })
	second := export("Asia/Kathmandu", "crate2")
	if !bytes.Equal(first, second) {
		t.Fatalf("crates differ between runs:\n%s\n---\n%s", first, second)
	}

	var doc struct {
		Graph []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(first, &doc); err != nil {
		t.Fatal(err)
	}
	rec, _ := os.ReadFile(filepath.Join(work, "records", "CTX000000042.document.json"))
	var r struct {
		Assembled struct {
			Blocks map[string]struct {
				UpdatedAt string `json:"updated_at"`
			} `json:"blocks"`
		} `json:"assembled"`
	}
	json.Unmarshal(rec, &r)
	// Both tools left their run in the provenance block, each with the
	// licence of its run metadata; the most restrictive (the translator's
	// CC BY-NC-SA) is the record's.
	var pcPara struct{ License string }
	pb, _ := os.ReadFile(paras[0])
	json.Unmarshal(pb, &pcPara)
	var prov struct {
		DocID  string `json:"doc_id"`
		Source struct {
			SHA256 string `json:"sha256"`
		} `json:"source"`
		Provenance struct {
			License      string `json:"license"`
			Contributors []struct {
				Program, Version, License string
				RunID                     string `json:"run_id"`
			} `json:"contributors"`
		} `json:"provenance"`
	}
	json.Unmarshal(rec, &prov)
	if p := prov.Provenance; p.License != "CC BY-NC-SA 4.0" || len(p.Contributors) != 2 || p.Contributors[0].Program != "page-classification" ||
		p.Contributors[0].License != pcPara.License || pcPara.License == "" || p.Contributors[1].Program != "translator" || p.Contributors[1].Version == "" {
		t.Errorf("provenance %+v", p)
	}
	if prov.DocID != "CTX000000042" || prov.Source.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("doc_id %q or source digest %q changed", prov.DocID, prov.Source.SHA256)
	}
	if got, want := doc.Graph[1]["datePublished"], r.Assembled.Blocks["translations"].UpdatedAt; got != want || want == "" {
		t.Errorf("datePublished %v, want the translation stamp %s", got, want)
	}

	py := os.Getenv("ARCHIVEKIT_PYTOOLS")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTOOLS not set (make test sets it): the crate was not loaded with the Python rocrate library")
	}
	script := `
import json, sys
from rocrate.rocrate import ROCrate
c = ROCrate(sys.argv[1])
root = c.root_dataset
acts = [e for e in c.get_entities() if e.type == "CreateAction"]
print(json.dumps({
  "name": root["name"], "license": root["license"].id, "date": root["datePublished"],
  "parts": sorted(e.id for e in root["hasPart"]), "data": sorted(e.id for e in c.data_entities),
  "actions": sorted([a["instrument"].type, a["instrument"]["name"]] for a in acts),
  "profile": root["conformsTo"].id}))
`
	out := runIn(t, work, nil, py, "-c", script, filepath.Join(work, "crate1"))
	var got struct {
		Name, License, Date, Profile string
		Parts, Data                  []string
		Actions                      [][]string
	}
	if err := json.Unmarshal([]byte(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:]), &got); err != nil {
		t.Fatalf("rocrate output %q: %v", out, err)
	}
	// The translated document where the record's relative link puts it
	// beside the record (the record named it by an absolute path before,
	// which the crate kept as out/...).
	wantParts := []string{"CTX000000042.document.json", "C-9100725A_en.xml", "paradata/" + filepath.Base(paras[0])}
	tr, _ := filepath.Glob(filepath.Join(work, "out", "*_translator.json"))
	if len(tr) != 1 {
		t.Fatalf("translator run metadata %v", tr)
	}
	wantParts = append(wantParts, "paradata/"+filepath.Base(tr[0]))
	sort.Strings(wantParts)
	if strings.Join(got.Parts, ",") != strings.Join(wantParts, ",") || strings.Join(got.Data, ",") != strings.Join(wantParts, ",") {
		t.Errorf("rocrate parts %v data %v, want %v", got.Parts, got.Data, wantParts)
	}
	if got.License != "https://creativecommons.org/licenses/by-nc-sa/4.0/" || got.Date != r.Assembled.Blocks["translations"].UpdatedAt ||
		got.Name != "Document CTX000000042 (caa_conference-04.png)" || got.Profile != "https://w3id.org/ro/wfrun/process/0.5" {
		t.Errorf("rocrate root %+v", got)
	}
	if len(got.Actions) != 2 || got.Actions[0][1] != "page-classification" || got.Actions[1][1] != "translator" || got.Actions[0][0] != "SoftwareApplication" {
		t.Errorf("rocrate actions %v", got.Actions)
	}
}
