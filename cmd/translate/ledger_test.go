package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"archivekit/internal/fetch"
	"archivekit/internal/ledger"
	"archivekit/internal/shard"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/version"
)

// outputs returns the translated files and logs under dir (not the run
// metadata, failures tables or ledgers).
func outputs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == LedgerFolder {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && !strings.Contains(d.Name(), "_translator") {
			rel, _ := filepath.Rel(dir, p)
			got[rel], _ = os.ReadFile(p)
		}
		return nil
	})
	return got
}

// recordArgs are the arguments of a run over a records tree.
func recordArgs(root, out string, more ...string) []string {
	return append([]string{root, "-o", out, "--formats", "xml", "--xpaths", "../../setup/translate/amcr-fields.txt", "--vocabulary", "", "-src", "cs"}, more...)
}

func translated(t *testing.T, stderr string) int {
	t.Helper()
	m := regexp.MustCompile(`"inputs_translated":(\d+)`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no inputs_translated in the log:\n%s", stderr)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// A run stopped after k inputs and resumed writes the outputs of an
// uninterrupted run and translates only what the ledger lacks; a changed
// input or a removed output is done again; --resume keeps a failure,
// --retry-failed tries it again; every run writes a failures table.
func TestResumeAndRetry(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := recordsTree(t, recs)
	n := len(recs) + 1
	api := startAPI(t, translatortest.Config{})
	args := func(out string, more ...string) []string { return recordArgs(root, out, more...) }
	whole := t.TempDir()
	if r := runCLI(t, newEnv(api), args(whole)...); r.code != exitOK {
		t.Fatalf("whole run: exit %d: %s", r.code, r.stderr)
	}
	want := outputs(t, whole)
	failures := func(dir string) string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(dir, "*_translator_failures.csv"))
		var newest []byte
		var at int64
		for _, f := range m {
			if st, _ := os.Stat(f); st.ModTime().UnixNano() >= at {
				at = st.ModTime().UnixNano()
				newest, _ = os.ReadFile(f)
			}
			os.Remove(f)
		}
		return string(newest)
	}
	if got := failures(whole); !strings.HasPrefix(got, "FILE,ERROR\nbox1/broken.xml,") || strings.Count(got, "\n") != 2 {
		t.Errorf("failures table:\n%s", got)
	}

	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	itemHook = func(k int) {
		if k == 5 {
			cancel()
		}
	}
	var stdout, stderr bytes.Buffer
	code := run(ctx, args(out), newEnv(api).get, &stdout, &stderr)
	itemHook = nil
	if code == exitOK {
		t.Fatalf("stopped run: exit 0: %s", stderr.String())
	}
	edited := ""
	steps := []struct {
		name  string
		prep  func()
		flag  string
		runs  int
		equal bool
	}{
		{"resume after the stop", nil, "--resume", n - 5, true},
		{"resume with nothing left", nil, "--resume", 0, true},
		{"retry the failure", nil, "--retry-failed", 1, true},
		{"a changed input", func() {
			p := filepath.Join(root, "box0", filepath.Base(recs[0]))
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, '\n'), 0o644)
		}, "--resume", 1, false},
		{"a removed output", func() {
			for rel := range want {
				os.Remove(filepath.Join(out, rel))
				break
			}
		}, "--resume", 1, false},
		// An output edited since (a post-edited translation) is kept, with
		// a warning naming it; before, --resume translated the input again
		// and overwrote the edit.
		{"an edited output", func() {
			for rel := range want {
				if strings.HasSuffix(rel, "_en.xml") {
					p := filepath.Join(out, rel)
					b, _ := os.ReadFile(p)
					os.WriteFile(p, append(b, []byte("<!-- post-edited -->\n")...), 0o644)
					edited = p
					break
				}
			}
		}, "--resume", 0, false},
	}
	for _, c := range steps {
		if c.prep != nil {
			c.prep()
		}
		r := runCLI(t, newEnv(api), args(out, c.flag)...)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.name, r.code, r.stderr)
		}
		if got := translated(t, r.stderr); got != c.runs {
			t.Errorf("%s: translated %d inputs, want %d", c.name, translated(t, r.stderr), c.runs)
		}
		if c.name == "resume after the stop" {
			// The progress summary counts this run's files, and says how
			// many were done before (it counted all of them as this run's).
			re := regexp.MustCompile(`"msg":"translate: (\d+) files in [^"]*, (\d+) done before","done":(\d+),"total":(\d+),"failed":1,"kept":(\d+),`)
			m := re.FindStringSubmatch(r.stderr)
			if m == nil || m[1] != m[3] || m[1] != m[4] || m[2] != m[5] || atoi(m[1])+atoi(m[2]) != n {
				t.Errorf("%s: progress summary %q of %d inputs:\n%s", c.name, m, n, r.stderr)
			}
		}
		if f := failures(out); !strings.Contains(f, "box1/broken.xml") {
			t.Errorf("%s: failures table:\n%s", c.name, f)
		}
		if c.name == "an edited output" {
			if b, _ := os.ReadFile(edited); !bytes.HasSuffix(b, []byte("<!-- post-edited -->\n")) {
				t.Errorf("%s: the edit of %s was overwritten", c.name, edited)
			}
			if !strings.Contains(r.stderr, "changed since an earlier run wrote it") || !strings.Contains(r.stderr, filepath.Base(edited)) {
				t.Errorf("%s: no warning naming %s:\n%s", c.name, edited, r.stderr)
			}
		}
		if c.equal {
			g := outputs(t, out)
			if len(g) != len(want) {
				t.Fatalf("%s: %d outputs, want %d", c.name, len(g), len(want))
			}
			for k, b := range want {
				if !bytes.Equal(g[k], b) {
					t.Errorf("%s: %s differs from the uninterrupted run's", c.name, k)
				}
			}
		}
	}
}

// -o naming the input folder is refused before anything is written.
func TestOutputIsInputRefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.xml"), []byte("<record/>"), 0o644)
	r := runCLI(t, env{}, dir, "-o", dir+"/.")
	if r.code != exitUsage || !strings.Contains(r.stderr, "is the input folder") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

// oneShotRecords starts the API stand-in and translates the records tree
// (15 records and a broken file) in one run into whole; args gives the
// arguments of a run over the same tree into another output folder.
func oneShotRecords(t *testing.T) (api *translatortest.Server, args func(out string, more ...string) []string, whole string) {
	t.Helper()
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := recordsTree(t, recs)
	api = startAPI(t, translatortest.Config{})
	args = func(out string, more ...string) []string { return recordArgs(root, out, more...) }
	whole = t.TempDir()
	if r := runCLI(t, newEnv(api), args(whole)...); r.code != exitOK {
		t.Fatalf("whole run: exit %d: %s", r.code, r.stderr)
	}
	return api, args, whole
}

