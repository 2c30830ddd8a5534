package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"archivekit/internal/cliflags"
	"archivekit/internal/ledger"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/summary"
)

// runCtx is e.run with a context (a cancelled one stops the run as Ctrl-C
// does).
func (e *env) runCtx(t *testing.T, ctx context.Context, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := run(ctx, append([]string{"--config", e.cfg}, args...), &out, &out)
	return code, out.String()
}

// tableRows returns the rows (header included) of the only table of results
// whose name ends with suffix.
func tableRows(t *testing.T, results, suffix string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(results, "*"+suffix))
	if len(m) != 1 {
		t.Fatalf("%d tables *%s in %s", len(m), suffix, results)
	}
	return flat(readCSV(t, m[0]))
}

// toClassify is the number of files a resumed run said it would classify.
func toClassify(t *testing.T, log string) int {
	t.Helper()
	m := regexp.MustCompile(`"files_to_classify":(\d+)`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no files_to_classify in the log:\n%s", log)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// ledgerEntries counts the entries of every ledger file under results.
func ledgerEntries(t *testing.T, results string) (files []string, entries int) {
	t.Helper()
	files, _ = filepath.Glob(filepath.Join(results, LedgerFolder, "pageclass_*", "*.jsonl"))
	for _, f := range files {
		es, err := ledger.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		entries += len(es)
	}
	return files, entries
}

// A run stopped after k files (the context cancelled from the ledger hook,
// as Ctrl-C does, deterministically) and resumed writes the tables of an
// uninterrupted run, and classifies only the files the ledger lacks.
func TestStopAndResumeEqualsUninterrupted(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 2)
	e.model(t, "v4.4")
	whole := filepath.Join(e.root, "whole")
	if code, log := e.run(t, "-d", e.in, "--raw", "--results", whole); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	want := tableRows(t, whole, "_v4.4_TOP-3.csv")
	wantRaw := tableRows(t, whole, "_v4.4_RAW.csv")
	for _, k := range []int{1, 7, 12} {
		t.Run(fmt.Sprint("after ", k), func(t *testing.T) {
			results := filepath.Join(e.root, fmt.Sprint("stopped", k))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			itemHook = func(n int) {
				if n == k {
					cancel()
				}
			}
			code, log := e.runCtx(t, ctx, "-d", e.in, "--raw", "--results", results)
			itemHook = nil
			if code != exitInterrupted {
				t.Fatalf("stopped run: exit %d: %s", code, log)
			}
			_, done := ledgerEntries(t, results)
			if done < k || done >= len(pages) {
				t.Fatalf("%d items in the ledger after stopping at %d of %d", done, k, len(pages))
			}
			// The stopped run's summary says how many files it left (it
			// said nothing of them).
			if sum := summaryIn(t, results); sum.FilesLeft != len(pages)-done || sum.FilesKept != 0 {
				t.Errorf("stopped run: summary files left %d, kept %d; want %d, 0", sum.FilesLeft, sum.FilesKept, len(pages)-done)
			}
			// The stopped run's partial tables are replaced by the resumed run's.
			for _, m := range must(filepath.Glob(filepath.Join(results, "*.csv"))) {
				os.Remove(m)
			}
			code, log = e.run(t, "-d", e.in, "--raw", "--results", results, "--resume")
			if code != exitOK {
				t.Fatalf("resumed run: exit %d: %s", code, log)
			}
			if n := toClassify(t, log); n != len(pages)-done {
				t.Errorf("resumed run classified %d files, want %d (%d were done)", n, len(pages)-done, done)
			}
			// Its summary says how many files earlier runs classified.
			if sum := summaryIn(t, results); sum.FilesKept != done || sum.FilesLeft != 0 || sum.Pages != len(pages) {
				t.Errorf("resumed run: summary %d pages, files kept %d, left %d; want %d, %d, 0", sum.Pages, sum.FilesKept, sum.FilesLeft, len(pages), done)
			}
			if !strings.Contains(log, `"files_kept":`+strconv.Itoa(done)) {
				t.Errorf("run summary record lacks files_kept %d:\n%s", done, log)
			}
			if _, all := ledgerEntries(t, results); all != len(pages) {
				t.Errorf("%d ledger entries after resuming, want %d: an item was done twice", all, len(pages))
			}
			if got := tableRows(t, results, "_v4.4_TOP-3.csv"); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("resumed TOP-3 table differs from the uninterrupted run's:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if got := tableRows(t, results, "_v4.4_RAW.csv"); strings.Join(got, "\n") != strings.Join(wantRaw, "\n") {
				t.Errorf("resumed RAW table differs from the uninterrupted run's")
			}
		})
	}
}

// summaryIn reads the summary table of the one run in results.
func summaryIn(t *testing.T, results string) *summary.Summary {
	t.Helper()
	m := must(filepath.Glob(filepath.Join(results, "*_"+summary.TableName)))
	if len(m) != 1 {
		t.Fatalf("%d summary tables in %s", len(m), results)
	}
	s, err := summary.ReadTable(m[0])
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A file whose content changed since the ledger recorded it is classified
// again on resume (its name alone does not make it done), and its row is
// the new content's.
func TestResumeRedoesChangedContent(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	if code, log := e.run(t, "-d", e.in); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	// pages[0] now holds another page's content.
	os.Remove(pages[0])
	if err := os.Symlink(classifytest.Pages(t, 2)[1], pages[0]); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(e.root, "fresh")
	if code, log := e.run(t, "-d", e.in, "--results", fresh); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	os.Remove(must(filepath.Glob(filepath.Join(e.results, "*_TOP-3.csv")))[0])
	code, log := e.run(t, "-d", e.in, "--resume")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if n := toClassify(t, log); n != 1 {
		t.Errorf("resume classified %d files, want only the changed one", n)
	}
	got, want := tableRows(t, e.results, "_v4.4_TOP-3.csv"), tableRows(t, fresh, "_v4.4_TOP-3.csv")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed table keeps the old content's row:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A file that fails is listed in the failures table; --resume keeps the
// failure without trying again, --retry-failed classifies only the failed
// file again.
func TestFailuresAndRetryFailed(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	write(t, filepath.Join(e.in, "TEXT", "broken.png"), "not a png")
	code, log := e.run(t, "-d", e.in)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	failures := func() []string {
		t.Helper()
		m := must(filepath.Glob(filepath.Join(e.results, "*_"+FailuresTable)))
		var newest string
		for _, f := range m {
			if fi, _ := os.Stat(f); newest == "" || fi.ModTime().After(must(os.Stat(newest)).ModTime()) {
				newest = f
			}
		}
		recs := readCSV(t, newest)
		for _, f := range m {
			os.Remove(f)
		}
		var out []string
		for _, r := range recs {
			out = append(out, r[0])
		}
		return out
	}
	if got := strings.Join(failures(), ","); got != "FILE,TEXT/broken.png" {
		t.Errorf("failures table %s", got)
	}
	os.Remove(must(filepath.Glob(filepath.Join(e.results, "*_TOP-3.csv")))[0])
	for _, c := range []struct {
		flag string
		runs int
	}{{"--resume", 0}, {"--retry-failed", 1}} {
		code, log := e.run(t, "-d", e.in, c.flag)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.flag, code, log)
		}
		if n := toClassify(t, log); n != c.runs {
			t.Errorf("%s classified %d files, want %d", c.flag, n, c.runs)
		}
		if got := strings.Join(failures(), ","); got != "FILE,TEXT/broken.png" {
			t.Errorf("%s: failures table %s", c.flag, got)
		}
		if got := tableRows(t, e.results, "_v4.4_TOP-3.csv"); len(got) != len(pages)+1 {
			t.Errorf("%s: %d rows, want %d", c.flag, len(got)-1, len(pages))
		}
		for _, m := range must(filepath.Glob(filepath.Join(e.results, "*_TOP-3.csv"))) {
			os.Remove(m)
		}
	}
}

// A --resume whose files all failed before, kept failed, says how to try
// them again (it said "no page was classified" and nothing more; a run
// whose every page failed for want of processes was kept so).
func TestResumeAllFailedHint(t *testing.T) {
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	write(t, filepath.Join(e.in, "TEXT", "broken.png"), "not a png")
	if code, log := e.run(t, "-d", e.in); code != exitFailure {
		t.Fatalf("exit %d: %s", code, log)
	}
	code, log := e.run(t, "-d", e.in, "--resume")
	if code != exitFailure || !strings.Contains(log, "no page was classified: files that failed in earlier runs, kept failed: 1") ||
		!strings.Contains(log, "add --retry-failed") {
		t.Errorf("exit %d: %s", code, log)
	}
}

// killAt runs the test named test again as a child process with env set to
// the pageclass arguments args (joined by \x1f: the child runs pageclass
// with them), kills it with SIGKILL once it prints the line, and returns
// its stderr.
func killAt(t *testing.T, test, env string, args []string, line string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env+"="+strings.Join(args, "\x1f"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != line {
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	return stderr.String()
}

// runAsChild, in the child process killAt starts (env set), runs
// pageclass with the arguments env holds, printing "item n" as each input
// is recorded and waiting to be killed at the item stop; in the test
// process it returns.
func runAsChild(env string, stop int) {
	if os.Getenv(env) == "" {
		return
	}
	itemHook = func(n int) {
		fmt.Println("item", n)
		if n == stop {
			select {} // wait here to be killed
		}
	}
	os.Exit(run(context.Background(), strings.Split(os.Getenv(env), "\x1f"), os.Stderr, os.Stderr))
}

// A pageclass process killed with SIGKILL in the middle of a run (after
// its 5th file is in the ledger) and resumed gives the uninterrupted run's
// table, classifying only what the ledger lacks.
func TestKill9AndResume(t *testing.T) {
	runAsChild("PAGECLASS_TEST_CHILD", 5)
	e := newEnv(t, nil)
	pages := e.linkPages(t, 2)
	e.model(t, "v4.4")
	whole := filepath.Join(e.root, "whole")
	if code, log := e.run(t, "-d", e.in, "--results", whole); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	stderr := killAt(t, "TestKill9AndResume", "PAGECLASS_TEST_CHILD", []string{"--config", e.cfg, "-d", e.in}, "item 5")
	files, done := ledgerEntries(t, e.results)
	if len(files) != 1 || done != 5 {
		t.Fatalf("ledger %v with %d entries after the kill, want 5: %s", files, done, stderr)
	}
	code, log := e.run(t, "-d", e.in, "--resume")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if n := toClassify(t, log); n != len(pages)-5 {
		t.Errorf("resume classified %d files, want %d", n, len(pages)-5)
	}
	if got, want := tableRows(t, e.results, "_v4.4_TOP-3.csv"), tableRows(t, whole, "_v4.4_TOP-3.csv"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("table after kill -9 and resume differs from the uninterrupted run's")
	}
}

// A fresh run takes each file's digest for the ledger from the bytes it
// decoded, not in a pass over every file before the first page (which
// read every input twice from the disk and delayed the start) nor by
// reading the file again: it reads no file for a digest, and records
// every file. A resumed run takes first the digests of the files its
// ledger names, to know what is done, and reads the others once.
func TestDigestWhenClassified(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	var taken atomic.Int64
	digestFile = func(path string) (string, error) {
		taken.Add(1)
		return ledger.Digest(path)
	}
	atFirst := int64(-1)
	itemHook = func(n int) {
		if n == 1 {
			atFirst = taken.Load()
		}
	}
	t.Cleanup(func() { digestFile, itemHook = ledger.Digest, nil })
	results := filepath.Join(e.root, "results")
	if code, log := e.run(t, "-d", e.in, "--results", results); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if atFirst != 0 || taken.Load() != 0 {
		t.Errorf("fresh run: %d files read for a digest when the first file was recorded, %d in all (want 0: the digest is of the decoded bytes)", atFirst, taken.Load())
	}
	if _, all := ledgerEntries(t, results); all != len(pages) {
		t.Errorf("%d ledger entries, want %d", all, len(pages))
	}
	taken.Store(0)
	if code, log := e.run(t, "-d", e.in, "--results", results, "--resume"); code != exitOK || toClassify(t, log) != 0 {
		t.Fatalf("resumed run: exit %d: %s", code, log)
	}
	if taken.Load() != int64(len(pages)) {
		t.Errorf("resumed run took %d digests, want %d", taken.Load(), len(pages))
	}
	// Files the ledger does not name are read once, when classified: a
	// resumed run digests first only the files it holds, and still finds
	// one of those rewritten since.
	extra := filepath.Join(e.in, "extra")
	mkdir(t, extra)
	for i, p := range pages[:3] {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(extra, fmt.Sprintf("new%d%s", i, filepath.Ext(p))), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	changed, err := os.ReadFile(pages[len(pages)-1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(pages[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pages[0], changed, 0o644); err != nil {
		t.Fatal(err)
	}
	taken.Store(0)
	code, log := e.run(t, "-d", e.in, "--results", results, "--resume")
	if code != exitOK {
		t.Fatalf("resumed run with new files: exit %d: %s", code, log)
	}
	if n := toClassify(t, log); n != 4 {
		t.Errorf("resumed run classified %d files, want 4 (3 new, 1 rewritten)", n)
	}
	if taken.Load() != int64(len(pages)) {
		t.Errorf("resumed run with 3 new files took %d digests before classifying, want %d (the files the ledger names)", taken.Load(), len(pages))
	}
	if _, all := ledgerEntries(t, results); all != len(pages)+4 {
		t.Errorf("%d ledger entries, want %d (the 3 new and the rewritten file recorded)", all, len(pages)+4)
	}
}

// A file rewritten after it was decoded but before it is recorded (a
// scanner replacing it while the run goes on) is recorded with the digest
// of the content that was classified, so --resume classifies the new
// content again; review1 F2: it was recorded with the new content's digest
// and the old content's classes, and --resume kept those.
func TestDigestOfClassifiedBytes(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	victim, other := pages[0], pages[len(pages)-1]
	otherBytes, err := os.ReadFile(other)
	if err != nil {
		t.Fatal(err)
	}
	rewritten := false
	fileHook = func(path string) {
		if path == victim && !rewritten {
			rewritten = true
			if err := os.Remove(victim); err != nil {
				t.Error(err)
			}
			if err := os.WriteFile(victim, otherBytes, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(func() { fileHook = nil })
	results := filepath.Join(e.root, "results")
	if code, log := e.run(t, "-d", e.in, "--results", results); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if !rewritten {
		t.Fatalf("the hook never saw %s", victim)
	}
	fileHook = nil
	first, _ := filepath.Glob(filepath.Join(results, "*_TOP-3.csv"))
	for _, f := range first { // the resumed run's table is then the only one
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	code, log := e.run(t, "-d", e.in, "--results", results, "--resume")
	if code != exitOK {
		t.Fatalf("resume exit %d: %s", code, log)
	}
	if n := toClassify(t, log); n != 1 {
		t.Errorf("resumed run classified %d files, want 1 (the rewritten one)", n)
	}
	fresh := filepath.Join(e.root, "fresh")
	if code, log := e.run(t, "-d", e.in, "--results", fresh); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	a, b := tableRows(t, results, "_v4.4_TOP-3.csv"), tableRows(t, fresh, "_v4.4_TOP-3.csv")
	if len(a) != len(b) {
		t.Fatalf("resumed table has %d rows, fresh %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("resumed row %q\n     fresh row %q", a[i], b[i])
		}
	}
}

// A run killed with SIGKILL leaves its run metadata at "running". A later
// --resume of it records, in that file, that it was interrupted (naming the
// run that continued it), and in its own metadata which run it found
// interrupted; a run that finished is left as it is. Before, the killed
// run's metadata said "running" for ever.
func TestResumeRecordsInterruptedRun(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	if code, log := e.run(t, "-d", e.in); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	metas := func() []string { return must(filepath.Glob(filepath.Join(e.results, "*_page-classification.json"))) }
	read := func(p string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(must(os.ReadFile(p)), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	killed := metas()[0]
	// What SIGKILL leaves: the last write said running (the ledger file,
	// closed by the kernel, is no longer held).
	m := read(killed)
	m["status"] = "running"
	if err := os.WriteFile(killed, must(json.Marshal(m)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, log := e.run(t, "-d", e.in, "--resume"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	var resumed string
	for _, p := range metas() {
		if p != killed {
			resumed = p
		}
	}
	old, now := read(killed), read(resumed)
	if old["status"] != "interrupted" || !strings.Contains(fmt.Sprint(old["error"]), "continued by run "+fmt.Sprint(now["run_id"])) {
		t.Errorf("killed run: status %v, error %v; want interrupted, continued by run %v", old["status"], old["error"], now["run_id"])
	}
	// It says how many files it finished (its counts are those of its
	// last write, 0 for a run killed early).
	if old["ledger_items_finished"] != float64(len(pages)) || !strings.Contains(fmt.Sprint(old["error"]), fmt.Sprintf("its ledger records %d items it finished", len(pages))) {
		t.Errorf("killed run: ledger_items_finished %v, error %v; want %d", old["ledger_items_finished"], old["error"], len(pages))
	}
	if now["status"] != "completed" || fmt.Sprint(now["interrupted_runs"]) != fmt.Sprintf("[map[file:%s run_id:%v]]", killed, old["run_id"]) {
		t.Errorf("resumed run: status %v, interrupted_runs %v; want completed, [%v]", now["status"], now["interrupted_runs"], old["run_id"])
	}
	// A third run finds nothing interrupted: the resumed run completed.
	if code, log := e.run(t, "-d", e.in, "--resume"); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if got := read(resumed)["status"]; got != "completed" {
		t.Errorf("completed run now %v", got)
	}
	for _, p := range metas() {
		if p != killed && p != resumed && read(p)["interrupted_runs"] != nil {
			t.Errorf("third run lists interrupted runs: %v", read(p)["interrupted_runs"])
		}
	}
}

// A run's ledger file stays held until its run metadata is written, so a
// resume that starts as a run ends never takes the finished run for a
// killed one (and lists it as interrupted). Before, the ledger closed first.
func TestLedgerHeldUntilMetadataWritten(t *testing.T) {
	e := newEnv(t, nil)
	e.linkPages(t, 1)
	e.model(t, "v4.4")
	var checked bool
	testHookMetadataWritten = func(ledger string) {
		checked = true
		metas := must(filepath.Glob(filepath.Join(e.results, "*_page-classification.json")))
		if len(metas) != 1 || !strings.Contains(string(must(os.ReadFile(metas[0]))), `"completed"`) {
			t.Errorf("run metadata %v not written as completed when the hook ran", metas)
		}
		f, err := os.Open(ledger)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
			t.Errorf("ledger %s not held once the run metadata was written", ledger)
		}
	}
	defer func() { testHookMetadataWritten = nil }()
	if code, log := e.run(t, "-d", e.in); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	if !checked {
		t.Fatal("the run opened no ledger")
	}
}

// A shard killed with SIGKILL left run metadata with its settings and its
// shard, so --merge tells it unfinished and names the --resume that ends
// it (before, a killed run's record had no settings, and --merge said the
// folder held no shard run metadata); after that --resume, the merge
// gives the uninterrupted run's table.
func TestKilledShardMerge(t *testing.T) {
	runAsChild("PAGECLASS_TEST_SHARD_CHILD", 2)
	e := newEnv(t, nil)
	e.linkPages(t, 2)
	e.model(t, "v4.4")
	whole := filepath.Join(e.root, "whole")
	if code, log := e.run(t, "-d", e.in, "--results", whole); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	s0, s1, merged := filepath.Join(e.root, "s0"), filepath.Join(e.root, "s1"), filepath.Join(e.root, "merged")
	stderr := killAt(t, "TestKilledShardMerge", "PAGECLASS_TEST_SHARD_CHILD", []string{"--config", e.cfg, "-d", e.in, "--shard", "0/2", "--results", s0}, "item 2")
	if code, log := e.run(t, "-d", e.in, "--shard", "1/2", "--results", s1); code != exitOK {
		t.Fatalf("shard 1/2: exit %d: %s", code, log)
	}
	code, log := e.run(t, "--merge", "--results", merged, s0, s1)
	if code == exitOK || !strings.Contains(log, "shard 0/2: shard did not complete") || !strings.Contains(log, "(running); if it is still running, merge once it has ended; if it was killed, finish it with --shard 0/2 --resume") {
		t.Fatalf("merge with a killed shard: exit %d: %s\n(the child: %s)", code, log, stderr)
	}
	if code, log := e.run(t, "-d", e.in, "--shard", "0/2", "--results", s0, "--resume"); code != exitOK {
		t.Fatalf("shard 0/2 --resume: exit %d: %s", code, log)
	}
	// s1 named twice, and by one of its files too: read once.
	metas, _ := filepath.Glob(filepath.Join(s1, "*_page-classification.json"))
	if code, log := e.run(t, append([]string{"--merge", "--results", merged, s0, s1, s1}, metas...)...); code != exitOK {
		t.Fatalf("merge: exit %d: %s", code, log)
	}
	if got, want := tableRows(t, merged, "_v4.4_TOP-3.csv"), tableRows(t, whole, "_v4.4_TOP-3.csv"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("merged table after a killed shard resumed differs from the uninterrupted run's:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// While it classifies, a run writes its run metadata every checkpointEvery
// (here after every page), still "running", with the counts so far: what a
// SIGKILL at that moment leaves. Before, a killed run's metadata kept the
// zeros of its start.
func TestCheckpointCounts(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	defer func(d time.Duration) { checkpointEvery, testHookCheckpoint = d, nil }(checkpointEvery)
	checkpointEvery = 0
	var seen []string
	testHookCheckpoint = func(path string) {
		var m struct {
			Status     string
			Statistics struct {
				Processed int `json:"successfully_processed"`
			}
		}
		if err := json.Unmarshal(must(os.ReadFile(path)), &m); err != nil {
			t.Error(err)
		}
		seen = append(seen, fmt.Sprintf("%s %d", m.Status, m.Statistics.Processed))
	}
	if code, log := e.run(t, "-d", e.in); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	var want []string
	for i := range pages {
		want = append(want, fmt.Sprintf("running %d", i+1))
	}
	if strings.Join(seen, ", ") != strings.Join(want, ", ") {
		t.Errorf("run metadata written while classifying: %v, want %v", seen, want)
	}
}

// A page whose file name is not valid UTF-8 (a Windows-1250 name unpacked
// on Linux) is kept by --resume like any other: before, its ledger entry
// named it with U+FFFD and every resumed run classified it again.
func TestResumeKeepsNameNotUTF8(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	if err := os.Rename(pages[0], filepath.Join(filepath.Dir(pages[0]), "z\xe1pis-1.png")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(e.in, "v\xe9kaz.png"), "not a PNG")
	if code, log := e.run(t, "-d", e.in); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	// Every table and the run metadata write the names one way, valid
	// UTF-8 with \xNN for the stray bytes (the failures and summary tables
	// wrote the raw bytes, the run metadata U+FFFD).
	for _, suffix := range []string{"_TOP-3.csv", "_FAILURES.csv", "_SUMMARY.csv", "_page-classification.json"} {
		b, _ := os.ReadFile(e.output(t, suffix))
		want := `z\xe1pis`
		if suffix != "_TOP-3.csv" {
			want = `v\xe9kaz`
		}
		if suffix == "_page-classification.json" {
			want = `v\\xe9kaz` // the backslash escaped by JSON
		}
		if !utf8.Valid(b) || !strings.Contains(string(b), want) {
			t.Errorf("%s: valid UTF-8 %v, %s in it %v", suffix, utf8.Valid(b), want, strings.Contains(string(b), want))
		}
	}
	code, log := e.run(t, "-d", e.in, "--resume")
	if code != exitOK || toClassify(t, log) != 0 {
		t.Errorf("resumed: exit %d, %d files to classify, want 0:\n%s", code, toClassify(t, log), log)
	}
}

// A resumed or chunked run at another precision keeps none of the earlier
// run's probabilities: a bf16 table resumed at fp32 was kept whole and
// labelled fp32. Runs at one precision still continue each other.
func TestResumeAnotherPrecision(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	results := filepath.Join(e.root, "results")
	if code, log := e.run(t, "-d", e.in, "--precision", "bf16", "--results", results); code != exitOK {
		t.Fatalf("bf16 run: exit %d: %s", code, log)
	}
	code, log := e.run(t, "-d", e.in, "--precision", "fp32", "--results", results, "--resume")
	if code != exitOK {
		t.Fatalf("fp32 resume: exit %d: %s", code, log)
	}
	if _, n := ledgerEntries(t, results); !strings.Contains(log, "nothing to continue") || n != 2*len(pages) {
		t.Errorf("an fp32 --resume of a bf16 run: %d ledger entries, want %d (every file classified again); log:\n%s", n, 2*len(pages), log)
	}
	code, log = e.run(t, "-d", e.in, "--precision", "fp32", "--results", results, "--resume")
	if n := toClassify(t, log); code != exitOK || n != 0 {
		t.Errorf("a second fp32 --resume: exit %d, classified %d files, want 0", code, n)
	}

	chunked := filepath.Join(e.root, "chunked")
	tables := map[string]bool{}
	for _, p := range []string{"bf16", "fp32"} {
		if code, log := e.run(t, "-d", e.in, "--precision", p, "--results", chunked, "--chunk"); code != exitOK {
			t.Fatalf("%s chunked run: exit %d: %s", p, code, log)
		}
		for _, m := range must(filepath.Glob(filepath.Join(chunked, "chunk-*_v4.4_TOP-3.csv"))) {
			tables[filepath.Base(m)] = true
		}
	}
	if len(tables) != 2 {
		t.Errorf("chunked runs at bf16 and fp32 wrote the tables %v; want one table each", tables)
	}
}

// TestResultsFolderUnwritable: a results folder that cannot be written any
// more in the middle of a run (here moved away and replaced by a file after
// two files) ends it incomplete (75) with the --resume hint, not "run
// failed" (3): every page classified is in the ledger, and a --resume
// once the folder is back writes the tables of an uninterrupted run
// without classifying a page again.
func TestResultsFolderUnwritable(t *testing.T) {
	e := newEnv(t, nil)
	pages := e.linkPages(t, 1)
	e.model(t, "v4.4")
	whole := filepath.Join(e.root, "whole")
	if code, log := e.run(t, "-d", e.in, "--results", whole); code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	want := tableRows(t, whole, "_v4.4_TOP-3.csv")
	results := filepath.Join(e.root, "results")
	moved := results + ".moved"
	itemHook = func(n int) {
		if n == 2 {
			if err := os.Rename(results, moved); err != nil {
				t.Error(err)
			}
			write(t, results, "not a folder")
		}
	}
	code, log := e.run(t, "-d", e.in, "--results", results)
	itemHook = nil
	if code != cliflags.ExitIncomplete || !strings.Contains(log, "--resume") {
		t.Fatalf("exit %d, want %d with the --resume hint:\n%s", code, cliflags.ExitIncomplete, log)
	}
	if err := os.Remove(results); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(moved, results); err != nil {
		t.Fatal(err)
	}
	for _, m := range must(filepath.Glob(filepath.Join(results, "*.csv"))) {
		os.Remove(m)
	}
	code, log = e.run(t, "-d", e.in, "--results", results, "--resume")
	if code != exitOK {
		t.Fatalf("resumed: exit %d:\n%s", code, log)
	}
	if n := toClassify(t, log); n != 0 {
		t.Errorf("the resumed run classified %d of %d files again", n, len(pages))
	}
	if got := tableRows(t, results, "_v4.4_TOP-3.csv"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed TOP-3 table differs from the uninterrupted run's:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
