package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"archivekit/internal/docrecord"
	"archivekit/internal/licence"
	"archivekit/internal/shard"
	"archivekit/internal/testenv"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/runmeta"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/translator/translatortest"
)

const (
	setupConfig = "../../setup/translate/config.txt"
	paraConfig  = "../../setup/translate/para_config.txt"
	sampleALTO  = "alto/MTX201501307_anon.alto.xml"
)

// env is a test environment pointing the tool at the stand-ins.
type env map[string]string

func newEnv(api *translatortest.Server) env {
	return env{"TRANSLATION_URL": api.URL, "MTAPI_MAX_RETRIES": "2", "MTAPI_BACKOFF_BASE_S": "0.001",
		"LOG_FORMAT": "json", "TRANSLATE_PARA_CONFIG": paraConfig}
}

func (e env) get(k string) string { return e[k] }

type result struct {
	code   int
	stderr string
	out    string
}

func runCLI(t *testing.T, e env, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, e.get, &stdout, &stderr)
	return result{code, stderr.String(), stdout.String()}
}

func startAPI(t *testing.T, cfg translatortest.Config) *translatortest.Server {
	s := translatortest.New(cfg)
	t.Cleanup(s.Close)
	return s
}

// readParadata reads the one run-metadata file in dir.
func readParadata(t *testing.T, dir string) runmeta.Doc {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*_translator.json"))
	if len(m) != 1 {
		t.Fatalf("%d run metadata files in %s", len(m), dir)
	}
	if !regexp.MustCompile(`^\d{6}-\d{6}_translator\.json$`).MatchString(filepath.Base(m[0])) {
		t.Errorf("run metadata name %s", filepath.Base(m[0]))
	}
	b, _ := os.ReadFile(m[0])
	var d runmeta.Doc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestHelpExitCodes: --help says the exit codes, as the README does.
func TestHelpExitCodes(t *testing.T) {
	r := runCLI(t, env{}, "--help")
	if r.code != exitOK || !strings.Contains(r.out+r.stderr, "Exit codes: 0 done") || !strings.Contains(r.out+r.stderr, "75 incomplete") {
		t.Errorf("exit %d, help without the exit codes:\n%s%s", r.code, r.out, r.stderr)
	}
	// Its flags in titled groups, as pageclass's (it was one list of 30).
	last := -1
	for _, title := range []string{"\nInput:\n", "\nOutput:\n", "\nTranslation:\n", "\nBooks (METS, IIIF):\n", "\nDocument records:\n", "\nSource-language order:\n"} {
		at := strings.Index(r.out, title)
		if at < 0 || at < last {
			t.Errorf("help section %q missing or out of order:\n%s", strings.TrimSpace(title), r.out)
		}
		last = at
	}
}

func TestRewriteArgs(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"in", "-src", "cs", "-tgt", "de"}, []string{"in", "--source_lang", "cs", "--target_lang", "de"}},
		{[]string{"-src=sk", "-o", "out", "-c", "x.txt"}, []string{"--source_lang=sk", "--output", "out", "--config", "x.txt"}},
		// -c=FILE is FILE, as in pageclass (kong read "=FILE").
		{[]string{"-c=x.txt", "-o=out"}, []string{"--config=x.txt", "--output=out"}},
		{[]string{"--", "-src"}, []string{"--", "-src"}},
		{[]string{"-srcx", "-s"}, []string{"-srcx", "-s"}},
	} {
		if got := rewriteArgs(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("rewriteArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// The short forms reach the settings.
	_, _, err := parse([]string{"x", "-src", "PL", "-tgt", "de", "-o", "o", "-c", "none.txt"}, env{}.get, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "none.txt") {
		t.Fatalf("missing explicit config: %v", err)
	}
	s, _, err := parse([]string{"x", "-src", "PL", "-tgt", "de", "-o", "o"}, env{}.get, &bytes.Buffer{})
	if err != nil || s.Source != "pl" || s.Target != "de" || s.Output != "o" || s.Input != "x" {
		t.Fatalf("%+v %v", s, err)
	}
	// A long flag written with one dash is that flag, as in pageclass (it
	// was "unknown flag -r").
	s, _, err = parse([]string{"x", "-o", "o", "-resume", "-output-mode=append", "-formats", "xml"}, env{}.get, &bytes.Buffer{})
	if err != nil || !s.Resume || s.Mode != "append" || s.FormatsRaw != "xml" {
		t.Fatalf("-resume -output-mode=append -formats xml: %+v %v", s, err)
	}
	var out bytes.Buffer
	if _, helped, err := parse([]string{"-version"}, env{}.get, &out); !helped || err != nil || !strings.HasPrefix(out.String(), "translate ") {
		t.Errorf("-version: helped %v, %v, %q", helped, err, out.String())
	}
}

// TestALTO runs the real sample end to end: only CONTENT values change,
// 2 backend calls per page with text (1 with --fast-align), the log and the
// run metadata are written.
func TestALTO(t *testing.T) {
	src := testenv.Path(t, sampleALTO)
	orig, _ := os.ReadFile(src)
	for _, fast := range []bool{false, true} {
		api := startAPI(t, translatortest.Config{})
		out := t.TempDir()
		args := []string{src, "-o", out, "-src", "cs", "--vocabulary", ""}
		if fast {
			args = append(args, "--fast-align")
		}
		r := runCLI(t, newEnv(api), args...)
		if r.code != exitOK {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		got, err := os.ReadFile(filepath.Join(out, "MTX201501307_anon_en.alto.xml"))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(got, orig) || !bytes.Equal(alto.MaskTranslatable(got), alto.MaskTranslatable(orig)) {
			t.Fatal("output must differ from the input only inside CONTENT values")
		}
		want := 130 // 65 pages hold text
		if fast {
			want = 65
		}
		if n := int(api.Posts.Load()); n != want {
			t.Errorf("fast=%v: %d translate requests, want %d", fast, n, want)
		}
		f, _ := os.Open(filepath.Join(out, "MTX201501307_anon_log.csv"))
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(rows) < 2 || strings.Join(rows[0], ",") != "file,page_num,line_num,text_cs,text_en,status,score,unit_status,source_lang,lang_source" || rows[1][0] != "MTX201501307_anon" || rows[1][1] != "1" {
			t.Fatalf("log: %v %v", rows[:min(2, len(rows))], err)
		}
		if !strings.Contains(r.stderr, "MTX201501307_anon: batch summary") {
			t.Error("no WARNING summary on the log stream")
		}
		d := readParadata(t, out)
		if d.Status != "completed" || d.SchemaVersion != "2.0" || d.Program != "translator" ||
			d.Statistics.SuccessfullyProcessed != 1 || d.Statistics.BackendCalls != want ||
			d.Config["chunk_limit"] != float64(4000) || d.Config["confidence_threshold"] != 0.2 ||
			!strings.HasPrefix(d.Config["lang_id_model"].(string), "lingua-go") || d.Config["translation_api"] != api.URL {
			t.Errorf("run metadata: %+v", d)
		}
		// Explicit source and no vocabulary: only the hosted engine counts.
		if d.License != "CC BY-NC-SA 4.0" || len(d.LicenseDetail.Components) != 1 || d.LicenseDetail.Components[0].Name != "mtapi_engine" {
			t.Errorf("licence %s from %+v", d.License, d.LicenseDetail.Components)
		}
	}
}

var debrisRE = regexp.MustCompile(`QZX|XQZ|ZXQ|QXZ`)

// TestRecords: the default run (shipped config, auto detection, the real
// vocabulary with the lemmatiser) over the 15 real records, then append
// twice.
func TestRecords(t *testing.T) {
	records := testenv.Path(t, "records")
	vocabulary := testenv.Path(t, "vocabulary.csv")
	lem := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer lem.Close()
	api := startAPI(t, translatortest.Config{})
	e := newEnv(api)
	e["LEMMATIZER_URL"] = lem.URL

	out := t.TempDir()
	r := runCLI(t, e, records, "-c", setupConfig, "--formats", "xml", "-o", out, "--vocabulary", vocabulary)
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	outs, _ := filepath.Glob(filepath.Join(out, "*_en.xml"))
	logs, _ := filepath.Glob(filepath.Join(out, "*_log.csv"))
	if len(outs) != 15 || len(logs) != 15 {
		t.Fatalf("%d outputs, %d logs", len(outs), len(logs))
	}
	for _, p := range append(outs, logs...) {
		b, _ := os.ReadFile(p)
		if debrisRE.Match(b) {
			t.Errorf("%s: placeholder debris", p)
		}
	}
	d := readParadata(t, out)
	if d.License != "CC BY-NC-SA 4.0" {
		t.Errorf("default run licence %s", d.License)
	}
	var names []string
	for _, c := range d.LicenseDetail.Components {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "langid_lingua,mtapi_engine,lemmatizer_engine,lemmatizer_models,records_vocabulary,thesaurus_data" {
		t.Errorf("components %s", got)
	}
	if d.Config["vocabulary_protected_terms_total"].(float64) == 0 {
		t.Error("no protected terms recorded")
	}
	if lem.Requests.Load() == 0 {
		t.Error("lemmatiser never called")
	}

	// Append twice equals append once, with no backend call the second time.
	once, twice := t.TempDir(), t.TempDir()
	if r := runCLI(t, e, records, "-c", setupConfig, "--formats", "xml", "-o", once, "--output-mode", "append", "--vocabulary", ""); r.code != exitOK {
		t.Fatalf("append once: exit %d: %s", r.code, r.stderr)
	}
	before := api.Posts.Load()
	if r := runCLI(t, e, once, "-c", setupConfig, "--formats", "xml", "-o", twice, "--output-mode", "append", "--vocabulary", ""); r.code != exitOK {
		t.Fatalf("append twice: exit %d: %s", r.code, r.stderr)
	}
	if api.Posts.Load() != before {
		t.Errorf("second append made %d backend calls", api.Posts.Load()-before)
	}
	outs, _ = filepath.Glob(filepath.Join(once, "*_en.xml"))
	for _, p := range outs {
		a, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(twice, strings.TrimSuffix(filepath.Base(p), ".xml")+"_en.xml"))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: second append differs (%v)", p, err)
		}
	}
}

func TestExitCodes(t *testing.T) {
	record := testenv.Path(t, "records/C-9107617A.xml")
	empty := t.TempDir()
	devices := t.TempDir() // a link to /dev/zero named like a record
	if err := os.Symlink("/dev/zero", filepath.Join(devices, "zero.alto.xml")); err != nil {
		t.Fatal(err)
	}
	// A URL list with a file path among its URLs: before, exit 3 ("failure")
	// logged as "no input", with no run metadata.
	badList := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(badList, []byte("# records\n"+record+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  translatortest.Config
		env  env
		args []string
		code int
		says string
	}{
		{"URL list with a path", translatortest.Config{}, nil, []string{badList}, exitUsage, `urls.txt:2: not an http(s) URL`},
		{"unknown flag", translatortest.Config{}, nil, []string{record, "--nope"}, exitUsage, "unknown flag"},
		{"bad output mode", translatortest.Config{}, nil, []string{record, "--output-mode", "overwrite"}, exitUsage, "overwrite"},
		{"bad backend", translatortest.Config{}, nil, []string{record, "--backend", "google"}, exitUsage, "google"},
		{"missing config", translatortest.Config{}, nil, []string{record, "-c", "/nonexistent/config.txt"}, exitUsage, "config.txt"},
		{"missing explicit vocabulary", translatortest.Config{}, nil, []string{record, "--vocabulary", "/nonexistent.csv"}, exitUsage, "nonexistent.csv"},
		{"record out without baseline", translatortest.Config{}, nil, []string{record, "--document-json-out", "x.json"}, exitUsage, "doc_id"},
		{"bad language", translatortest.Config{}, nil, []string{record, "-tgt", "english"}, exitUsage, "english"},
		{"missing input", translatortest.Config{}, nil, []string{"/nonexistent/dir"}, exitNoInput, "no input"},
		{"no matching files", translatortest.Config{}, nil, []string{empty}, exitNoInput, "no input"},
		{"link to /dev/zero", translatortest.Config{}, nil, []string{devices}, exitFailure, "not a regular file (a character device)"},
		// A service answering 503 after every retry is a passing failure
		// (issue 32): the input stays to do, exit exitIncomplete (before:
		// recorded failed, exit 3 "no document was translated").
		{"always failing API", translatortest.Config{FailAlways: 503}, nil, []string{record}, exitIncomplete, "run again with --resume"},
		{"ct2 without a model", translatortest.Config{}, nil, []string{record, "--backend", "ct2"}, exitUsage, "CT2_MODEL_DIR is not set"},
		{"chat without LLM_BASE_URL", translatortest.Config{}, env{"TRANSLATION_BACKEND": "chat_compatible", "LLM_MODEL": "m"}, []string{record}, exitUsage, "LLM_BASE_URL"},
		{"chat without LLM_MODEL", translatortest.Config{}, env{"LLM_BASE_URL": "http://127.0.0.1:1/v1"}, []string{record, "--backend", "chat_compatible"}, exitUsage, "LLM_MODEL"},
		{"429 then success", translatortest.Config{Fail: []int{429, 429}, RetryAfter: "0"}, nil, []string{record}, exitOK, ""},
		{"slow API", translatortest.Config{Delay: 50 * time.Millisecond}, nil, []string{record}, exitOK, ""},
		// Batches answered with garbage, lines one by one translated: the
		// lines are sent alone.
		{"garbage answers", translatortest.Config{Garbage: garbageBatches}, nil, []string{testenv.Path(t, sampleALTO), "-src", "cs", "--fast-align"}, exitOK, "line-count mismatches"},
		// One text for every request (a sign-in page served as text):
		// refused, nothing written, the run incomplete. Before, every
		// line sent alone got it as its translation, and the run ended 0.
		{"one answer for every text", translatortest.Config{Garbage: func(string) string { return "Please sign in to the network" }}, nil,
			[]string{testenv.Path(t, sampleALTO), "-src", "cs", "--fast-align"}, exitIncomplete, "answers the same text whatever it is sent"},
		{"help", translatortest.Config{}, nil, []string{"--help"}, exitOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			api := startAPI(t, c.cfg)
			e := newEnv(api)
			for k, v := range c.env {
				e[k] = v
			}
			out := t.TempDir()
			args := append(append([]string{}, c.args...), "-o", out, "--xpaths", "../../setup/translate/amcr-fields.txt")
			if c.name == "unknown flag" || c.name == "help" {
				args = c.args
			}
			r := runCLI(t, e, args...)
			if r.code != c.code || !strings.Contains(r.stderr+r.out, c.says) {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", r.code, c.code, c.says, r.stderr)
			}
			// No input is said with its cause in error, as pageclass says it.
			if c.code == exitNoInput && !strings.Contains(r.stderr, `"level":"ERROR","msg":"no input","error":`) {
				t.Errorf("no input without its cause in error:\n%s", r.stderr)
			}
			if c.code == exitFailure || c.code == exitIncomplete {
				d := readParadata(t, out)
				// A run left to finish (exit 75) is incomplete, not failed.
				want := map[int]string{exitFailure: "failed", exitIncomplete: "incomplete"}[c.code]
				if d.Status != want || d.Error == "" {
					t.Errorf("run metadata of exit %d: status %q error %q, want %s", c.code, d.Status, d.Error, want)
				}
				// Components are recorded when used, not only after success.
				if c.cfg.FailAlways != 0 && d.License != "CC BY-NC-SA 4.0" {
					t.Errorf("failed run licence %s (%v)", d.License, d.LicenseDetail.Components)
				}
			}
		})
	}
}

// TestPrecedence: flag, then config, then environment, then default, for
// --backend and --output-mode.
func TestPrecedence(t *testing.T) {
	dir := t.TempDir()
	writeCfg := func(lines string) string {
		p := filepath.Join(dir, "c"+regexp.MustCompile(`\W`).ReplaceAllString(lines, "")+".txt")
		os.WriteFile(p, []byte("[translate]\n"+lines+"\n"), 0o644)
		return p
	}
	for _, c := range []struct {
		name           string
		flags          []string
		config         string
		env            env
		backend, bFrom string
		mode, modeFrom string
	}{
		{"default", nil, "", nil, "mtapi", "default", "replace", "default"},
		{"environment", nil, "", env{"TRANSLATION_BACKEND": "ct2", "OUTPUT_MODE": "append"}, "ct2", "environment", "append", "environment"},
		{"config over environment", nil, "translation_backend = chat_compatible\noutput_mode = replace", env{"TRANSLATION_BACKEND": "ct2", "OUTPUT_MODE": "append"}, "chat_compatible", "config", "replace", "config"},
		{"flag over config", []string{"--backend", "mtapi", "--output-mode", "append"}, "translation_backend = ct2\noutput_mode = replace", env{"OUTPUT_MODE": "replace"}, "mtapi", "command line", "append", "command line"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"in"}, c.flags...)
			if c.config != "" {
				args = append(args, "-c", writeCfg(c.config))
			}
			s, _, err := parse(args, env(c.env).get, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Backend != c.backend || s.BackendFrom != c.bFrom || s.Mode != c.mode || s.ModeFrom != c.modeFrom {
				t.Errorf("backend %s (%s), mode %s (%s)", s.Backend, s.BackendFrom, s.Mode, s.ModeFrom)
			}
		})
	}
	// A sectionless file and config keys reach the settings.
	p := filepath.Join(dir, "plain.txt")
	os.WriteFile(p, []byte("# plain\ntarget_lang = de\noutput = outdir\noutput_mode = append\nbogus = 1\n"), 0o644)
	s, _, err := parse([]string{"in", "-c", p}, env{}.get, &bytes.Buffer{})
	if err != nil || s.Target != "de" || s.Output != "outdir" || s.Mode != "append" || s.DownloadDir != filepath.Join("outdir", "downloaded_inputs") || len(s.ConfigUnknown) != 1 {
		t.Errorf("%+v %v", s, err)
	}
	// The unknown key is warned about as pageclass warns: the file and the
	// key apart (it was all in the message).
	if r := runCLI(t, env{"LOG_FORMAT": "json"}, "--merge", "-c", p, "-o", t.TempDir()); !strings.Contains(r.stderr,
		`"level":"WARN","msg":"unknown config key (misspelt?)","file":`+strconv.Quote(p)+`,"key":"[translate] bogus"`) {
		t.Errorf("the unknown key's warning:\n%s", r.stderr)
	}
	// End to end: the config's backend is used unless the flag overrides it.
	record := testenv.Path(t, "records/C-9107617A.xml")
	api := startAPI(t, translatortest.Config{})
	cfg := writeCfg("translation_backend = ct2")
	if r := runCLI(t, newEnv(api), record, "-c", cfg, "-o", t.TempDir(), "--xpaths", "../../setup/translate/amcr-fields.txt"); r.code != exitUsage || !strings.Contains(r.stderr, "CT2_MODEL_DIR") {
		t.Errorf("config backend ct2: exit %d", r.code)
	}
	// A bad ct2 environment is a usage error before any model is loaded,
	// whichever variable is wrong (before, a missing folder or an unknown
	// family surfaced at load time as a failed run, exit 3).
	for _, bad := range []env{{"CT2_MODEL_DIR": filepath.Join(dir, "absent")}, {"CT2_MODEL_DIR": dir, "CT2_MODEL_FAMILY": "marian"}} {
		e := newEnv(api)
		for k, v := range bad {
			e[k] = v
		}
		if r := runCLI(t, e, record, "-c", cfg, "-o", t.TempDir(), "--xpaths", "../../setup/translate/amcr-fields.txt"); r.code != exitUsage || !strings.Contains(r.stderr, "CT2_MODEL_") {
			t.Errorf("ct2 with %v: exit %d, want %d naming the variable: %s", bad, r.code, exitUsage, r.stderr)
		}
	}
	if r := runCLI(t, newEnv(api), record, "-c", cfg, "--backend", "mtapi", "-o", t.TempDir(), "--xpaths", "../../setup/translate/amcr-fields.txt"); r.code != exitOK {
		t.Errorf("flag mtapi over config ct2: exit %d: %s", r.code, r.stderr)
	}
}

