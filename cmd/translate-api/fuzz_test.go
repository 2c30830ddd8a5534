package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzReadRequest: the streaming form reader of /translate never panics
// on an arbitrary multipart body, and either returns the request or
// answers it with a 4xx.
func FuzzReadRequest(f *testing.F) {
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../../a.xml\"\r\n\r\n<a/>\r\n--B\r\nContent-Disposition: form-data; name=\"target_lang\"\r\n\r\nen\r\n--B--\r\n"))
	f.Add([]byte("--B\r\nContent-Disposition: form-data; name=\"document_json\"; filename=\"r.json\"\r\n\r\n{}\r\n--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n--B--"))
	f.Add([]byte("--B--"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/translate", bytes.NewReader(body))
		r.Header.Set("Content-Type", "multipart/form-data; boundary=B")
		w := httptest.NewRecorder()
		q, ok := readRequest(w, r)
		if ok {
			if q == nil || w.Body.Len() != 0 {
				t.Fatal("request accepted but answered")
			}
		} else if w.Code < 400 || w.Code >= 500 {
			t.Fatalf("refused body answered %d: %s", w.Code, w.Body)
		}
	})
}
