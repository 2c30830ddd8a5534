package pagexml

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/xmlsplice"
)

// realFiles are the PAGE files of testdata/real (testdata/SOURCES.md):
// one per producer, with its source language, its version and the
// number of lines with text.
var realFiles = []struct {
	name, src, tgt, version string
	lines                   int
	// regions: those with a TextEquiv of their own (a transcription of
	// the whole region), which append mode gives one more.
	regions int
}{
	{"ocrd-gt_german_kant1784-0017.page.xml", "de", "en", "2019-07-15", 24, 11},
	{"transkribus_spanish_170025120000003-0074.page.xml", "es", "en", "2013-07-15", 44, 0},
	{"escriptorium_syriac_onb-syr1-0001.page.xml", "syc", "en", "2019-07-15", 12, 4},
	{"prima_english_simplepage.page.xml", "en", "de", "2017-07-15", 12, 0},
}

// TestRealFiles translates each real file through the stand-in backend in
// append mode: every line with text gets its translation, the output is
// well-formed, and removing the added TextEquivs gives back the input
// byte for byte (the lines' and the regions' own); PAGE 2013 keeps the input and writes a sidecar with the
// same ids in the same order. A second run adds nothing. Replace mode
// keeps every element and id too.
func TestRealFiles(t *testing.T) {
	for _, f := range realFiles {
		t.Run(f.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "real", f.name))
			if err != nil {
				t.Fatal(err)
			}
			if Version(in) != f.version {
				t.Errorf("Version = %q, want %q", Version(in), f.version)
			}
			be := &backendtest.Backend{}
			opt := Options{Backend: be, Source: f.src, Target: f.tgt, File: f.name}
			res, err := Translate(context.Background(), in, opt)
			if err != nil {
				t.Fatal(err)
			}
			st := res.Stats
			if st.Units != f.lines || st.Translated != f.lines || len(res.Log) != f.lines {
				t.Errorf("%d lines with text, %d translated, %d log rows; want %d", st.Units, st.Translated, len(res.Log), f.lines)
			}
			if !strings.HasPrefix(res.Tag, f.tgt+"-t-"+f.src+"-t0-") {
				t.Errorf("tag %q", res.Tag)
			}
			t.Logf("%s: PAGE %s, %d pages, %d lines, %d backend calls, tag %s", f.name, res.Version, st.Pages, st.Translated, st.Calls, res.Tag)
			if res.Sidecar != nil {
				if string(res.Output) != string(in) {
					t.Fatal("PAGE 2013: the input was changed")
				}
				if a, b := ids(t, in), ids(t, res.Sidecar); a != b {
					t.Errorf("sidecar ids differ from the input's")
				}
				return
			}
			added := strings.Count(string(res.Output), `comments="`+res.Tag+`"`)
			if added != f.lines+f.regions {
				t.Errorf("%d TextEquivs added, want %d (lines) + %d (regions)", added, f.lines, f.regions)
			}
			back, err := Remove(res.Output)
			if err != nil || string(back) != string(in) {
				t.Fatalf("Remove does not give back the input: %v", err)
			}
			again, err := Translate(context.Background(), res.Output, opt)
			if err != nil || string(again.Output) != string(res.Output) || again.Stats.AlreadyDone != f.lines {
				t.Errorf("second run: %v, %+v", err, again.Stats)
			}
			opt.Mode = alto.Replace
			rep, err := Translate(context.Background(), in, opt)
			if err != nil {
				t.Fatal(err)
			}
			if ids(t, rep.Output) != ids(t, in) {
				t.Error("replace mode changed the ids")
			}
			// Every language stated on a translated line, region or word
			// now names the target (kant: 183 "German" become "English").
			if src, tgt := languageNames[f.src], languageNames[f.tgt]; src != "" {
				if n := strings.Count(string(rep.Output), `="`+src+`"`); n != 0 {
					t.Errorf("replace mode left %d attributes naming %s", n, src)
				}
				if a, b := strings.Count(string(in), `="`+src+`"`), strings.Count(string(rep.Output), `="`+tgt+`"`); a != b-strings.Count(string(in), `="`+tgt+`"`) {
					t.Errorf("%d attributes named %s, %d name %s after replace", a, src, b, tgt)
				}
			}
		})
	}
}

// ids lists the element names and ids of a document, in order.
func ids(t *testing.T, src []byte) string {
	t.Helper()
	doc, err := xmlsplice.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	doc.Root.Walk(func(n *xmlsplice.Node) bool {
		sb.WriteString(n.Name.Local)
		if a, ok := n.Attr("", "id"); ok {
			sb.WriteString("#" + a.Value)
		}
		sb.WriteByte(' ')
		return true
	})
	return sb.String()
}
