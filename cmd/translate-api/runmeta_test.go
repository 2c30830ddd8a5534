package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/paradata"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/translator/translatortest"
)

// altoBlocks is an ALTO document of one text block a text.
func altoBlocks(texts ...string) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace>`)
	for i, t := range texts {
		n := strconv.Itoa(i + 1)
		b.WriteString(`<TextBlock ID="b` + n + `"><TextLine ID="l` + n + `"><String CONTENT="` + t + `"/></TextLine></TextBlock>`)
	}
	b.WriteString(`</PrintSpace></Page></Layout></alto>`)
	return []byte(b.String())
}

// jobDocs are the ALTO documents (Czech) of the run-metadata tests' jobs.
var jobDocs = []struct {
	name string
	data []byte
}{
	{"a.alto.xml", altoBlocks("hrob", "jáma a sonda")},
	{"b.alto.xml", altoBlocks("archeologický výzkum", "záchranný výzkum v hrob", "sonda")},
	{"c.alto.xml", smallALTO("hrob")},
}

// docsJob submits a job of jobDocs with source_lang cs and returns its
// status once it succeeded.
func docsJob(t *testing.T, base string) jobs.Status {
	t.Helper()
	parts := []part{{Field: "source_lang", Data: []byte("cs")}}
	for _, d := range jobDocs {
		parts = append(parts, part{Field: "file", Name: d.name, File: true, Data: d.data})
	}
	body, ctype := multipartBody(t, parts...)
	resp := post(t, base+"/jobs", ctype, body)
	var st jobs.Status
	if b := readBody(t, resp); resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	st = pollJob(t, base, st.ID, 30*time.Second, ended)
	if st.State != jobs.Succeeded || st.Items.Succeeded != len(jobDocs) {
		t.Fatalf("%+v", st)
	}
	return st
}

// jobArchive is an ended job's results archive: its run-metadata.json as
// the translator's document, and its ro-crate-metadata.json's
// CreateActions.
func jobArchive(t *testing.T, base, id string) (runmeta.Doc, []map[string]any) {
	t.Helper()
	res := jobResults(t, base, id)
	if res.ROCrate == "" {
		t.Fatalf("job %s: no RO-Crate in its results (run_metadata %s)", id, res.RunMetadata)
	}
	files := map[string][]byte{}
	for _, f := range zipAt(t, base+res.ROCrate).File {
		rc, _ := f.Open()
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	var doc runmeta.Doc
	if err := json.Unmarshal(files["run-metadata.json"], &doc); err != nil {
		t.Fatalf("run-metadata.json %s: %v", files["run-metadata.json"], err)
	}
	var crate struct {
		Graph []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(files["ro-crate-metadata.json"], &crate); err != nil {
		t.Fatalf("ro-crate-metadata.json: %v", err)
	}
	var actions []map[string]any
	for _, e := range crate.Graph {
		if e["@type"] == "CreateAction" {
			actions = append(actions, e)
		}
	}
	return doc, actions
}

// TestJobsRunMetadata (issue 30 item 5): a translate-api job's run
// metadata is the translator's document a translate run writes, with the
// statistics of its documents: units translated and backend calls equal
// to the sums of the synchronous answers' count headers for the same
// files, the source languages and segment statuses counted, the job's
// languages, backend and licence in it; its results archive is an
// RO-Crate with the job's CreateAction.
func TestJobsRunMetadata(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	lang := part{Field: "source_lang", Data: []byte("cs")}
	translated, calls := 0, 0
	for _, d := range jobDocs {
		body, ctype := multipartBody(t, lang, part{Field: "file", Name: d.name, File: true, Data: d.data})
		resp := post(t, ts.URL+"/translate", ctype, body)
		readBody(t, resp)
		n, err1 := strconv.Atoi(resp.Header.Get(headerTranslated))
		c, err2 := strconv.Atoi(resp.Header.Get(headerCalls))
		if resp.StatusCode != 200 || err1 != nil || err2 != nil {
			t.Fatalf("POST /translate %s: %d, headers %v", d.name, resp.StatusCode, resp.Header)
		}
		translated, calls = translated+n, calls+c
	}
	st := docsJob(t, ts.URL)
	doc, actions := jobArchive(t, ts.URL, st.ID)
	s := doc.Statistics
	if doc.Program != translator.Program || doc.Status != paradata.StatusCompleted || doc.RunID != "job-"+st.ID {
		t.Errorf("program %q, status %q, run id %q", doc.Program, doc.Status, doc.RunID)
	}
	if s.InputFilesTotal != 3 || s.SuccessfullyProcessed != 3 || s.UnitsTranslated != translated || translated != 6 ||
		s.BackendCalls != calls || calls == 0 || s.Pages != 3 {
		t.Errorf("statistics: inputs %d, processed %d, units translated %d (synchronous answers: %d), backend calls %d (synchronous: %d), pages %d",
			s.InputFilesTotal, s.SuccessfullyProcessed, s.UnitsTranslated, translated, s.BackendCalls, calls, s.Pages)
	}
	if s.Languages["cs"] != translated || s.LangSources["given"] != translated || s.SegmentStatus["ok"] == 0 || s.LanguageTags["cs"] != "en-t-cs-t0-und" {
		t.Errorf("source_languages %v, lang_sources %v, segment_status %v, language_tags %v", s.Languages, s.LangSources, s.SegmentStatus, s.LanguageTags)
	}
	if doc.Config["service"] != "translate-api" || doc.Config["source_lang"] != "cs" || doc.Config["target_lang"] != "en" ||
		doc.Config["translation_backend"] != "mtapi" || doc.Config["translation_api"] != mt.URL || doc.Config["mode"] != "alto" {
		t.Errorf("config %v", doc.Config)
	}
	if len(doc.LicenseDetail.Components) == 0 || doc.License == "UNKNOWN" {
		t.Errorf("licence %q from components %+v", doc.License, doc.LicenseDetail.Components)
	}
	if len(actions) != 1 || actions[0]["identifier"] != "job-"+st.ID {
		t.Errorf("CreateActions %v", actions)
	}
}

// TestJobsRunMetadataLikeCLI: a job's statistics are those the translate
// command writes for a run over the same files with the same backend
// (built and run here): every statistic but the output counts (a command
// run also writes a _log.csv a document) and rates, and the protected
// terms per document.
func TestJobsRunMetadataLikeCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs translate")
	}
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	job, _ := jobArchive(t, ts.URL, docsJob(t, ts.URL).ID)

	in, out := t.TempDir(), t.TempDir()
	for _, d := range jobDocs {
		if err := os.WriteFile(filepath.Join(in, d.name), d.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runTranslateCLI(t, buildTranslate(t), mt.URL, in, out, "--source_lang", "cs", "--vocabulary", "")
	cli, _ := cliRunMeta(t, out)
	counted := func(d runmeta.Doc) string {
		st := d.Statistics
		st.OutputCountsByType, st.PerformancePerMinute = nil, nil
		b, _ := json.Marshal(map[string]any{"statistics": st, "protected": d.Config["vocabulary_protected_terms"]})
		return string(b)
	}
	if j, c := counted(job), counted(cli); j != c || job.Statistics.UnitsTranslated == 0 {
		t.Errorf("job's statistics differ from the command's:\njob     %s\ncommand %s", j, c)
	}
}

// cliRunMeta is the run metadata a translate run wrote into out, decoded
// and as written.
func cliRunMeta(t *testing.T, out string) (runmeta.Doc, []byte) {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "*_translator.json"))
	if len(m) != 1 {
		t.Fatalf("%d run metadata files in the output", len(m))
	}
	b, _ := os.ReadFile(m[0])
	var cli runmeta.Doc
	if err := json.Unmarshal(b, &cli); err != nil {
		t.Fatal(err)
	}
	return cli, b
}