// Three shards into one output folder merged: one run metadata with the
// whole run's counts and one failures table; shards not of one run are
// refused.
func TestMergeShards(t *testing.T) {
	api, args, whole := oneShotRecords(t)
	shared := t.TempDir()
	for i := 0; i < 3; i++ {
		if r := runCLI(t, newEnv(api), args(shared, "--shard", fmt.Sprintf("%d/3", i))...); r.code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	metas, _ := filepath.Glob(filepath.Join(shared, "*_translator_shard-*.json"))
	// copyShards copies the shards' run metadata and failures tables, with
	// change applied to the first run metadata.
	copyShards := func(skip int, change func(d map[string]any)) string {
		dir := t.TempDir()
		files, _ := filepath.Glob(filepath.Join(shared, "*_translator_shard-*"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if strings.HasSuffix(f, ".json") && f == metas[0] && change != nil {
				var d map[string]any
				json.Unmarshal(b, &d)
				change(d)
				b, _ = json.Marshal(d)
			}
			if skip >= 0 && f == metas[skip] {
				continue
			}
			os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644)
		}
		return dir
	}
	for _, c := range []struct {
		name string
		dir  func() string
		code int
		want string
	}{
		{"missing shard", func() string { return copyShards(1, nil) }, exitIncomplete, "missing shards"},
		{"another configuration", func() string {
			return copyShards(-1, func(d map[string]any) { d["config"].(map[string]any)["ledger_key"] = "other" })
		}, exitUsage, "shards of different configurations"},
		{"unfinished", func() string {
			return copyShards(-1, func(d map[string]any) { d["status"] = "running" })
		}, exitIncomplete, "did not complete"},
		{"twice", func() string {
			dir := copyShards(-1, nil)
			b, _ := os.ReadFile(metas[0])
			os.WriteFile(filepath.Join(dir, "999999-999999"+strings.TrimPrefix(filepath.Base(metas[0]), filepath.Base(metas[0])[:13])), b, 0o644)
			return dir
		}, exitUsage, "the shards overlap"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := c.dir()
			r := runCLI(t, newEnv(api), "--merge", "-o", dir)
			if r.code != c.code || !strings.Contains(r.stderr, c.want) {
				t.Errorf("exit %d, want %d with %q: %s", r.code, c.code, c.want, r.stderr)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*_translator.json")); len(m) != 0 {
				t.Errorf("run metadata written by a refused merge: %v", m)
			}
		})
	}
	r := runCLI(t, newEnv(api), "--merge", "-o", shared)
	if r.code != exitOK {
		t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
	}
	got, want := readParadata(t, shared), readParadata(t, whole)
	list, _ := got.Config["merged_shards"].([]any)
	if got.Status != "completed" || len(list) != 3 || got.Statistics.SuccessfullyProcessed != want.Statistics.SuccessfullyProcessed ||
		got.Statistics.SkippedFiles != 1 || got.Statistics.BackendCalls != want.Statistics.BackendCalls ||
		len(got.Outputs) != len(want.Outputs) || got.License != want.License {
		t.Errorf("merged: status %s, %d shards, processed %d (whole %d), skipped %d, calls %d (whole %d), %d outputs (whole %d), licence %s (whole %s)",
			got.Status, len(list), got.Statistics.SuccessfullyProcessed, want.Statistics.SuccessfullyProcessed, got.Statistics.SkippedFiles,
			got.Statistics.BackendCalls, want.Statistics.BackendCalls, len(got.Outputs), len(want.Outputs), got.License, want.License)
	}
	// Each shard's entry names the tool version that ran it (translate's
	// had none; pageclass's had).
	for _, e := range list {
		if m, _ := e.(map[string]any); m["tool_version"] != version.String() {
			t.Errorf("merged_shards entry %v: no tool_version %s", e, version.String())
		}
	}
	// The machine-translation tags of the languages, as the whole run's
	// (a merge had none).
	if len(want.Statistics.LanguageTags) == 0 || !maps.Equal(got.Statistics.LanguageTags, want.Statistics.LanguageTags) {
		t.Errorf("merged language_tags %v, whole run's %v", got.Statistics.LanguageTags, want.Statistics.LanguageTags)
	}
	f, _ := os.ReadFile(got.Config["failures_table"].(string))
	if !strings.HasPrefix(string(f), "FILE,ERROR\nbox1/broken.xml,") || strings.Count(string(f), "\n") != 2 {
		t.Errorf("merged failures table:\n%s", f)
	}
}

// Shards run again with --retry-failed or --resume after they completed
// (an operator retrying failures, an Indexed Job retrying an index) are
// merged from their latest runs: the merged run metadata counts each input
// once and the translations equal the one-shot run's byte for byte; a
// shard run again without continuing from the ledger is refused.
func TestMergeContinuedShards(t *testing.T) {
	api, args, whole := oneShotRecords(t)
	shared := t.TempDir()
	for _, more := range [][]string{{"--shard", "0/3"}, {"--shard", "1/3"}, {"--shard", "2/3"},
		{"--shard", "0/3", "--retry-failed"}, {"--shard", "1/3", "--retry-failed"}, {"--shard", "2/3", "--resume"}} {
		if r := runCLI(t, newEnv(api), args(shared, more...)...); r.code != exitOK {
			t.Fatalf("%v: exit %d: %s", more, r.code, r.stderr)
		}
	}
	if r := runCLI(t, newEnv(api), "--merge", "-o", shared); r.code != exitOK {
		t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
	}
	got, want := readParadata(t, shared), readParadata(t, whole)
	list, _ := got.Config["merged_shards"].([]any)
	if len(list) != 3 || got.Statistics.SuccessfullyProcessed != want.Statistics.SuccessfullyProcessed ||
		got.Statistics.SkippedFiles != 1 || len(got.Outputs) != len(want.Outputs) || got.License != want.License {
		t.Errorf("merged: %d shards, processed %d (whole %d), skipped %d, %d outputs (whole %d), licence %s (whole %s)",
			len(list), got.Statistics.SuccessfullyProcessed, want.Statistics.SuccessfullyProcessed, got.Statistics.SkippedFiles,
			len(got.Outputs), len(want.Outputs), got.License, want.License)
	}
	for _, s := range list {
		if sup, _ := s.(map[string]any)["supersedes"].([]any); len(sup) != 1 {
			t.Errorf("merged shard %v supersedes %v, want its first run", s.(map[string]any)["shard"], sup)
		}
	}
	f, _ := os.ReadFile(got.Config["failures_table"].(string))
	if !strings.HasPrefix(string(f), "FILE,ERROR\nbox1/broken.xml,") || strings.Count(string(f), "\n") != 2 {
		t.Errorf("merged failures table:\n%s", f)
	}
	a, b := outputs(t, shared), outputs(t, whole)
	if len(a) != len(b) {
		t.Errorf("%d output files, the one-shot run %d", len(a), len(b))
	}
	for k, v := range b {
		if !bytes.Equal(a[k], v) {
			t.Errorf("%s differs from the one-shot run's", k)
		}
	}

	// Shard 2/3 once more, translated anew: two independent runs of it.
	if r := runCLI(t, newEnv(api), args(shared, "--shard", "2/3")...); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r := runCLI(t, newEnv(api), "--merge", "-o", shared)
	if r.code != exitUsage || !strings.Contains(r.stderr, "the shards overlap") || !strings.Contains(r.stderr, "not run with --resume or --retry-failed") {
		t.Errorf("exit %d, want %d naming the overlap: %s", r.code, exitUsage, r.stderr)
	}
}

