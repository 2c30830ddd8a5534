package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// A run over another input folder into the same output folder, whose file
// of one name holds another record, warns that it replaces the earlier
// run's output of that name; the first folder's --resume then takes that
// output for another run's, not a person's edit, and translates its own
// record again: the folder ends with the outputs of one clean run.
func TestResumeAfterOtherInputOfSameName(t *testing.T) {
	const doc = "C-9100725A.xml"
	records := filepath.Dir(testenv.Path(t, "records/"+doc))
	src, err := os.ReadFile(filepath.Join(records, doc))
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Replace(src, []byte("Hrad Vítkův Kámen."), []byte("Zámek na skále nad řekou."), 1)
	if bytes.Equal(other, src) {
		t.Fatalf("%s: the text to change is not there", doc)
	}
	folderB := t.TempDir()
	if err := os.WriteFile(filepath.Join(folderB, doc), other, 0o644); err != nil {
		t.Fatal(err)
	}
	api := startAPI(t, translatortest.Config{})
	clean, out := t.TempDir(), t.TempDir()
	if r := runCLI(t, newEnv(api), recordArgs(records, clean)...); r.code != exitOK {
		t.Fatalf("clean run: exit %d: %s", r.code, r.stderr)
	}
	want := outputs(t, clean)
	outName, logName := "C-9100725A_en.xml", "C-9100725A_log.csv"

	if r := runCLI(t, newEnv(api), recordArgs(records, out)...); r.code != exitOK {
		t.Fatalf("run A: exit %d: %s", r.code, r.stderr)
	}
	r := runCLI(t, newEnv(api), recordArgs(folderB, out)...)
	if r.code != exitOK {
		t.Fatalf("run B: exit %d: %s", r.code, r.stderr)
	}
	if bytes.Equal(outputs(t, out)[outName], want[outName]) {
		t.Fatalf("run B wrote the same translation as A's record: the test shows nothing")
	}
	if w := warnings(r.stderr, outName); len(w) != 1 || !strings.Contains(w[0], logName) || !strings.Contains(w[0], "replaced") {
		t.Errorf("run B replaced run A's %s and %s, want one warning naming them and saying so, got %q:\n%s", outName, logName, w, r.stderr)
	}

	r = runCLI(t, newEnv(api), recordArgs(records, out, "--resume")...)
	if r.code != exitOK {
		t.Fatalf("run A --resume: exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "changed since an earlier run wrote it") {
		t.Errorf("run A --resume took run B's output for an edit:\n%s", r.stderr)
	}
	if n := translated(t, r.stderr); n != 1 {
		t.Errorf("run A --resume translated %d inputs, want 1 (%s):\n%s", n, doc, r.stderr)
	}
	got := outputs(t, out)
	if !maps.EqualFunc(got, want, bytes.Equal) {
		var differ []string
		for _, k := range slices.Sorted(maps.Keys(want)) {
			if !bytes.Equal(got[k], want[k]) {
				differ = append(differ, k)
			}
		}
		t.Errorf("after run A's --resume: %d outputs (a clean run writes %d), %v not a clean run's", len(got), len(want), differ)
	}
}

// warnings returns the WARN lines of a JSON log that name file.
func warnings(log, file string) []string {
	var out []string
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, file) {
			out = append(out, line)
		}
	}
	return out
}
