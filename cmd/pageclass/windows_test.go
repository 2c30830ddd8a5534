package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"archivekit/internal/resources"
)

// inLog is s as the JSON lines of the log (not a terminal) write it.
func inLog(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}
	return out
}

// TestWindowsOutputPathsRefused: a Windows path given for an output folder,
// on the command line or in the config file, is a usage error naming where
// it came from, before anything is written; before, --results 'C:\results'
// (or [OUTPUT] FOLDER_RESULTS = C:\results) made a folder of that name in
// the working folder, without a word.
func TestWindowsOutputPathsRefused(t *testing.T) {
	for _, tc := range []struct {
		name      string
		overrides map[string]string
		args      []string
		want      string // "{cfg}" is the config file
	}{
		{"--results", nil, []string{"--results", `C:\results`},
			`--results: "C:\results" is a Windows path: on this machine give a path such as /mnt/c/results (where the drive is mounted); backslashes are not folder separators here`},
		{"--results, slashes", nil, []string{"--results", `c:/scans/out`}, `--results: "c:/scans/out" is a Windows path`},
		{"FOLDER_RESULTS", map[string]string{"OUTPUT.FOLDER_RESULTS": `C:\results`}, nil,
			`--results (from [OUTPUT] FOLDER_RESULTS in {cfg}): "C:\results" is a Windows path`},
		{"--book-out, UNC", nil, []string{"--book-out", `\\server\share\out`}, `--book-out: "\\server\share\out" is a Windows (UNC) path`},
		{"document_json_out_dir", map[string]string{"DOCUMENT.document_json_out_dir": `D:\records`}, nil,
			`--document-json-out-dir (from [DOCUMENT] document_json_out_dir in {cfg}): "D:\records" is a Windows path`},
		{"--document-json-out", nil, []string{"--document-json-out", `C:\rec.document.json`}, `--document-json-out: "C:\rec.document.json" is a Windows path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.overrides)
			t.Chdir(e.root)
			before := entries(t, e.root)
			code, log := e.run(t, append([]string{"-d", e.in}, tc.args...)...)
			want := inLog(strings.ReplaceAll(tc.want, "{cfg}", e.cfg))
			if code != exitUsage || !strings.Contains(log, want) {
				t.Errorf("exit %d, want %d saying %q:\n%s", code, exitUsage, want, log)
			}
			if after := entries(t, e.root); !slices.Equal(before, after) {
				t.Errorf("the run wrote in the working folder: %q, before %q", after, before)
			}
		})
	}
}

// TestBackslashResultsWarned: a results folder with backslashes
// (FOLDER_RESULTS = results\run1) is taken, as the one folder it names, with
// a warning that says so; before, there was no word.
func TestBackslashResultsWarned(t *testing.T) {
	e := newEnv(t, map[string]string{"OUTPUT.FOLDER_RESULTS": `results\run1`})
	e.model(t, "v4.4")
	e.linkPages(t, 1)
	t.Chdir(e.root)
	code, log := e.run(t, "-d", e.in)
	want := inLog(fmt.Sprintf(`--results (from [OUTPUT] FOLDER_RESULTS in %s): "results\run1" has backslashes`, e.cfg))
	if code != exitOK || !strings.Contains(log, want) || !strings.Contains(log, "(write results/run1 for those)") {
		t.Errorf("exit %d, want %d warning %q:\n%s", code, exitOK, want, log)
	}
	if st, err := os.Stat(filepath.Join(e.root, `results\run1`)); err != nil || !st.IsDir() {
		t.Errorf("the results folder: %v", err)
	}
}

// TestConfigSavedOnWindows: a config file saved as UTF-16 (Notepad's
// "Unicode") or ending in a Ctrl-Z is read; before, it was refused with
// `cfg_utf16.txt:1: expected key = value, got "\xff\xfe#\x00 \x00p\x00a…"`
// and `:79: expected key = value, got "\x1a"`.
func TestConfigSavedOnWindows(t *testing.T) {
	text := "# pageclass\r\n[SETUP]\r\nfiles_format = tif\r\ntop_N = 5\r\n[OUTPUT]\r\nFOLDER_RESULTS = /srv/résultats\r\n"
	le := []byte{0xFF, 0xFE}
	for _, u := range utf16.Encode([]rune(text)) {
		le = append(le, byte(u), byte(u>>8))
	}
	for name, data := range map[string][]byte{
		"UTF-16":         le,
		"UTF-16, Ctrl-Z": append(append([]byte{}, le...), 0x1A, 0),
		"Ctrl-Z":         []byte(text + "\x1a"),
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cfg_utf16.txt")
			write(t, p, string(data))
			s, _, err := loadSettings(resources.File{Path: p})
			if err != nil {
				t.Fatal(err)
			}
			if s.Setup.FilesFormat != "tif" || s.Setup.TopN != 5 || s.Output.FolderResults != "/srv/résultats" {
				t.Errorf("settings %+v %+v", s.Setup, s.Output)
			}
		})
	}
}

// TestOddNamesNamed: files whose names end in a dot or a space (as a copy
// from Windows may leave them: trail.png., "space.png ") are named in the
// report of the files left out, with what is odd about them; before, they
// were only counted as ".png" read by content, in a run asking for png.
func TestOddNamesNamed(t *testing.T) {
	const png = "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"
	exts, err := parseExts("png")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, n := range []string{"a.png", "trail.png.", "space.png ", "scan0007", "sub/deep.png. ."} {
		write(t, filepath.Join(dir, filepath.FromSlash(n)), png)
	}
	set, err := collect("", dir, exts, true, false)
	if err != nil {
		t.Fatal(err)
	}
	want := `files without a page extension that read as pages by content: 4 .png (take them with -ff all); ` +
		`of them, 3 have a name ending in a dot or a space (as a copy from Windows may leave), which hides the extension: ` +
		`"space.png " (a trailing space), "sub/deep.png. ." (trailing dots and spaces), "trail.png." (a trailing dot); rename them without the trailing dots and spaces`
	if got := set.leftReport(); got != want {
		t.Errorf("report\n%s\nwant\n%s", got, want)
	}

	// Past the first five, how many more.
	many := t.TempDir()
	for i := range 8 {
		write(t, filepath.Join(many, fmt.Sprintf("p%d.png.", i)), png)
	}
	_, err = collect("", many, exts, true, false)
	if err != nil && !strings.Contains(err.Error(), "no .png files") {
		t.Fatal(err)
	}
	if err == nil {
		t.Fatal("a folder of odd names only: no error")
	}
	for _, w := range []string{`"p4.png." (a trailing dot) and 3 more; rename them`, "of them, 8 have a name"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %q", err, w)
		}
	}
	if strings.Contains(err.Error(), `"p5.png."`) {
		t.Errorf("error names more than %d files: %v", oddShown, err)
	}
}

// TestTrailingOddity says what is odd about the end of a file name.
func TestTrailingOddity(t *testing.T) {
	for name, want := range map[string]string{
		"trail.png.":   "a trailing dot",
		"space.png ":   "a trailing space",
		"two.png..":    "trailing dots",
		"two.png  ":    "trailing spaces",
		"mixed.png. .": "trailing dots and spaces",
		"plain.png":    "",
		"scan0007":     "",
		"...":          "",
		"a b.png":      "",
	} {
		if got := trailingOddity(name); got != want {
			t.Errorf("trailingOddity(%q) = %q, want %q", name, got, want)
		}
	}
}
