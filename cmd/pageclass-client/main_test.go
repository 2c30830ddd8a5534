package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fakeService answers like pageclass-api, checking the form it gets.
func fakeService(t *testing.T) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseMultipartForm(1 << 20); err != nil {
			t.Errorf("form: %v", err)
		}
		_, fh, err := r.FormFile("file")
		if err != nil {
			w.WriteHeader(422)
			fmt.Fprint(w, `{"detail":[{"loc":["body","file"],"msg":"Field required","type":"missing"}]}`)
			return
		}
		ct := fh.Header.Get("Content-Type")
		switch {
		case r.FormValue("version") == "full":
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusInsufficientStorage)
			fmt.Fprint(w, `{"reason":"storage_full","detail":"the staging area is full"}`)
		case r.URL.Path == "/predict_document" && r.FormValue("version") == "demo":
			fmt.Fprint(w, `{"type":"document","version":"demo","demo":true,"demo_models":["v4.4"],"page_count":1,"pages":[{"page":1,"predictions":[{"label":"TEXT","score":0.9}]}]}`)
		case r.URL.Path == "/predict_document" && (ct == "application/pdf" || ct == "image/tiff"):
			fmt.Fprint(w, `{"type":"document","version":"all","page_count":2,"pages":[{"page":1,"predictions":[{"label":"TEXT","score":0.9}]},{"page":2,"predictions":[{"label":"DRAW","score":0.5}]}]}`)
		case r.URL.Path == "/predict_image" && strings.HasPrefix(ct, "image/"):
			if r.FormValue("version") != "v2.4" || r.FormValue("topn") != "2" {
				t.Errorf("fields version=%q topn=%q", r.FormValue("version"), r.FormValue("topn"))
			}
			fmt.Fprint(w, `{"type":"image","version":"v2.4","predictions":[{"label":"PHOTO","score":0.75},{"label":"TEXT","score":0.2}],"document_json":null,"document_json_schema_error":null}`)
		default:
			w.WriteHeader(400)
			fmt.Fprintf(w, `{"detail":"wrong content type %s"}`, ct)
		}
	}))
}

func TestClient(t *testing.T) {
	ts := fakeService(t)
	defer ts.Close()
	dir := t.TempDir()
	png := filepath.Join(dir, "page.png")
	pdf := filepath.Join(dir, "doc.pdf")
	txt := filepath.Join(dir, "notes.txt")
	_ = os.WriteFile(png, []byte("\x89PNG\r\n\x1a\nrest"), 0o644)
	_ = os.WriteFile(pdf, []byte("%PDF-1.4 ..."), 0o644)
	_ = os.WriteFile(txt, []byte("hello"), 0o644)
	tif := filepath.Join(dir, "scan") // a TIFF by its content, without a name to say so
	_ = os.WriteFile(tif, []byte("II*\x00rest"), 0o644)
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"-file", png, "-version", "v2.4", "-topn", "2", "-server", ts.URL}, 0, "page.png\n   1. PHOTO    0.7500\n   2. TEXT     0.2000\n"},
		{[]string{"-file", pdf, "-server", ts.URL}, 0, "doc.pdf page 1\n   1. TEXT     0.9000\ndoc.pdf page 2\n   1. DRAW     0.5000\n"},
		{[]string{"-file", tif, "-server", ts.URL}, 0, "scan page 1\n   1. TEXT     0.9000\nscan page 2\n   1. DRAW     0.5000\n"},
		{[]string{"-file", txt, "-server", ts.URL}, 3, "answered 400: wrong content type text/plain"},
		{[]string{"-file", filepath.Join(dir, "missing.png"), "-server", ts.URL}, 2, "missing.png"},
		// No service there: said in words, to try again (it was Go's
		// "Post ...: dial tcp ...", exit 3).
		{[]string{"-file", png, "-server", "http://127.0.0.1:1"}, 75, "no answer from the service at http://127.0.0.1:1 (is pageclass-api running there? give its address with -server URL)"},
		// A full disk on the service passes: 75, as a refused
		// connection (it was 3, a failure for good).
		{[]string{"-file", png, "-server", ts.URL, "-version", "full"}, 75, "answered 507 storage_full: the staging area is full (it may pass: try again later)"},
		{[]string{"-topn", "3"}, 1, "-file is required"},
		{[]string{png, "-topn", "1"}, 1, `unexpected argument "` + png + `": give the page with -file (-file ` + png + `)`},
		{[]string{"-file", png, "extra"}, 1, `unexpected argument "extra"`},
		{[]string{"-file", png, "-topn", "12"}, 1, "want 1 to 11"},
		// The original client's flags (test_api.py: -f, -v, --top, --url).
		{[]string{"-f", png, "-v", "v2.4", "--top", "2", "--url", ts.URL}, 0, "page.png\n   1. PHOTO    0.7500\n"},
		// -json prints the answer as the original client did.
		{[]string{"-file", png, "-version", "v2.4", "-topn", "2", "-server", ts.URL, "-json"}, 0, "{\n  \"type\": \"image\",\n  \"version\": \"v2.4\",\n  \"predictions\": [\n    {\n      \"label\": \"PHOTO\""},
		// An answer of the shipped demo models says so.
		{[]string{"-file", pdf, "-server", ts.URL, "-version", "demo"}, 0, "(answered by the shipped demo models v4.4: small models for trying the tools"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		got := out.String() + errOut.String()
		if code != tc.code || !strings.Contains(got, tc.out) {
			t.Errorf("%v: code %d, output %q; want %d with %q", tc.args, code, got, tc.code, tc.out)
		}
	}
}