// Two URLs of one list with the same download name, falling in different
// shards: the later one is skipped by its shard (named over the whole
// list), so the shards never download into, or translate to, one file.
// Since a list may name books (issue 28), the later URL is requested once
// to see whether it is one (a book is read without a download file, its
// outputs under its own folder): not one, it is skipped as before.
func TestURLNameClashAcrossShards(t *testing.T) {
	rec, _ := os.ReadFile(testenv.Path(t, "records/C-9107617A.xml"))
	var served atomic.Int32
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Write(rec)
	}))
	defer files.Close()
	// Two URLs ending in the same name whose keys fall in different shards.
	first := files.URL + "/a/C-9107617A.xml"
	var second string
	for i := 0; second == ""; i++ {
		u := fmt.Sprintf("%s/b%d/C-9107617A.xml", files.URL, i)
		if (shard.Spec{Index: 0, Count: 2}).Has(u) != (shard.Spec{Index: 0, Count: 2}).Has(first) {
			second = u
		}
	}
	list := filepath.Join(t.TempDir(), "urls.txt")
	os.WriteFile(list, []byte(first+"\n"+second+"\n"), 0o644)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	var done, skipped int
	for i := 0; i < 2; i++ {
		r := runCLI(t, newEnv(api), list, "-o", out, "--xpaths", "../../setup/translate/amcr-fields.txt", "--shard", fmt.Sprintf("%d/2", i))
		if r.code != exitOK && r.code != exitFailure {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
		m, _ := filepath.Glob(filepath.Join(out, fmt.Sprintf("*_translator_shard-%d-of-2.json", i)))
		b, _ := os.ReadFile(m[0])
		var d runmeta.Doc
		json.Unmarshal(b, &d)
		done += d.Statistics.SuccessfullyProcessed
		for _, s := range d.SkippedFilesDetail {
			skipped++
			if s.File != second || !strings.Contains(s.Reason, "already that of "+first) {
				t.Errorf("shard %d skipped %s: %s", i, s.File, s.Reason)
			}
		}
	}
	if done != 1 || skipped != 1 || served.Load() != 2 {
		t.Errorf("%d translated, %d skipped, %d requests; want 1, 1, 2 (the download and the look at the second URL)", done, skipped, served.Load())
	}
	if b, _ := os.ReadFile(filepath.Join(out, "downloaded_inputs", "C-9107617A.xml")); !bytes.Equal(b, rec) {
		t.Error("the first URL's download was overwritten")
	}
}

// A resumed run over a URL list does not transfer a document that has not
// changed at its address (the server answers the conditional request 304)
// and does not translate it again; a document changed since is downloaded
// and translated again; a run without --resume downloads everything.
func TestResumeKeepsUnmodifiedDownloads(t *testing.T) {
	recs := map[string][]byte{}
	for _, n := range []string{"C-9107617A.xml", "C-9100725A.xml"} {
		recs["/"+n], _ = os.ReadFile(testenv.Path(t, "records/"+n))
	}
	var mu sync.Mutex
	modified := map[string]time.Time{"/C-9107617A.xml": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "/C-9100725A.xml": time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	var full, notModified atomic.Int32
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		mod, b := modified[r.URL.Path], recs[r.URL.Path]
		mu.Unlock()
		rw := &statusWriter{ResponseWriter: w}
		http.ServeContent(rw, r, r.URL.Path, mod, bytes.NewReader(b)) // answers If-Modified-Since
		if rw.status == http.StatusNotModified {
			notModified.Add(1)
		} else {
			full.Add(1)
		}
	}))
	defer files.Close()
	list := filepath.Join(t.TempDir(), "urls.txt")
	os.WriteFile(list, []byte(files.URL+"/C-9107617A.xml\n"+files.URL+"/C-9100725A.xml\n"), 0o644)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	args := []string{list, "-o", out, "--xpaths", "../../setup/translate/amcr-fields.txt", "--vocabulary", "", "-src", "cs"}
	if r := runCLI(t, newEnv(api), args...); r.code != exitOK || full.Load() != 2 {
		t.Fatalf("first run: exit %d, %d downloads: %s", r.code, full.Load(), r.stderr)
	}
	// The resumed run reads each kept download once: to translate it (or
	// find it done), not first to check its digest.
	downloads := []string{filepath.Join(out, "downloaded_inputs", "C-9107617A.xml"), filepath.Join(out, "downloaded_inputs", "C-9100725A.xml")}
	var r result
	opened := testenv.Opens(t, downloads, func() { r = runCLI(t, newEnv(api), append(args, "--resume")...) })
	if r.code != exitOK || full.Load() != 2 || notModified.Load() != 2 || translated(t, r.stderr) != 0 {
		t.Errorf("resumed run: exit %d, %d downloads, %d not modified, %d translated; want 0, 2, 2, 0: %s",
			r.code, full.Load()-2, notModified.Load(), translated(t, r.stderr), r.stderr)
	}
	for _, d := range downloads {
		if opened[d] != 1 {
			t.Errorf("resumed run opened the kept download %s %d times, want once", filepath.Base(d), opened[d])
		}
	}
	// One record changes at its address.
	mu.Lock()
	recs["/C-9100725A.xml"] = bytes.Replace(recs["/C-9100725A.xml"], []byte("</"), []byte("\n</"), 1)
	modified["/C-9100725A.xml"] = modified["/C-9100725A.xml"].Add(time.Hour)
	mu.Unlock()
	r = runCLI(t, newEnv(api), append(args, "--resume")...)
	if r.code != exitOK || full.Load() != 3 || notModified.Load() != 3 || translated(t, r.stderr) != 1 {
		t.Errorf("resumed run after a change: exit %d, %d downloads in all (want 3), %d not modified in all (want 3), %d translated (want 1): %s",
			r.code, full.Load(), notModified.Load(), translated(t, r.stderr), r.stderr)
	}
	// Without --resume every document is fetched whole.
	if r := runCLI(t, newEnv(api), args...); r.code != exitOK || full.Load() != 5 {
		t.Errorf("run without --resume: exit %d, %d downloads in all, want 5", r.code, full.Load())
	}
}

