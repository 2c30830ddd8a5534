package main

import (
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/ledger"
	"archivekit/internal/translate/translator/translatortest"
)

// TestFolderEmptyFile: a file of --formats in a folder run that is empty
// (zero bytes, blank lines, a byte-order mark alone) fails saying so (it
// failed as "plain text, not XML"); a file of plain text still fails as
// plain text. One run reads every case's file.
func TestFolderEmptyFile(t *testing.T) {
	cases := []struct{ name, content, want string }{
		{"zero.alto.xml", "", "the file is empty"},
		{"zero.txt", "", "the file is empty"},
		{"blank.xml", " \r\n\n\t", "the file is empty"},
		{"bom.xml", "\ufeff\n", "the file is empty"},
		{"notes.txt", "Kronika obce, opis z roku 1920.\n", "plain text, not XML"},
		// Markup after a blank line and a byte-order mark, or after two
		// marks, is said not well-formed, as the same file given alone
		// (it was "plain text, not XML").
		{"late-bom.alto.xml", "\n\ufeff<?xml version=\"1.0\"?>\n<alto xmlns=\"http://www.loc.gov/standards/alto/ns-v4#\"/>", "not well-formed XML"},
		{"two-boms.xml", "\ufeff\ufeff<record><title>Hrad</title></record>", "not well-formed XML"},
	}
	dir := t.TempDir()
	for _, tc := range cases {
		writeFile(t, filepath.Join(dir, tc.name), []byte(tc.content))
	}
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), dir, "-o", out, "--vocabulary", "", "--fast-align", "-src", "cs", "--formats", "alto.xml,xml,txt")
	if r.code != exitFailure {
		t.Fatalf("exit %d (want %d: nothing translated): %s", r.code, exitFailure, r.stderr)
	}
	fails, _ := filepath.Glob(filepath.Join(out, "*_translator_failures.csv"))
	if len(fails) != 1 {
		t.Fatalf("failures tables %v", fails)
	}
	rows, err := ledger.ReadFailures(fails[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range rows {
		got[f.File] = f.Error
	}
	for _, tc := range cases {
		if !strings.Contains(got[tc.name], tc.want) {
			t.Errorf("%s failed as %q, want %q", tc.name, got[tc.name], tc.want)
		}
	}
}
