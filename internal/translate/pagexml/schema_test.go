package pagexml

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/xsd"
)

// TestSchemaValid validates each real file and what both modes write from
// it (append output, PAGE 2013 sidecar, replace output) against the
// official PAGE schema of its version with xmllint (testdata/schema,
// sources in testdata/SOURCES.md): no output has a schema error its input
// did not have (the inputs are all valid, so every output must be), and
// the same holds for each file made invalid.
func TestSchemaValid(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, f := range realFiles {
		t.Run(f.name, func(t *testing.T) {
			v, err := xsd.New(ctx, filepath.Join("testdata", "schema", "pagecontent-"+f.version+".xsd"))
			if errors.Is(err, xsd.ErrNoValidator) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer v.Close()
			valid, err := os.ReadFile(filepath.Join("testdata", "real", f.name))
			if err != nil {
				t.Fatal(err)
			}
			// The file as it is, and made invalid as exports often are:
			// its first region without Coords, a line with an id that is
			// not an xsd:ID, an element PAGE does not have in Metadata
			// (each error leaves the rest of the page validated).
			var invalid []byte
			if loc := coordsRE.FindIndex(valid); loc != nil {
				invalid = append(append(invalid, valid[:loc[0]]...), valid[loc[1]:]...)
			}
			invalid = bytes.Replace(invalid, []byte(`<TextLine id="`), []byte(`<TextLine id="1`), 1)
			invalid = bytes.Replace(invalid, []byte(`</Metadata>`), []byte(`<Foreign/></Metadata>`), 1)
			for variant, in := range map[string][]byte{"valid": valid, "invalid": invalid} {
				base := problems(t, v, dir, "in.xml", in)
				if (len(base) == 0) != (variant == "valid") {
					t.Fatalf("%s input: %d schema errors", variant, len(base))
				}
				checkModes(t, v, dir, f.src, f.tgt, in, base)
			}
		})
	}
}

// coordsRE is a Coords element (the first in the file is a region's).
var coordsRE = regexp.MustCompile(`(?s)(?:<pc:|<)Coords [^>]*/>`)

// checkModes translates in in both modes and fails on any schema error an
// output (or the PAGE 2013 sidecar) has more often than the input (base).
func checkModes(t *testing.T, v *xsd.Validator, dir, src, tgt string, in []byte, base map[string]int) {
	t.Helper()
	ctx := context.Background()
	for _, mode := range []alto.Mode{alto.Append, alto.Replace} {
		res, err := Translate(ctx, in, Options{Backend: &backendtest.Backend{}, Source: src, Target: tgt, Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		outs := map[string][]byte{string(mode): res.Output}
		if res.Sidecar != nil {
			outs["sidecar"] = res.Sidecar
		}
		for name, out := range outs {
			for msg, n := range problems(t, v, dir, name+".xml", out) {
				if n > base[msg] {
					t.Errorf("%s: new schema error: %s", name, msg)
				}
			}
		}
	}
}

// problems writes src to dir/name and counts xmllint's messages about it,
// without their file and line.
func problems(t *testing.T, v *xsd.Validator, dir, name string, src []byte) map[string]int {
	t.Helper()
	out, err := v.Problems(context.Background(), dir, name, src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