// A download is asked for conditionally only when its sidecar says it came
// from this URL, and kept on 304 only when its bytes are still those
// downloaded: another URL with the same last path segment (and the same
// Last-Modified) is fetched in full, a download edited since is fetched in
// full after the 304 (its bytes are checked when read to be translated), so
// the document translated is always the URL's own; an unchanged download of
// the same URL is kept on 304.
func TestResumeConditionalOnlyForTheSameDownload(t *testing.T) {
	a, _ := os.ReadFile(testenv.Path(t, "records/C-9100725A.xml"))
	b, _ := os.ReadFile(testenv.Path(t, "records/C-9107617A.xml"))
	docs := map[string][]byte{"/a/rec.xml": a, "/b/rec.xml": b}
	etags := map[string]string{"/a/rec.xml": `"a1"`, "/b/rec.xml": `"b1"`}
	mod := time.Date(2021, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	full, notModified := map[string]int{}, map[string]int{}
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", etags[r.URL.Path])
		rw := &statusWriter{ResponseWriter: w}
		http.ServeContent(rw, r, r.URL.Path, mod, bytes.NewReader(docs[r.URL.Path]))
		mu.Lock()
		defer mu.Unlock()
		if rw.status == http.StatusNotModified {
			notModified[r.URL.Path]++
		} else {
			full[r.URL.Path]++
		}
	}))
	defer files.Close()
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	local := filepath.Join(out, "downloaded_inputs", "rec.xml")
	args := func(u string, more ...string) []string {
		return append([]string{files.URL + u, "-o", out, "--xpaths", "../../setup/translate/amcr-fields.txt", "--vocabulary", "", "-src", "cs"}, more...)
	}
	step := func(name, u string, wantFull, want304, wantKept int, want []byte) {
		t.Helper()
		var r result
		meta := paradataOfRun(t, out, func() { r = runCLI(t, newEnv(api), args(u, "--resume")...) })
		mu.Lock()
		gotFull, got304 := full[u], notModified[u]
		mu.Unlock()
		got, _ := os.ReadFile(local)
		if r.code != exitOK || gotFull != wantFull || got304 != want304 || !bytes.Equal(got, want) {
			t.Fatalf("%s: exit %d, %s downloaded %d times (want %d), answered 304 %d times (want %d), download is the URL's document: %v: %s",
				name, r.code, u, gotFull, wantFull, got304, want304, bytes.Equal(got, want), r.stderr)
		}
		// The log and the run metadata count the downloads kept alike: not
		// one that was edited and so downloaded in full.
		logged, recorded := keptLogged(t, r.stderr), meta.Config["downloads_not_modified"]
		if logged != wantKept || recorded != float64(wantKept) {
			t.Errorf("%s: downloads kept: log says %d, run metadata %v; want %d", name, logged, recorded, wantKept)
		}
	}
	step("first run", "/a/rec.xml", 1, 0, 0, a)
	step("another URL with the same name", "/b/rec.xml", 1, 0, 0, b)
	if err := os.WriteFile(local, a, 0o644); err != nil { // edited locally
		t.Fatal(err)
	}
	step("edited download", "/b/rec.xml", 2, 1, 0, b)
	step("unchanged download", "/b/rec.xml", 2, 2, 1, b)
}

// keptLogged is the number of earlier downloads the log says were kept
// (its "earlier downloads kept" record; 0 without one).
func keptLogged(t *testing.T, stderr string) int {
	t.Helper()
	m := regexp.MustCompile(`"msg":"earlier downloads kept[^"]*"[^\n]*?"urls":(\d+)`).FindAllStringSubmatch(stderr, -1)
	switch len(m) {
	case 0:
		return 0
	case 1:
		n, _ := strconv.Atoi(m[0][1])
		return n
	}
	t.Fatalf("%d records of earlier downloads kept in the log:\n%s", len(m), stderr)
	return 0
}

// paradataOfRun runs f and returns the run metadata it wrote into dir: the
// one file there that was not there before.
func paradataOfRun(t *testing.T, dir string, f func()) runmeta.Doc {
	t.Helper()
	glob := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "*_translator.json"))
		return m
	}
	before := map[string]bool{}
	for _, p := range glob() {
		before[p] = true
	}
	f()
	var added []string
	for _, p := range glob() {
		if !before[p] {
			added = append(added, p)
		}
	}
	if len(added) != 1 {
		t.Fatalf("%d new run metadata files in %s: %v", len(added), dir, added)
	}
	b, err := os.ReadFile(added[0])
	if err != nil {
		t.Fatal(err)
	}
	var d runmeta.Doc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", added[0], err)
	}
	return d
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// With a vocabulary, the lemmatiser and the glossary size decide which
// terms a translation protects: a resumed run with another of either
// translates again instead of keeping the earlier outputs; a run that keeps
// them reports their licence and languages.
func TestResumeKeyHasVocabularyTerms(t *testing.T) {
	record := testenv.Path(t, "records/C-9107617A.xml")
	vocabulary := testenv.Path(t, "vocabulary.csv")
	lem := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer lem.Close()
	lem2 := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer lem2.Close()
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	steps := []struct {
		name string
		lem  string
		max  string
		want int
	}{
		{"first run", lem.URL, "", 1},
		{"same configuration", lem.URL, "", 0},
		{"another glossary size", lem.URL, "5", 1},
		{"another lemmatiser", lem2.URL, "5", 1},
	}
	for _, c := range steps {
		e := newEnv(api)
		e["LEMMATIZER_URL"] = c.lem
		if c.max != "" {
			e["LLM_MAX_GLOSSARY_TERMS"] = c.max
		}
		r := runCLI(t, e, record, "-o", out, "--formats", "xml", "--vocabulary", vocabulary, "-src", "cs", "--resume")
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.name, r.code, r.stderr)
		}
		if got := translated(t, r.stderr); got != c.want {
			t.Errorf("%s: translated %d inputs, want %d", c.name, got, c.want)
		}
		// The run metadata of a run that keeps the outputs has their
		// licence and languages, as the run that translated them.
		d := newestParadata(t, out)
		if d.License != "CC BY-NC-SA 4.0" || d.Statistics.Languages["cs"] == 0 {
			t.Errorf("%s: licence %q, languages %v", c.name, d.License, d.Statistics.Languages)
		}
	}
}