// TestToken: -token (or API_TOKEN) is sent as a bearer token; a service
// that wants one answers 401 without it, which the client reports.
func TestToken(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(401)
			fmt.Fprint(w, `{"detail":"a bearer token is required"}`)
			return
		}
		fmt.Fprint(w, `{"type":"image","version":"all","predictions":[{"label":"TEXT","score":0.9}]}`)
	}))
	defer ts.Close()
	png := filepath.Join(t.TempDir(), "page.png")
	_ = os.WriteFile(png, []byte("\x89PNG\r\n\x1a\nrest"), 0o644)
	var out, errOut bytes.Buffer
	if code := run([]string{"-file", png, "-server", ts.URL, "-token", "s3cret"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "TEXT") {
		t.Errorf("-token: code %d: %s%s", code, out.String(), errOut.String())
	}
	t.Setenv("API_TOKEN", "s3cret")
	out.Reset()
	if code := run([]string{"-file", png, "-server", ts.URL}, &out, &errOut); code != 0 {
		t.Errorf("API_TOKEN: code %d: %s", code, errOut.String())
	}
	t.Setenv("API_TOKEN", "")
	errOut.Reset()
	if code := run([]string{"-file", png, "-server", ts.URL}, &out, &errOut); code != 3 || !strings.Contains(errOut.String(), "401") {
		t.Errorf("no token: code %d: %s", code, errOut.String())
	}
}

// TestErrorReason: an error answer's reason code is reported with its
// status, before the detail.
func TestErrorReason(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(413)
		fmt.Fprint(w, `{"status":413,"reason":"too_many_pages","detail":"\"doc.pdf\" has 60 pages: at most 50 pages are classified per request (MAX_PDF_PAGES)"}`)
	}))
	defer ts.Close()
	pdf := filepath.Join(t.TempDir(), "doc.pdf")
	_ = os.WriteFile(pdf, []byte("%PDF-1.4 ..."), 0o644)
	var out, errOut bytes.Buffer
	code := run([]string{"-file", pdf, "-server", ts.URL}, &out, &errOut)
	if want := `answered 413 too_many_pages: "doc.pdf" has 60 pages`; code != 3 || !strings.Contains(errOut.String(), want) {
		t.Errorf("code %d, output %q; want 3 with %q", code, out.String()+errOut.String(), want)
	}
}

