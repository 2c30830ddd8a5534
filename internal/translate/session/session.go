// Package session sets up what a translation works with: the backend named
// by the configuration (mtapi, chat_compatible or ct2), checked and opened
// from the environment, and around it the vocabulary, the lemmatiser that
// matches its single words by lemma and the glossary size. The batch
// command (cmd/translate), the service (cmd/translate-api) and the bakeoff
// (cmd/bakeoff) set up their backends here; the translator core
// (internal/translate/translator) sees only the backend.Backend interface
// and its capabilities, so it links none of the concrete backends.
package session

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chat"
	"archivekit/internal/translate/ct2backend"
	"archivekit/internal/translate/guard"
	"archivekit/internal/translate/lemmatizer"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/vocab"
)

// Backends lists the backend names the configuration accepts.
var Backends = []string{mtapi.Name, chat.Name, ct2backend.Name}

// Known reports whether name is one of Backends.
func Known(name string) bool {
	for _, b := range Backends {
		if b == name {
			return true
		}
	}
	return false
}

// Describe says what a backend is, as the run metadata and translate-api's
// answers record it: mtapi's URL (translation_api); for backends that
// describe themselves (Info), their keys: chat_compatible's URL, model and
// provider (never the key), ct2's model folder, digest, family, languages
// and limits. Nil for a backend with nothing more to say.
func Describe(be backend.Backend) map[string]any {
	if inf, ok := be.(interface{ Info() map[string]any }); ok {
		return inf.Info()
	}
	if m, ok := be.(*mtapi.Backend); ok {
		return map[string]any{"translation_api": m.BaseURL()}
	}
	return nil
}

// Unknown is the error for a backend name not among Backends; the original
// tool's names of the first two (lindat, openai_compatible) are answered
// with the name to give instead.
func Unknown(name string) error {
	hint := ""
	switch strings.ToLower(name) {
	case "lindat":
		hint = ": the original tool's lindat (the hosted MT API) is " + mtapi.Name + " here"
	case "openai_compatible":
		hint = ": the original tool's openai_compatible is " + chat.Name + " here"
	}
	return fmt.Errorf("unknown backend %q (want one of %s)%s", name, strings.Join(Backends, ", "), hint)
}

// CheckConfig validates the named backend's environment without opening it
// (no model is loaded, no request is made), so a command can refuse a bad
// configuration as a usage error before it starts.
func CheckConfig(name string, getenv func(string) string) error {
	var err error
	switch name {
	case mtapi.Name:
		_, err = mtapi.ConfigFromEnv(getenv)
	case chat.Name:
		_, err = chat.ConfigFromEnv(getenv)
	case ct2backend.Name:
		_, err = ct2backend.ConfigFromEnv(getenv)
	default:
		err = Unknown(name)
	}
	return err
}

// variablesOf are, by backend name, the prefix of the variables a backend
// reads and those it reads.
var variablesOf = map[string]struct {
	prefix string
	known  []string
}{
	mtapi.Name:      {"MTAPI_", mtapi.Variables},
	chat.Name:       {"LLM_", chat.Variables},
	ct2backend.Name: {"CT2_", ct2backend.Variables},
}

// WarnUnknownVariables logs, at start, each variable of environ
// (os.Environ's form) with the prefix of the backend name reads that it
// does not read, naming those it reads: a misspelt one (MTAPI_MAXRETRIES,
// CT2_MAXLENGTH) was ignored without a word.
func WarnUnknownVariables(log *slog.Logger, name string, environ []string) {
	v, ok := variablesOf[name]
	if !ok {
		return
	}
	for _, u := range backend.UnknownVariables(v.prefix, v.known, environ) {
		log.Warn("environment variable not read by the "+name+" backend: misspelt?", "variable", u, "read", strings.Join(v.known, " "))
	}
}

// OpenBackend returns the named backend configured from the environment
// (getenv nil means the process environment): mtapi from TRANSLATION_URL
// (alias MTAPI_BASE_URL) and MTAPI_*; chat_compatible from LLM_*
// (internal/translate/chat); ct2 from CT2_* (internal/translate/ct2backend).
func OpenBackend(name string, getenv func(string) string) (backend.Backend, error) {
	switch name {
	case mtapi.Name:
		cfg, err := mtapi.ConfigFromEnv(getenv)
		if err != nil {
			return nil, err
		}
		return mtapi.New(cfg), nil
	case chat.Name:
		cfg, err := chat.ConfigFromEnv(getenv)
		if err != nil {
			return nil, err
		}
		return chat.New(cfg)
	case ct2backend.Name:
		cfg, err := ct2backend.ConfigFromEnv(getenv)
		if err != nil {
			return nil, err
		}
		return ct2backend.New(cfg)
	}
	return nil, Unknown(name)
}

// CheckEnv checks the environment a session reads besides its backend's:
// the lemmatiser's address and LLM_MAX_GLOSSARY_TERMS, so that a bad value
// is a usage error before any work.
func CheckEnv(getenv func(string) string) error {
	if _, err := lemmatizer.FromEnv(getenv); err != nil {
		return err
	}
	if _, err := vocab.MaxGlossaryTermsFromEnv(getenv); err != nil {
		return err
	}
	if _, err := translator.LangOrderFromEnv(getenv); err != nil {
		return err
	}
	_, err := guard.RoundsFromEnv(getenv)
	return err
}

