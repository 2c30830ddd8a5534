// Package servicetest is the test harness of the HTTP services built on
// package service (cmd/pageclass-api, cmd/translate-api, and package
// service's own tests, which is why it does not import it): serving a service
// in the test process (Serve), multipart requests (Part, Multipart,
// PostForm, PostAsync), the real binary as a process (Build, Start, WaitReady,
// WaitInFlight, Terminate, Wait) and golden JSON answers (GoldenJSON).
package servicetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"sync"
	"testing"
)

// Server is what Serve needs of a service: a *service.Service.
type Server interface {
	WarmUp(ctx context.Context) error
	Handler() http.Handler
}

// Serve warms svc up and serves its handler with httptest, as Run would
// once ready. At the end of the test the server is closed, then stop (nil:
// nothing) releases what the service holds.
func Serve(t testing.TB, svc Server, stop func()) *httptest.Server {
	t.Helper()
	if err := svc.WarmUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(svc.Handler())
	t.Cleanup(func() {
		ts.Close()
		if stop != nil {
			stop()
		}
	})
	return ts
}

// Part is one part of a multipart form: a file when File is set or CType is
// given (Name is then its file name, left out when empty; CType its
// Content-Type, application/octet-stream when empty), else a field.
type Part struct {
	Field, Name, CType string
	File               bool
	Data               []byte
}

// Multipart is the multipart form of parts and its Content-Type.
func Multipart(t testing.TB, parts ...Part) (*bytes.Buffer, string) {
	t.Helper()
	body, ctype, err := multipartForm(parts)
	if err != nil {
		t.Fatal(err)
	}
	return body, ctype
}

func multipartForm(parts []Part) (*bytes.Buffer, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.File || p.CType != "" {
			h := textproto.MIMEHeader{}
			cd := fmt.Sprintf(`form-data; name=%q`, p.Field)
			if p.Name != "" {
				cd += fmt.Sprintf(`; filename=%q`, p.Name)
			}
			h.Set("Content-Disposition", cd)
			h.Set("Content-Type", p.CType)
			if p.CType == "" {
				h.Set("Content-Type", "application/octet-stream")
			}
			w, err = mw.CreatePart(h)
		} else {
			w, err = mw.CreateFormField(p.Field)
		}
		if err != nil {
			return nil, "", err
		}
		_, _ = w.Write(p.Data)
	}
	if err := mw.Close(); err != nil {
		return nil, "", err
	}
	return &buf, mw.FormDataContentType(), nil
}

// PostForm posts the multipart form of parts to url and returns the status
// and body. A failure is reported with t.Error, not t.Fatal (callers may
// run in several goroutines), and gives status 0.
func PostForm(t testing.TB, url string, parts ...Part) (int, []byte) {
	t.Helper()
	body, ct := Multipart(t, parts...)
	resp, err := http.Post(url, ct, body)
	if err != nil {
		t.Error(err)
		return 0, nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return resp.StatusCode, b
}

// Result is the answer to a request sent in the background.
type Result struct {
	Status int
	Body   []byte
	Err    error
}

// PostAsync posts the multipart form of parts to url in the background; the
// channel gives its answer (Err set when it could not be sent or read).
func PostAsync(url string, parts ...Part) <-chan Result {
	done := make(chan Result, 1)
	go func() {
		body, ct, err := multipartForm(parts)
		if err != nil {
			done <- Result{Err: err}
			return
		}
		resp, err := http.Post(url, ct, body)
		if err != nil {
			done <- Result{Err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- Result{Status: resp.StatusCode, Body: b, Err: err}
	}()
	return done
}

// ReadBody reads and closes the body of resp.
func ReadBody(t testing.TB, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FormField is the description the service at base gives in its OpenAPI
// document of field of the multipart form POST path takes ("" when it
// describes none).
func FormField(t testing.TB, base, path, field string) string {
	t.Helper()
	resp, err := http.Get(base + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var api struct {
		Paths map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Schema struct {
							Properties map[string]struct {
								Description string `json:"description"`
							} `json:"properties"`
						} `json:"schema"`
					} `json:"content"`
				} `json:"requestBody"`
			} `json:"post"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(ReadBody(t, resp), &api); err != nil {
		t.Fatal(err)
	}
	return api.Paths[path].Post.RequestBody.Content["multipart/form-data"].Schema.Properties[field].Description
}

// LogBuffer is a log output that the service writes while the test reads
// it. Its zero value is ready.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LogBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *LogBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