// newestParadata reads the run metadata *_translator.json in dir last
// written.
func newestParadata(t *testing.T, dir string) runmeta.Doc {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*_translator.json"))
	var newest string
	var at int64
	for _, f := range m {
		if st, err := os.Stat(f); err == nil && st.ModTime().UnixNano() >= at {
			newest, at = f, st.ModTime().UnixNano()
		}
	}
	b, err := os.ReadFile(newest)
	if err != nil {
		t.Fatalf("no run metadata in %s: %v", dir, err)
	}
	var d runmeta.Doc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// More shards than inputs: the shards whose share is empty exit 0 with run
// metadata of no inputs, and --merge takes them as run.
func TestMergeWithEmptyShares(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := filepath.Dir(recs[0])
	api := startAPI(t, translatortest.Config{})
	n := len(recs) + 4 // at least four shares are empty
	shared := t.TempDir()
	for i := 0; i < n; i++ {
		r := runCLI(t, newEnv(api), recordArgs(root, shared, "--shard", fmt.Sprintf("%d/%d", i, n))...)
		if r.code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
		// Every share, an empty one too, ends with its run summary.
		if !strings.Contains(r.stderr, `"msg":"run summary"`) {
			t.Errorf("shard %d: no run summary:\n%s", i, r.stderr)
		}
	}
	r := runCLI(t, newEnv(api), "--merge", "-o", shared)
	if r.code != exitOK {
		t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
	}
	got := readParadata(t, shared)
	list, _ := got.Config["merged_shards"].([]any)
	if got.Status != "completed" || len(list) != n || got.Statistics.InputFilesTotal != len(recs) ||
		got.Statistics.SuccessfullyProcessed != len(recs) || got.License == "" {
		t.Errorf("merged: status %s, %d shards (want %d), inputs %d, processed %d (want %d), licence %q",
			got.Status, len(list), n, got.Statistics.InputFilesTotal, got.Statistics.SuccessfullyProcessed, len(recs), got.License)
	}
}

// Translations made after the lemmatiser's circuit opened protect no
// single-word term: they are not recorded in the ledger, the run exits 75
// (incomplete) saying why, and a --resume once the lemmatiser is back (at
// the same address) translates them again. Before, the run exited 0.
func TestResumeRedoesLemmatiserOutage(t *testing.T) {
	lem := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer lem.Close()
	target, _ := url.Parse(lem.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var up atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	api := startAPI(t, translatortest.Config{})
	e := newEnv(api)
	e["LEMMATIZER_URL"] = front.URL
	e["LEMMATIZER_MAX_RETRIES"] = "0"
	e["LEMMATIZER_BACKOFF_BASE_S"] = "0.001"
	record := testenv.Path(t, "records/C-9107617A.xml")
	vocabulary := testenv.Path(t, "vocabulary.csv")
	out := t.TempDir()
	for _, c := range []struct {
		name string
		up   bool
		want int
		exit int
	}{
		{"lemmatiser down", false, 1, exitIncomplete},
		{"back: translated again", true, 1, exitOK},
		{"nothing left", true, 0, exitOK},
	} {
		up.Store(c.up)
		r := runCLI(t, e, record, "-o", out, "--formats", "xml", "--vocabulary", vocabulary, "-src", "cs", "--resume")
		if r.code != c.exit {
			t.Fatalf("%s: exit %d, want %d: %s", c.name, r.code, c.exit, r.stderr)
		}
		if c.exit == exitIncomplete && (!strings.Contains(r.stderr, "1 input(s) translated after the lemmatiser failed") ||
			!strings.Contains(r.stderr, "--resume")) {
			t.Errorf("%s: the run does not say which inputs to translate again and how: %s", c.name, r.stderr)
		}
		if got := translated(t, r.stderr); got != c.want {
			t.Errorf("%s: translated %d inputs, want %d", c.name, got, c.want)
		}
	}
}

// A shard resumed over another input folder (as many files, one name
// differs) is not the shard's continuation: --merge refuses it, naming the
// runs and inputs (review1 F3; internal/shard.Choose, shared with pageclass).
func TestMergeRefusesOtherInput(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	b, err := os.ReadFile(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(t.TempDir(), "renamed-"+filepath.Base(recs[0]))
	if err := os.WriteFile(renamed, b, 0o644); err != nil {
		t.Fatal(err)
	}
	root1, root2 := recordsTree(t, recs), recordsTree(t, append([]string{renamed}, recs[1:]...))
	api := startAPI(t, translatortest.Config{})
	shared := t.TempDir()
	for _, a := range [][]string{recordArgs(root1, shared, "--shard", "0/2"), recordArgs(root1, shared, "--shard", "1/2"),
		recordArgs(root2, shared, "--shard", "0/2", "--resume")} {
		if r := runCLI(t, newEnv(api), a...); r.code != exitOK {
			t.Fatalf("%v: exit %d: %s", a, r.code, r.stderr)
		}
	}
	r := runCLI(t, newEnv(api), "--merge", "-o", shared)
	if r.code != exitUsage || !strings.Contains(r.stderr, "were cut from different input lists") ||
		!strings.Contains(r.stderr, root1) || !strings.Contains(r.stderr, root2) {
		t.Errorf("exit %d, want %d naming both inputs: %s", r.code, exitUsage, r.stderr)
	}
}

// Two runs at once into one output folder take turns: the second logs that
// it waits, naming the folder and the run holding it, and with --resume
// continues from the first run's ledger, translating nothing again. Before,
// both translated everything at once into the same files.
func TestRunsIntoOneFolderTakeTurns(t *testing.T) {
	root, api, want := wholeRecordsRun(t)

	out := t.TempDir()
	waiting := make(chan string, 1)
	lockWaitHook = func(lock string) { waiting <- lock }
	second := make(chan result, 1)
	var once sync.Once
	// After the first run's first input, the second run starts; the first
	// goes on only once the second waits (or a minute has passed: then the
	// second did not wait, and the test fails).
	itemHook = func(k int) {
		once.Do(func() {
			go func() {
				var stdout, stderr bytes.Buffer
				code := run(context.Background(), recordArgs(root, out, "--resume"), newEnv(api).get, &stdout, &stderr)
				second <- result{code, stderr.String(), stdout.String()}
			}()
			select {
			case lock := <-waiting:
				if filepath.Dir(filepath.Dir(lock)) != out {
					t.Errorf("second run waits for %s, not a lock in %s", lock, out)
				}
			case <-time.After(time.Minute):
				t.Error("the second run into the same output folder did not wait for the first")
			}
		})
	}
	defer func() { itemHook, lockWaitHook = nil, nil }()
	runs := []result{runCLI(t, newEnv(api), recordArgs(root, out)...), <-second}
	for i, r := range runs {
		if r.code != exitOK {
			t.Fatalf("run %d of 2: exit %d: %s", i+1, r.code, r.stderr)
		}
	}
	r := runs[1]
	if n := translated(t, r.stderr); n != 0 {
		t.Errorf("second run translated %d inputs again; want 0 (all from the first run's ledger)", n)
	}
	if !strings.Contains(r.stderr, "waiting for another run writing to the same output folder") ||
		!strings.Contains(r.stderr, `"output":"`+out+`"`) || !strings.Contains(r.stderr, `"holder":"translate process `) {
		t.Errorf("second run's log does not say which folder and run it waits for:\n%s", r.stderr)
	}
	got := outputs(t, out)
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s differs from a single run's", name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d outputs, want %d", len(got), len(want))
	}
}

// Shards of one run share an output folder and run at the same time: a
// shard started while another is translating finishes without waiting, and
// --merge then gives the outputs of a whole run.
func TestShardsIntoOneFolderRunAtOnce(t *testing.T) {
	api, args, whole := oneShotRecords(t)
	want := outputs(t, whole)
	out := t.TempDir()
	lockWaitHook = func(lock string) { t.Errorf("a shard waits for %s", lock) }
	var started atomic.Bool
	itemHook = func(k int) {
		if !started.CompareAndSwap(false, true) {
			return
		}
		done := make(chan result, 1)
		go func() {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args(out, "--shard", "1/2"), newEnv(api).get, &stdout, &stderr)
			done <- result{code, stderr.String(), stdout.String()}
		}()
		select {
		case r := <-done:
			if r.code != exitOK {
				t.Errorf("shard 1/2: exit %d: %s", r.code, r.stderr)
			}
		case <-time.After(time.Minute):
			t.Error("shard 1/2 did not finish while shard 0/2 was running")
		}
	}
	defer func() { itemHook, lockWaitHook = nil, nil }()
	if r := runCLI(t, newEnv(api), args(out, "--shard", "0/2")...); r.code != exitOK {
		t.Fatalf("shard 0/2: exit %d: %s", r.code, r.stderr)
	}
	if r := runCLI(t, newEnv(api), args(out, "--merge")...); r.code != exitOK {
		t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
	}
	got := outputs(t, out)
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s differs from a whole run's", name)
		}
	}
}