// TestURLInputs: a URL is downloaded to --download-dir and translated; a
// .txt list of URLs works the same, a failing URL is skipped and recorded.
func TestURLInputs(t *testing.T) {
	rec, _ := os.ReadFile(testenv.Path(t, "records/C-9107617A.xml"))
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("identifier") == "https://api.aiscr.cz/id/C-9107617A" {
			w.Write(rec)
			return
		}
		http.NotFound(w, r)
	}))
	defer files.Close()
	api := startAPI(t, translatortest.Config{})
	good := files.URL + "/oai?verb=GetRecord&metadataPrefix=oai_amcr&identifier=https://api.aiscr.cz/id/C-9107617A"
	bad := files.URL + "/oai?verb=GetRecord&identifier=https://api.aiscr.cz/id/C-MISSING"

	out := t.TempDir()
	r := runCLI(t, newEnv(api), good, "-o", out, "--xpaths", "../../setup/translate/amcr-fields.txt")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(out, "downloaded_inputs", "C-9107617A.xml")); err != nil || !bytes.Equal(b, rec) {
		t.Errorf("download: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "C-9107617A_en.xml")); err != nil {
		t.Error(err)
	}

	list := filepath.Join(t.TempDir(), "urls.txt")
	os.WriteFile(list, []byte("# records\n"+good+"\n\n"+bad+"\n"), 0o644)
	out, dl := t.TempDir(), t.TempDir()
	r = runCLI(t, newEnv(api), list, "-o", out, "--download-dir", dl, "--xpaths", "../../setup/translate/amcr-fields.txt")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	d := readParadata(t, out)
	if d.Statistics.InputFilesTotal != 2 || d.Statistics.SuccessfullyProcessed != 1 || len(d.SkippedFilesDetail) != 1 ||
		d.SkippedFilesDetail[0].File != bad || !strings.Contains(d.SkippedFilesDetail[0].Reason, "404") {
		t.Errorf("statistics %+v skipped %+v", d.Statistics, d.SkippedFilesDetail)
	}
	if _, err := os.Stat(filepath.Join(dl, "C-9107617A.xml")); err != nil {
		t.Error(err)
	}
	os.WriteFile(list, []byte("not a url\n"), 0o644)
	if r := runCLI(t, newEnv(api), list, "-o", t.TempDir()); r.code != exitUsage || !strings.Contains(r.stderr, "urls.txt:1") {
		t.Errorf("bad list: exit %d %s", r.code, r.stderr)
	}
}

