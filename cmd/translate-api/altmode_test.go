package main

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"archivekit/internal/docrecord"
	"archivekit/internal/jobs"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/metadata"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator/translatortest"
)

// buildTranslate builds the translate command into a temporary folder and
// returns its path.
func buildTranslate(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "translate")
	if b, err := exec.Command("go", "build", "-o", bin, "archivekit/cmd/translate").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return bin
}

// runTranslateCLI runs the translate command on in with the stand-in at
// url, writing into out, with args after the input.
func runTranslateCLI(t *testing.T, bin, url, in, out string, args ...string) {
	t.Helper()
	para, _ := filepath.Abs("../../setup/translate/para_config.txt")
	cmd := exec.Command(bin, append([]string{in, "-o", out}, args...)...)
	cmd.Env = append(os.Environ(), "TRANSLATION_URL="+url, "TRANSLATE_PARA_CONFIG="+para, "MTAPI_MAX_RETRIES=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("translate %s: %v\n%s", filepath.Base(in), err, b)
	}
}

// altModeDocs are the real documents of the alternative-mode tests: the
// shared ALTO sample, a PAGE-XML (OCR-D ground truth) and a metadata
// record, each with the file name a client would send.
func altModeDocs(t *testing.T) map[string][]byte {
	return map[string][]byte{
		"MTX201501307_anon.alto.xml":            readFile(t, sharedData(t, "translator/alto/MTX201501307_anon.alto.xml")),
		"ocrd-gt_german_kant1784-0017.page.xml": readFile(t, "../../internal/translate/pagexml/testdata/real/ocrd-gt_german_kant1784-0017.page.xml"),
		"C-9100725A.xml":                        readFile(t, sharedData(t, "translator/records/C-9100725A.xml")),
	}
}

// postAlternative posts doc (named name) to /translate with source_lang
// cs, output_mode alternative and the extra parts, and returns the answer.
func postAlternative(t *testing.T, base, name string, doc []byte, extra ...part) (*http.Response, []byte) {
	t.Helper()
	parts := append([]part{{Field: "file", Name: name, File: true, Data: doc},
		{Field: "source_lang", Data: []byte("cs")}, {Field: "output_mode", Data: []byte("alternative")}}, extra...)
	body, ctype := multipartBody(t, parts...)
	resp := post(t, base+"/translate", ctype, body)
	return resp, readBody(t, resp)
}

// TestAlternativeModeLikeCLI: output_mode=alternative gives, for a real
// ALTO, PAGE-XML and metadata record, exactly what translate
// --output-mode alternative writes for the same input and stand-in
// backend: the ALTO's translation in ALTERNATIVE elements and the metadata
// record's in siblings labelled with the machine-translation tag, each
// removed giving the input back byte for byte, PAGE-XML its append mode
// (the command line's answer for a format without ALTERNATIVE).
func TestAlternativeModeLikeCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs translate")
	}
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	bin := buildTranslate(t)
	fields, _ := filepath.Abs("../../setup/translate/amcr-fields.txt")
	for name, doc := range altModeDocs(t) {
		t.Run(name, func(t *testing.T) {
			in, out := filepath.Join(t.TempDir(), name), t.TempDir()
			if err := os.WriteFile(in, doc, 0o644); err != nil {
				t.Fatal(err)
			}
			runTranslateCLI(t, bin, mt.URL, in, out, "--source_lang", "cs", "--vocabulary", "",
				"--xpaths", fields, "--output-mode", "alternative")
			resp, got := postAlternative(t, ts.URL, name, doc)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			_, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
			want, err := os.ReadFile(filepath.Join(out, params["filename"]))
			if err != nil {
				t.Fatalf("the command line wrote no %s: %v", params["filename"], err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the answer (%d bytes) differs from the command line's %s (%d bytes)", len(got), params["filename"], len(want))
			}
			if bytes.Equal(got, doc) {
				t.Error("the answer is the input: nothing translated")
			}
			if strings.HasSuffix(name, ".alto.xml") {
				if n := bytes.Count(got, []byte(`<ALTERNATIVE PURPOSE="translation:en-t-cs-t0-und">`)); n == 0 {
					t.Error("no ALTERNATIVE in the ALTO answer")
				}
				if back, err := alto.RemoveAlternatives(got); err != nil || !bytes.Equal(back, doc) {
					t.Errorf("removing the ALTERNATIVEs does not give the input back (%v)", err)
				}
			}
			if strings.HasPrefix(name, "C-") {
				if back, err := metadata.Remove(got); err != nil || !bytes.Equal(back, doc) {
					t.Errorf("removing the translated siblings does not give the record back (%v)", err)
				}
			}
		})
	}
}

