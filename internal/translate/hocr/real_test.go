package hocr

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	nethtml "golang.org/x/net/html"

	"archivekit/internal/translate/backend/backendtest"
)

// realFiles are the hOCR files of testdata/real (testdata/SOURCES.md),
// one per producer, with their source language and their lines with text
// (counted independently with Python's html.parser: lines holding word
// text or text of their own).
var realFiles = []struct {
	name, src, tgt string
	lines          int
}{
	{"tesseract4_german_hocrjs-309515696-2.hocr", "de", "en", 41},
	{"tesseract3_english_hocrtools-tess.hocr", "en", "de", 37},
	{"ocropy_german_hocrtools-litver.hocr", "de", "en", 105},
	{"gcv_english_gcv2hocr-1.hocr", "en", "de", 22},
}

// TestRealFiles translates each real file through the stand-in backend:
// every line with text is translated, and the output differs from the
// input only in text runs, in the lang attribute of ocr_page and ocr_par
// elements and in ocr-capabilities: token by token, putting those back
// gives the input byte for byte.
func TestRealFiles(t *testing.T) {
	for _, f := range realFiles {
		t.Run(f.name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", "real", f.name))
			if err != nil {
				t.Fatal(err)
			}
			if !IsHOCR(in) {
				t.Error("IsHOCR = false")
			}
			res, err := Translate(context.Background(), in, Options{Backend: &backendtest.Backend{}, Source: f.src, Target: f.tgt, File: f.name})
			if err != nil {
				t.Fatal(err)
			}
			st := res.Stats
			if st.Units != f.lines || st.Translated != f.lines {
				t.Errorf("%d lines with text, %d translated; want %d", st.Units, st.Translated, f.lines)
			}
			texts := sameBut(t, in, res.Output, res.Tag)
			t.Logf("%s: %d pages, %d lines, %d text runs changed, %d backend calls, tag %s", f.name, st.Pages, st.Translated, texts, st.Calls, res.Tag)
			if texts == 0 {
				t.Error("no text changed")
			}
		})
	}
}

// sameBut checks that out has the tokens of in, with the same bytes
// except text runs, the lang attribute of ocr_page and ocr_par start tags
// (set to tag) and the ocr-capabilities content (ocrp_lang added); it
// returns how many text runs differ. A text run is all the text between
// two other tokens, however the tokenizer splits it (a translation written
// into the first of two adjacent text tokens leaves one).
func sameBut(t *testing.T, in, out []byte, tag string) int {
	t.Helper()
	ti, ri, ki, xi := tokens(in)
	to, ro, ko, xo := tokens(out)
	if len(ti) != len(to) {
		t.Fatalf("%d tokens besides text in, %d out", len(ti), len(to))
	}
	texts := 0
	for n := range xi {
		if xi[n] != xo[n] {
			texts++
		}
	}
	for n := range ti {
		if ti[n] != to[n] {
			t.Fatalf("token %d: %v in, %v out", n, ti[n], to[n])
		}
		if ri[n] == ro[n] {
			continue
		}
		classes := strings.Fields(attrOf(ki[n], "class"))
		switch {
		case hasAny(classes, "ocr_page", "ocr_par") && attrOf(ko[n], "lang") == tag && withoutAttr(ki[n], "lang") == withoutAttr(ko[n], "lang"):
		case attrOf(ki[n], "name") == "ocr-capabilities" && attrOf(ko[n], "content") == strings.TrimRight(attrOf(ki[n], "content"), " \t\r\n\f")+" ocrp_lang":
		default:
			t.Fatalf("token %d changed:\n%s\n%s", n, ri[n], ro[n])
		}
	}
	return texts
}

// tokens splits an HTML document into its tokens other than text (types,
// raw bytes, parsed) and the text runs around them (one more than those).
func tokens(b []byte) (types []nethtml.TokenType, raws []string, toks []nethtml.Token, texts []string) {
	z := nethtml.NewTokenizer(bytes.NewReader(b))
	run := ""
	for {
		tt := z.Next()
		if tt == nethtml.ErrorToken {
			return types, raws, toks, append(texts, run)
		}
		if tt == nethtml.TextToken {
			run += string(z.Raw())
			continue
		}
		raw := string(z.Raw())
		types, raws, toks, texts = append(types, tt), append(raws, raw), append(toks, z.Token()), append(texts, run)
		run = ""
	}
}

// withoutAttr renders a start tag's name and attributes but one.
func withoutAttr(tok nethtml.Token, name string) string {
	var sb strings.Builder
	sb.WriteString(tok.Data)
	for _, a := range tok.Attr {
		if a.Key != name {
			sb.WriteString(" " + a.Key + "=" + a.Val)
		}
	}
	return sb.String()
}
