package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// TestRunMetadataNamesNotUTF8: two documents whose names differ only in
// bytes that are not UTF-8 (cp852 names unzipped from a Windows zip,
// "\x8e\xe1dost" and "\x8a\xe1dost") are two entries of the run metadata,
// each stray byte written \xNN as the log and failures tables write it:
// its outputs, its vocabulary_protected_terms keys and the files
// config.not_collected lists. They were one name with U+FFFD, a JSON
// object holding one key twice. The run still finds the files it wrote (it checks them at its
// end), and shards run into folders of their own are merged, their files
// copied by the names they have on disk.
func TestRunMetadataNamesNotUTF8(t *testing.T) {
	alto := readOrFatal(t, testenv.Path(t, sampleALTO))
	in := t.TempDir()
	for _, name := range []string{"\x8e\xe1dost.alto.xml", "\x8a\xe1dost.alto.xml"} {
		writeFile(t, filepath.Join(in, name), alto)
	}
	// Not collected: listed in config.not_collected.
	writeFile(t, filepath.Join(in, "pozn\xa0mka.xml"), []byte("<?xml version=\"1.0\"?>\n<note>pozn\u00e1mka</note>\n"))
	api := startAPI(t, translatortest.Config{})
	args := func(out string, more ...string) []string {
		return append([]string{in, "-o", out, "--vocabulary", "", "--fast-align", "-src", "cs"}, more...)
	}
	for _, tc := range []struct {
		name string
		run  func(t *testing.T, out string)
	}{
		{"one run", func(t *testing.T, out string) {
			if r := runCLI(t, newEnv(api), args(out)...); r.code != exitOK {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
		}},
		{"shards merged from their folders", func(t *testing.T, out string) {
			var dirs []string
			for i := range 2 {
				dir := t.TempDir()
				if r := runCLI(t, newEnv(api), args(dir, "--shard", fmt.Sprintf("%d/2", i))...); r.code != exitOK {
					t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
				}
				dirs = append(dirs, dir)
			}
			if r := runCLI(t, newEnv(api), append([]string{"--merge", "-o", out}, dirs...)...); r.code != exitOK {
				t.Fatalf("merge: exit %d: %s", r.code, r.stderr)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			tc.run(t, out)
			m, _ := filepath.Glob(filepath.Join(out, "*_translator.json"))
			if len(m) != 1 {
				t.Fatalf("run metadata %v", m)
			}
			b := readOrFatal(t, m[0])
			if bytes.Contains(b, []byte(`\ufffd`)) || bytes.Contains(b, []byte("\ufffd")) {
				t.Errorf("run metadata writes U+FFFD:\n%s", b)
			}
			var d struct {
				Config  map[string]any `json:"config"`
				Outputs []string       `json:"outputs"`
			}
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, stem := range []string{`\x8a\xe1dost`, `\x8e\xe1dost`} {
				want = append(want, stem+"_en.alto.xml", stem+"_log.csv")
			}
			var got []string
			for _, o := range d.Outputs {
				got = append(got, filepath.Base(o))
			}
			if !slices.Equal(got, want) {
				t.Errorf("outputs %q, want %q", got, want)
			}
			prot, _ := d.Config["vocabulary_protected_terms"].(map[string]any)
			if _, ok := prot[`\x8e\xe1dost`]; !ok || len(prot) != 2 || strings.Count(string(b), `"\\x8e\\xe1dost": `) != 1 {
				t.Errorf("vocabulary_protected_terms %v", prot)
			}
			if nc := fmt.Sprint(d.Config["not_collected"]); !strings.Contains(nc, `pozn\xa0mka.xml`) {
				t.Errorf("not_collected %s", nc)
			}
			for _, n := range []string{"\x8e\xe1dost_en.alto.xml", "\x8a\xe1dost_log.csv"} {
				if _, err := os.Stat(filepath.Join(out, n)); err != nil {
					t.Error(err)
				}
			}
			if !utf8.Valid(b) {
				t.Error("run metadata is not UTF-8")
			}
		})
	}
}
