package jobs_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/paradata"
	"archivekit/internal/rocrate"
	"archivekit/internal/service"
	"archivekit/internal/service/servicetest"
)

// TestRunMetadata (issue 30 item 5), on SQLite and PostgreSQL: an ended
// job has the run metadata a command line run writes (the classifier's
// internal/paradata document, started by the service with its models),
// with the job's form, counts, failed items, outputs and times, in GET
// /jobs/{id}/results (run_metadata, and ro_crate naming the archive) and
// in the archive as run-metadata.json beside ro-crate-metadata.json, an
// RO-Crate whose one CreateAction made the answer files, with sizes and
// SHA-256 matching the archive's files. A canceled job's says canceled
// (it said failed); a running job has none.
func TestRunMetadata(t *testing.T) { stores(t, testRunMetadata) }

func testRunMetadata(t *testing.T, newStore store) {
	runMeta := func(_ context.Context, j jobs.RunJob) (jobs.RunRecord, error) {
		r := paradata.Record(j.Start, paradata.Info{ToolVersion: "9.9.9", Repository: paradata.Repository, RunID: j.RunID})
		r.AddModel(paradata.Model{Revision: "v1.4", Path: "/models/v1.4", Digest: "sha256:abc", License: "MIT"})
		r.SetConfig("service", "echo-api")
		return r, nil
	}
	e := &echo{gate: make(chan struct{}), started: make(chan struct{})}
	svc, q := newServiceWith(t, newStore(t), e, jobs.Options{RunMeta: runMeta})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	lang := servicetest.Part{Field: "lang", Data: []byte("cs")}
	_, _, st := submit(t, ts.URL, "", lang, file("a.xml", "aaa"), file("bad.xml", "b"), file("c.xml", "cc"))
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	if res.ROCrate != "/jobs/"+st.ID+"/results.zip" {
		t.Errorf("ro_crate %q", res.ROCrate)
	}
	var doc paradata.Document
	if err := json.Unmarshal(res.RunMetadata, &doc); err != nil {
		t.Fatalf("run_metadata %s: %v", res.RunMetadata, err)
	}
	if doc.Program != paradata.Program || doc.RunID != "job-"+st.ID || doc.Status != paradata.StatusCompleted || doc.ToolVersion != "9.9.9" ||
		len(doc.Models) != 1 || doc.Models[0].Digest != "sha256:abc" || doc.Config["service"] != "echo-api" || doc.Config["job_id"] != st.ID ||
		doc.Config["endpoint"] != "/echo" || doc.Config["form"].(map[string]any)["lang"] != "cs" {
		t.Errorf("run metadata header, models or config: %s", res.RunMetadata)
	}
	if s := doc.Statistics; s.InputFilesTotal != 3 || s.SuccessfullyProcessed != 2 || s.SkippedFiles != 1 || s.OutputCountsByType["json"] != 2 ||
		doc.SkippedFilesDetail[0].File != "bad.xml" || !equal(doc.Outputs, []string{"0000-a.json", "0002-c.json"}) {
		t.Errorf("run metadata counts: %s", res.RunMetadata)
	}
	if doc.StartTime != st.StartedAt.Format(time.RFC3339Nano) || doc.EndTime != st.FinishedAt.Format(time.RFC3339Nano) {
		t.Errorf("run metadata times %s..%s, job %v..%v", doc.StartTime, doc.EndTime, st.StartedAt, st.FinishedAt)
	}

	names, files := getZip(t, ts.URL+res.ROCrate)
	if want := []string{"0000-a.json", "0001-bad.json", "0002-c.json", "results.json", "run-metadata.json", "ro-crate-metadata.json"}; !equal(names, want) {
		t.Fatalf("archive holds %q, want %q", names, want)
	}
	var c1, c2 bytes.Buffer
	if json.Compact(&c1, files["run-metadata.json"]) != nil || json.Compact(&c2, res.RunMetadata) != nil || c1.String() != c2.String() {
		t.Errorf("run-metadata.json differs from run_metadata")
	}
	meta := files["ro-crate-metadata.json"]
	if bad := rocrate.Check(meta, ""); len(bad) > 0 {
		t.Errorf("crate: %q\n%s", bad, meta)
	}
	var crate struct {
		Graph []map[string]any `json:"@graph"`
	}
	if err := json.Unmarshal(meta, &crate); err != nil {
		t.Fatal(err)
	}
	byID := map[string]map[string]any{}
	var actions []map[string]any
	for _, e := range crate.Graph {
		byID[e["@id"].(string)] = e
		if e["@type"] == "CreateAction" {
			actions = append(actions, e)
		}
	}
	root := byID["./"]
	if len(root["hasPart"].([]any)) != 5 || root["datePublished"] != st.FinishedAt.UTC().Format(time.RFC3339) {
		t.Errorf("root %v", root)
	}
	for name, data := range files {
		if name == "ro-crate-metadata.json" {
			continue
		}
		sum := sha256.Sum256(data)
		if e := byID[name]; e == nil || e["sha256"] != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: crate entity %v, sha256 %x", name, e, sum)
		}
	}
	if len(actions) != 1 {
		t.Fatalf("%d CreateActions", len(actions))
	}
	act := actions[0]
	var results []string
	for _, r := range act["result"].([]any) {
		results = append(results, r.(map[string]any)["@id"].(string))
	}
	sw := byID[act["instrument"].(map[string]any)["@id"].(string)]
	if act["identifier"] != "job-"+st.ID || sw["name"] != paradata.Program || sw["softwareVersion"] != "9.9.9" ||
		!equal(results, []string{"0000-a.json", "0001-bad.json", "0002-c.json", "results.json"}) ||
		len(act["object"].([]any)) != 3 || byID["run-metadata.json"]["about"].(map[string]any)["@id"] != act["@id"] {
		t.Errorf("CreateAction %v, instrument %v", act, sw)
	}

	// A running job has none; canceled, its run metadata says so.
	_, _, st = submit(t, ts.URL, "", file("gated.xml", "g"), file("d.xml", "d"))
	<-e.started
	res = jobs.Results{}
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	if res.RunMetadata != nil || res.ROCrate != "" {
		t.Errorf("running job: run_metadata %s", res.RunMetadata)
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/jobs/"+st.ID, nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	close(e.gate)
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	doc = paradata.Document{}
	if err := json.Unmarshal(res.RunMetadata, &doc); err != nil || doc.Status != paradata.StatusCanceled || doc.Error != "canceled (DELETE /jobs/"+st.ID+")" ||
		doc.Statistics.InputFilesTotal != 2 || doc.Statistics.SkippedFiles != 2 {
		t.Errorf("canceled job's run metadata: %s (%v)", res.RunMetadata, err)
	}
}

