package main

import (
	"flag"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/classify/classifytest"
	"archivekit/internal/pageclass/imageio/hostile"
	"archivekit/internal/service/servicetest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// testOptions serve the five fixture models from a temporary folder.
func testOptions(t testing.TB) options {
	t.Helper()
	return options{Config: "../../setup/config.txt", Models: classifytest.Ensemble(t, t.TempDir()),
		Device: "cpu", MaxBatch: 16}
}

// startServer builds, warms and serves a service.
func startServer(t testing.TB, o options, env map[string]string, logOut io.Writer) (*server, *httptest.Server) {
	t.Helper()
	if env == nil {
		env = map[string]string{"LOG_LEVEL": "WARNING"}
	}
	if logOut == nil {
		logOut = io.Discard
	}
	base := torch.LiveHandles()
	s, err := newServer(o, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, logOut)
	if err != nil {
		t.Fatal(err)
	}
	ts := servicetest.Serve(t, s.svc, func() {
		s.engine.close()
		if s.decode.Isolation != testDecoders {
			s.decode.Isolation.Close()
		}
		// Every model the service loaded is closed by its stop.
		if n := torch.LiveHandles() - base; n != 0 {
			t.Errorf("%d native model handles left open after the service stopped", n)
		}
	})
	return s, ts
}

// The harness shared with translate-api's tests, under this package's
// names: upload is a multipart part (a file when CType is set, else a
// field), multipartForm a form of them, postForm posts one.
type upload = servicetest.Part

var (
	multipartForm = servicetest.Multipart
	postForm      = servicetest.PostForm
)

// samplePage is one shared sample page (PNG).
func samplePage(t testing.TB) (string, []byte) {
	t.Helper()
	p := classifytest.Pages(t, 1)[7] // the TEXT category's first page
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Base(p), b
}

// makePDF writes a PDF of n A5 pages, each with a dark box at a different
// height, so that pages render differently.
func makePDF(n int) []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	kids := ""
	for i := 0; i < n; i++ {
		kids += fmt.Sprintf("%d 0 R ", 3+2*i)
		content := fmt.Sprintf("0.1 0.1 0.1 rg 40 %d 340 60 re f\n0.5 g 40 40 %d 20 re f", 80+(i*37)%400, 40+(i*29)%300)
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 420 595] /Contents %d 0 R >>", 4+2*i),
			fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids, n)
	return hostile.PDFObjects(objs...)
}

// golden compares JSON got with testdata/name.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	servicetest.GoldenJSON(t, name, got, *update)
}
