package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// serve starts a loopback server answering /health with handler and
// returns its port.
func serve(t *testing.T, handler http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(handler) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
}

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestRun(t *testing.T) {
	ok := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}`))
	}
	unavailable := func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(503)
		w.Write([]byte(`{"status":"ok"}`))
	}
	wrongBody := func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`<html>hello</html>`)) }
	slow := func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Second)
		ok(w, r)
	}
	closed := func() string { // a port with nothing listening
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
		return p
	}()

	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    int
		wantErr string
	}{
		{"healthy", map[string]string{"PORT": serve(t, ok)}, nil, 0, ""},
		{"HOST is ignored", map[string]string{"PORT": serve(t, ok), "HOST": "192.0.2.1"}, nil, 0, ""},
		{"503", map[string]string{"PORT": serve(t, unavailable)}, nil, 1, "status 503"},
		{"not the health body", map[string]string{"PORT": serve(t, wrongBody)}, nil, 1, "unexpected body"},
		{"nothing listening", map[string]string{"PORT": closed}, nil, 1, "connection refused"},
		{"too slow", map[string]string{"PORT": serve(t, slow)}, []string{"-timeout", "300ms"}, 1, "Timeout"},
		{"empty PORT", map[string]string{"PORT": ""}, nil, 1, "PORT is set but empty"},
		{"bad PORT", map[string]string{"PORT": "eighty"}, nil, 1, `PORT="eighty" is not a port number`},
		{"bad flag", map[string]string{"PORT": closed}, []string{"-nope"}, 1, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			start := time.Now()
			got := run(tt.args, envOf(tt.env), &stderr)
			if got != tt.want {
				t.Errorf("exit %d, want %d (%s)", got, tt.want, stderr.String())
			}
			if tt.wantErr != "" && !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q lacks %q", stderr.String(), tt.wantErr)
			}
			if tt.want == 0 && stderr.Len() != 0 {
				t.Errorf("healthy probe wrote %q", stderr.String())
			}
			if d := time.Since(start); d > 1500*time.Millisecond {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestPortDefault(t *testing.T) {
	p, err := portFrom(envOf(nil))
	if err != nil || p != 8000 {
		t.Fatalf("unset PORT: %d, %v", p, err)
	}
}
