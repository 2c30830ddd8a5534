package lemmatizer

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"archivekit/internal/translate/lemmatizer/lemmatizertest"
	"archivekit/internal/translate/transport"
)

func TestLemmatizeAgainstStandIn(t *testing.T) {
	srv := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer srv.Close()
	c := New(srv.URL+"/", transport.New(transport.Policy{}, nil))
	text := "V jámě byly nalezeny hroby.\nV hrobu  kosti."
	toks, err := c.Lemmatize(context.Background(), text, "cs")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		form, lemma string
		plural      bool
	}{
		{"V", "v", false}, {"jámě", "jáma", false}, {"byly", "být", true}, {"nalezeny", "nalézt", true},
		{"hroby", "hrob", true}, {".", ".", false}, {"V", "v", false}, {"hrobu", "hrob", false},
		{"kosti", "kosti", false}, {".", ".", false},
	}
	if len(toks) != len(want) {
		t.Fatalf("got %d tokens: %+v", len(toks), toks)
	}
	for i, w := range want {
		tk := toks[i]
		if tk.Form != w.form || tk.Lemma != w.lemma || tk.Plural != w.plural {
			t.Errorf("token %d = %+v, want %+v", i, tk, w)
		}
		if tk.Start < 0 || text[tk.Start:tk.End] != tk.Form {
			t.Errorf("token %d %q located at [%d,%d)", i, tk.Form, tk.Start, tk.End)
		}
	}
}

func TestLemmatizeChunksKeepOffsets(t *testing.T) {
	srv := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer srv.Close()
	c := New(srv.URL, transport.New(transport.Policy{}, nil))
	c.ChunkLimit = 30
	text := strings.Repeat("V hrobu ležel meč. ", 10)
	toks, err := c.Lemmatize(context.Background(), text, "cs")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Requests.Load() < 5 {
		t.Errorf("%d requests for %d characters at 30 per chunk", srv.Requests.Load(), len([]rune(text)))
	}
	if len(toks) != 50 {
		t.Fatalf("got %d tokens, want 50", len(toks))
	}
	for i, tk := range toks {
		if tk.Start < 0 || text[tk.Start:tk.End] != tk.Form {
			t.Fatalf("token %d %q located at [%d,%d)", i, tk.Form, tk.Start, tk.End)
		}
	}
}

func TestLemmatizeErrors(t *testing.T) {
	srv := lemmatizertest.New(lemmatizertest.CzechLexicon, "czech-pdt-ud-2.15-241121")
	defer srv.Close()
	c := New(srv.URL, transport.New(transport.Policy{}, nil))
	if _, err := c.Lemmatize(context.Background(), "Szia", "hu"); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "hu") {
		t.Errorf("hu: err = %v, want ErrUnsupported naming hu", err)
	}
	// Slovak has a model in the spec but the stand-in does not serve it.
	if _, err := c.Lemmatize(context.Background(), "Dobrý deň", "sk"); err == nil || !strings.Contains(err.Error(), "Unknown model 'slovak-snk-ud-2.15-241121'") {
		t.Errorf("sk: err = %v, want the service's message", err)
	}
	bad := lemmatizertest.New(nil)
	bad.Config.Handler = garbageHandler{}
	defer bad.Close()
	c2 := New(bad.URL, transport.New(transport.Policy{}, nil))
	if _, err := c2.Lemmatize(context.Background(), "text", "cs"); err == nil || !strings.Contains(err.Error(), "not UDPipe JSON") {
		t.Errorf("garbage: err = %v", err)
	}
}

func TestModelFor(t *testing.T) {
	for lang, want := range map[string]string{
		"cs": "czech-pdt-ud-2.15-241121", "SK": "slovak-snk-ud-2.15-241121", "pl": "polish-pdb-ud-2.15-241121",
		"de": "german-gsd-ud-2.15-241121", "fr": "french-gsd-ud-2.15-241121", "ru": "russian-syntagrus-ud-2.15-241121",
		"uk": "ukrainian-iu-ud-2.15-241121", "en": "english-ewt-ud-2.15-241121", "hu": "", "it": "",
	} {
		got, ok := ModelFor(lang)
		if got != want || ok != (want != "") {
			t.Errorf("ModelFor(%s) = %q, %v", lang, got, ok)
		}
	}
}

