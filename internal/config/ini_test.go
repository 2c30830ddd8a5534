package config

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	utf16pkg "unicode/utf16"
)

const sample = `# comment
; another comment
[DEFAULT]
shared = from-default

[SETUP]
Files_Format = png
seed: 420
raw = False
inner = yes
note = a # not a comment
empty =
multi = first
    second

[OTHER]
shared = own
`

func TestParseDialect(t *testing.T) {
	f, err := Parse("sample.txt", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ sec, key, want string }{
		{"SETUP", "files_format", "png"},
		{"SETUP", "FILES_FORMAT", "png"},
		{"SETUP", "seed", "420"},
		{"SETUP", "note", "a # not a comment"},
		{"SETUP", "empty", ""},
		{"SETUP", "multi", "first\nsecond"},
		{"SETUP", "shared", "from-default"},
		{"OTHER", "shared", "own"},
	}
	for _, tc := range tests {
		got, ok := f.Get(tc.sec, tc.key)
		if !ok || got != tc.want {
			t.Errorf("[%s] %s = %q, %v; want %q", tc.sec, tc.key, got, ok, tc.want)
		}
	}
	if _, ok := f.Get("setup", "seed"); ok {
		t.Error("section names must be case-sensitive, as in configparser")
	}
	if got := strings.Join(f.Sections(), ","); got != "SETUP,OTHER" {
		t.Errorf("sections %q", got)
	}
}

