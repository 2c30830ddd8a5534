package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"archivekit/internal/atomicfile"
	"archivekit/internal/cliflags"
	"archivekit/internal/ledger"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// outage is a translation service that answers 503 to every translate
// request while down is set, and is the stand-in otherwise.
func outage(t *testing.T, api *translatortest.Server, down *atomic.Bool) *httptest.Server {
	t.Helper()
	return outageAnswering(t, api, down, func(w http.ResponseWriter) {
		http.Error(w, "upstream overloaded", http.StatusServiceUnavailable)
	})
}

// outageAnswering is outage whose translate requests, while down, get
// answer instead of a 503.
func outageAnswering(t *testing.T, api *translatortest.Server, down *atomic.Bool, answer func(w http.ResponseWriter)) *httptest.Server {
	t.Helper()
	u, _ := url.Parse(api.URL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() && r.Method == http.MethodPost {
			answer(w)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// wholeRecordsRun translates a records tree (recordsTree) with a stand-in
// that never fails, and returns the tree, the stand-in and the outputs.
func wholeRecordsRun(t *testing.T) (root string, api *translatortest.Server, want map[string][]byte) {
	t.Helper()
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root = recordsTree(t, recs)
	api = startAPI(t, translatortest.Config{})
	whole := t.TempDir()
	if r := runCLI(t, newEnv(api), recordArgs(root, whole)...); r.code != exitOK {
		t.Fatalf("whole run: exit %d: %s", r.code, r.stderr)
	}
	return root, api, outputs(t, whole)
}

// ledgerFailures lists the items recorded failed in the ledgers under out.
func ledgerFailures(t *testing.T, out string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(out, LedgerFolder, "*", "*.jsonl"))
	var failed []string
	for _, f := range files {
		es, err := ledger.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.State == ledger.Failed {
				failed = append(failed, e.Item)
			}
		}
	}
	return failed
}

// Passing failures are not recorded as failed: an input that failed while
// the translation service was down (503 after every retry) or the disk was
// full stays to do, the run exits exitIncomplete saying that --resume
// finishes it, and the --resume run translates exactly those inputs, to the
// outputs of a run that saw no failure. The broken record stays a recorded
// failure. Before, both were recorded failed and --resume exited 0 with
// their outputs missing.
func TestPassingFailuresStayToDo(t *testing.T) {
	root, api, want := wholeRecordsRun(t)
	for _, c := range []struct {
		name  string
		setup func(down *atomic.Bool) (undo func())
	}{
		{"service down for the first input", func(down *atomic.Bool) func() {
			down.Store(true)
			itemHook = func(int) { down.Store(false) }
			return func() { itemHook = nil }
		}},
		{"disk full for the first output", func(*atomic.Bool) func() {
			var n atomic.Int32
			writeOutput = func(path string, data []byte, perm os.FileMode) error {
				if n.Add(1) == 1 {
					// A real ENOSPC from the kernel.
					if err := os.WriteFile("/dev/full", data, perm); err != nil {
						return fmt.Errorf("%s: %w", path, err)
					}
				}
				return atomicfile.WriteFile(path, data, perm)
			}
			return func() { writeOutput = atomicfile.WriteFile }
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var down atomic.Bool
			e := newEnv(api)
			e["TRANSLATION_URL"] = outage(t, api, &down).URL
			out := t.TempDir()
			undo := c.setup(&down)
			r := runCLI(t, e, recordArgs(root, out)...)
			undo()
			if r.code != exitIncomplete {
				t.Fatalf("exit %d, want %d: %s", r.code, exitIncomplete, r.stderr)
			}
			if !strings.Contains(r.stderr, "--resume") || !strings.Contains(r.stderr, "1 item(s) left to do") {
				t.Errorf("the log does not say that --resume finishes the one input left:\n%s", r.stderr)
			}
			if f := ledgerFailures(t, out); len(f) != 1 || f[0] != "box1/broken.xml" {
				t.Errorf("ledger failures %v, want only box1/broken.xml", f)
			}
			r = runCLI(t, e, recordArgs(root, out, "--resume")...)
			if r.code != exitOK {
				t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
			}
			if got := translated(t, r.stderr); got != 1 {
				t.Errorf("resume translated %d inputs, want 1", got)
			}
			got := outputs(t, out)
			if len(got) != len(want) {
				t.Fatalf("%d outputs after the resume, want %d", len(got), len(want))
			}
			for k, b := range want {
				if !bytes.Equal(got[k], b) {
					t.Errorf("%s differs from the run without failures", k)
				}
			}
		})
	}
}

// The breaker: with the service down, the run stops after
// TRANSLATE_CIRCUIT_TRIP inputs in a row failed, leaving the others
// untried (not one request more), and exits exitIncomplete; nothing is
// recorded failed but the broken record, so --resume translates them all
// once the service is back.
func TestCircuitBreakerStopsRun(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := recordsTree(t, recs)
	api := startAPI(t, translatortest.Config{})
	var down atomic.Bool
	down.Store(true)
	var posts atomic.Int32
	front := outage(t, api, &down)
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			posts.Add(1)
		}
		u, _ := url.Parse(front.URL)
		httputil.NewSingleHostReverseProxy(u).ServeHTTP(w, r)
	}))
	defer counting.Close()
	e := newEnv(api)
	e["TRANSLATION_URL"] = counting.URL
	e[EnvCircuitTrip] = "2"
	out := t.TempDir()
	r := runCLI(t, e, recordArgs(root, out)...)
	if r.code != exitIncomplete {
		t.Fatalf("exit %d, want %d: %s", r.code, exitIncomplete, r.stderr)
	}
	n := len(recs) + 1
	for _, w := range []string{"failed 2 inputs in a row", fmt.Sprintf("leaving %d more input(s) untried", n-2), "--resume"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("the log does not say %q:\n%s", w, r.stderr)
		}
	}
	// Two inputs tried, each with its retries (MTAPI_MAX_RETRIES=2): a
	// batch call and its items one by one, at most a few calls each.
	if p := posts.Load(); p == 0 || p > 2*2*3 {
		t.Errorf("%d translate requests for the two inputs tried", p)
	}
	if f := ledgerFailures(t, out); len(f) != 0 {
		t.Errorf("ledger failures %v, want none", f)
	}
	if pd := readParadata(t, out); !strings.HasPrefix(fmt.Sprint(pd.Config["translation_circuit"]), "open after 2") || pd.Status != "incomplete" {
		t.Errorf("run metadata translation_circuit = %v, status %q (want incomplete)", pd.Config["translation_circuit"], pd.Status)
	}
	// The run summary counts the inputs left untried (it said 0).
	if !strings.Contains(r.stderr, fmt.Sprintf(`"failed":2,"failed_before":0,"untried":%d,`, n-2)) {
		t.Errorf("run summary does not count %d untried:\n%s", n-2, r.stderr)
	}
	down.Store(false)
	r = runCLI(t, e, recordArgs(root, out, "--resume")...)
	if r.code != exitOK {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	if got := translated(t, r.stderr); got != n {
		t.Errorf("resume translated %d inputs, want %d (all; the broken one fails again)", got, n)
	}
}