// TestDocumentRecord: the record gets the translation block, keeps its
// doc_id and validates against the spec's schema.
func TestDocumentRecord(t *testing.T) {
	schema, err := docrecord.LoadSchema(testenv.Path(t, "../../spec/document.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "CTX1.document.json")
	os.WriteFile(base, []byte(`{"schema_version":"1.0","doc_id":"CTX1","source":{"filename":"CTX1.pdf"}}`), 0o644)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", out, "--fast-align", "--vocabulary", "",
		"--document-json", base, "--output-mode", "append")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	rec, err := docrecord.Load(filepath.Join(out, "CTX1.document.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.Validate(rec); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{"doc_id": "CTX1", "translations/source_lang": "cs", "translations/target_lang": "en",
		"translations/backend": "mtapi", "translations/output_mode": "append",
		// relative to the record's folder (an absolute path before)
		"derived_from/translated_xml": "MTX201501307_anon_en.alto.xml",
		"translations/license":        "CC BY-NC-SA 4.0", "source/filename": "CTX1.pdf"} {
		if got, _ := rec.Get(strings.Split(path, "/")...); got != want {
			t.Errorf("%s = %v, want %s", path, got, want)
		}
	}
	d := readParadata(t, out)
	if d.Statistics.OutputCountsByType["json"] != 1 {
		t.Errorf("outputs %v", d.Statistics.OutputCountsByType)
	}
	// A doc_id with separators is data: the record is written inside the
	// output folder, under an escaped name.
	for id, name := range map[string]string{"../escaped": "..%2Fescaped.document.json", "a/b": "a%2Fb.document.json"} {
		hostile := filepath.Join(t.TempDir(), "hostile.json")
		os.WriteFile(hostile, []byte(`{"schema_version":"1.0","doc_id":"`+id+`"}`), 0o644)
		parent := t.TempDir()
		o := filepath.Join(parent, "out")
		if r := runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", o, "-src", "cs", "--fast-align", "--vocabulary", "",
			"--document-json", hostile); r.code != exitOK {
			t.Fatalf("doc_id %q: exit %d: %s", id, r.code, r.stderr)
		}
		if rec, err := docrecord.Load(filepath.Join(o, name)); err != nil || rec.DocID() != id {
			t.Errorf("doc_id %q: record not at %s: %v", id, name, err)
		}
		if _, err := os.Stat(filepath.Join(parent, "escaped.document.json")); err == nil {
			t.Errorf("doc_id %q: a record was written outside the output folder", id)
		}
	}
	// --document-json-out is honoured.
	dst := filepath.Join(t.TempDir(), "rec.json")
	if r := runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", t.TempDir(), "-src", "cs", "--fast-align", "--vocabulary", "",
		"--document-json", base, "--document-json-out", dst); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(dst); err != nil {
		t.Error(err)
	}
	// A record that could not be written is said before the work.
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o644)
	noRec := t.TempDir()
	r = runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", noRec, "-src", "cs", "--fast-align", "--vocabulary", "",
		"--document-json", base, "--document-json-out", filepath.Join(file, "rec.json"))
	if r.code != exitFailure || !strings.Contains(r.stderr, "--document-json-out") || !strings.Contains(r.stderr, "can write") {
		t.Errorf("record folder a file: exit %d, want %d naming the flag: %s", r.code, exitFailure, r.stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(noRec, "*.alto.xml")); len(m) != 0 {
		t.Errorf("translated before the record's folder was checked: %v", m)
	}
}

