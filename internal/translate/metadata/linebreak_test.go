package metadata

import (
	"context"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/xmlsplice"
)

// replyBE answers every text with reply.
type replyBE struct{ reply string }

func (b replyBE) Name() string                                        { return "reply" }
func (b replyBE) Close() error                                        { return nil }
func (b replyBE) Supports(ctx context.Context, src, tgt string) error { return nil }
func (b replyBE) Translate(ctx context.Context, text, src, tgt string) (string, error) {
	return b.reply, nil
}

// lineRecord is a record whose lines end with nl.
func lineRecord(nl string) string {
	return strings.Join([]string{`<?xml version="1.0"?>`,
		`<amcr xmlns="https://api.aiscr.cz/schema/amcr/2.1/">`,
		"\t<dokument>",
		"\t\t<popis>kostel</popis>",
		"\t</dokument>",
		"</amcr>", ""}, nl)
}

// TestReplyLineBreaks: the line breaks of a translation ("\n", "\r\n" or
// "\r") are written as the document's own line break, in LF, CRLF and
// CR-only documents alike. Before, "X\r\nY" was written "X&#13;\nY"
// everywhere, and "X\nY" got a bare LF in a CR-only document.
func TestReplyLineBreaks(t *testing.T) {
	fs := compileAll(t, "//arch:amcr/arch:dokument/arch:popis")
	for _, doc := range []struct{ name, nl string }{{"LF", "\n"}, {"CRLF", "\r\n"}, {"CR", "\r"}} {
		for _, reply := range []string{"X\nY", "X\r\nY", "X\rY"} {
			t.Run(doc.name+" "+strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(reply), func(t *testing.T) {
				src := lineRecord(doc.nl)
				opt := Options{Backend: replyBE{reply}, Source: "cs", Target: "en", Fields: fs, Mode: alto.Replace}
				res, err := Translate(context.Background(), []byte(src), opt)
				if err != nil {
					t.Fatal(err)
				}
				want := strings.Replace(src, "<popis>kostel</popis>", "<popis>X"+doc.nl+"Y</popis>", 1)
				if string(res.Output) != want {
					t.Errorf("got\n%q\nwant\n%q", res.Output, want)
				}
			})
		}
	}
}

// TestAppendLineBreak: in append mode the translated sibling goes on a
// line of its own, begun with the document's line break and the
// original's indentation, in a CR-only document as in LF and CRLF ones
// (it was glued onto the original's line there).
func TestAppendLineBreak(t *testing.T) {
	fs := compileAll(t, "//arch:amcr/arch:dokument/arch:popis")
	for _, doc := range []struct{ name, nl string }{{"LF", "\n"}, {"CRLF", "\r\n"}, {"CR", "\r"}} {
		t.Run(doc.name, func(t *testing.T) {
			src := lineRecord(doc.nl)
			opt := Options{Backend: replyBE{"church"}, Source: "cs", Target: "en", Fields: fs, Mode: alto.Append}
			res, err := Translate(context.Background(), []byte(src), opt)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(src, "<popis>kostel</popis>",
				`<popis xml:lang="cs">kostel</popis>`+doc.nl+"\t\t"+`<popis xml:lang="en">church</popis>`, 1)
			if string(res.Output) != want {
				t.Errorf("got\n%q\nwant\n%q", res.Output, want)
			}
			if _, err := xmlsplice.Parse(res.Output); err != nil {
				t.Errorf("output does not parse: %v", err)
			}
		})
	}
}
