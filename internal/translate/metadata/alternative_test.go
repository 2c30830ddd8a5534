package metadata

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/xmlsplice"
)

// TestRealRecordsAlternative: alto.Alternative mode on the real records
// labels each translation with the machine-translation tag, leaves the
// originals as they were (Remove gives the input back byte for byte), and
// a second run is a no-op without a backend call.
func TestRealRecordsAlternative(t *testing.T) {
	recs, be := loadRecords(t)
	fs := fields(t)
	for _, r := range recs {
		t.Run(r.name, func(t *testing.T) {
			opt := Options{Backend: be, Source: "cs", Target: "en", Fields: fs, Mode: alto.Alternative, File: r.name}
			once, err := Translate(context.Background(), r.src, opt)
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(once.Output, []byte(` xml:lang="en-t-cs-t0-und"`)); once.Translated != len(r.log) || n != len(r.log) {
				t.Fatalf("%d translated, %d tagged, want %d", once.Translated, n, len(r.log))
			}
			back, err := Remove(once.Output)
			if err != nil || !bytes.Equal(back, r.src) {
				t.Errorf("Remove did not give the input back (%v)", err)
			}
			be.calls = 0
			twice, err := Translate(context.Background(), once.Output, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(twice.Output, once.Output) || be.calls != 0 {
				t.Errorf("second run: %d backend calls, output changed %v", be.calls, !bytes.Equal(twice.Output, once.Output))
			}
		})
	}
}

// TestAlternativeRealWorld: the repository's public OAI-PMH Dublin Core
// record, TEI header and Goobi METS, every element holding text
// translated in alto.Alternative mode, come back byte for byte from
// Remove.
func TestAlternativeRealWorld(t *testing.T) {
	all, err := Compile("//*")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"oai_dc_getrecord.xml", "tei_bare.xml", "goobi_mets.xml"} {
		src, err := os.ReadFile("../../../testdata/realworld/" + name)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Translate(context.Background(), src, Options{Backend: &backendtest.Backend{}, Source: "de", Target: "en", Fields: []*XPath{all}, Mode: alto.Alternative})
		if err != nil {
			t.Fatal(err)
		}
		if res.Translated == 0 || strings.Count(string(res.Output), `xml:lang="en-t-de-t0-und"`) != res.Translated {
			t.Errorf("%s: %d translated", name, res.Translated)
		}
		if back, err := Remove(res.Output); err != nil || !bytes.Equal(back, src) {
			t.Errorf("%s: Remove did not give the input back (%v)", name, err)
		}
	}
}

// FuzzAlternativeRemovable: alto.Alternative mode on any document it
// accepts, every element holding text translated, writes well-formed XML
// that Remove gives back byte for byte.
func FuzzAlternativeRemovable(f *testing.F) {
	for _, s := range []string{
		`<arch:amcr xmlns:arch="https://api.aiscr.cz/schema/amcr/2.2/"><arch:popis>a</arch:popis>` + "\r\n  " + `<arch:popis xml:lang='cs' id="x">b &amp; c</arch:popis><x/></arch:amcr>`,
		"<r>\n\t<a>x<b>y</b></a>\n\t<c><![CDATA[z]]></c><d xml:lang=\"en\">e</d></r>",
	} {
		f.Add([]byte(s))
	}
	all, err := Compile("//*")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if _, err := (xmlsplice.Limits{Depth: 32, Nodes: 2000}).Parse(src); err != nil || strings.Contains(string(src), "t0") {
			return
		}
		res, err := Translate(context.Background(), src, Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en", Fields: []*XPath{all}, Mode: alto.Alternative})
		if err != nil {
			return
		}
		if _, err := xmlsplice.Parse(res.Output); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, res.Output)
		}
		back, err := Remove(res.Output)
		if err != nil || !bytes.Equal(back, src) {
			t.Fatalf("Remove: %v\ngot  %q\nwant %q", err, back, src)
		}
	})
}