// TestXSD: this build cannot validate XML Schema; --xsd says so in a warning
// (log stream and run metadata) instead of pretending the output passed.
func TestXSD(t *testing.T) {
	dir := t.TempDir()
	// A schema path that is not there is a usage error naming it, with or
	// without xmllint, and nothing is written.
	missing := filepath.Join(dir, "missing.xsd")
	out := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, env{}, testenv.Path(t, "records/C-9107617A.xml"), "-o", out,
		"--xpaths", "../../setup/translate/amcr-fields.txt", "--xsd", missing)
	if _, err := os.Stat(out); r.code != exitUsage || !strings.Contains(r.stderr, missing) || err == nil {
		t.Errorf("--xsd %s: exit %d, output folder written: %v: %s", missing, r.code, err == nil, r.stderr)
	}
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("xmllint (libxml2-utils) is not installed")
	}
	// a schema the OAI-PMH envelope cannot satisfy: its root must be <record>
	bad := filepath.Join(dir, "record.xsd")
	os.WriteFile(bad, []byte(`<?xml version="1.0"?><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema"><xs:element name="record"/></xs:schema>`), 0o644)
	// a schema any document satisfies (lax wildcard)
	lax := filepath.Join(dir, "any.xsd")
	os.WriteFile(lax, []byte(`<?xml version="1.0"?><xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="http://www.openarchives.org/OAI/2.0/"><xs:element name="OAI-PMH"><xs:complexType><xs:sequence><xs:any processContents="skip" minOccurs="0" maxOccurs="unbounded"/></xs:sequence><xs:anyAttribute processContents="skip"/></xs:complexType></xs:element></xs:schema>`), 0o644)
	for _, c := range []struct {
		xsd, says string
	}{{bad, "does not validate against"}, {lax, ""}} {
		api := startAPI(t, translatortest.Config{})
		out := t.TempDir()
		r := runCLI(t, newEnv(api), testenv.Path(t, "records/C-9107617A.xml"), "-o", out,
			"--xpaths", "../../setup/translate/amcr-fields.txt", "--xsd", c.xsd)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", c.xsd, r.code, r.stderr)
		}
		d := readParadata(t, out)
		warnings := strings.Join(d.Warnings, "\n")
		if c.says == "" && strings.Contains(warnings, "xsd") {
			t.Errorf("%s: unexpected warnings %v", c.xsd, d.Warnings)
		}
		if c.says != "" && !strings.Contains(warnings, c.says) {
			t.Errorf("%s: warnings %v lack %q", c.xsd, d.Warnings, c.says)
		}
		if d.Config["xsd_url"] != c.xsd {
			t.Errorf("xsd_url %v", d.Config["xsd_url"])
		}
	}
}