func TestTypedValues(t *testing.T) {
	f, _ := Parse("sample.txt", strings.NewReader(sample))
	if b, err := f.Bool("SETUP", "raw", true); err != nil || b {
		t.Errorf("raw = %v, %v", b, err)
	}
	if b, err := f.Bool("SETUP", "inner", false); err != nil || !b {
		t.Errorf("inner = %v, %v", b, err)
	}
	if b, err := f.Bool("SETUP", "absent", true); err != nil || !b {
		t.Errorf("absent bool should take the default")
	}
	if n, err := f.Int("SETUP", "seed", 0); err != nil || n != 420 {
		t.Errorf("seed = %v, %v", n, err)
	}
	_, err := f.Int("SETUP", "files_format", 0)
	var ve *ValueError
	if !errors.As(err, &ve) || ve.File != "sample.txt" || ve.Section != "SETUP" || ve.Key != "files_format" || ve.Value != "png" {
		t.Fatalf("error %v does not name file, section, key and value", err)
	}
	if !strings.Contains(err.Error(), `sample.txt: [SETUP] files_format = "png"`) {
		t.Errorf("message %q", err)
	}
}

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"True": true, "true": true, "YES": true, "1": true, "on": true, "False": false, "no": false, "0": false, "off": false} {
		if got, ok := ParseBool(in); !ok || got != want {
			t.Errorf("ParseBool(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "2", "truthy", "nope"} {
		if _, ok := ParseBool(in); ok {
			t.Errorf("ParseBool(%q) accepted", in)
		}
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := map[string]string{
		"k = v\n":             "c.txt:1: key \"k\" outside any section",
		"[A]\n[A]\n":          "c.txt:2: duplicate section [A]",
		"[A\n":                "c.txt:1: section header",
		"[A]\nnovalue\n":      "c.txt:2: expected key = value",
		"[A]\nk=1\n\nK = 2\n": "c.txt:4: duplicate key \"k\" in [A]",
	}
	for in, want := range tests {
		_, err := Parse("c.txt", strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}

// utf16 encodes s as UTF-16 with a byte order mark, little-endian (as
// Notepad's "Unicode" saves) or big-endian.
func utf16(s string, bigEndian bool) []byte {
	out := []byte{0xFF, 0xFE}
	if bigEndian {
		out = []byte{0xFE, 0xFF}
	}
	for _, u := range utf16pkg.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

// TestWindowsFiles: configuration files as Windows editors save them are
// read: UTF-16 with a byte order mark (before, `cfg_utf16.txt:1: expected
// key = value, got "\xff\xfe#\x00 \x00p\x00a…"`), UTF-8 with one, and a
// Ctrl-Z as the very last byte (before, `:3: expected key = value, got
// "\x1a"`).
func TestWindowsFiles(t *testing.T) {
	const text = "# pageclass ü\r\n[SETUP]\r\nfiles_format = tif\r\nnote = Grüße 文書 \U0001F4DC\r\n"
	tests := []struct {
		name string
		data []byte
	}{
		{"UTF-16 LE", utf16(text, false)},
		{"UTF-16 BE", utf16(text, true)},
		{"UTF-8 mark", []byte("\ufeff" + text)},
		{"Ctrl-Z", []byte(text + "\x1a")},
		{"UTF-16 LE and Ctrl-Z", utf16(text+"\x1a", false)},
		{"UTF-8 mark and Ctrl-Z", []byte("\ufeff" + text + "\x1a")},
		{"Ctrl-Z, no newline", []byte(strings.TrimSuffix(text, "\r\n") + "\x1a")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("cfg.txt", bytes.NewReader(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if got := f.String("SETUP", "files_format", ""); got != "tif" {
				t.Errorf("files_format = %q, want tif", got)
			}
			if got := f.String("SETUP", "note", ""); got != "Grüße 文書 \U0001F4DC" {
				t.Errorf("note = %q", got)
			}
		})
	}
}

// TestWindowsFilesRefused: a Ctrl-Z anywhere but at the very end is an
// error of its line, and text with NUL bytes (UTF-16 without a byte order
// mark, UTF-32) is refused as not UTF-8, naming the file, not as a line of
// unreadable bytes.
func TestWindowsFilesRefused(t *testing.T) {
	noMark := utf16("[A]\nk = v\n", false)[2:]
	utf32 := []byte{0xFF, 0xFE, 0, 0, '[', 0, 0, 0}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"Ctrl-Z, then a newline", []byte("[A]\nk = v\n\x1a\n"), `c.txt:3: expected key = value, got "\x1a"`},
		{"two Ctrl-Z", []byte("[A]\nk = v\n\x1a\x1a"), `c.txt:3: expected key = value, got "\x1a"`},
		{"Ctrl-Z inside", []byte("[A]\n\x1a\nk = v\n"), `c.txt:2: expected key = value, got "\x1a"`},
		{"UTF-16 without a mark", noMark, "c.txt:1: a NUL byte: the file is not UTF-8 text"},
		{"UTF-32", utf32, "c.txt:1: a NUL byte: the file is not UTF-8 text"},
		{"NUL on line 2", []byte("[A]\nk = \x00\n"), "c.txt:2: a NUL byte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.txt", bytes.NewReader(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestDecode: Decode gives UTF-8 text that decodes to itself, keeping a
// trailing Ctrl-Z for Parse.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"UTF-8", []byte("a = 1\n"), "a = 1\n"},
		{"UTF-8 mark", []byte("\ufeffa = 1\n"), "a = 1\n"},
		{"UTF-16 LE", utf16("a = ü\n\x1a", false), "a = ü\n\x1a"},
		{"UTF-16 BE", utf16("a = ü\n", true), "a = ü\n"},
		{"empty", nil, ""},
	} {
		got, err := Decode("c.txt", tc.data)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: Decode = %q, %v; want %q", tc.name, got, err, tc.want)
			continue
		}
		if again, err := Decode("c.txt", got); err != nil || !bytes.Equal(again, got) {
			t.Errorf("%s: decoded twice = %q, %v", tc.name, again, err)
		}
	}
}

// TestLoadBounded: a configuration path naming a device is refused unread,
// and text over MaxSize is refused, not read whole (/dev/zero was read
// until memory ran out).
func TestLoadBounded(t *testing.T) {
	if _, err := Load("/dev/zero"); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Load(/dev/zero): %v", err)
	}
	if _, err := Parse("big.txt", io.LimitReader(zeros{}, MaxSize+10)); err == nil || !strings.Contains(err.Error(), "not a configuration file") {
		t.Errorf("Parse of %d bytes: %v", MaxSize+10, err)
	}
}

// zeros reads as many NUL bytes as asked.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