func TestParseCoNLLUFixture(t *testing.T) {
	data, err := os.ReadFile("testdata/german-mwt.conllu")
	if err != nil {
		t.Fatal(err)
	}
	toks, err := ParseCoNLLU(string(data))
	if err != nil {
		t.Fatal(err)
	}
	var forms, lemmas []string
	for _, tk := range toks {
		forms = append(forms, tk.Form)
		lemmas = append(lemmas, tk.Lemma)
	}
	if got := strings.Join(forms, " "); got != "Die Scherben gehören zum Gefäß ." {
		t.Errorf("forms = %q", got)
	}
	if got := strings.Join(lemmas, " "); got != "der Scherbe gehören  Gefäß ." {
		t.Errorf("lemmas = %q", got)
	}
	if !toks[1].Plural || toks[4].Plural || !toks[3].Multiword {
		t.Errorf("plural/multiword flags wrong: %+v", toks)
	}
	located := Locate("Die Scherben gehören zum Gefäß.", toks)
	if located[4].Start != 26 || located[5].Start != 33 {
		t.Errorf("offsets: %+v", located)
	}
}

func TestParseCoNLLUErrors(t *testing.T) {
	for name, doc := range map[string]string{
		"short line": "1\tHrob\throb\tNOUN\n",
		"bad id":     "x\ta\ta\tX\t_\t_\t0\troot\t_\t_\n",
		"bad range":  "1-x\tzum\t_\t_\t_\t_\t_\t_\t_\t_\n",
	} {
		if _, err := ParseCoNLLU(doc); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: err = %v, want one naming line 1", name, err)
		}
	}
}

func TestBaseURLFromEnv(t *testing.T) {
	if u, err := BaseURLFromEnv(func(string) string { return "" }); err != nil || u != DefaultBaseURL {
		t.Errorf("unset: %q %v", u, err)
	}
	if u, err := BaseURLFromEnv(func(string) string { return "http://udpipe:8001/" }); err != nil || u != "http://udpipe:8001" {
		t.Errorf("set: %q %v", u, err)
	}
	if _, err := BaseURLFromEnv(func(string) string { return "udpipe:8001" }); err == nil || !strings.Contains(err.Error(), "LEMMATIZER_URL") {
		t.Errorf("bad: %v", err)
	}
	// A site that refuses the public services: unset is an error naming
	// both settings; off and a given address are fine.
	refuse := map[string]string{"TRANSLATE_PUBLIC_SERVICES": "refuse"}
	if _, err := BaseURLFromEnv(func(k string) string { return refuse[k] }); err == nil || !strings.Contains(err.Error(), "LEMMATIZER_URL is unset and TRANSLATE_PUBLIC_SERVICES=refuse") {
		t.Errorf("unset, public refused: %v", err)
	}
	for v, want := range map[string]string{"off": "", "http://udpipe:8001": "http://udpipe:8001"} {
		refuse["LEMMATIZER_URL"] = v
		if u, err := BaseURLFromEnv(func(k string) string { return refuse[k] }); err != nil || u != want {
			t.Errorf("%s, public refused: %q %v", v, u, err)
		}
	}
	// The original tool's UDPIPE_URL names a private lemmatiser too
	// (it was ignored); LEMMATIZER_URL wins.
	udpipe := map[string]string{"UDPIPE_URL": "http://private-udpipe:8001/"}
	if u, err := BaseURLFromEnv(func(k string) string { return udpipe[k] }); err != nil || u != "http://private-udpipe:8001" {
		t.Errorf("UDPIPE_URL: %q %v", u, err)
	}
	udpipe["LEMMATIZER_URL"] = "off"
	if u, err := BaseURLFromEnv(func(k string) string { return udpipe[k] }); err != nil || u != "" {
		t.Errorf("LEMMATIZER_URL=off beside UDPIPE_URL: %q %v", u, err)
	}
	for _, off := range []string{"off", "None", " OFF "} {
		if u, err := BaseURLFromEnv(func(string) string { return off }); err != nil || u != "" {
			t.Errorf("%q: %q %v, want off", off, u, err)
		}
		if c, err := FromEnv(func(k string) string { return map[string]string{"LEMMATIZER_URL": off}[k] }); err != nil || c != nil {
			t.Errorf("%q: client %v, %v; want none", off, c, err)
		}
	}
}

// The public lemmatiser's use is said, with the ways to keep text in
// house; another address is not.
func TestHostedNotice(t *testing.T) {
	if n := HostedNotice(DefaultBaseURL + "/"); !strings.Contains(n, "lindat.mff.cuni.cz") || !strings.Contains(n, "LEMMATIZER_URL=off") {
		t.Errorf("default: %q", n)
	}
	if n := HostedNotice("http://udpipe:8001"); n != "" {
		t.Errorf("self-hosted: %q", n)
	}
}

type garbageHandler struct{}

func (garbageHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	w.Write([]byte("<html>gateway</html>"))
}
