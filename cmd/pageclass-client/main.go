// Command pageclass-client sends a page image or a PDF to a running
// pageclass-api and prints the Top-N categories of every page.
//
// Usage:
//
//	pageclass-client -file page.png [-version all] [-topn 3] [-server http://127.0.0.1:8000] [-token T]
//	pageclass-client --version   (alone: prints the tool version)
//
// PDFs (by extension or content) and TIFFs (by content; a TIFF may hold
// several pages) go to /predict_document, everything else to
// /predict_image. Exit codes, as the other commands of the family
// (cliflags): 0 success, 1 usage error, 2 the file cannot be read, 3 the
// service answered an error, 75 the service could not be reached or
// answered that it cannot now (429, 502, 503, 504, 507 and any answer with
// Retry-After: try again). An answer
// of the shipped demo models is said so.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"archivekit/internal/cliflags"
	"archivekit/internal/filekind"
	"archivekit/internal/regularfile"
	pkgversion "archivekit/internal/version"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// prediction is one Top-N entry.
type prediction struct {
	Label string  `json:"label"`
	Score float64 `json:"score"`
}

// answer holds both response shapes of the service.
type answer struct {
	Type        string       `json:"type"`
	Version     string       `json:"version"`
	Demo        bool         `json:"demo"`
	DemoModels  []string     `json:"demo_models"`
	Predictions []prediction `json:"predictions"`
	Pages       []struct {
		Page        int          `json:"page"`
		Predictions []prediction `json:"predictions"`
	} `json:"pages"`
}

func run(args []string, stdout, stderr io.Writer) int {
	// -version names the model (spec); alone, --version prints the tool's.
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, pkgversion.Line("pageclass-client"))
		return 0
	}
	fs := flag.NewFlagSet("pageclass-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", "", "the `page` image or PDF to classify (required)")
	version := fs.String("version", "all", "`model`: v1.4, v2.4, v3.4, v4.4, v5.4 or all (the ensemble); -version alone, without a file, prints the client's own version")
	topn := fs.Int("topn", 3, "`number` of categories per page (1 to 11)")
	server := fs.String("server", "http://127.0.0.1:8000", "service base `URL`")
	timeout := fs.Duration("timeout", 2*time.Minute, "request timeout")
	token := fs.String("token", os.Getenv("API_TOKEN"), "bearer `token` of a service started with a token (default: the API_TOKEN environment variable; prefer it: a flag is seen by every user of the machine in ps)")
	asJSON := fs.Bool("json", false, "print the service's JSON answer (indented) instead of the table")
	// The original tool's client (test_api.py) names them -f, -v, --top
	// and --url: its users' scripts keep working.
	fs.StringVar(file, "f", "", "same as -file")
	fs.StringVar(version, "v", "all", "same as -version")
	fs.IntVar(topn, "top", 3, "same as -topn")
	fs.StringVar(server, "url", "http://127.0.0.1:8000", "same as -server")
	usage := func() { printUsage(fs, stderr) }
	fs.Usage = func() {} // a bad flag is said in two lines, not the whole list
	err := fs.Parse(args)
	fs.Usage = usage
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return 0
		}
		fmt.Fprintln(stderr, "pageclass-client: pageclass-client -h lists its flags")
		return cliflags.ExitUsage
	}
	if fs.NArg() > 0 {
		// Flags end at the first argument: "page.png -topn 1" would drop
		// -topn, so no argument is taken.
		fmt.Fprintf(stderr, "pageclass-client: unexpected argument %q: give the page with -file (-file %s), every flag before any other word\n", fs.Arg(0), fs.Arg(0))
		return cliflags.ExitUsage
	}
	if *file == "" {
		fmt.Fprintln(stderr, "pageclass-client: -file is required")
		fs.Usage()
		return cliflags.ExitUsage
	}
	if *topn < 1 || *topn > 11 {
		fmt.Fprintf(stderr, "pageclass-client: -topn %d: want 1 to 11\n", *topn)
		return cliflags.ExitUsage
	}
	base, err := checkServer(*server, given(fs, "server", "url", "-server"))
	if err != nil {
		fmt.Fprintln(stderr, "pageclass-client:", err)
		return cliflags.ExitUsage
	}
	if err := checkToken(*token, given(fs, "token", "", "API_TOKEN")); err != nil {
		fmt.Fprintln(stderr, "pageclass-client:", err)
		return cliflags.ExitUsage
	}
	a, raw, err := classify(base, *file, *version, *topn, *timeout, *token)
	if err != nil {
		fmt.Fprintf(stderr, "pageclass-client: %s: %v\n", *file, err)
		var ce *codeError
		if errors.As(err, &ce) {
			return ce.code
		}
		return cliflags.ExitFailure
	}
	if *asJSON {
		var buf bytes.Buffer
		if json.Indent(&buf, raw, "", "  ") != nil {
			buf.Reset()
			buf.Write(raw)
		}
		fmt.Fprintln(stdout, strings.TrimSpace(buf.String()))
		return 0
	}
	if a.Demo {
		// As the web page says it: the shipped demo models are not the
		// published ones.
		fmt.Fprintf(stdout, "(answered by the shipped demo models %s: small models for trying the tools, not for real classification)\n", strings.Join(a.DemoModels, ", "))
	}
	name := filepath.Base(*file)
	if a.Type == "document" {
		for _, p := range a.Pages {
			printTop(stdout, fmt.Sprintf("%s page %d", name, p.Page), p.Predictions)
		}
	} else {
		printTop(stdout, name, a.Predictions)
	}
	return 0
}

