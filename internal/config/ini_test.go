package config

import (
	"errors"
	"strings"
	"testing"
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