// TestProxyAnswer: a 413 from a reverse proxy in front of the service (its
// HTML page) is said as the proxy's, in one line, not as the service's
// answer with the page quoted whole.
func TestProxyAnswer(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(413)
		fmt.Fprint(w, "<html>\r\n<head><title>413 Request Entity Too Large</title></head>\r\n<body>\r\n<center><h1>413 Request Entity Too Large</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n")
	}))
	defer ts.Close()
	page := filepath.Join(t.TempDir(), "page.png")
	_ = os.WriteFile(page, []byte("\x89PNG\r\n\x1a\n"), 0o644)
	var out, errOut bytes.Buffer
	code := run([]string{"-file", page, "-server", ts.URL}, &out, &errOut)
	msg := errOut.String()
	if code != 3 || !strings.Contains(msg, "not by pageclass-api") || !strings.Contains(msg, "413 Request Entity Too Large nginx/1.22.1") ||
		!strings.Contains(msg, "proxy's body limit") || strings.Contains(msg, "<html>") {
		t.Errorf("code %d, stderr %q; want 3 naming the proxy's limit, without the HTML", code, msg)
	}
}

// TestHelpAndUsage: -help prints the flags and exits 0 (as the other
// commands' --help); a usage error exits 1 and a failed request 3, as the
// other commands (they were 2 and 1).
func TestHelpAndUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-help"}, 0, "-f, -file PAGE\n"}, // each flag once, with its alias (not "same as -file")
		{[]string{"--help"}, 0, "-server"},
		{[]string{}, 1, "-file is required"},
		{[]string{"-file", "p.png", "-topn", "12"}, 1, "want 1 to 11"},
		{[]string{"-nosuch"}, 1, "flag provided but not defined"},
	} {
		var out, errOut bytes.Buffer
		if code := run(c.args, &out, &errOut); code != c.code || !strings.Contains(out.String()+errOut.String(), c.want) || strings.Contains(out.String()+errOut.String(), "same as") {
			t.Errorf("%v: exit %d, %q; want %d with %q", c.args, code, out.String()+errOut.String(), c.code, c.want)
		}
	}
}

// TestFileSentAsRead: a device or a pipe is refused before anything is read
// (a link to /dev/zero was read until the machine ran out of memory, a
// pipe waited for ever); a file is sent whole, with its length, as it is
// read.
func TestFileSentAsRead(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.png")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.png")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{zero, fifo} {
		var out, errOut bytes.Buffer
		code := run([]string{"-file", p, "-server", "http://127.0.0.1:1"}, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "not a regular file") {
			t.Errorf("%s: exit %d, %q; want 2 saying it is not a regular file", p, code, errOut.String())
		}
	}
	big := make([]byte, 3<<20+17)
	copy(big, "\x89PNG\r\n\x1a\n")
	for i := 8; i < len(big); i++ {
		big[i] = byte(i * 31)
	}
	png := filepath.Join(dir, "big.png")
	if err := os.WriteFile(png, big, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength <= int64(len(big)) || len(r.TransferEncoding) > 0 {
			t.Errorf("sent with length %d, transfer encoding %v", r.ContentLength, r.TransferEncoding)
		}
		f, fh, err := r.FormFile("file")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(f)
		if !bytes.Equal(got, big) || fh.Header.Get("Content-Type") != "image/png" || r.FormValue("topn") != "3" {
			t.Errorf("received %d bytes (equal %v), type %q, topn %q", len(got), bytes.Equal(got, big), fh.Header.Get("Content-Type"), r.FormValue("topn"))
		}
		fmt.Fprint(w, `{"type":"image","version":"v4.4","predictions":[{"label":"TEXT","score":0.9}]}`)
	}))
	defer ts.Close()
	var out, errOut bytes.Buffer
	if code := run([]string{"-file", png, "-server", ts.URL, "-topn", "3"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "TEXT") {
		t.Errorf("exit %d: %s %s", code, out.String(), errOut.String())
	}
}
