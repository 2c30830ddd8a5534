package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzParseForm: the form reader of /predict_image and /predict_document
// never panics on an arbitrary multipart body; it either returns a form
// with exactly one file or answers the request itself with a 4xx.
func FuzzParseForm(f *testing.F) {
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\nContent-Type: image/png\r\n\r\nPNG\r\n--B\r\nContent-Disposition: form-data; name=\"topn\"\r\n\r\n3\r\n--B--\r\n"))
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nx\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b\"\r\n\r\ny\r\n--B--\r\n"))
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"version\"\r\n\r\nv1.4\r\n--B\r\nContent-Disposition: form-data; name=\"thumbnails\"\r\n\r\nyes\r\n--B--"))
	f.Add([]byte("--B\r\n\r\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/predict_image", bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary=B")
		w := httptest.NewRecorder()
		form, ok := parseForm(w, r)
		if ok {
			if form == nil || w.Code != http.StatusOK || w.Body.Len() != 0 {
				t.Fatalf("form accepted but the request was answered (%d)", w.Code)
			}
			if form.topn < 1 || form.topn > maxTopN {
				t.Fatalf("topn %d accepted", form.topn)
			}
			return
		}
		if w.Code < 400 || w.Code >= 500 {
			t.Fatalf("refused form answered %d: %s", w.Code, w.Body)
		}
	})
}
