// Package lemmatizertest provides a local stand-in for the lemmatiser
// service that speaks the UDPipe 2 REST protocol, for tests of this module.
package lemmatizertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"time"
)

// Analysis is what the stand-in says about one word form (matched
// case-insensitively).
type Analysis struct {
	Lemma, UPOS, Feats string
}

// Server is a running stand-in lemmatiser.
type Server struct {
	*httptest.Server
	// Requests counts POST /process calls.
	Requests atomic.Int32
	// Models lists the models the stand-in accepts.
	Models map[string]bool
	// MaxInFlight is the largest number of requests it was answering at
	// once.
	MaxInFlight atomic.Int32

	cfg      Config
	inFlight atomic.Int32
}

// Config shapes a stand-in started by Start.
type Config struct {
	// Lexicon and Models are as for New.
	Lexicon map[string]Analysis
	Models  []string
	// Delay is the latency of every POST /process answer.
	Delay time.Duration
	// Fail lists the statuses answered to the first requests, in order
	// (e.g. 429, 503); later requests are answered. FailAlways, when not
	// 0, is answered to every request.
	Fail       []int
	FailAlways int
	// RetryAfter is sent as the Retry-After header with failure answers.
	RetryAfter string
}

var tokenRE = regexp.MustCompile(`[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]`)

// New starts a stand-in whose tagger knows the forms in lexicon; other
// words get their lower-cased form as lemma, UPOS X (PUNCT for
// punctuation) and no features. Sentences end at . ! ? and line breaks.
// The caller closes it.
func New(lexicon map[string]Analysis, models ...string) *Server {
	return Start(Config{Lexicon: lexicon, Models: models})
}

// Start starts a stand-in shaped by cfg (New with latency and failures);
// the caller closes it.
func Start(cfg Config) *Server {
	s := &Server{Models: map[string]bool{}, cfg: cfg}
	for _, m := range cfg.Models {
		s.Models[m] = true
	}
	lex := map[string]Analysis{}
	for k, v := range cfg.Lexicon {
		lex[strings.ToLower(k)] = v
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/process" {
			http.NotFound(w, r)
			return
		}
		n := s.Requests.Add(1)
		defer s.inFlight.Add(-1)
		for now, top := s.inFlight.Add(1), s.MaxInFlight.Load(); now > top && !s.MaxInFlight.CompareAndSwap(top, now); top = s.MaxInFlight.Load() {
		}
		time.Sleep(s.cfg.Delay)
		if st := s.failure(int(n)); st != 0 {
			if s.cfg.RetryAfter != "" {
				w.Header().Set("Retry-After", s.cfg.RetryAfter)
			}
			http.Error(w, http.StatusText(st), st)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		model := r.PostForm.Get("model")
		if !s.Models[model] {
			http.Error(w, fmt.Sprintf("Unknown model '%s'", model), http.StatusBadRequest)
			return
		}
		if _, ok := r.PostForm["tokenizer"]; !ok {
			http.Error(w, "This request is missing the tokenizer option", http.StatusBadRequest)
			return
		}
		if _, ok := r.PostForm["tagger"]; !ok {
			http.Error(w, "This request is missing the tagger option", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"model":            model,
			"acknowledgements": []string{"http://ufal.mff.cuni.cz/udpipe/2#udpipe2_acknowledgements"},
			"result":           CoNLLU(r.PostForm.Get("data"), lex),
		})
	}))
	return s
}

// failure is the status answered to the n-th request (1-based), or 0.
func (s *Server) failure(n int) int {
	if s.cfg.FailAlways != 0 {
		return s.cfg.FailAlways
	}
	if n <= len(s.cfg.Fail) {
		return s.cfg.Fail[n-1]
	}
	return 0
}

// CoNLLU renders text as a UDPipe-like CoNLL-U document using lexicon
// (keys lower-case).
func CoNLLU(text string, lexicon map[string]Analysis) string {
	var b strings.Builder
	b.WriteString("# generator = UDPipe 2\n# newdoc\n# newpar\n")
	sent := 0
	for _, line := range strings.Split(text, "\n") {
		locs := tokenRE.FindAllStringIndex(line, -1)
		for len(locs) > 0 {
			end := len(locs)
			for i, l := range locs {
				if f := line[l[0]:l[1]]; f == "." || f == "!" || f == "?" {
					end = i + 1
					break
				}
			}
			sentence := locs[:end]
			locs = locs[end:]
			sent++
			fmt.Fprintf(&b, "# sent_id = %d\n# text = %s\n", sent, strings.TrimSpace(line[sentence[0][0]:sentence[len(sentence)-1][1]]))
			for i, l := range sentence {
				form := line[l[0]:l[1]]
				a, ok := lexicon[strings.ToLower(form)]
				if !ok {
					a = Analysis{Lemma: strings.ToLower(form), UPOS: "X", Feats: "_"}
					if !tokenRE.MatchString(form) || len([]rune(form)) == 1 && !isWord(form) {
						a.UPOS = "PUNCT"
					}
				}
				misc := "_"
				if i+1 < len(sentence) && sentence[i+1][0] == l[1] {
					misc = "SpaceAfter=No"
				}
				head, rel := 0, "root"
				if i > 0 {
					head, rel = 1, "dep"
				}
				fmt.Fprintf(&b, "%d\t%s\t%s\t%s\t_\t%s\t%d\t%s\t_\t%s\n", i+1, form, a.Lemma, a.UPOS, a.Feats, head, rel, misc)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

var wordRE = regexp.MustCompile(`^[\p{L}\p{M}\p{N}]+$`)

func isWord(s string) bool { return wordRE.MatchString(s) }

// CzechLexicon is a small Czech lexicon with UDPipe-style analyses
// (PDT UD lemmas and features) shared by the tests of this module.
var CzechLexicon = map[string]Analysis{
	"hroby":    {Lemma: "hrob", UPOS: "NOUN", Feats: "Animacy=Inan|Case=Nom|Gender=Masc|Number=Plur|Polarity=Pos"},
	"hrobu":    {Lemma: "hrob", UPOS: "NOUN", Feats: "Animacy=Inan|Case=Loc|Gender=Masc|Number=Sing|Polarity=Pos"},
	"v":        {Lemma: "v", UPOS: "ADP", Feats: "AdpType=Prep|Case=Loc"},
	"jámě":     {Lemma: "jáma", UPOS: "NOUN", Feats: "Case=Loc|Gender=Fem|Number=Sing|Polarity=Pos"},
	"nalezeny": {Lemma: "nalézt", UPOS: "VERB", Feats: "Aspect=Perf|Gender=Masc|Number=Plur|Polarity=Pos|Voice=Pass"},
	"byly":     {Lemma: "být", UPOS: "AUX", Feats: "Aspect=Imp|Gender=Masc|Number=Plur|Polarity=Pos|Tense=Past|VerbForm=Part|Voice=Act"},
	"hrob":     {Lemma: "hrob", UPOS: "NOUN", Feats: "Animacy=Inan|Case=Nom|Gender=Masc|Number=Sing|Polarity=Pos"},
	"jámy":     {Lemma: "jáma", UPOS: "NOUN", Feats: "Case=Nom|Gender=Fem|Number=Plur|Polarity=Pos"},
}
