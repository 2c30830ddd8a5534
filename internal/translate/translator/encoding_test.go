package translator

import (
	"bytes"
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/xmlsplice"
)

// TestDeclaredEncodings: ALTO in windows-1252 and ISO-8859-2 and a record
// in UTF-16 are translated and written back in their own encoding, every
// byte outside the translated text unchanged; an unknown encoding is an
// error naming it.
func TestDeclaredEncodings(t *testing.T) {
	altoDoc := func(label, a, b string) string {
		return `<?xml version="1.0" encoding="` + label + `"?>` + "\r\n" +
			`<alto xmlns="http://www.loc.gov/standards/alto/ns-v2#"><Layout><Page ID="P1"><PrintSpace>` + "\r\n" +
			`<TextBlock ID="B1"><TextLine ID="L1"><String CONTENT="` + a + `"/><SP/><String CONTENT="` + b + `"/></TextLine></TextBlock>` + "\r\n" +
			"</PrintSpace></Page></Layout></alto>\r\n"
	}
	record := strings.Replace(string(readShared(t, "records/C-9100725A.xml")), `encoding="utf-8"`, `encoding="UTF-16"`, 1)
	if !strings.Contains(record, `encoding="UTF-16"`) {
		t.Fatal("sample record has no UTF-8 declaration to relabel")
	}
	fields := loadFields(t)
	for _, c := range []struct {
		name, src, text string
		enc             interface{ Bytes([]byte) ([]byte, error) }
		want            string // in the decoded output
		label           string
	}{
		{"windows-1252 ALTO", "de", altoDoc("windows-1252", "Kirchenbücher", "Grüße"), charmap.Windows1252.NewEncoder(), `CONTENT="KIRCHENBÜCHER"`, "windows-1252"},
		{"ISO-8859-2 ALTO", "cs", altoDoc("ISO-8859-2", "archeologický", "výzkum"), charmap.ISO8859_2.NewEncoder(), `CONTENT="archaeological"`, "ISO-8859-2"},
		{"UTF-16 record", "cs", "\ufeff" + record, unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM).NewEncoder(), "", "UTF-16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, err := c.enc.Bytes([]byte(c.text))
			if err != nil {
				t.Fatal(err)
			}
			be, _ := newMT(t, translatortest.Config{})
			out, err := Translate(context.Background(), src, "doc.xml", Options{Backend: be, Source: c.src, Target: "en", Fields: fields})
			if err != nil {
				t.Fatal(err)
			}
			if out.Encoding != c.label || out.Stats.Translated == 0 {
				t.Fatalf("encoding %q, %d translated", out.Encoding, out.Stats.Translated)
			}
			in, _, _ := xmlsplice.Decode(src)
			got, enc, err := xmlsplice.Decode(out.Data)
			if err != nil || enc.Name != c.label {
				t.Fatalf("output not in %s: %v", c.label, err)
			}
			if c.want != "" && !bytes.Contains(got, []byte(c.want)) {
				t.Errorf("output lacks %s: %s", c.want, got)
			}
			if out.Kind == KindALTO {
				if !bytes.Equal(alto.MaskTranslatable(in), alto.MaskTranslatable(got)) {
					t.Error("bytes outside the translated text changed")
				}
				// The output's own bytes: the declaration and line ends as they were.
				decl, _ := c.enc.Bytes([]byte(`<?xml version="1.0" encoding="` + c.label + `"?>` + "\r\n"))
				if !bytes.HasPrefix(out.Data, decl) {
					t.Errorf("declaration bytes changed: %q", out.Data[:40])
				}
			} else if !bytes.Equal(targetsBlanked(t, in, fields), targetsBlanked(t, got, fields)) {
				t.Error("bytes outside the targeted fields changed")
			}
		})
	}
	be, _ := newMT(t, translatortest.Config{})
	_, err := Translate(context.Background(), []byte(altoDoc("x-mac-klingon", "a", "b")), "k.alto.xml", Options{Backend: be, Source: "cs", Target: "en"})
	if !errors.Is(err, xmlsplice.ErrEncoding) || !strings.Contains(err.Error(), "x-mac-klingon") {
		t.Errorf("unknown encoding: %v", err)
	}
}

// TestCRLFRecordKeepsLineEnds: a record whose lines end with CRLF and
// whose field holds a line break is written with CRLF line ends only, in
// every mode (the translated field's break was a bare LF, mixing the two).
func TestCRLFRecordKeepsLineEnds(t *testing.T) {
	lf := strings.ReplaceAll(string(readShared(t, "records/C-9124095A.xml")), "\r\n", "\n")
	src := []byte(strings.ReplaceAll(lf, "\n", "\r\n"))
	bareLF := regexp.MustCompile(`(^|[^\r])\n`)
	for _, mode := range []alto.Mode{alto.Replace, alto.Append, alto.Alternative} {
		out, err := Translate(context.Background(), src, "r.xml", Options{Backend: standIn(t), Source: "cs", Fields: loadFields(t), Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(bareLF.FindAll(out.Data, -1)); n > 0 || out.Stats.Translated == 0 {
			t.Errorf("%s: %d bare line feeds in the output (%d units translated)", mode, n, out.Stats.Translated)
		}
	}
}