// equal reports whether a and b hold the same strings in the same order.
func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// summarising stands in for an endpoint whose handler attaches a summary
// of its work to a job item (jobs.Annotate): the file's name and size; a
// file named huge.xml attaches one over jobs.MaxSummary, bad.xml attaches
// one and fails. The answer's "annotate" is Annotate's error.
type summarising struct{}

func (summarising) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, fh, err := r.FormFile("file")
	if err != nil {
		service.WriteError(w, http.StatusBadRequest, service.ReasonBadField, "no file")
		return
	}
	b, _ := io.ReadAll(f)
	v := any(map[string]any{"name": fh.Filename, "size": len(b)})
	if fh.Filename == "huge.xml" {
		v = strings.Repeat("x", jobs.MaxSummary)
	}
	annotate := ""
	if err := jobs.Annotate(r.Context(), v); err != nil {
		annotate = err.Error()
	}
	if fh.Filename == "bad.xml" {
		service.WriteError(w, http.StatusUnprocessableEntity, service.ReasonUnsupportedFormat, "bad.xml is not a document")
		return
	}
	service.WriteJSON(w, http.StatusOK, map[string]any{"name": fh.Filename, "annotate": annotate})
}

// summaryRecord is a run record that takes the items' summaries
// (jobs.ItemRecorder) into its configuration, as "summary NAME"; it
// refuses reject.xml's.
type summaryRecord struct{ *paradata.Run }

func (r summaryRecord) AddItem(name string, summary []byte) error {
	if name == "reject.xml" {
		return errors.New("refused")
	}
	r.SetConfig("summary "+name, json.RawMessage(summary))
	return nil
}