// given names the flag that set a value for messages: -name, or -alias
// when that was given instead; otherwise def (where the default came
// from).
func given(fs *flag.FlagSet, name, alias, def string) string {
	set := def
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name || (alias != "" && f.Name == alias) {
			set = "-" + f.Name
		}
	})
	return set
}

// checkServer returns the service address from (its flag named by flag)
// with surrounding spaces trimmed, as the other settings are, or a usage
// error naming the flag and the address when it is not an http(s) URL.
func checkServer(server, flag string) (string, error) {
	s := strings.TrimSpace(server)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(s, " \t") {
		return "", fmt.Errorf("%s %q: not a service address: give http://HOST:PORT (or https://)", flag, server)
	}
	return s, nil
}

// checkToken refuses a token (from from: -token or API_TOKEN) that holds a
// character an HTTP header cannot carry (a control character, a newline
// left by the file it was read from), without printing the token.
func checkToken(token, from string) error {
	for i := 0; i < len(token); i++ {
		if b := token[i]; (b < ' ' && b != '\t') || b == 0x7f {
			return fmt.Errorf("%s holds a control character (byte %d of %d, such as a newline) that an HTTP Authorization header cannot carry: set it to the token alone", from, i+1, len(token))
		}
	}
	return nil
}

func printTop(w io.Writer, title string, preds []prediction) {
	fmt.Fprintln(w, title)
	for i, p := range preds {
		fmt.Fprintf(w, "  %2d. %-8s %.4f\n", i+1, p.Label, p.Score)
	}
}

// sniffLen is how much of a file is read to tell its format.
const sniffLen = 64 << 10

// maxAnswer bounds the answer read (a PDF's pages each with its scores
// fit many times over).
const maxAnswer = 64 << 20

// switchWriter writes to w, which may be changed between writes.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// classify posts the file and decodes the answer; an error answer becomes
// an error carrying the service's detail.
func classify(server, path, version string, topn int, timeout time.Duration, token string) (*answer, []byte, error) {
	// A device or pipe is refused before anything is read (a link to
	// /dev/zero was read until the machine ran out of memory), and the file
	// is sent as it is read, not held whole: the service refuses one over
	// its upload limit after that limit.
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, nil, &codeError{cliflags.ExitNoInput, err} // no input
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, &codeError{cliflags.ExitNoInput, err}
	}
	data := make([]byte, min(st.Size(), sniffLen)) // what tells the format
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, &codeError{cliflags.ExitNoInput, fmt.Errorf("%s: %w", path, err)}
	}
	isPDF := filekind.Of(data) == filekind.PDF || strings.EqualFold(filepath.Ext(path), ".pdf")
	ctype, endpoint := mime.TypeByExtension(strings.ToLower(filepath.Ext(path))), "/predict_image"
	switch {
	case isPDF:
		ctype, endpoint = "application/pdf", "/predict_document"
	case filekind.Of(data) == filekind.TIFF:
		// A TIFF may hold several pages, which /predict_image refuses:
		// /predict_document classifies each, as the web page sends it.
		ctype, endpoint = "image/tiff", "/predict_document"
	case !strings.HasPrefix(ctype, "image/"):
		ctype = http.DetectContentType(data)
	}
	// The form around the file: its part's header before it, the other
	// fields after it, so that its length is known.
	var head, tail bytes.Buffer
	out := &switchWriter{w: &head}
	mw := multipart.NewWriter(out)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filepath.Base(path)))
	h.Set("Content-Type", ctype)
	_, _ = mw.CreatePart(h)
	out.w = &tail
	_ = mw.WriteField("version", version)
	_ = mw.WriteField("topn", strconv.Itoa(topn))
	_ = mw.Close()
	body := io.MultiReader(&head, bytes.NewReader(data), io.LimitReader(f, st.Size()-int64(len(data))), &tail)
	client := &http.Client{Timeout: timeout}
	req, err := http.NewRequest(http.MethodPost, strings.TrimRight(server, "/")+endpoint, body)
	if err != nil {
		return nil, nil, err
	}
	req.ContentLength = int64(head.Len()) + st.Size() + int64(tail.Len())
	req.Header.Set("Content-Type", mw.FormDataContentType())
	pkgversion.SetUserAgent(req)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		// Go's "Post ...: dial tcp ...: connect: connection refused" said
		// in words, as a passing failure (try again: 75).
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, &codeError{cliflags.ExitIncomplete, fmt.Errorf("no answer from the service at %s (is pageclass-api running there? give its address with -server URL): %w", server, err)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, nil, err
	}
	if len(b) > maxAnswer {
		return nil, nil, fmt.Errorf("the service's answer is over %d MiB: not pageclass-api's (give its address with -server URL)", maxAnswer>>20)
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("the service answered %d: %s", resp.StatusCode, detail(b))
		if r := reason(b); r != "" {
			err = fmt.Errorf("the service answered %d %s: %s", resp.StatusCode, r, detail(b))
		} else if !isJSON(b) {
			// Not pageclass-api's error body (its HTML was quoted whole):
			// a reverse proxy in front of it answered.
			err = fmt.Errorf("answered %d by something in front of the service (a proxy?), not by pageclass-api: %s", resp.StatusCode, plainText(b))
			if resp.StatusCode == http.StatusRequestEntityTooLarge {
				err = fmt.Errorf("%w; the file is refused as too large before it reaches the service: send a smaller one, or have the proxy's body limit raised to the service's MAX_UPLOAD_MB", err)
			}
		}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable ||
			resp.StatusCode == http.StatusBadGateway || resp.StatusCode == http.StatusGatewayTimeout ||
			resp.StatusCode == http.StatusInsufficientStorage || resp.Header.Get("Retry-After") != "" {
			return nil, nil, &codeError{cliflags.ExitIncomplete, fmt.Errorf("%w (it may pass: try again later)", err)}
		}
		return nil, nil, err
	}
	var a answer
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, nil, fmt.Errorf("unreadable answer: %w", err)
	}
	return &a, b, nil
}

