package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"archivekit/internal/resources"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/translator/translatortest"
)

// utf16Text encodes s as UTF-16 with a byte order mark, little-endian (as
// Notepad's "Unicode" saves) or big-endian.
func utf16Text(s string, bigEndian bool) []byte {
	out := []byte{0xFF, 0xFE}
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// jsonText is s as the JSON lines of the log write it.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// TestConfigSavedOnWindows: a configuration saved as UTF-16 (Notepad's
// "Unicode"), with or without a section header, or ending in a Ctrl-Z, is
// read; before, it was refused (`c.txt:1: expected key = value, got
// "\xff\xfe[\x00t\x00r…"`, `c.txt:3: expected key = value, got "\x1a"`).
// Its errors name the file's own lines.
func TestConfigSavedOnWindows(t *testing.T) {
	const section = "[translate]\r\nsource_lang = de\r\ntarget_lang = cs\r\n"
	const plain = "# mine\r\nsource_lang = de\r\ntarget_lang = cs\r\n"
	for _, tt := range []struct {
		name string
		data []byte
	}{
		{"UTF-16 LE", utf16Text(section, false)},
		{"UTF-16 BE", utf16Text(section, true)},
		{"UTF-16, no section", utf16Text(plain, false)},
		{"UTF-16, Ctrl-Z", utf16Text(plain+"\x1a", false)},
		{"Ctrl-Z", []byte(section + "\x1a")},
		{"Ctrl-Z, no section", []byte(plain + "\x1a")},
		{"UTF-8 mark, Ctrl-Z", []byte("\ufeff" + plain + "\x1a")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.txt")
			writeFile(t, p, tt.data)
			f, err := loadConfig(resources.File{Path: p})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := configValues(f); got["source_lang"] != "de" || got["target_lang"] != "cs" {
				t.Errorf("values %q", got)
			}
		})
	}
	for _, tt := range []struct{ name, text, want string }{
		{"UTF-16, bad line", "source_lang = de\r\nbad\r\n", "c.txt:2: expected key = value"},
		{"UTF-16, section, bad line", "[translate]\nbad\n", "c.txt:2: expected key = value"},
		{"UTF-16, Ctrl-Z inside", "source_lang = de\n\x1a\ntarget_lang = cs\n", `c.txt:2: expected key = value, got "\x1a"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.txt")
			writeFile(t, p, utf16Text(tt.text, false))
			_, err := loadConfig(resources.File{Path: p})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	// UTF-16 without a byte order mark is refused as not UTF-8, not as a
	// line of unreadable bytes.
	p := filepath.Join(t.TempDir(), "c.txt")
	writeFile(t, p, utf16Text(plain, false)[2:])
	if _, err := loadConfig(resources.File{Path: p}); err == nil || !strings.Contains(err.Error(), "c.txt:1: a NUL byte: the file is not UTF-8 text") {
		t.Errorf("error %v", err)
	}
}

// TestWindowsOutputRefused: a Windows path given for the output folder (-o,
// or the configuration's output) or another folder the run writes is a
// usage error naming where it came from, before anything is written;
// before, -o 'C:\Users\scan\out' made ./C:\Users\scan\out/ and exited 0.
func TestWindowsOutputRefused(t *testing.T) {
	record, err := filepath.Abs(testenv.Path(t, "records/C-9107617A.xml"))
	if err != nil {
		t.Fatal(err)
	}
	para, err := filepath.Abs(paraConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "cfg.txt")
	writeFile(t, cfg, []byte("[translate]\r\noutput = C:\\results\r\n"))
	work := t.TempDir()
	t.Chdir(work)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"-o", []string{record, "-o", `C:\Users\scan\out`},
			`-o: "C:\Users\scan\out" is a Windows path: on this machine give a path such as /mnt/c/Users/scan/out (where the drive is mounted); backslashes are not folder separators here`},
		{"--output, UNC", []string{record, "--output", `\\server\share\out`}, `-o: "\\server\share\out" is a Windows (UNC) path`},
		{"config output", []string{record, "-c", cfg}, `-o (from output in ` + cfg + `): "C:\results" is a Windows path`},
		{"config output, --merge", []string{"--merge", "-c", cfg}, `-o (from output in ` + cfg + `): "C:\results" is a Windows path`},
		{"--download-dir", []string{record, "-o", "out", "--download-dir", `D:/dl`}, `--download-dir: "D:/dl" is a Windows path`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(startAPI(t, translatortest.Config{}))
			e["TRANSLATE_PARA_CONFIG"] = para
			r := runCLI(t, e, tt.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, jsonText(tt.want)) {
				t.Errorf("exit %d, want %d saying %q:\n%s", r.code, exitUsage, tt.want, r.stderr)
			}
			if des, _ := os.ReadDir(work); len(des) > 0 {
				t.Errorf("the run wrote %s in the working folder", des[0].Name())
			}
		})
	}
}

// TestBackslashOutputWarned: an output folder with backslashes
// (results\run1) is taken, as the one folder it names, with a warning
// naming where it came from (PathWarnings).
func TestBackslashOutputWarned(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cfg.txt")
	writeFile(t, cfg, []byte("output = out\\run2\n"))
	for _, tt := range []struct {
		name, want string
		args       []string
	}{
		{"-o", `-o: "results\run1" has backslashes, and backslashes are not folder separators here: it makes a single folder (or file) named with them, not folders in folders (write results/run1 for those)`,
			[]string{"in", "-o", `results\run1`}},
		{"config output", `-o (from output in ` + cfg + `): "out\run2" has backslashes`, []string{"in", "-c", cfg}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _, err := parse(tt.args, env{}.get, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.PathWarnings) != 1 || !strings.Contains(s.PathWarnings[0], tt.want) {
				t.Errorf("warnings %q, want %q", s.PathWarnings, tt.want)
			}
		})
	}
	s, _, err := parse([]string{"in", "-o", "/srv/out"}, env{}.get, &bytes.Buffer{})
	if err != nil || len(s.PathWarnings) != 0 {
		t.Errorf("a path of this machine: %q, %v", s.PathWarnings, err)
	}
	// The run logs it.
	r := runCLI(t, env{"LOG_FORMAT": "json"}, "--merge", "-o", filepath.Join(t.TempDir(), `results\run1`))
	if !strings.Contains(r.stderr, `"level":"WARN","msg":"-o: \"`) || !strings.Contains(r.stderr, "has backslashes") {
		t.Errorf("the warning is not logged:\n%s", r.stderr)
	}
}