func TestCircuitTripSetting(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
		bad  bool
	}{{"", DefaultCircuitTrip, false}, {"0", 0, false}, {" 5 ", 5, false}, {"-1", 0, true}, {"x", 0, true}} {
		got, err := circuitTrip(func(string) string { return c.v })
		if (err != nil) != c.bad || (!c.bad && got != c.want) {
			t.Errorf("%s=%q: %d, %v", EnvCircuitTrip, c.v, got, err)
		}
	}
}

// A service that answers 200 with an HTML page (a proxy's error page, a
// network's sign-in page) is at fault, not the input: the inputs are not
// recorded failed, the run stops after TRANSLATE_CIRCUIT_TRIP of them
// with exit 75, and --resume translates them once the service answers.
// Before, each input was recorded failed, and --resume kept the failures.
func TestServicePageIsPassing(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	root := recordsTree(t, recs)
	api := startAPI(t, translatortest.Config{})
	var page atomic.Bool
	page.Store(true)
	front := outageAnswering(t, api, &page, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>Please sign in to the network</body></html>"))
	})
	e := newEnv(api)
	e["TRANSLATION_URL"] = front.URL
	e[EnvCircuitTrip] = "2"
	out := t.TempDir()
	r := runCLI(t, e, recordArgs(root, out)...)
	if r.code != exitIncomplete || !strings.Contains(r.stderr, `garbage answer: Content-Type \"text/html\"`) {
		t.Fatalf("exit %d, want %d naming the HTML answer: %s", r.code, exitIncomplete, r.stderr)
	}
	if f := ledgerFailures(t, out); len(f) != 0 {
		t.Errorf("ledger failures %v, want none", f)
	}
	page.Store(false)
	r = runCLI(t, e, recordArgs(root, out, "--resume")...)
	if r.code != exitOK {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	if got := translated(t, r.stderr); got != len(recs)+1 {
		t.Errorf("resume translated %d inputs, want %d", got, len(recs)+1)
	}
}