// TestCT2FastAlign: `translate --backend ct2 --fast-align` on the real ALTO
// sample with a tiny converted CTranslate2 model (random weights, nmt3
// family): only CONTENT values change, and the licence resolves through the
// permissive recipe (ct2 runtime MIT + nmt3 CC BY 4.0, explicit source, no
// vocabulary).
func TestCT2FastAlign(t *testing.T) {
	fx := testenv.Fixtures(t)
	src := testenv.Path(t, sampleALTO)
	orig, _ := os.ReadFile(src)
	out := t.TempDir()
	e := env{"TRANSLATE_PARA_CONFIG": paraConfig, "LOG_FORMAT": "json",
		"CT2_MODEL_DIR": filepath.Join(fx, "ct2", "translator"), "CT2_MODEL_FAMILY": "nmt3",
		"CT2_COMPUTE_TYPE": "float32", "CT2_LANGUAGES": "cs,en",
		// the random test model answers 16 tokens whatever the input
		"CT2_GUARD_MIN_RATIO": "0.01", "CT2_GUARD_MAX_RATIO": "100", "CT2_MAX_INPUT_CHARS": "300", "CT2_MAX_LENGTH": "16"}
	r := runCLI(t, e, src, "-o", out, "-src", "cs", "--vocabulary", "", "--backend", "ct2", "--fast-align")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	got, err := os.ReadFile(filepath.Join(out, "MTX201501307_anon_en.alto.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(got, orig) || !bytes.Equal(alto.MaskTranslatable(got), alto.MaskTranslatable(orig)) {
		t.Fatal("output must differ from the input only inside CONTENT values")
	}
	d := readParadata(t, out)
	if d.Status != "completed" || d.License != "CC BY 4.0" {
		t.Errorf("run metadata: status %s licence %s (%+v)", d.Status, d.License, d.LicenseDetail.Components)
	}
	// The log carries the model's score beside each written line's status.
	f, err := os.Open(filepath.Join(out, "MTX201501307_anon_log.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][6] != "score" {
		t.Fatalf("log: %v %v", err, rows[:1])
	}
	scored := 0
	for _, r := range rows[1:] {
		if _, err := strconv.ParseFloat(r[6], 64); err == nil && (r[5] == "ok" || r[5] == "retried") {
			scored++
		} else if r[6] != "" {
			t.Fatalf("row %v: score %q", r, r[6])
		}
		// --fast-align places a block's words on its lines by proportion:
		// a written line's unit status says so.
		if r[5] == "ok" && r[7] != "approx_alignment" {
			t.Errorf("row %v: unit_status %q, want approx_alignment", r, r[7])
		}
	}
	if scored == 0 {
		t.Error("no written line has a score")
	}
}

// recordsTree copies the records into three folders box0..box2 of a new
// folder, with a broken record box1/broken.xml among them.
func recordsTree(t *testing.T, recs []string) string {
	t.Helper()
	root := t.TempDir()
	for i, src := range recs {
		dir := filepath.Join(root, fmt.Sprintf("box%d", i%3))
		os.MkdirAll(dir, 0o755)
		b, _ := os.ReadFile(src)
		os.WriteFile(filepath.Join(dir, filepath.Base(src)), b, 0o644)
	}
	os.WriteFile(filepath.Join(root, "box1", "broken.xml"), []byte("<record><unclosed>"), 0o644)
	return root
}

// TestShards: three runs with --shard 0/3 … 2/3 into one output folder, one
// of them reading the same tree copied elsewhere (another mount point),
// translate every record exactly once, with the same outputs as one run
// over the whole folder; a broken file is reported by exactly one shard.
func TestShards(t *testing.T) {
	recs, _ := filepath.Glob(filepath.Join(filepath.Dir(testenv.Path(t, "records/C-9107617A.xml")), "*.xml"))
	if len(recs) < 10 {
		t.Fatalf("%d records", len(recs))
	}
	rootA, rootB := recordsTree(t, recs), recordsTree(t, recs)
	api := startAPI(t, translatortest.Config{})
	args := func(root, out string) []string { return recordArgs(root, out) }
	whole := t.TempDir()
	if r := runCLI(t, newEnv(api), args(rootA, whole)...); r.code != exitOK {
		t.Fatalf("whole run: exit %d: %s", r.code, r.stderr)
	}
	shared := t.TempDir()
	var done, skipped int
	for i := 0; i < 3; i++ {
		root := rootA
		if i == 1 {
			root = rootB
		}
		r := runCLI(t, newEnv(api), append(args(root, shared), "--shard", fmt.Sprintf("%d/3", i))...)
		if r.code != exitOK {
			t.Fatalf("shard %d: exit %d: %s", i, r.code, r.stderr)
		}
		m, _ := filepath.Glob(filepath.Join(shared, fmt.Sprintf("*_translator_shard-%d-of-3.json", i)))
		if len(m) != 1 {
			t.Fatalf("shard %d: %d run metadata files", i, len(m))
		}
		b, _ := os.ReadFile(m[0])
		var d runmeta.Doc
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		if d.Status != "completed" || d.Config["shard"] != fmt.Sprintf("%d/3", i) || d.Config["shard_inputs_all"] != float64(len(recs)+1) {
			t.Errorf("shard %d run metadata: status %s config %v", i, d.Status, d.Config)
		}
		done += d.Statistics.SuccessfullyProcessed
		skipped += d.Statistics.SkippedFiles
	}
	wd := readParadata(t, whole)
	if done != wd.Statistics.SuccessfullyProcessed || skipped != 1 || wd.Statistics.SkippedFiles != 1 {
		t.Errorf("shards translated %d and skipped %d; the whole run %d and %d", done, skipped, wd.Statistics.SuccessfullyProcessed, wd.Statistics.SkippedFiles)
	}
	// Every output of the whole run, byte for byte, and nothing else (the
	// ledger folder, with its lock files, is not among the outputs).
	want, got := outputs(t, whole), outputs(t, shared)
	if len(want) < len(recs) || len(got) != len(want) {
		t.Fatalf("%d output files from the shards, %d from the whole run", len(got), len(want))
	}
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s differs between the sharded and the whole run", name)
		}
	}
	if r := runCLI(t, newEnv(api), append(args(rootA, t.TempDir()), "--shard", "3/3")...); r.code != exitUsage || !strings.Contains(r.stderr, "0 <= i < n") {
		t.Errorf("--shard 3/3: exit %d: %s", r.code, r.stderr)
	}
}

