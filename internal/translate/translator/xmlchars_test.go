package translator

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/xmlsplice"
)

// xhtmlHOCR is hocrDoc as XHTML with an XML declaration, as Tesseract
// writes hOCR.
var xhtmlHOCR = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
	strings.Replace(hocrDoc, "<html>", `<html xmlns="http://www.w3.org/1999/xhtml">`, 1)

// TestNotAllowedCharsWarned: a service whose replies end each line with
// characters that XML does not allow (U+0001, U+000B, U+FFFE) gives, in
// every format, an output without them, well-formed where it is XML, and
// one warning of the document saying how many were replaced by U+FFFD (as
// many as the output holds) and which; it reaches Options.Warn too (the
// command's WARN lines) and is in Output.Warnings (the service's
// X-Translation-Warnings).
func TestNotAllowedCharsWarned(t *testing.T) {
	fields, err := metadata.ParseFields("fields", []byte("//arch:popis\n//arch:poznamka\n"))
	if err != nil {
		t.Fatal(err)
	}
	bad := backendtest.Suffixed(" \x01\x0b\ufffe")
	be, _ := newMT(t, translatortest.Config{Garbage: func(in string) string { return bad(translatortest.Translate(in)) }})
	cases := []struct {
		name, src string
		kind      Kind
		xml       bool
		want      string // the warning, after the file name
	}{
		// ALTO, PAGE and hOCR write a translation word by word, split
		// on white space (U+000B among it): they keep U+0001 and U+FFFE
		// of each reply line (ALTO: a block; PAGE, hOCR: a line). A
		// metadata field keeps all three (two fields).
		{"g.alto.xml", guardALTO, KindALTO, true, "4 characters of the translation that XML does not allow (U+0001, U+FFFE) were replaced by U+FFFD"},
		{"p.xml", page2019, KindPAGE, true, "2 characters of the translation that XML does not allow (U+0001, U+FFFE) were replaced by U+FFFD"},
		{"h_xhtml.hocr", xhtmlHOCR, KindHOCR, true, "2 characters of the translation that XML does not allow (U+0001, U+FFFE) were replaced by U+FFFD"},
		{"h.hocr", hocrDoc, KindHOCR, false, "2 characters of the translation that XML does not allow (U+0001, U+FFFE) were replaced by U+FFFD"},
		{"g.xml", guardRecord, KindMetadata, true, "6 characters of the translation that XML does not allow (U+0001, U+000B, U+FFFE) were replaced by U+FFFD"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var warned []string
			out, err := Translate(context.Background(), []byte(c.src), c.name, Options{Backend: be, Source: "cs", Fields: fields,
				Warn: func(msg string) { warned = append(warned, msg) }})
			if err != nil {
				t.Fatal(err)
			}
			if out.Kind != c.kind {
				t.Fatalf("kind %q, want %q", out.Kind, c.kind)
			}
			data := string(out.Data)
			if i := strings.IndexFunc(data, func(r rune) bool { return !xmlsplice.IsChar(r) }); i >= 0 {
				t.Errorf("output holds %U at offset %d:\n%q", []rune(data[i:])[0], i, data)
			}
			if c.xml {
				if err := decodeAll(data); err != nil {
					t.Errorf("output is not well-formed XML: %v\n%s", err, data)
				}
			}
			var mine []string
			for _, w := range out.Warnings {
				if strings.Contains(w, "that XML does not allow") {
					mine = append(mine, w)
				}
			}
			want := c.name + ": " + c.want
			if len(mine) != 1 || mine[0] != want {
				t.Errorf("warnings %q, want one %q", out.Warnings, want)
			}
			if n := strings.Count(data, "\ufffd"); !strings.HasPrefix(want, fmt.Sprintf("%s: %d characters ", c.name, n)) {
				t.Errorf("the output holds %d U+FFFD; warning %q", n, want)
			}
			if fmt.Sprint(warned) != fmt.Sprint(out.Warnings) {
				t.Errorf("Warn got %q, Output.Warnings %q", warned, out.Warnings)
			}
		})
	}
}

// decodeAll reads every token of the XML document doc (encoding/xml, which
// refuses characters that XML does not allow).
func decodeAll(doc string) error {
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		if _, err := d.Token(); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

// TestNotAllowedWarning: the warning counts the characters that XML does
// not allow in the written rows only, names each once in code point
// order (up to five), and is empty when there are none.
func TestNotAllowedWarning(t *testing.T) {
	cases := []struct {
		name string
		rows []alto.LogRow
		want string
	}{
		{"none", []alto.LogRow{{Target: "grave and pit", Status: backend.OK}}, ""},
		{"one", []alto.LogRow{{Target: "grave\x01", Status: backend.OK}},
			"1 character of the translation that XML does not allow (U+0001) was replaced by U+FFFD"},
		{"written rows only", []alto.LogRow{
			{Target: "a\ufffe\x01", Status: backend.Retried}, {Target: "\x02", Status: backend.Untranslated}, {Target: "\x01", Status: backend.Vocabulary},
		}, "3 characters of the translation that XML does not allow (U+0001, U+FFFE) were replaced by U+FFFD"},
		{"five named", []alto.LogRow{{Target: "\x06\x05\x04\x03\x02\x01\U0010FFFF\ufffd\U0001F600", Status: backend.OK}},
			"6 characters of the translation that XML does not allow (U+0001, U+0002, U+0003, U+0004, U+0005, ...) were replaced by U+FFFD"},
	}
	for _, c := range cases {
		if got := notAllowedWarning(c.rows); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