// codeError is an error with the exit code it ends the command with:
// ExitNoInput for a file that cannot be read, ExitIncomplete for a service
// that did not answer or answered that it cannot now (429, 502, 503, 504,
// 507, Retry-After).
type codeError struct {
	code int
	err  error
}

func (e *codeError) Error() string { return e.err.Error() }
func (e *codeError) Unwrap() error { return e.err }

// aliases are the short names of the flags (each listed once, with its
// long name, in the help).
var aliases = map[string]string{"file": "f", "version": "v", "topn": "top", "server": "url"}

// printUsage writes the help: what the command does, each flag once with
// its alias, its argument and its default (flag's own list gave each alias
// a line of its own, "same as -file", and read unlike the other tools').
func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprint(w, `Usage: pageclass-client -file PAGE [flags]

Send a page image or a PDF to a running pageclass-api and print the most
likely categories of each page. Flags (one dash or two):

`)
	alias := map[string]bool{}
	for _, a := range aliases {
		alias[a] = true
	}
	fs.VisitAll(func(f *flag.Flag) {
		if alias[f.Name] {
			return
		}
		names := "-" + f.Name
		if a := aliases[f.Name]; a != "" {
			names = "-" + a + ", " + names
		}
		arg, usage := flag.UnquoteUsage(f)
		if arg != "" {
			names += " " + strings.ToUpper(arg)
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.Name != "token" {
			def = " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "  %s\n        %s%s\n", names, usage, def)
	})
	fmt.Fprint(w, `
Exit codes: 0 done, 1 usage, 2 the file cannot be read, 3 the service
answered an error, 75 the service could not be reached or asked to try
again later. docs/services.md has the rest.
`)
}

// isJSON reports whether b is a JSON document.
func isJSON(b []byte) bool { return json.Valid(bytes.TrimSpace(b)) && len(bytes.TrimSpace(b)) > 0 }

// plainText is an answer body that is not the service's, as one short line:
// its HTML tags dropped, its spaces collapsed, at most 200 characters.
func plainText(b []byte) string {
	t := strings.Join(strings.Fields(htmlTag.ReplaceAllString(string(b), " ")), " ")
	if r := []rune(t); len(r) > 200 {
		t = string(r[:200]) + "…"
	}
	if t == "" {
		return "(an empty answer)"
	}
	return t
}

var htmlTag = regexp.MustCompile(`(?s)<[^>]*>`)

// reason is an error body's reason code ("" when it has none).
func reason(b []byte) string {
	var e struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Reason
}

// detail renders an error body's detail, a string or a validation list.
func detail(b []byte) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(b, &e) != nil || e.Detail == nil {
		return strings.TrimSpace(string(b))
	}
	var s string
	if json.Unmarshal(e.Detail, &s) == nil {
		return s
	}
	var list []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(e.Detail, &list) != nil {
		return string(e.Detail)
	}
	var parts []string
	for _, v := range list {
		loc := ""
		if len(v.Loc) > 0 {
			loc = fmt.Sprint(v.Loc[len(v.Loc)-1]) + ": "
		}
		parts = append(parts, loc+v.Msg)
	}
	if len(parts) == 0 {
		return "an empty validation list"
	}
	return strings.Join(parts, "; ")
}