// Session is an opened backend and what its translations use with it.
type Session struct {
	// Name is the backend's configuration name.
	Name string
	// Backend is the backend opened by Open.
	Backend backend.Backend
	// GlossaryTerms caps the glossary sent to backends that take one
	// (LLM_MAX_GLOSSARY_TERMS).
	GlossaryTerms int
	// RetryRounds is the number of end-of-document rounds for segments
	// the degeneracy guard rejected (TRANSLATE_RETRY_ROUNDS,
	// guard.RoundsFromEnv).
	RetryRounds int
	// Order is the source-language order of each unit (the
	// TRANSLATE_LANG_*, TRANSLATE_DEFAULT_SOURCE_LANG and TRANSLATE_ELEMENT_LANG settings,
	// translator.LangOrderFromEnv).
	Order alto.LangOrder
	// Vocabulary is the vocabulary in use (UseVocabulary); nil for none.
	Vocabulary *vocab.Vocabulary
	// Lemmatizer matches the vocabulary's single words by lemma; nil
	// unless a vocabulary is used with a backend whose placeholders take
	// lemmas (backend.Protection: mtapi). LemmatizerURL is its address.
	Lemmatizer    vocab.Lemmatizer
	LemmatizerURL string

	getenv func(string) string
}

// Open opens the named backend from the environment (OpenBackend) and
// makes a session of it (New). The caller closes the session.
func Open(name string, getenv func(string) string) (*Session, error) {
	be, err := OpenBackend(name, getenv)
	if err != nil {
		return nil, err
	}
	s, err := New(be, getenv)
	if err != nil {
		be.Close()
		return nil, err
	}
	return s, nil
}

// New makes a session of the opened backend be, reading the glossary size
// from the environment (getenv nil: the process environment). Closing the
// session closes be.
func New(be backend.Backend, getenv func(string) string) (*Session, error) {
	terms, err := vocab.MaxGlossaryTermsFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	rounds, err := guard.RoundsFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	order, err := translator.LangOrderFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	return &Session{Name: be.Name(), Backend: be, GlossaryTerms: terms, RetryRounds: rounds, Order: order, getenv: getenv}, nil
}

// Breaker sets up the circuit breaker in front of the lemmatiser
// (lemmatizer.Breaker): after repeated failures it is not called again for
// Cooldown (0: for the session's life) and OnOpen is told why.
type Breaker struct {
	Cooldown time.Duration
	OnOpen   func(err error)
}

// UseVocabulary makes v the session's vocabulary. When v is not nil and the
// backend takes placeholders matched by lemma, the lemmatiser is set up
// from the environment (LEMMATIZER_URL), behind a circuit breaker set up
// by br and the session's cache of lemmas per distinct line
// (lemmatizer.Cache: the translator lemmatises a page's lines in one
// request); its address not being valid is the error.
func (s *Session) UseVocabulary(v *vocab.Vocabulary, br Breaker) error {
	s.Vocabulary = v
	if v == nil {
		return nil
	}
	p, ok := s.Backend.(backend.Placeholders)
	if !ok {
		return nil
	}
	if prot, ok := p.Placeholders(); !ok || !prot.Lemmas {
		return nil
	}
	c, err := lemmatizer.FromEnv(s.getenv)
	if err != nil {
		return err
	}
	if c == nil {
		s.LemmatizerURL = lemmatizer.Off // LEMMATIZER_URL=off: single words unprotected
		return nil
	}
	s.LemmatizerURL = c.BaseURL
	s.Lemmatizer = lemmatizer.NewCache(&lemmatizer.Breaker{Inner: c, Cooldown: br.Cooldown, OnOpen: br.OnOpen})
	return nil
}

// LemmatizerNotice is what a command says of the lemmatiser once the
// vocabulary is in use: that document text goes to the public lemmatiser
// (lemmatizer.HostedNotice), or that it is off and single vocabulary
// words are not protected; "" otherwise.
func (s *Session) LemmatizerNotice() string {
	if s.LemmatizerURL == lemmatizer.Off {
		return "LEMMATIZER_URL=off: no lemmatiser is called, so the vocabulary's single words are not protected (its multi-word terms are)"
	}
	return lemmatizer.HostedNotice(s.LemmatizerURL)
}

// Options returns the translator's options filled from the session: the
// backend, the vocabulary, the lemmatiser, the glossary size, the end
// rounds and the source-language order.
func (s *Session) Options() translator.Options {
	order := s.Order
	return translator.Options{Backend: s.Backend, Vocabulary: s.Vocabulary, Lemmatizer: s.Lemmatizer, GlossaryTerms: s.GlossaryTerms,
		RetryRounds: s.RetryRounds, Order: &order}
}

// Close closes the backend.
func (s *Session) Close() error { return s.Backend.Close() }
