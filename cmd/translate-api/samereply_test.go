package main

import (
	"strings"
	"testing"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"
)

// TestSameReplyBackendError: a translation service that answers one text
// for every request (a network's sign-in page served as text) makes
// /translate answer 500 backend_error saying so, and no document. Before,
// each line sent alone got that text as its translation, answered 200.
func TestSameReplyBackendError(t *testing.T) {
	mt := translatortest.New(translatortest.Config{Garbage: func(string) string { return "Please sign in to the network" }})
	defer mt.Close()
	_, ts := startServer(t, testEnv(mt.URL, nil))
	alto := readFile(t, sharedData(t, "translator/alto/MTX201501307_anon.alto.xml"))
	body, ct := multipartBody(t, part{Field: "file", Name: "MTX201501307_anon.alto.xml", File: true, Data: alto},
		part{Field: "source_lang", Data: []byte("cs")})
	resp := post(t, ts.URL+"/translate", ct, body)
	b := readBody(t, resp)
	a := servicetest.CheckError(t, resp.StatusCode, b, 500, "backend_error", "answers the same text whatever it is sent")
	if strings.Contains(string(b), "<alto") {
		t.Errorf("a document was answered: %.200s", b)
	}
	t.Logf("%s", a.Detail)
}