// TestVocabularyLookup: a relative vocabulary in the configuration is taken
// from the configuration's folder first, then from the working directory
// (where load-vocab writes its default data_samples/vocabulary.csv), and a
// file found nowhere keeps its path beside the configuration.
func TestVocabularyLookup(t *testing.T) {
	cases := []struct {
		name             string
		besideCfg, inCwd bool
		want             string // relative to the config folder ("cfg/") or the working directory
	}{
		{"beside the configuration", true, false, "cfg/data_samples/vocabulary.csv"},
		{"both: the configuration's folder wins", true, true, "cfg/data_samples/vocabulary.csv"},
		{"only in the working directory (load-vocab's default)", false, true, "data_samples/vocabulary.csv"},
		{"nowhere", false, false, "cfg/data_samples/vocabulary.csv"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			t.Chdir(work)
			os.MkdirAll(filepath.Join("cfg", "data_samples"), 0o755)
			os.MkdirAll("data_samples", 0o755)
			cfg := filepath.Join(work, "cfg", "config.txt")
			os.WriteFile(cfg, []byte("vocabulary = data_samples/vocabulary.csv\n"), 0o644)
			if c.besideCfg {
				os.WriteFile(filepath.Join("cfg", "data_samples", "vocabulary.csv"), []byte("cs,en\n"), 0o644)
			}
			if c.inCwd {
				os.WriteFile(filepath.Join("data_samples", "vocabulary.csv"), []byte("cs,en\n"), 0o644)
			}
			s, _, err := parse([]string{"in", "-c", cfg}, env{}.get, &bytes.Buffer{})
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if strings.HasPrefix(want, "cfg/") {
				want = filepath.Join(work, want)
			}
			if s.Vocabulary != want {
				t.Errorf("vocabulary %q, want %q", s.Vocabulary, want)
			}
		})
	}
}

