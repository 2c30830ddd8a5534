package main

import (
	"context"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"archivekit/pkg/classify"
	"archivekit/pkg/classify/classifytest"
	"archivekit/pkg/paradata"
	"archivekit/pkg/pipeline"
)

// PDF pages are rows keyed by page number, next to images.
func TestPDFPages(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	pdf, err := filepath.Abs(filepath.Join("..", "..", "pkg", "imageio", "testdata", "two.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pdf, filepath.Join(e.in, "TEXT", "report.pdf")); err != nil {
		t.Fatal(err)
	}
	code, log := e.run(t, "--dir", "-ff", "pdf,png")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	var pages []string
	for _, r := range readCSV(t, e.output(t, "_TOP-3.csv")) {
		if r[0] == "TEXT/report" {
			pages = append(pages, r[1])
		}
	}
	if strings.Join(pages, ",") != "1,2" {
		t.Fatalf("PDF rows %v, want pages 1,2", pages)
	}
	if d := readParadata(t, e); d.Statistics.InputFilesTotal != 13 || d.Statistics.SuccessfullyProcessed != 13 {
		t.Errorf("statistics %+v", d.Statistics)
	}
}

// The grouped runner of --parallel (here on the CPU, groups given) gives the
// same per-model probabilities and mean as one joint run.
func TestRunGroupsMatchesJointRun(t *testing.T) {
	root := classifytest.Ensemble(t, t.TempDir())
	folders, err := (&classify.Locator{Models: root}).Ensemble(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	files := classifytest.Pages(t, 1)
	bad := filepath.Join(t.TempDir(), "bad.png")
	write(t, bad, "junk")
	files = append(files[:4], append([]string{bad}, files[4:]...)...)
	inputs := pipeline.Files(files)

	para, err := paradata.Start(t.TempDir(), "260101-120000", timeZero, paradata.Info{})
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{cli: &CLI{}, device: "cpu", log: slog.New(slog.NewTextHandler(io.Discard, nil)), para: para}
	var grouped []classify.Page
	err = r.runGroups(context.Background(), folders, [][]int{{0, 3}, {1, 2, 4}}, inputs, classify.Options{Batch: 4},
		func(p classify.Page) error { grouped = append(grouped, p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	ms, err := classify.LoadAll(folders, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	ens, _ := classify.NewEnsemble(ms...)
	defer ens.Close()
	var joint []classify.Page
	if _, err := ens.Predict(context.Background(), inputs, classify.Options{Batch: 4}, func(p classify.Page) error {
		joint = append(joint, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(grouped) != len(joint) {
		t.Fatalf("%d rows grouped, %d joint", len(grouped), len(joint))
	}
	for i := range joint {
		g, j := grouped[i], joint[i]
		if (g.Err == nil) != (j.Err == nil) || g.Name != j.Name || g.Page != j.Page {
			t.Fatalf("row %d: grouped %s/%d err %v, joint %s/%d err %v", i, g.Name, g.Page, g.Err, j.Name, j.Page, j.Err)
		}
		for c := range j.Mean {
			if math.Abs(g.Mean[c]-j.Mean[c]) > 1e-6 {
				t.Fatalf("row %d class %d: grouped %v, joint %v", i, c, g.Mean[c], j.Mean[c])
			}
			for m := range j.Probs {
				if math.Abs(g.Probs[m][c]-j.Probs[m][c]) > 1e-6 {
					t.Fatalf("row %d model %d class %d", i, m, c)
				}
			}
		}
	}
	if grouped[4].Err == nil {
		t.Error("the unreadable file has no error in the grouped run")
	}
}

// --hub downloads the revision's files from a hub laid out as
// {endpoint}/{repo}/resolve/{revision}/{file}, with the bearer token, and a
// second run works from the cache with the hub gone.
func TestHubDownload(t *testing.T) {
	src := classifytest.ModelDir(t, filepath.Join(t.TempDir(), "m"), classifytest.Five()[3])
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "Bearer sekrit" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, "/org/pages/resolve/v4.4/")
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, filepath.Join(src, name))
	}))
	t.Setenv("HUB_ENDPOINT", srv.URL)
	t.Setenv("HUB_TOKEN", "sekrit")
	t.Setenv("HUB_HOME", t.TempDir())
	e := newEnv(t, map[string]string{"HUB.repo_name": "org/pages"})
	e.linkPages(t, 1)
	code, log := e.run(t, "--dir", "--hub", "-rev", "v4.4")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	first := readCSV(t, e.output(t, "_v4.4_TOP-3.csv"))
	if hits.Load() < 2 {
		t.Errorf("%d hub requests, want the two files", hits.Load())
	}
	srv.Close()
	os.RemoveAll(e.results)
	if code, log := e.run(t, "--dir", "--hub", "-rev", "v4.4"); code != exitOK {
		t.Fatalf("offline run: exit %d: %s", code, log)
	}
	if got := readCSV(t, e.output(t, "_v4.4_TOP-3.csv")); strings.Join(flat(got), "|") != strings.Join(flat(first), "|") {
		t.Error("offline run differs")
	}
	t.Setenv("HUB_TOKEN", "")
	t.Setenv("HUB_HOME", t.TempDir())
	if code, log := e.run(t, "--dir", "--hub", "-rev", "v4.4"); code != exitFailure {
		t.Errorf("unreachable hub without cache: exit %d: %s", code, log)
	}
}

var timeZero = mustTime("2026-01-01T12:00:00Z")

// An interrupted run (SIGINT cancels the context) exits 130 and leaves run
// metadata with status failed.
func TestInterruptedRun(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	code := run(ctx, []string{"--config", e.cfg, "--dir"}, &out, &out)
	if code != exitInterrupted {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if d := readParadata(t, e); d.Status != paradata.StatusFailed || !strings.Contains(d.Error, "canceled") {
		t.Errorf("status %q error %q", d.Status, d.Error)
	}
}
