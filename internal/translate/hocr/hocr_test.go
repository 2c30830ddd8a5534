package hocr

import (
	"context"
	"errors"
	"strings"
	"testing"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend/backendtest"
	"archivekit/internal/translate/xmlsplice"
)

const tess = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
    "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
 <head>
  <title></title>
  <meta http-equiv="Content-Type" content="text/html;charset=utf-8"/>
  <meta name='ocr-system' content='tesseract 5.3.0' />
  <meta name='ocr-capabilities' content='ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf'/>
 </head>
 <body>
  <div class='ocr_page' id='page_1' title='image "a.png"; bbox 0 0 10 10; ppageno 0'>
   <div class='ocr_carea' id='block_1_1' title="bbox 0 0 10 10">
    <p class='ocr_par' id='par_1_1' lang='ces' title="bbox 0 0 10 10">
     <span class='ocr_line' id='line_1_1' title="bbox 0 0 10 10; baseline 0 0">
      <span class='ocrx_word' id='word_1_1' title='bbox 0 0 1 1; x_wconf 95'>Hrob</span>
      <span class='ocrx_word' id='word_1_2' title='bbox 1 0 2 1; x_wconf 95'><strong>a</strong></span>
      <span class='ocrx_word' id='word_1_3' title='bbox 2 0 3 1; x_wconf 95'>jáma<span class='ocr_lstm_choices'><span class='ocrx_cinfo' title='x_confs 90'>jama</span></span></span>
     </span>
     <span class='ocr_caption' id='line_1_2' title="bbox 0 0 10 10">
      <span class='ocrx_word' id='word_1_4' title='bbox 0 0 1 1'>sonda &amp; kostel</span>
     </span>
    </p>
   </div>
  </div>
 </body>
