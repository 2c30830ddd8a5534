package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run(nil, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "--document is required") {
		t.Errorf("no --document: exit %d %q", rc, errb.String())
	}
	errb.Reset()
	if rc := run([]string{"--document", filepath.Join(t.TempDir(), "absent.json")}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "absent.json") {
		t.Errorf("absent record: exit %d %q", rc, errb.String())
	}
}
