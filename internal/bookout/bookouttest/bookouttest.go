// Package bookouttest checks IIIF outputs for tests with independent
// readers: PyPI iiif-prezi3 (Presentation 3) and iiif-prezi with PyLD
// (Presentation 2) in the tools virtualenv of test/requirements-tools.txt
// (ARCHIVEKIT_PYTOOLS, set by make test).
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

const prezi3CollectionScript = `
import json, sys
from iiif_prezi3 import Collection
c = Collection(**json.load(open(sys.argv[1])))
print(len(c.items), "members")
`

const prezi2Script = `
import json, sys, langcodes
from pyld import jsonld
from iiif_prezi import loader

# The Presentation 2.1 context from the iiif-prezi package (its own
# loader predates PyLD's loader signature); the Image API context of the
# manifest's image services, which the package lacks, as an empty one
# (the services' terms are not what is checked); no other.
def load(url, options=None):
    if url == "http://iiif.io/api/presentation/2/context.json":
        doc = json.loads(loader.load_document_local(url)["document"])
    elif url == "http://iiif.io/api/image/2/context.json":
        doc = {"@context": {}}
    else:
        raise ValueError("unknown context: " + url)
    return {"contextUrl": None, "documentUrl": url, "contentType": "application/ld+json", "document": doc}
jsonld.set_document_loader(load)

def read(d):
    # ManifestReader checks the required properties and types as it
    # builds the objects (2.1), and expands the JSON-LD with PyLD.
    loader.ManifestReader(json.dumps(d), version="2.1").read().toJSON(top=True)

m = json.load(open(sys.argv[1]))
read(m)
canvases = {c["@id"] for s in m["sequences"] for c in s.get("canvases", [])}
n = 0
for p in sys.argv[2:]:
    d = json.load(open(p))
    assert d["@type"] == "sc:AnnotationList", p
    jsonld.expand(d)
    for a in d["resources"]:
        on = a["on"]
        if isinstance(on, dict):
            # iiif-prezi 0.3.0's reader fails on any SpecificResource
            # target: it reads the box of the oa:Choice selector instead
            # (the whole of the list is expanded by PyLD above).
            sel = on["selector"]
            assert on["@type"] == "oa:SpecificResource" and sel["@type"] == "oa:Choice", on
            assert sel["default"]["@type"] == "oa:FragmentSelector" and sel["item"]["@type"] == "oa:SvgSelector", sel
            a["on"] = on["full"] + "#" + sel["default"]["value"]
        assert a["on"].split("#")[0] in canvases, a["on"]
        lang = a["resource"].get("language")
        assert lang is None or langcodes.tag_is_valid(lang), lang
        n += 1
    read(d)
print(len(canvases), "canvases,", len(sys.argv) - 2, "annotation lists,", n, "annotations")
`

// Prezi2 loads the Presentation 2 manifest and the annotation lists
// (files) in iiif-prezi's 2.1 reader (which expands them as JSON-LD with
// the 2.1 context), checks that every annotation is on a canvas of the
// manifest and that every resource language is a valid tag for Python
// langcodes, and fails t when one does not; it skips t when
// ARCHIVEKIT_PYTOOLS is not set. It returns what the script printed
// ("33 canvases, 2 annotation lists, 5 annotations").
func Prezi2(t testing.TB, manifest string, lists ...string) string {
	t.Helper()
	return run(t, "iiif-prezi", prezi2Script, manifest, lists...)
}

// Prezi3 loads the manifest and the annotation pages (files) in
// iiif-prezi3's Presentation 3 models, checks every body language is a
// valid tag for Python langcodes and fails t when one does not load; it
// skips t when ARCHIVEKIT_PYTOOLS is not set. It returns what the script
// printed ("4 canvases").
func Prezi3(t testing.TB, manifest string, pages ...string) string {
	t.Helper()
	return run(t, "iiif-prezi3", prezi3Script, manifest, pages...)
}

// Prezi3Collection loads the collection in iiif-prezi3's Presentation 3
// model and fails t when it does not load; it skips t when
// ARCHIVEKIT_PYTOOLS is not set. It returns what the script printed
// ("2 members").
func Prezi3Collection(t testing.TB, collection string) string {
	t.Helper()
	return run(t, "iiif-prezi3", prezi3CollectionScript, collection)
}

// run runs script in the tools virtualenv's Python with the manifest and
// the files as arguments.
func run(t testing.TB, lib, script, manifest string, files ...string) string {
	t.Helper()
	py := os.Getenv("ARCHIVEKIT_PYTOOLS")
	if py == "" {
		t.Skip("ARCHIVEKIT_PYTOOLS not set (make test sets it): " + lib + " not available")
	}
	out, err := exec.Command(py, append([]string{"-c", script, manifest}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", lib, err, out)
	}
	return strings.TrimSpace(string(out))
}
