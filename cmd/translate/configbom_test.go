package main

import (
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/resources"
)

// TestConfigByteOrderMark: a configuration saved with a UTF-8 byte order
// mark (as Windows editors write it) is read, with or without a section
// header; before, it was refused with `tcb-bom.txt:2: expected key = value,
// got "\ufeff[translate]"`.
func TestConfigByteOrderMark(t *testing.T) {
	for _, tt := range []struct{ name, text string }{
		{"section", "\ufeff[translate]\r\nsource_lang = de\r\n"},
		{"no section", "\ufeffsource_lang = de\n"},
		{"comment first", "\ufeff# mine\nsource_lang = de\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tcb-bom.txt")
			writeFile(t, p, []byte(tt.text))
			f, err := loadConfig(resources.File{Path: p})
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := configValues(f); got["source_lang"] != "de" {
				t.Errorf("source_lang = %q, want de", got["source_lang"])
			}
		})
	}
}

// TestConfigErrorLine: an error in a configuration names the file's own
// line, whether or not the file has a section header or a byte order mark
// (a file without a header was read with one added in front, and its
// errors were one line late).
func TestConfigErrorLine(t *testing.T) {
	for _, tt := range []struct{ name, text, want string }{
		{"section", "[translate]\nsource_lang = de\nbad\n", "c.txt:3: expected key = value"},
		{"no section", "source_lang = de\nbad\n", "c.txt:2: expected key = value"},
		{"no section, first line", "bad\n", "c.txt:1: expected key = value"},
		{"mark and no section", "\ufeffsource_lang = de\nbad\n", "c.txt:2: expected key = value"},
		{"mark, bad first line", "\ufeff[translate\n", "c.txt:1: section header"},
		{"no section, duplicate", "a = 1\na = 2\n", `c.txt:2: duplicate key "a"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "c.txt")
			writeFile(t, p, []byte(tt.text))
			_, err := loadConfig(resources.File{Path: p})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