// TestOutputFolderUnwritable: when the output folder cannot be written in
// the middle of a run (here replaced by a file after the first input), the
// run stops at the first input it cannot write, sends nothing more to the
// translation service, exits 75 naming the folder, and does not record the
// input failed; once the folder is back, --resume translates the rest and
// exits 0 with every output there. (The inputs were recorded failed, a
// --resume kept them failed and exited 0 with their outputs missing, and
// every remaining input was translated and billed first.)
func TestOutputFolderUnwritable(t *testing.T) {
	dir := t.TempDir()
	alto := readOrFatal(t, testenv.Path(t, sampleALTO))
	for k := 1; k <= 4; k++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("p%d.alto.xml", k)), append(append([]byte{}, alto...), fmt.Sprintf("<!-- %d -->\n", k)...))
	}
	api := startAPI(t, translatortest.Config{})
	for _, c := range []struct {
		name string
		// spoil makes out unwritable after the first input; mend puts
		// it back.
		spoil, mend func(out string)
		says, left  string
		translated  []string // inputs translated and written
	}{
		{"replaced by a file", func(out string) {
			if err := os.Rename(out, out+".moved"); err != nil {
				t.Error(err)
			}
			writeFile(t, out, []byte("not a folder"))
		}, func(out string) {
			os.Remove(out)
			os.Rename(out+".moved", out)
		}, "was replaced by a file", "leaving 3 input(s) untried", []string{"p1"}},
		// A folder where the second input's output goes: that output
		// cannot be written (as in a folder made read-only, which root
		// writes all the same).
		{"an output that cannot be written", func(out string) {
			writeFile(t, filepath.Join(out, "p2_en.alto.xml", "in-the-way"), []byte("x"))
		}, func(out string) {
			os.RemoveAll(filepath.Join(out, "p2_en.alto.xml"))
		}, "the output folder cannot be written", "leaving 2 more input(s) untried", []string{"p1"}}, // p2's summary is not logged: it was not written
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			itemHook = func(k int) {
				if k == 1 {
					c.spoil(out)
				}
			}
			r := runCLI(t, newEnv(api), dir, "-o", out, "-src", "cs", "--vocabulary", "", "--fast-align")
			itemHook = nil
			if r.code != exitIncomplete || !strings.Contains(r.stderr, c.says) || !strings.Contains(r.stderr, c.left) {
				t.Fatalf("exit %d, want %d, %q and %q:\n%s", r.code, exitIncomplete, c.says, c.left, r.stderr)
			}
			for k := 1; k <= 4; k++ {
				name := fmt.Sprintf("p%d", k)
				if sent := strings.Contains(r.stderr, name+": batch summary"); sent != slices.Contains(c.translated, name) {
					t.Errorf("%s translated: %v, want %v", name, sent, !sent)
				}
			}
			c.mend(out)
			r = runCLI(t, newEnv(api), dir, "-o", out, "-src", "cs", "--vocabulary", "", "--fast-align", "--resume")
			if r.code != exitOK {
				t.Fatalf("resume: exit %d:\n%s", r.code, r.stderr)
			}
			for k := 1; k <= 4; k++ {
				if _, err := os.Stat(filepath.Join(out, fmt.Sprintf("p%d_en.alto.xml", k))); err != nil {
					t.Errorf("after --resume: %v", err)
				}
			}
		})
	}
}

