package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"archivekit/internal/ledger"
	"archivekit/internal/translate/translator/translatortest"
)

// TestSameReplyWithdraws: a service that answers one text to everything
// (a sign-in page) is refused from its third such reply, and the two
// documents translated with the replies before are withdrawn: their
// outputs and logs removed, listed in the failures table beside the third,
// not counted as translated in the run metadata, and the run ends
// incomplete. The --resume against a working service translates all three.
// Before, the first two were written with the sign-in text as their
// translation, and a --resume kept them.
func TestSameReplyWithdraws(t *testing.T) {
	in := t.TempDir()
	for i, line := range []string{"Starý dům stojí nad řekou", "Děti si hrají na zahradě u domu", "Večer přišla bouřka s deštěm"} {
		var strs []string
		for j, w := range strings.Fields(line) {
			strs = append(strs, fmt.Sprintf(`<String ID="s%d" CONTENT="%s"/>`, j, w))
		}
		writeFile(t, filepath.Join(in, fmt.Sprintf("%04d.xml", i+1)), []byte(fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="P1" PHYSICAL_IMG_NR="1"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1">%s</TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>
`, strings.Join(strs, "<SP/>"))))
	}
	const portal = "Please sign in to the network"
	out := t.TempDir()
	args := []string{in, "-o", out, "-src", "cs", "--vocabulary", ""}
	r := runCLI(t, newEnv(startAPI(t, translatortest.Config{Garbage: func(string) string { return portal }})), args...)
	if r.code != exitIncomplete || !strings.Contains(r.stderr, "withdrawn") {
		t.Fatalf("exit %d, want %d, saying what was withdrawn: %s", r.code, exitIncomplete, r.stderr)
	}
	if got := outputs(t, out); len(got) != 0 {
		t.Errorf("outputs left: %v", slices.Sorted(func(yield func(string) bool) {
			for k := range got {
				if !yield(k) {
					return
				}
			}
		}))
	}
	d := readParadata(t, out)
	if d.Statistics.SuccessfullyProcessed != 0 || len(d.Outputs) != 0 || d.Statistics.UnitsTranslated != 0 {
		t.Errorf("run metadata counts %d translated (%d units), outputs %v", d.Statistics.SuccessfullyProcessed, d.Statistics.UnitsTranslated, d.Outputs)
	}
	stamp, _, _ := strings.Cut(d.RunID, ".")
	fs, err := ledger.ReadFailures(filepath.Join(out, stamp+"_translator_failures.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, f := range fs {
		failed = append(failed, f.File)
	}
	if slices.Sort(failed); fmt.Sprint(failed) != "[0001.xml 0002.xml 0003.xml]" {
		t.Errorf("failures table lists %v, want the three files", failed)
	}
	r = runCLI(t, newEnv(startAPI(t, translatortest.Config{})), append(args, "--resume")...)
	if r.code != exitOK || translated(t, r.stderr) != 3 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	for name, b := range outputs(t, out) {
		if strings.Contains(string(b), portal) {
			t.Errorf("%s holds the sign-in text", name)
		}
	}
}