</html>
`

func run(t *testing.T, src string) *Result {
	t.Helper()
	res, err := Translate(context.Background(), []byte(src), Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en", File: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestTesseract: words get the translation's tokens one each, the last
// word the rest; the choices are left; lang and ocrp_lang are set; every
// other byte is the input's.
func TestTesseract(t *testing.T) {
	res := run(t, tess)
	want := strings.NewReplacer(
		"content='ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf'", "content='ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf ocrp_lang'",
		"title='image \"a.png\"; bbox 0 0 10 10; ppageno 0'>", "title='image \"a.png\"; bbox 0 0 10 10; ppageno 0' lang=\"en-t-cs-t0-und\">",
		"lang='ces'", "lang='en-t-cs-t0-und'",
		">Hrob<", ">grave<",
		"<strong>a</strong>", "<strong>and</strong>",
		">jáma<span", ">pit<span",
		">sonda &amp; kostel<", ">trench &amp; KOSTEL<",
	).Replace(tess)
	if string(res.Output) != want {
		t.Errorf("output:\n%s\nwant:\n%s", res.Output, want)
	}
	if res.Stats.Translated != 2 || res.Stats.Calls != 1 || len(res.Log) != 2 || res.Log[1].Line != "line_1_2" || res.Log[0].Source != "Hrob a jáma" {
		t.Errorf("stats %+v, log %+v", res.Stats, res.Log)
	}
}

// TestNotWellFormed: HTML that is not XML (unquoted and valueless
// attributes, unclosed p, text straight in the line, as ocropus writes):
// each run of text in a line takes a token, the last the rest.
func TestNotWellFormed(t *testing.T) {
	in := "<html><head><meta name=ocr-capabilities content=ocr_line></head><body><div class=ocr_page title='bbox 0 0 9 9'><p class=ocr_par lang><span class=ocr_line title='bbox 0 0 9 9'>hrob a <b>jáma</b></span><br><p class=ocr_par><span class='ocr_line'>v</span></body></html>"
	res := run(t, in)
	want := `<html><head><meta name=ocr-capabilities content="ocr_line ocrp_lang"></head><body><div class=ocr_page title='bbox 0 0 9 9' lang="en-t-cs-t0-und"><p class=ocr_par lang="en-t-cs-t0-und"><span class=ocr_line title='bbox 0 0 9 9'>grave <b>and pit</b></span><br><p class=ocr_par lang="en-t-cs-t0-und"><span class='ocr_line'>in</span></body></html>`
	if string(res.Output) != want {
		t.Errorf("output:\n%s\nwant:\n%s", res.Output, want)
	}
}

func TestNotHOCR(t *testing.T) {
	if _, err := Translate(context.Background(), []byte("<html><body><p>hrob</p></body></html>"), Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en"}); err == nil {
		t.Error("no error for HTML without ocr_page")
	}
	if !IsHOCR([]byte(tess)) || IsHOCR([]byte(`<PcGts/>`)) {
		t.Error("IsHOCR")
	}
}

// TestCharBoxes: a word whose text is all in ocrx_cinfo character boxes
// (Tesseract's hocr_char_boxes) keeps them and takes no token, so the
// translation's tokens all land in words with text of their own.
func TestCharBoxes(t *testing.T) {
	in := "<div class='ocr_page'><span class='ocr_line'><span class='ocrx_word'>hrob</span> <span class='ocrx_word'><span class='ocrx_cinfo'>x</span></span> <span class='ocrx_word'>jáma</span> <span class='ocrx_word'><span class='ocrx_cinfo'>y</span></span></span></div>"
	res := run(t, "<html><body>"+in+"</body></html>")
	want := "<span class='ocrx_word'>grave</span> <span class='ocrx_word'><span class='ocrx_cinfo'>x</span></span> <span class='ocrx_word'>pit</span> <span class='ocrx_word'><span class='ocrx_cinfo'>y</span></span>"
	if !strings.Contains(string(res.Output), want) {
		t.Errorf("output:\n%s\nwant it to hold:\n%s", res.Output, want)
	}
}

// The source-language order: a short paragraph takes its own lang (ces:
// Czech), a paragraph without one the first page's, then the default;
// never the html element's lang, which Tesseract writes as "en" whatever
// the text.
func TestLangOrder(t *testing.T) {
	noPar := strings.Replace(tess, " lang='ces'", "", 1)
	cases := []struct {
		name, src string
		want      string
	}{
		{"paragraph lang", tess, "cs/element"},
		{"page lang", strings.Replace(noPar, "ppageno 0'", "ppageno 0' lang='deu'", 1), "de/document"},
		{"default, not the html lang", noPar, "cs/default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Translate(context.Background(), []byte(c.src), Options{Backend: &backendtest.Backend{}, Source: "auto", Target: "en",
				Detector: fixedDetector{"sk", 0.9}, File: "t"})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res.Log {
				if got := r.Lang + "/" + string(r.LangSource); got != c.want {
					t.Errorf("line %s: %s, want %s", r.Line, got, c.want)
				}
			}
			if len(res.Log) != 2 || res.LangSources[alto.LangSource(strings.Split(c.want, "/")[1])] != 2 {
				t.Errorf("%d rows, LangSources %v", len(res.Log), res.LangSources)
			}
		})
	}
}

type fixedDetector struct {
	lang string
	conf float64
}

func (d fixedDetector) Detect(string) (string, float64) { return d.lang, d.conf }

// TestInternalSubsetRefused: Tesseract's XHTML DOCTYPE is taken (TestTesseract),
// but a DOCTYPE with an internal subset, which can declare entities nothing
// here expands (&e; would be sent and written back as text), is refused as
// the XML formats refuse a DTD (xmlsplice.ErrDTD: translate-api's
// dtd_refused).
func TestInternalSubsetRefused(t *testing.T) {
	for _, doctype := range []string{`<!DOCTYPE html [<!ENTITY e "kostel">]>`, "<!DOCTYPE html [\n]>"} {
		src := strings.Replace(tess, `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN"
    "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">`, doctype, 1)
		src = strings.Replace(src, ">Hrob<", ">Hrob &e;<", 1)
		_, err := Translate(context.Background(), []byte(src), Options{Backend: &backendtest.Backend{}, Source: "cs", Target: "en", File: "t"})
		if !errors.Is(err, xmlsplice.ErrDTD) {
			t.Errorf("%s: err %v, want the DTD refused", doctype, err)
		}
	}
}
