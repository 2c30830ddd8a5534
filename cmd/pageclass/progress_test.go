package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// progressLine is a progress line's message: "pageclass: done/total ...".
var progressLine = regexp.MustCompile(`^pageclass: \d+/\d+ `)

// TestProgressNamesNextFile: off a terminal the progress lines (JSON log
// records) name the file whose pages come next in the tables, not one
// opened ahead of them: the line written as the k-th of n one-page files
// is done names file k+1 (in the order of the tables' rows), and the last
// line the last file.
func TestProgressNamesNextFile(t *testing.T) {
	barInterval = time.Nanosecond // a line at every page
	defer func() { barInterval = 0 }()
	e := newEnv(t, nil)
	e.model(t, "v4.4")
	var names []string
	for _, p := range e.linkPages(t, 1) {
		rel, err := filepath.Rel(e.in, p)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.ToSlash(rel))
	}
	code, log := e.run(t, "--dir")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, log)
	}
	var got []string
	for _, line := range strings.Split(log, "\n") {
		var rec struct{ Msg string }
		if json.Unmarshal([]byte(line), &rec) != nil || !progressLine.MatchString(rec.Msg) {
			continue
		}
		got = append(got, rec.Msg)
	}
	if len(got) != len(names) {
		t.Fatalf("%d progress lines for %d files:\n%s", len(got), len(names), strings.Join(got, "\n"))
	}
	for k, line := range got {
		want := names[min(k+1, len(names)-1)]
		if !strings.HasPrefix(line, fmt.Sprintf("pageclass: %d/%d ", k+1, len(names))) || !strings.HasSuffix(strings.TrimSpace(line), want) {
			t.Errorf("line %d %q, want %d/%d naming %s", k+1, line, k+1, len(names), want)
		}
	}
}