// kept: a done entry whose outputs are all there as written is kept; one
// with an output edited since is kept (the edit is not overwritten); one
// with an output missing is not (translated again), and neither is one with
// an output edited and another missing, which the run records as failed
// rather than skip it with an output silently missing.
func TestKeptOutputs(t *testing.T) {
	out := t.TempDir()
	r := &runner{s: &settings{Output: out}}
	write := func(name, text string) outFile {
		os.WriteFile(filepath.Join(out, name), []byte(text), 0o644)
		return outFile{Path: ledger.Text(name), SHA256: ledger.DigestBytes([]byte(text))}
	}
	entry := func() ledger.Entry {
		b, _ := json.Marshal(itemData{Outputs: []outFile{write("a_en.xml", "a"), write("a.document.json", "{}")}})
		return ledger.Entry{Item: "a.xml", State: ledger.Done, Data: b}
	}
	for _, c := range []struct {
		name                   string
		prep                   func()
		files, changed, missed int
		ok                     bool
	}{
		{"as written", func() {}, 2, 0, 0, true},
		{"one edited", func() { os.WriteFile(filepath.Join(out, "a_en.xml"), []byte("a, post-edited"), 0o644) }, 2, 1, 0, true},
		{"one missing", func() { os.Remove(filepath.Join(out, "a.document.json")) }, 1, 0, 1, false},
		{"one edited, one missing", func() {
			os.WriteFile(filepath.Join(out, "a_en.xml"), []byte("a, post-edited"), 0o644)
			os.Remove(filepath.Join(out, "a.document.json"))
		}, 1, 1, 1, false},
	} {
		e := entry()
		c.prep()
		files, changed, missing, _, ok := r.kept(e)
		if len(files) != c.files || len(changed) != c.changed || len(missing) != c.missed || ok != c.ok {
			t.Errorf("%s: %d files, changed %v, missing %v, ok %t; want %d, %d, %d, %t",
				c.name, len(files), changed, missing, ok, c.files, c.changed, c.missed, c.ok)
		}
	}
}

// With source auto, the source-language order and the end rounds decide
// what a translation is: a resumed run with another of them translates
// again instead of keeping the earlier outputs (before, the ledger's key
// held neither, nor the detector's model, so a resume after they changed
// kept outputs made under the old ones); with a given source the order
// plays no part and the outputs are kept.
func TestResumeKeyHasLanguageOrder(t *testing.T) {
	alto := testenv.Path(t, sampleALTO)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want int
	}{
		{"first run", []string{"-src", "auto"}, 1},
		{"same configuration", []string{"-src", "auto"}, 0},
		{"another minimum length", []string{"-src", "auto", "--lang-min-length", "40"}, 1},
		{"another default language", []string{"-src", "auto", "--lang-min-length", "40", "--default-source-lang", "sk"}, 1},
		{"other end rounds", []string{"-src", "auto", "--lang-min-length", "40", "--default-source-lang", "sk", "--retry-rounds", "0"}, 1},
		{"given source", []string{"-src", "cs", "--retry-rounds", "0"}, 1},
		{"given source, another order", []string{"-src", "cs", "--retry-rounds", "0", "--lang-min-length", "10"}, 0},
	} {
		r := runCLI(t, newEnv(api), append([]string{alto, "-o", out, "--vocabulary", "", "--fast-align", "--resume"}, c.args...)...)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.name, r.code, r.stderr)
		}
		if got := translated(t, r.stderr); got != c.want {
			t.Errorf("%s: translated %d inputs, want %d", c.name, got, c.want)
		}
	}
}

// Shards that wrote to output folders of their own (machines without a
// shared folder) are merged into one with --merge -o OUT DIR...: OUT holds
// the one-shot run's translations and logs byte for byte, one run
// metadata with its counts, whose outputs are OUT's files, and the
// shards' ledgers, so a --resume in OUT translates nothing. A file OUT
// already holds with other content refuses the merge, naming it, and
// nothing is copied. Before, --merge read one folder only.
func TestMergeShardFolders(t *testing.T) {
	api, args, whole := oneShotRecords(t)
	var dirs []string
	for i := 0; i < 3; i++ {
		dir := t.TempDir()
		if r := runCLI(t, newEnv(api), args(dir, "--shard", fmt.Sprintf("%d/3", i))...); r.code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
		dirs = append(dirs, dir)
	}
	want := outputs(t, whole)
	// A file of another content where a shard's output goes.
	blocked := t.TempDir()
	var some string
	for k := range want {
		some = k
		break
	}
	writeFile(t, filepath.Join(blocked, some), []byte("edited by hand\n"))
	r := runCLI(t, newEnv(api), append([]string{"--merge", "-o", blocked}, dirs...)...)
	if r.code != exitFailure || !strings.Contains(r.stderr, filepath.Join(blocked, some)) {
		t.Errorf("merge over another file: exit %d: %s", r.code, r.stderr)
	}
	if got := outputs(t, blocked); len(got) != 1 {
		t.Errorf("a refused merge copied %d files", len(got)-1)
	}

	out := filepath.Join(t.TempDir(), "merged")
	if r := runCLI(t, newEnv(api), append([]string{"--merge", "-o", out}, dirs...)...); r.code != exitOK {
		t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
	}
	got := outputs(t, out)
	if len(got) != len(want) {
		t.Errorf("%d files merged, want %d", len(got), len(want))
	}
	for k, b := range want {
		if !bytes.Equal(got[k], b) {
			t.Errorf("%s differs from the one-shot run's", k)
		}
	}
	metas, _ := filepath.Glob(filepath.Join(out, "*_translator.json"))
	if len(metas) != 1 {
		t.Fatalf("%d merged run metadata", len(metas))
	}
	d, w := readParadata(t, out), readParadata(t, whole)
	if d.Statistics.SuccessfullyProcessed != w.Statistics.SuccessfullyProcessed || len(d.Outputs) != len(w.Outputs) {
		t.Errorf("merged %d translated, %d outputs; one-shot %d, %d", d.Statistics.SuccessfullyProcessed, len(d.Outputs), w.Statistics.SuccessfullyProcessed, len(w.Outputs))
	}
	if d.Config["output_dir"] != out {
		t.Errorf("merged output_dir %v, want %s", d.Config["output_dir"], out)
	}
	for _, o := range d.Outputs {
		if _, err := os.Stat(o); err != nil || !strings.HasPrefix(o, out+string(filepath.Separator)) {
			t.Errorf("merged output %s is not a file in %s: %v", o, out, err)
		}
	}
	r = runCLI(t, newEnv(api), args(out, "--resume")...)
	if r.code != exitOK || translated(t, r.stderr) != 0 {
		t.Errorf("resume in the merged folder: exit %d, translated %d: %s", r.code, translated(t, r.stderr), r.stderr)
	}
}