// TestAlternativeModeRecord: with document_json, an ALTO translated with
// output_mode=alternative gets the record the command line writes
// (output_mode append, output_form alternative, the machine-translation
// tag), in the XML and the JSON answer; OUTPUT_MODE=alternative makes it
// the default; a job with output_mode=alternative
// answers each item as /translate does and records the mode, and the mode
// each format got, in its run metadata.
func TestAlternativeModeRecord(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	doc := altoBlocks("hrob", "jáma a sonda")
	base := []byte(`{"schema_version":"1.0","doc_id":"CTX1"}`)
	wantRec := map[string]string{"output_mode": "append", "output_form": "alternative", "language_tag": "en-t-cs-t0-und", "source_lang": "cs"}
	checkRec := func(t *testing.T, b []byte) {
		t.Helper()
		rec, err := docrecord.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range wantRec {
			if got, _ := rec.Get("translations", k); got != want {
				t.Errorf("translations.%s = %v, want %s", k, got, want)
			}
		}
	}
	baseline := part{Field: "document_json", Name: "CTX1.document.json", File: true, Data: base}

	resp, b := postAlternative(t, ts.URL, "a.alto.xml", doc, baseline)
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	parts := mixedParts(t, params["boundary"], b)
	if len(parts) != 2 {
		t.Fatalf("%d parts", len(parts))
	}
	if back, err := alto.RemoveAlternatives(parts[0].data); err != nil || !bytes.Equal(back, doc) {
		t.Errorf("removing the ALTERNATIVEs does not give the input back (%v)", err)
	}
	checkRec(t, parts[1].data)

	resp, b = postAlternative(t, ts.URL, "a.alto.xml", doc, baseline, part{Field: "response_format", Data: []byte("json")})
	var a jsonAnswer
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &a) != nil {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if a.Document != string(parts[0].data) {
		t.Error("the JSON answer's document differs from the XML answer")
	}
	checkRec(t, a.Record)

	// OUTPUT_MODE=alternative is the mode of a request without output_mode.
	_, envTS := startServer(t, testEnv(mt.URL, map[string]string{"OUTPUT_MODE": "alternative"}))
	body, ctype := multipartBody(t, part{Field: "source_lang", Data: []byte("cs")}, part{Field: "file", Name: "a.alto.xml", File: true, Data: doc})
	resp = post(t, envTS.URL+"/translate", ctype, body)
	if b := readBody(t, resp); resp.StatusCode != http.StatusOK || !bytes.Equal(b, parts[0].data) {
		t.Errorf("OUTPUT_MODE=alternative: status %d, the answer differs from output_mode=alternative's: %s", resp.StatusCode, b)
	}

	body, ctype = multipartBody(t, part{Field: "source_lang", Data: []byte("cs")}, part{Field: "output_mode", Data: []byte("alternative")},
		part{Field: "file", Name: "a.alto.xml", File: true, Data: doc})
	resp = post(t, ts.URL+"/jobs", ctype, body)
	var st jobs.Status
	if b := readBody(t, resp); resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	if st = pollJob(t, ts.URL, st.ID, 30*time.Second, ended); st.State != jobs.Succeeded {
		t.Fatalf("%+v", st)
	}
	res := jobResults(t, ts.URL, st.ID)
	if len(res.Items) != 1 || res.Items[0].Text == nil || *res.Items[0].Text != string(parts[0].data) {
		t.Errorf("the job's item is not the /translate answer: %+v", res.Items)
	}
	var rm runmeta.Doc
	if err := json.Unmarshal(res.RunMetadata, &rm); err != nil {
		t.Fatal(err)
	}
	byFormat, _ := json.Marshal(rm.Config["output_mode_by_format"])
	if rm.Config["output_mode"] != "alternative" || string(byFormat) != `{"alto":"alternative","hocr":"parallel","metadata":"alternative","page":"append"}` {
		t.Errorf("run metadata: output_mode %v, output_mode_by_format %s", rm.Config["output_mode"], byFormat)
	}
}

// TestAlternativeModeRefused: an ALTO version without ALTERNATIVE (1.x
// without a schema location naming 1.1 to 1.4) asked for
// output_mode=alternative is refused as the command line refuses it: 422
// unsupported_format, the detail naming the mode, the file and the way out; an
// unknown mode is a 422 listing the three.
func TestAlternativeModeRefused(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	alto10 := []byte(`<?xml version="1.0"?><alto><Layout><Page ID="p1"><PrintSpace><TextBlock ID="b1"><TextLine ID="l1"><String CONTENT="hrob"/></TextLine></TextBlock></PrintSpace></Page></Layout></alto>`)
	resp, b := postAlternative(t, ts.URL, "old.alto.xml", alto10)
	var e struct {
		Status int
		Reason string
		Detail string
	}
	if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != http.StatusUnprocessableEntity || e.Status != 422 || e.Reason != "unsupported_format" {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	for _, want := range []string{"old.alto.xml", "output_mode alternative", "ALTERNATIVE", "append or replace"} {
		if !strings.Contains(e.Detail, want) {
			t.Errorf("detail %q does not name %q", e.Detail, want)
		}
	}
	body, ctype := multipartBody(t, part{Field: "file", Name: "a.alto.xml", File: true, Data: alto10}, part{Field: "output_mode", Data: []byte("alternate")})
	resp = post(t, ts.URL+"/translate", ctype, body)
	if b := readBody(t, resp); resp.StatusCode != http.StatusUnprocessableEntity || !bytes.Contains(b, []byte(`'alternative'`)) {
		t.Errorf("unknown mode: status %d: %s", resp.StatusCode, b)
	}
}