// TestOutputFolderRemoved: an output folder removed while the run goes on
// (after its first input) stops the run before the next input, incomplete
// (75) (it was made again by the next output, every input after it sent to
// the service, and the run said "completed" listing files that were gone);
// a run again writes every output. TestOutputsGone: the files gone are
// named at the end.
func TestOutputFolderRemoved(t *testing.T) {
	dir := t.TempDir()
	alto := readOrFatal(t, testenv.Path(t, sampleALTO))
	for k := 1; k <= 3; k++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("p%d.alto.xml", k)), append(append([]byte{}, alto...), fmt.Sprintf("<!-- %d -->\n", k)...))
	}
	api := startAPI(t, translatortest.Config{})
	out := filepath.Join(t.TempDir(), "out")
	itemHook = func(k int) {
		if k == 1 {
			if err := os.RemoveAll(out); err != nil {
				t.Error(err)
			}
		}
	}
	r := runCLI(t, newEnv(api), dir, "-o", out, "-src", "cs", "--vocabulary", "", "--fast-align")
	itemHook = nil
	// The run stops before the next input (nothing more sent to the
	// service: it was translated, billed, and written into a new folder
	// without its ledger).
	if r.code != exitIncomplete || !strings.Contains(r.stderr, "the output folder "+out+" is gone") || !strings.Contains(r.stderr, "leaving 2 input(s) untried") ||
		strings.Contains(r.stderr, "p2: batch summary") {
		t.Fatalf("exit %d, want %d, stopping at once:\n%s", r.code, exitIncomplete, r.stderr)
	}
	r = runCLI(t, newEnv(api), dir, "-o", out, "-src", "cs", "--vocabulary", "", "--fast-align", "--resume")
	if r.code != exitOK {
		t.Fatalf("again: exit %d:\n%s", r.code, r.stderr)
	}
	for k := 1; k <= 3; k++ {
		if _, err := os.Stat(filepath.Join(out, fmt.Sprintf("p%d_en.alto.xml", k))); err != nil {
			t.Errorf("after running again: %v", err)
		}
	}
}

// TestOutputsGone: files a run wrote that are not there at its end are an
// incomplete run naming the first, counting the inputs that wrote them.
func TestOutputsGone(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "a_en.xml")
	writeFile(t, kept, []byte("x"))
	gone1, gone2, gone3 := filepath.Join(dir, "b_en.xml"), filepath.Join(dir, "b_log.csv"), filepath.Join(dir, "c_en.xml")
	if err := outputsGone([]string{kept}, nil); err != nil {
		t.Errorf("all there: %v", err)
	}
	err := outputsGone([]string{kept, gone1, gone2, gone3}, map[string]string{gone1: "b.xml", gone2: "b.xml", gone3: "c.xml"})
	var inc cliflags.IncompleteError
	if !errors.As(err, &inc) || inc.Undone != 2 || !strings.Contains(err.Error(), "3 of the 4 files this run wrote are not there any more (first "+gone1) {
		t.Errorf("gone: %v", err)
	}
}

// TestNameTooLongFailsItsInput: an input whose name is too long for its
// output's suffixes (over 255 bytes with "_en.xml") fails alone, naming
// why, and the others are translated, exit 0; the run stopped at it as if
// the output folder could not be written, at every --resume, and the
// inputs after it were never translated.
func TestNameTooLongFailsItsInput(t *testing.T) {
	dir := t.TempDir()
	rec := readOrFatal(t, testenv.Path(t, "records/C-9107617A.xml"))
	long := strings.Repeat("b", 251) + ".xml"
	writeFile(t, filepath.Join(dir, long), rec)
	writeFile(t, filepath.Join(dir, "zz-short.xml"), rec)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), recordArgs(dir, out)...)
	if r.code != exitOK {
		t.Fatalf("exit %d, want 0 with the short one translated:\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "zz-short_en.xml")); err != nil {
		t.Errorf("the input after the long name was not translated: %v", err)
	}
	if !strings.Contains(r.stderr, "file name too long") || strings.Contains(r.stderr, "the output folder cannot be written") {
		t.Errorf("the long name's failure:\n%s", r.stderr)
	}
}