// TestRunMetadataSameSecond: runs started in the same second on one output
// folder each keep their own run metadata (the stamp is claimed
// exclusively), sharded or not.
func TestRunMetadataSameSecond(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 23, 2, 0, 0, 0, time.UTC)
	sh, err := shard.Parse("1/3")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range []shard.Spec{{}, {}, sh, sh} {
		pd, err := newRunRecord(dir, start, s, &licence.Components{}, &translator.Usage{}, env{}.get)
		if err != nil {
			t.Fatal(err)
		}
		if err := pd.Finish(nil); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, filepath.Base(pd.path))
	}
	want := []string{"261123-020000_translator.json", "261123-020000-2_translator.json",
		"261123-020000_translator_shard-1-of-3.json", "261123-020000-2_translator_shard-1-of-3.json"}
	if !slices.Equal(paths, want) {
		t.Errorf("run metadata files %v, want %v", paths, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		t.Errorf("%d files in the output folder, want 4", len(ents))
	}
}

// garbageBatches answers a batch of lines with garbage and a single line
// with its translation.
func garbageBatches(in string) string {
	if strings.Contains(in, "\n") {
		return "<html>oops</html>"
	}
	return translatortest.Translate(in)
}

// A target language the backend does not offer is refused before any
// document, naming the target and the targets offered (before, every
// document failed in turn, exit 3, without naming the target).
func TestTargetNotOffered(t *testing.T) {
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", out, "--target_lang", "xx", "--vocabulary", "")
	if r.code != exitUsage || !strings.Contains(r.stderr, "--source_lang/--target_lang: target language xx: the backend does not translate into it; it translates into en") ||
		api.Posts.Load() != 0 {
		t.Fatalf("exit %d, %d translate requests; want %d naming xx and the pairs:\n%s", r.code, api.Posts.Load(), exitUsage, r.stderr)
	}
}

// A baseline that fails the record schema is refused before anything is
// translated (exit 1, no backend call): no valid record can be made from it,
// and a failing record is never written (spec 2.4 rule 4).
func TestDocumentRecordInvalidBaseline(t *testing.T) {
	base := filepath.Join(t.TempDir(), "CTX1.document.json")
	os.WriteFile(base, []byte(`{"schema_version":"1.0","doc_id":"CTX1","derived_from":{"scan":5}}`), 0o644)
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), testenv.Path(t, sampleALTO), "-o", out, "--vocabulary", "", "--document-json", base)
	if r.code != exitUsage || !strings.Contains(r.stderr, "fails schema") || !strings.Contains(r.stderr, base) || api.Posts.Load() != 0 {
		t.Errorf("exit %d, %d backend calls: %s", r.code, api.Posts.Load(), r.stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) != 0 {
		t.Errorf("written: %v", m)
	}
}

// A configuration of one's own that names no field list translates
// metadata with the field list found as the other set-up files are (here
// the built-in one); before, the default name was looked for beside the
// configuration and the error said that file had named it.
func TestConfigWithoutFields(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "my.txt")
	if err := os.WriteFile(cfg, []byte("source_lang = cs\noutput_mode = append\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), testenv.Path(t, "records/C-9107617A.xml"), "-o", out, "-c", cfg, "--vocabulary", "")
	if r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if d := readParadata(t, out); d.Statistics.UnitsTranslated == 0 {
		t.Errorf("nothing translated: %s", r.stderr)
	}
}

// A configured field list that cannot be read is said once before the
// run (it was only each metadata document's failure, one after another);
// the records fail naming it and an ALTO file beside them is translated.
func TestConfigFieldsUnreadable(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "my.txt")
	writeFile(t, cfg, []byte("source_lang = cs\nfields = missing-fields.txt\n"))
	in := filepath.Join(dir, "in")
	writeFile(t, filepath.Join(in, "record.xml"), readOrFatal(t, testenv.Path(t, "records/C-9107617A.xml")))
	writeFile(t, filepath.Join(in, "page.alto.xml"), readOrFatal(t, testenv.Path(t, sampleALTO)))
	api := startAPI(t, translatortest.Config{})
	out := t.TempDir()
	r := runCLI(t, newEnv(api), in, "-o", out, "-c", cfg, "--vocabulary", "", "--formats", "alto.xml,xml")
	// Exit 0: something was translated (spec 4.1); the record is a failure.
	if r.code != exitOK || !strings.Contains(r.stderr, "record.xml: metadata document but the field list is unreadable") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	before, _, _ := strings.Cut(r.stderr, "record.xml:")
	if !strings.Contains(before, "field list cannot be read") || !strings.Contains(before, "missing-fields.txt") {
		t.Errorf("no warning naming the field list before the first document:\n%s", r.stderr)
	}
	if d := readParadata(t, out); d.Statistics.UnitsTranslated == 0 {
		t.Errorf("the ALTO file was not translated: %s", r.stderr)
	}
}