// A shard run's download folder is found for --merge where it lies from
// the shard's folder as it lay from the output folder the run recorded,
// else at its recorded path; one found nowhere is said (false).
func TestShardDownloads(t *testing.T) {
	root := t.TempDir()
	mk := func(p string) string {
		t.Helper()
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shard := mk(filepath.Join(root, "now", "out1"))
	mk(filepath.Join(root, "now", "dl1"))
	mk(filepath.Join(shard, "mine"))
	elsewhere := mk(filepath.Join(root, "scratch", "dl"))
	tests := []struct {
		name             string
		output, download string
		want             string
		found            bool
	}{
		{"default", "/then/out1", "/then/out1/downloaded_inputs", filepath.Join(shard, "downloaded_inputs"), true},
		{"not recorded", "", "", filepath.Join(shard, "downloaded_inputs"), true},
		{"relative default", "out1", "out1/downloaded_inputs", filepath.Join(shard, "downloaded_inputs"), true},
		{"beside, moved", "/then/out1", "/then/dl1", filepath.Join(root, "now", "dl1"), true},
		{"inside, relative", "out1", "out1/mine", filepath.Join(shard, "mine"), true},
		{"at its recorded path", "/then/out1", elsewhere, elsewhere, true},
		{"nowhere", "/then/out1", "/then/gone", "/then/gone", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := map[string]any{}
			if tt.output != "" {
				cfg["output_dir"], cfg["download_dir"] = tt.output, tt.download
			}
			got, ok := shardDownloads(shard, cfg)
			if got != tt.want || ok != tt.found {
				t.Errorf("got %s, %v; want %s, %v", got, ok, tt.want, tt.found)
			}
		})
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// A shard killed after it had translated (its run metadata left "running",
// as SIGKILL leaves it) and then continued with --resume: the merge counts
// the killed attempt's backend calls too, so the merged backend_calls are
// the calls made (before, those of the run merged only: here 0, as the
// resume found everything done).
func TestMergeCountsKilledAttempts(t *testing.T) {
	api, args, whole := oneShotRecords(t)
	shared := t.TempDir()
	for i := 0; i < 2; i++ {
		if r := runCLI(t, newEnv(api), args(shared, "--shard", fmt.Sprintf("%d/2", i))...); r.code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	metas, _ := filepath.Glob(filepath.Join(shared, "*_translator_shard-1-of-2.json"))
	if len(metas) != 1 {
		t.Fatalf("shard 1's run metadata: %v", metas)
	}
	var m map[string]any
	b, _ := os.ReadFile(metas[0])
	json.Unmarshal(b, &m)
	m["status"] = "running"
	b, _ = json.Marshal(m)
	os.WriteFile(metas[0], b, 0o644)
	if r := runCLI(t, newEnv(api), args(shared, "--shard", "1/2", "--resume")...); r.code != exitOK {
		t.Fatalf("resumed shard: exit %d: %s", r.code, r.stderr)
	}
	if r := runCLI(t, newEnv(api), "--merge", "-o", shared); r.code != exitOK {
		t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
	}
	got, want := readParadata(t, shared), readParadata(t, whole)
	attempts, _ := got.Config["interrupted_attempts"].([]any)
	if got.Statistics.BackendCalls != want.Statistics.BackendCalls || len(attempts) != 1 || got.Config["backend_calls_of_interrupted_attempts"] == float64(0) {
		t.Errorf("merged backend_calls %d (one run: %d), interrupted attempts %v", got.Statistics.BackendCalls, want.Statistics.BackendCalls, attempts)
	}
}

// TestMergeShardNothingTranslated: a shard whose documents were all in the
// target language already tried every input and failed only for having no
// output (exit 3, as a run that translates nothing): its share is done, and
// --merge takes it (it refused it as unfinished, advising a --resume that
// only failed again, so the merge could never be made).
func TestMergeShardNothingTranslated(t *testing.T) {
	in := t.TempDir()
	writeFile(t, filepath.Join(in, "en.page.xml"), readOrFatal(t, "../../internal/translate/pagexml/testdata/real/prima_english_simplepage.page.xml"))
	writeFile(t, filepath.Join(in, "en.hocr"), readOrFatal(t, "../../internal/translate/hocr/testdata/real/gcv_english_gcv2hocr-1.hocr"))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	failed := 0
	for i := range 2 {
		r := runCLI(t, newEnv(api), in, "-o", out, "--vocabulary", "", "--shard", fmt.Sprintf("%d/2", i))
		switch {
		case r.code == exitFailure && strings.Contains(r.stderr, "no document was translated"):
			failed++
		case r.code != exitOK:
			t.Fatalf("shard %d/2: exit %d: %s", i, r.code, r.stderr)
		}
	}
	if failed == 0 {
		t.Fatal("no shard failed for translating nothing")
	}
	// Taken (not 75 "finish it with --resume"), and the merged run, which
	// translated nothing, is a failure as a whole run would be: written,
	// status failed, exit 3.
	r := runCLI(t, newEnv(api), "--merge", "-o", out)
	if r.code != exitFailure || strings.Contains(r.stderr, "--resume") || !strings.Contains(r.stderr, "no document was translated") {
		t.Errorf("merge: exit %d: %s", r.code, r.stderr)
	}
	metas, _ := filepath.Glob(filepath.Join(out, "*_translator.json"))
	var merged []string
	for _, m := range metas {
		if !strings.Contains(m, "_shard-") {
			merged = append(merged, m)
		}
	}
	if len(merged) != 1 || !strings.Contains(string(readOrFatal(t, merged[0])), `"status": "failed"`) {
		t.Errorf("merged run metadata %v", merged)
	}
}

// Outputs another configuration's run wrote since (another translation
// service, resumed into the same folder) are no edit: a --resume of the
// first configuration translates them again with its own settings. It kept
// them, warning of edits, and listed them as its outputs under its service.
func TestResumeAfterOtherConfig(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := recordsTree(t, recs)
	a := startAPI(t, translatortest.Config{})
	b := startAPI(t, translatortest.Config{Garbage: func(in string) string { return "Other service: " + in }})
	whole, out := t.TempDir(), t.TempDir()
	if r := runCLI(t, newEnv(a), recordArgs(root, whole)...); r.code != exitOK {
		t.Fatalf("whole run: exit %d: %s", r.code, r.stderr)
	}
	want := outputs(t, whole)
	for i, step := range []struct {
		api  *translatortest.Server
		flag string
	}{{a, ""}, {b, "--resume"}, {a, "--resume"}} {
		args := recordArgs(root, out)
		if step.flag != "" {
			args = recordArgs(root, out, step.flag)
		}
		r := runCLI(t, newEnv(step.api), args...)
		if r.code != exitOK {
			t.Fatalf("run %d: exit %d: %s", i, r.code, r.stderr)
		}
		// The resume with the other service says which setting differs.
		if differs := fmt.Sprintf(`backend.url: \"%s\" there, \"%s\" now`, a.URL, b.URL); i == 1 && !strings.Contains(r.stderr, differs) {
			t.Errorf("the resume with another service does not say %s:\n%s", differs, r.stderr)
		}
		if i == 2 {
			if n := translated(t, r.stderr); n != len(recs) || strings.Contains(r.stderr, "changed since an earlier run wrote it") {
				t.Errorf("resumed after the other service's run: translated %d inputs, want %d:\n%s", n, len(recs), r.stderr)
			}
		}
	}
	got := outputs(t, out)
	for k, w := range want {
		if !bytes.Equal(got[k], w) {
			t.Errorf("%s is not the first service's translation after its --resume", k)
		}
	}
}

// A document that does not end (or one larger than 64 MiB) is refused at
// 64 MiB, naming the limit, having held no more than that.
func TestDownloadBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := bytes.Repeat([]byte("<x/>"), 1<<14)
		for {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	in := download(context.Background(), srv.Client(), srv.URL+"/endless.xml", t.TempDir(), false)
	if in.Err == nil || !strings.Contains(in.Err.Error(), "larger than 64 MiB") {
		t.Errorf("an endless document: %v", in.Err)
	}
}

// A download follows redirects on its host, and refuses one to another
// host at a private address, and loops (the book fetcher's rule; the
// downloads followed ten redirects anywhere).
func TestDownloadRedirects(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved.xml":
			http.Redirect(w, r, "/doc.xml", http.StatusFound)
		case "/elsewhere.xml":
			u, _ := url.Parse(srv.URL)
			http.Redirect(w, r, "http://127.0.0.2:"+u.Port()+"/doc.xml", http.StatusFound)
		case "/loop.xml":
			http.Redirect(w, r, "/loop.xml", http.StatusFound)
		default:
			w.Write([]byte("<record/>"))
		}
	}))
	defer srv.Close()
	client := httpClient()
	for _, tc := range []struct{ path, want string }{
		{"/moved.xml", ""},
		{"/elsewhere.xml", "at a private address (127.0.0.2)"},
		{"/loop.xml", "stopped after 5 redirects"},
	} {
		in := download(context.Background(), client, srv.URL+tc.path, t.TempDir(), false)
		if (tc.want == "") != (in.Err == nil) || (in.Err != nil && !strings.Contains(in.Err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.path, in.Err, tc.want)
		}
	}
}

