package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/translate/translator/translatortest"
)

// TestElementLangField: the element_lang field chooses whether a unit's
// own LANG chooses its language (source_lang auto). On a Czech ALTO whose
// short block "Obsah" the OCR engine labelled sk, the service's default
// (TRANSLATE_ELEMENT_LANG, else use) makes it Slovak, element_lang=ignore
// Czech by the document rule; the field wins over the environment, a bad
// value is a 422 naming it, and a job's run metadata records it.
func TestElementLangField(t *testing.T) {
	mt := translatortest.New(translatortest.Config{})
	defer mt.Close()
	doc := readFile(t, "../../internal/translate/alto/testdata/wrong-lang.alto.xml")
	_, plain := startServer(t, testEnv(mt.URL, map[string]string{"JOBS_DIR": t.TempDir()}))
	_, ignoring := startServer(t, testEnv(mt.URL, map[string]string{"TRANSLATE_ELEMENT_LANG": "ignore"}))
	cases := []struct {
		name, base, field, want string
	}{
		{"default", plain.URL, "", "sk/element"},
		{"field ignore", plain.URL, "ignore", "cs/document"},
		{"field use", plain.URL, "use", "sk/element"},
		{"environment ignore", ignoring.URL, "", "cs/document"},
		{"field over environment", ignoring.URL, "USE", "sk/element"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parts := []part{{Field: "file", Name: "w.alto.xml", File: true, Data: doc}, {Field: "response_format", Data: []byte("json")}}
			if c.field != "" {
				parts = append(parts, part{Field: "element_lang", Data: []byte(c.field)})
			}
			body, ct := multipartBody(t, parts...)
			resp := post(t, c.base+"/translate", ct, body)
			b := readBody(t, resp)
			var a jsonAnswer
			if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &a) != nil {
				t.Fatalf("status %d: %.300s", resp.StatusCode, b)
			}
			got := ""
			for _, u := range a.Units {
				if u.Source == "Obsah" {
					got = u.SourceLang + "/" + u.LangSource
				}
			}
			if got != c.want {
				t.Errorf("Obsah (LANG=\"sk\"): %q, want %q", got, c.want)
			}
		})
	}

	body, ct := multipartBody(t, part{Field: "file", Name: "w.alto.xml", File: true, Data: doc}, part{Field: "element_lang", Data: []byte("skip")})
	resp := post(t, plain.URL+"/translate", ct, body)
	if b := readBody(t, resp); resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(string(b), "element_lang") {
		t.Errorf("element_lang=skip: %d %s", resp.StatusCode, b)
	}

	body, ct = multipartBody(t, part{Field: "file", Name: "w.alto.xml", File: true, Data: doc}, part{Field: "element_lang", Data: []byte("ignore")})
	resp = post(t, plain.URL+"/jobs", ct, body)
	var st jobs.Status
	if b := readBody(t, resp); resp.StatusCode != http.StatusAccepted || json.Unmarshal(b, &st) != nil {
		t.Fatalf("POST /jobs: %d %s", resp.StatusCode, b)
	}
	if st = pollJob(t, plain.URL, st.ID, 30*time.Second, ended); st.State != jobs.Succeeded {
		t.Fatalf("%+v", st)
	}
	meta, _ := jobArchive(t, plain.URL, st.ID)
	if meta.Config["element_lang"] != "ignore" || meta.Statistics.LangSources["element"] != 0 || meta.Statistics.LangSources["document"] != 2 {
		t.Errorf("job run metadata: element_lang %v, lang_sources %v", meta.Config["element_lang"], meta.Statistics.LangSources)
	}
}