// TestItemSummaries (issue 30 item 5), on SQLite and PostgreSQL: what an
// item's handler attaches with jobs.Annotate reaches the job's run
// metadata through jobs.ItemRecorder, each succeeded item's once, in item
// order; a failed item's does not (its error in GET /jobs/{id} has its
// answer's reason code), one over 64 KiB is not stored (and Annotate says
// so), one the record refuses is a warning; a synchronous request's
// Annotate does nothing.
func TestItemSummaries(t *testing.T) { stores(t, testItemSummaries) }

func testItemSummaries(t *testing.T, newStore store) {
	runMeta := func(_ context.Context, j jobs.RunJob) (jobs.RunRecord, error) {
		return summaryRecord{paradata.Record(j.Start, paradata.Info{ToolVersion: "9.9.9", RunID: j.RunID})}, nil
	}
	svc, q := newServiceWith(t, newStore(t), summarising{}, jobs.Options{RunMeta: runMeta})
	ts := servicetest.Serve(t, svc, func() { q.Close(context.Background()) })
	if err := q.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, st := submit(t, ts.URL, "", file("a.xml", "aaa"), file("bad.xml", "b"), file("huge.xml", "h"), file("reject.xml", "r"), file("c.xml", "cc"))
	st = waitState(t, q, ts.URL, st.ID, jobs.Succeeded)
	// The failed item's error has its answer's reason code.
	if len(st.Errors) != 1 || st.Errors[0].Name != "bad.xml" || st.Errors[0].Reason != service.ReasonUnsupportedFormat {
		t.Errorf("errors %+v, want bad.xml's with reason %q", st.Errors, service.ReasonUnsupportedFormat)
	}
	var res jobs.Results
	getJSON(t, ts.URL+"/jobs/"+st.ID+"/results", &res)
	var doc paradata.Document
	if err := json.Unmarshal(res.RunMetadata, &doc); err != nil {
		t.Fatalf("run_metadata %s: %v", res.RunMetadata, err)
	}
	var got []string
	for k, v := range doc.Config {
		if name, ok := strings.CutPrefix(k, "summary "); ok {
			b, _ := json.Marshal(v)
			got = append(got, name+"="+string(b))
		}
	}
	sort.Strings(got)
	if want := []string{`a.xml={"name":"a.xml","size":3}`, `c.xml={"name":"c.xml","size":2}`}; !equal(got, want) {
		t.Errorf("summaries in the run metadata %q, want %q", got, want)
	}
	if len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "reject.xml") || !strings.Contains(doc.Warnings[0], "refused") {
		t.Errorf("warnings %q, want reject.xml's summary refused", doc.Warnings)
	}
	var ans struct{ Annotate string }
	if getJSON(t, ts.URL+"/jobs/"+st.ID+"/results/2", &ans) != 200 || !strings.Contains(ans.Annotate, jobs.ErrSummaryTooLarge.Error()) {
		t.Errorf("huge.xml: Annotate said %q, want %q", ans.Annotate, jobs.ErrSummaryTooLarge)
	}

	// A synchronous request: no summary, no error.
	body, ctype := servicetest.Multipart(t, file("huge.xml", "h"))
	resp, err := http.Post(ts.URL+"/echo", ctype, body)
	if err != nil {
		t.Fatal(err)
	}
	ans.Annotate = "unread"
	if err := json.Unmarshal(servicetest.ReadBody(t, resp), &ans); err != nil || resp.StatusCode != 200 || ans.Annotate != "" {
		t.Errorf("synchronous request: %d, Annotate said %q (%v)", resp.StatusCode, ans.Annotate, err)
	}
}

// getZip reads the ZIP archive at url: its files' names in order, and
// their contents by name.
func getZip(t *testing.T, url string) ([]string, map[string][]byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	zb := servicetest.ReadBody(t, resp)
	zr, err := zip.NewReader(bytes.NewReader(zb), int64(len(zb)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		rc, _ := f.Open()
		files[f.Name], _ = io.ReadAll(rc)
		rc.Close()
		names = append(names, f.Name)
	}
	return names, files
}
