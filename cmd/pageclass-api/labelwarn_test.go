package main

import (
	"strings"
	"testing"

	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/service/servicetest"
)

// TestPDFLabelWarning: /predict_document classifies a PDF whose page
// labels cannot be read, its pages numbered only, and the service log
// warns, naming the file and why.
func TestPDFLabelWarning(t *testing.T) {
	var log servicetest.LogBuffer
	_, ts := startServer(t, testOptions(t), map[string]string{"LOG_LEVEL": "WARNING", "LOG_FORMAT": "json"}, &log)
	page := "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 300] >>"
	pdf := hostile.PDFObjects("<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [(x) << /S /r >>] >> >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>", page)
	status, body := postForm(t, ts.URL+"/predict_document", upload{Field: "file", Name: "broken-labels.pdf", CType: "application/pdf", Data: pdf})
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var warned bool
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "page labels cannot be read") && strings.Contains(line, `"file":"broken-labels.pdf"`) &&
			strings.Contains(line, "not a page index") && strings.Contains(line, `"level":"WARN"`) {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning naming the file and why:\n%s", log.String())
	}
}
