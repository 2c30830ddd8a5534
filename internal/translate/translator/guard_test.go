package translator

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chat"
	"archivekit/internal/translate/chat/chattest"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/translator/translatortest"
	"archivekit/internal/translate/vocab"
)

const guardALTO = `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v4#"><Layout><Page ID="p1" WIDTH="100" HEIGHT="100"><PrintSpace>
<TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="Archeologický"/><SP/><String CONTENT="výzkum"/></TextLine><TextLine ID="l2"><String CONTENT="sonda"/><SP/><String CONTENT="4"/></TextLine></TextBlock>
<TextBlock ID="b2"><TextLine ID="l3"><String CONTENT="Hrob"/><SP/><String CONTENT="a"/></TextLine><TextLine ID="l4"><String CONTENT="jáma"/></TextLine></TextBlock>
</PrintSpace></Page></Layout></alto>`

const guardRecord = `<?xml version="1.0" encoding="UTF-8"?>
<amcr:amcr xmlns:amcr="https://api.aiscr.cz/schema/amcr/2.2/"><amcr:projekt><amcr:popis>Záchranný archeologický výzkum</amcr:popis><amcr:poznamka>Hrob a jáma</amcr:poznamka></amcr:projekt></amcr:amcr>`

// degenerate answers every input line mentioning "hrob" with runaway
// output, like the self-hosted models of the issue; other lines get the
// stand-in's translation.
func degenerate(reply string) func(string) string {
	return degenerateFirst(reply, -1)
}

// TestDegenerateRepliesNeverWritten: a segment answered with one word
// repeated 150 times, or with 20 times its length, is retried once and
// then left untranslated: it never reaches the output file, its log rows
// say "untranslated", and the other segments are translated.
func TestDegenerateRepliesNeverWritten(t *testing.T) {
	fields, err := metadata.ParseFields("fields", []byte("//arch:popis\n//arch:poznamka\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, reply string
	}{
		{"one word 150 times", strings.TrimSpace(strings.Repeat("grave ", 150))},
		{"20 times longer", "The grave, together with the adjacent pit, was excavated during the rescue campaign of the regional museum, " +
			"whose staff documented every layer by drawing and photography before the construction of the new road began in the following spring."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be, srv := newMT(t, translatortest.Config{Garbage: degenerate(tc.reply)})
			for _, doc := range []struct {
				name string
				data string
				kind Kind
			}{{"g.alto.xml", guardALTO, KindALTO}, {"g.xml", guardRecord, KindMetadata}} {
				before := srv.Posts.Load()
				out, err := Translate(context.Background(), []byte(doc.data), doc.name, Options{Backend: be, Source: "cs", Fields: fields, Kind: doc.kind})
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(out.Data, []byte("grave grave")) || bytes.Contains(out.Data, []byte("adjacent pit")) {
					t.Fatalf("%s: the degenerate reply was written:\n%s", doc.name, out.Data)
				}
				if !bytes.Contains(out.Data, []byte("Hrob")) || !bytes.Contains(out.Data, []byte("ARCHEOLOGICKÝ")) && !bytes.Contains(out.Data, []byte("archaeological")) {
					t.Fatalf("%s: want the bad segment kept and the others translated:\n%s", doc.name, out.Data)
				}
				var untranslated, ok int
				for _, r := range out.Log {
					switch r.Status {
					case backend.Untranslated:
						untranslated++
						if r.Target != "" || !strings.Contains(strings.ToLower(r.Source), "hrob") && r.Source != "jáma" {
							t.Errorf("%s: untranslated row %+v", doc.name, r)
						}
					case backend.OK:
						ok++
					}
				}
				if untranslated == 0 || ok == 0 {
					t.Fatalf("%s: %d untranslated and %d ok rows: %+v", doc.name, untranslated, ok, out.Log)
				}
				var buf bytes.Buffer
				if err := WriteLog(&buf, out.Log, "cs", "en"); err != nil || !strings.Contains(buf.String(), ",untranslated,,untranslated,cs,given\n") ||
					!strings.HasPrefix(buf.String(), "file,page_num,line_num,text_cs,text_en,status,score,unit_status,source_lang,lang_source\n") || strings.Contains(buf.String(), "grave grave") || strings.Contains(buf.String(), "adjacent") {
					t.Fatalf("%s: log CSV:\n%s", doc.name, buf.String())
				}
				t.Logf("%s: %d requests, %d log rows", doc.name, srv.Posts.Load()-before, len(out.Log))
			}
		})
	}
}

// TestChatRetryWithoutGlossary: for a backend taking a glossary, the retry
// after a rejected reply goes without it.
func TestChatRetryWithoutGlossary(t *testing.T) {
	srv := chattest.New(chattest.Config{Reply: func(n int, _, user string) string {
		if n == 0 {
			return strings.Repeat("grave ", 150)
		}
		return chattest.Translate("", user)
	}})
	t.Cleanup(srv.Close)
	be, err := chat.New(chat.Config{BaseURL: srv.BaseURL(), Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := vocab.Parse(strings.NewReader("source_lemma,target_translation\nhrob,grave\n"), "v.csv")
	if err != nil {
		t.Fatal(err)
	}
	fields, _ := metadata.ParseFields("fields", []byte("//arch:poznamka\n"))
	out, err := Translate(context.Background(), []byte(guardRecord), "g.xml", Options{Backend: be, Source: "cs", Fields: fields, Vocabulary: v, Mode: alto.Replace})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[0].System, "hrob = grave") || strings.Contains(reqs[1].System, "hrob = grave") {
		t.Fatalf("%d requests; want the first with the glossary and the retry without", len(reqs))
	}
	if len(out.Log) != 1 || out.Log[0].Status != backend.Retried {
		t.Fatalf("log %+v", out.Log)
	}
}