// An output folder that cannot be made is named whole, with how to give
// another (it said "mkdir ./data_samples: permission denied" and no more).
func TestOutputFolderUnmade(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "a-file")
	writeFile(t, blocker, []byte("x"))
	api := startAPI(t, translatortest.Config{})
	r := runCLI(t, newEnv(api), testenv.Path(t, "records/C-9107617A.xml"), "-o", filepath.Join(blocker, "out"), "--vocabulary", "")
	if r.code != exitFailure || !strings.Contains(r.stderr, filepath.Join(blocker, "out")) || !strings.Contains(r.stderr, "give -o DIR") {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

// A TZ this program cannot read is said (the stamps were UTC without a
// word, while date(1) read the zone).
func TestUnknownZoneSaid(t *testing.T) {
	api := startAPI(t, translatortest.Config{})
	e := newEnv(api)
	e["TZ"] = "XYZ-13:45"
	r := runCLI(t, e, testenv.Path(t, "records/C-9107617A.xml"), "-o", t.TempDir(), "--vocabulary", "")
	if r.code != exitOK || !strings.Contains(r.stderr, `TZ=\"XYZ-13:45\" is not a time zone this program knows`) {
		t.Errorf("exit %d: %s", r.code, r.stderr)
	}
}

// TestCT2ModelNamedAndResumed: a ct2 run's metadata names its model (folder,
// digest, family, languages), and --resume with another model translates
// again instead of keeping the first model's outputs (the ledger's
// configuration had no model in it: the second model's run said
// "completed" over the first one's translations).
func TestCT2ModelNamedAndResumed(t *testing.T) {
	fx := testenv.Fixtures(t)
	model := filepath.Join(fx, "ct2", "translator")
	other := filepath.Join(t.TempDir(), "other")
	entries, err := os.ReadDir(model)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		writeFile(t, filepath.Join(other, e.Name()), readOrFatal(t, filepath.Join(model, e.Name())))
	}
	writeFile(t, filepath.Join(other, "NOTES"), []byte("a second model: its files differ\n"))
	src := testenv.Path(t, sampleALTO)
	out := t.TempDir()
	e := env{"TRANSLATE_PARA_CONFIG": paraConfig, "LOG_FORMAT": "json", "CT2_MODEL_DIR": model, "CT2_MODEL_FAMILY": "nmt3",
		"CT2_COMPUTE_TYPE": "float32", "CT2_LANGUAGES": "cs,en",
		"CT2_GUARD_MIN_RATIO": "0.01", "CT2_GUARD_MAX_RATIO": "100", "CT2_MAX_INPUT_CHARS": "300", "CT2_MAX_LENGTH": "16"}
	if r := runCLI(t, e, src, "-o", out, "-src", "cs", "--vocabulary", "", "--backend", "ct2", "--fast-align"); r.code != exitOK {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	first := readParadata(t, out)
	digest, _ := first.Config["ct2_model_digest"].(string)
	if !strings.HasPrefix(digest, "sha256:") || first.Config["ct2_model_dir"] != model || first.Config["ct2_model_family"] != "nmt3" || first.Config["ct2_languages"] != "cs,en" {
		t.Fatalf("run metadata does not name the model: %v", first.Config)
	}
	e["CT2_MODEL_DIR"] = other
	r := runCLI(t, e, src, "-o", out, "-src", "cs", "--vocabulary", "", "--backend", "ct2", "--fast-align", "--resume")
	if r.code != exitOK {
		t.Fatalf("resumed with another model: exit %d: %s", r.code, r.stderr)
	}
	m, _ := filepath.Glob(filepath.Join(out, "*_translator.json"))
	var second *runmeta.Doc
	for _, f := range m {
		var d runmeta.Doc
		if err := json.Unmarshal(readOrFatal(t, f), &d); err != nil {
			t.Fatal(err)
		}
		if d.Config["ct2_model_dir"] == other {
			second = &d
		}
	}
	if second == nil || second.Config["ct2_model_digest"] == digest || second.Statistics.SuccessfullyProcessed != 1 {
		t.Fatalf("resumed with another model: %d run metadata files, the second %+v (want the document translated again, under the other digest)", len(m), second)
	}
}

// TestCT2ModelUnloadable: a model folder the backend cannot load is a usage
// error (exit 1) naming the folder and why, and nothing is written to the
// output folder (it was exit 3 with a failed run metadata, an empty
// failures table and a ledger folder).
func TestCT2ModelUnloadable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	writeFile(t, filepath.Join(dir, "model.bin"), nil)
	writeFile(t, filepath.Join(dir, "config.json"), []byte("{}"))
	out := filepath.Join(t.TempDir(), "out")
	e := env{"TRANSLATE_PARA_CONFIG": paraConfig, "CT2_MODEL_DIR": dir, "CT2_MODEL_FAMILY": "nmt3", "CT2_LANGUAGES": "cs,en"}
	r := runCLI(t, e, testenv.Path(t, sampleALTO), "-o", out, "-src", "cs", "--vocabulary", "", "--backend", "ct2")
	if r.code != exitUsage || !strings.Contains(r.stderr, dir) {
		t.Errorf("exit %d, want %d naming the model folder: %s", r.code, exitUsage, r.stderr)
	}
	// The output folder's lock (ledger/translate.lock, taken before the
	// run starts) is all there is.
	if m, _ := filepath.Glob(filepath.Join(out, "*.*")); len(m) != 0 {
		t.Errorf("written for a run that never started: %v", m)
	}
}

// TestCT2MisspeltVariable: a CT2_ variable the backend does not read is
// named in a warning (CT2_MAXLENGTH was ignored without a word).
func TestCT2MisspeltVariable(t *testing.T) {
	fx := testenv.Fixtures(t)
	defer func(e func() []string) { environ = e }(environ)
	environ = func() []string { return []string{"CT2_MAXLENGTH=8", "CT2_MODEL_DIR=set"} }
	e := env{"TRANSLATE_PARA_CONFIG": paraConfig, "CT2_MODEL_DIR": filepath.Join(fx, "ct2", "translator"), "CT2_MODEL_FAMILY": "nmt3",
		"CT2_COMPUTE_TYPE": "float32", "CT2_LANGUAGES": "cs,en", "CT2_GUARD_MIN_RATIO": "0.01", "CT2_GUARD_MAX_RATIO": "100", "CT2_MAX_LENGTH": "16"}
	r := runCLI(t, e, testenv.Path(t, sampleALTO), "-o", t.TempDir(), "-src", "cs", "--vocabulary", "", "--backend", "ct2", "--fast-align")
	if r.code != exitOK || !strings.Contains(r.stderr, "CT2_MAXLENGTH") || strings.Contains(r.stderr, `"variable":"CT2_MODEL_DIR"`) {
		t.Errorf("exit %d; the warning names CT2_MAXLENGTH only: %s", r.code, r.stderr)
	}
}
