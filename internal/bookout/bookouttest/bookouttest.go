// Package bookouttest checks IIIF outputs for tests with an independent
// reader: PyPI iiif-prezi3 in the tools virtualenv of
// test/requirements-tools.txt (ARCHIVEKIT_PYTOOLS, set by make test).
package bookouttest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

const prezi3Script = `
import json, sys, langcodes
from iiif_prezi3 import AnnotationPage, Manifest
for p in sys.argv[2:]:
    d = json.load(open(p))
    page = AnnotationPage(**d)
    assert len(page.items) == len(d["items"]), p
    for a in d["items"]:
        lang = a["body"].get("language")
        assert lang is None or langcodes.tag_is_valid(lang), lang
m = Manifest(**json.load(open(sys.argv[1])))
print(len(m.items), "canvases")
`

// Prezi3 loads the manifest and the annotation pages (files) in
// iiif-prezi3's Presentation 3 models, checks every body language is a
// valid tag for Python langcodes and fails t when one does not load; it
// skips t when ARCHIVEKIT_PYTOOLS is not set. It returns what the script
// printed ("4 canvases").
func Prezi3(t testing.TB, manifest string, pages ...string) string {
	t.Helper()
	py := os.Getenv("ARCHIVEKIT_PYTOOLS")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTOOLS not set (make test sets it): iiif-prezi3 not available")
	}
	out, err := exec.Command(py, append([]string{"-c", prezi3Script, manifest}, pages...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("iiif-prezi3: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}