// A URL input its server answers 503 (or 429) is asked again, and when it
// still does, left to do: exit 75, and --resume translates it once it is
// served. It was asked once and failed for good (exit 3), a book URL too.
func TestDownloadPassing(t *testing.T) {
	rec := readOrFatal(t, testenv.Path(t, "records/C-9107617A.xml"))
	var busy atomic.Bool
	var hits atomic.Int32
	busy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if busy.Load() {
			w.Header().Set("Retry-After", "0")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(rec)
	}))
	defer srv.Close()
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	args := []string{srv.URL + "/rec.xml", "-o", out, "--formats", "xml", "--vocabulary", ""}
	r := runCLI(t, newEnv(api), args...)
	// Its summary says it is left to do, not failed.
	if r.code != exitIncomplete || int(hits.Load()) != 1+fetch.Defaults.Retries || !strings.Contains(r.stderr, "503") ||
		!strings.Contains(r.stderr, `"failed":0,"left":1`) {
		t.Fatalf("a URL answering 503: exit %d after %d requests, want %d after %d: %s", r.code, hits.Load(), exitIncomplete, 1+fetch.Defaults.Retries, r.stderr)
	}
	busy.Store(false)
	if r = runCLI(t, newEnv(api), append(args, "--resume")...); r.code != exitOK || translated(t, r.stderr) != 1 {
		t.Errorf("resumed once served: exit %d: %s", r.code, r.stderr)
	}
}

// A document's warnings name its path in the output folder: volumes
// number their pages alike, and each volume's "0001: ..." could not be
// told from the others'.
func TestWarningsNameTheFolder(t *testing.T) {
	const doc = `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1"><PrintSpace>
<TextBlock ID="b1" LANG="fr"><TextLine ID="l1"><String CONTENT="Le"/><SP/><String CONTENT="chat"/><SP/><String CONTENT="dort"/></TextLine></TextBlock>
<TextBlock ID="b2" LANG="de"><TextLine ID="l2"><String CONTENT="Die"/><SP/><String CONTENT="Katze"/><SP/><String CONTENT="schläft"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>
`
	in := t.TempDir()
	for _, vol := range []string{"volA", "volB"} {
		writeFile(t, filepath.Join(in, vol, "0001.alto.xml"), []byte(doc))
	}
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), in, "-o", out, "--vocabulary", "")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var named []string
	for _, w := range readParadata(t, out).Warnings {
		if strings.Contains(w, "fr") {
			named = append(named, strings.SplitN(w, ":", 2)[0])
		}
	}
	slices.Sort(named)
	if !slices.Equal(named, []string{"volA/0001", "volB/0001"}) {
		t.Errorf("warnings of the French blocks name %q, want volA/0001 and volB/0001; all: %q", named, readParadata(t, out).Warnings)
	}
}
