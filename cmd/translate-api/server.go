package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"archivekit/internal/jobs"
	"archivekit/internal/licence"
	"archivekit/internal/resources"
	"archivekit/internal/service"
	"archivekit/internal/translate/backend"
	"archivekit/internal/translate/chat"
	"archivekit/internal/translate/frontend"
	"archivekit/internal/translate/langid"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/session"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/transport"
	"archivekit/internal/translate/vocab"
	"archivekit/internal/version"
	"archivekit/internal/webpage"
)

// Tool environment variables (the shared ones are read by internal/service).
const (
	envBackend    = "TRANSLATION_BACKEND"
	envOutputMode = "OUTPUT_MODE"
	envFields     = "AMCR_FIELDS_PATH"
	envVocabulary = "VOCABULARY_PATH"
	envParaConfig = "TRANSLATE_PARA_CONFIG"
)

// Defaults of the tool variables. The field list and the licence
// components are found by internal/resources when their variables are unset
// (setup/translate/... in the working directory, beside the executable, in
// share/archivekit, else the built-in copy).
const (
	defaultBackend = mtapi.Name
	// defaultMaxUploadMB is the upload cap of spec 8 (ALTO goes in and
	// comes out).
	defaultMaxUploadMB = 50
	// defaultPort is the listen port when PORT is unset: beside
	// pageclass-api's 8000, so that both services start side by side
	// outside containers. The images and the manifests set PORT=8000 (the
	// spec's port).
	defaultPort = 8001
	// rewarmEvery is how often a cold backend is tried again after start.
	rewarmEvery = 15 * time.Second
)

//go:embed openapi.json
var openapiJSON []byte

// settings are the tool's own settings, read from the environment.
type settings struct {
	Backend string
	// OutputMode is OUTPUT_MODE (replace, append or alternative, as the
	// command line's); empty: each format's own default (append for
	// PAGE-XML, replace for ALTO and metadata).
	OutputMode string
	// Fields is the field list; FieldsErr says why none was found (a
	// metadata request then fails with 422, ALTO still works).
	Fields     resources.File
	FieldsErr  error
	Vocabulary string
	ParaConfig resources.File
}

// loadSettings reads the tool variables; an unset or empty variable takes
// its default, an invalid value is an error naming the variable.
func loadSettings(getenv func(string) string) (settings, error) {
	or := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	s := settings{
		Backend:    or(envBackend, defaultBackend),
		OutputMode: strings.TrimSpace(getenv(envOutputMode)),
		Vocabulary: strings.TrimSpace(getenv(envVocabulary)),
	}
	res := &resources.Resolver{Getenv: getenv}
	s.Fields, s.FieldsErr = res.Find(resources.Fields, "")
	var err error
	if s.ParaConfig, err = res.Find(resources.TranslateComponents, ""); err != nil {
		return s, fmt.Errorf("licence components (%s): %w", envParaConfig, err)
	}
	// The service takes its settings from the environment, not from the
	// command line's configuration file; but TRANSLATE_CONFIG is one of
	// the shared resolver's variables, and one naming no file is refused
	// here as by translate (and PAGECLASS_CONFIG by pageclass-api) rather
	// than passed over.
	if strings.TrimSpace(getenv(resources.TranslateConfig.Env)) != "" {
		if _, err := res.Find(resources.TranslateConfig, ""); err != nil {
			return s, fmt.Errorf("configuration file (%s): %w", resources.TranslateConfig.Env, err)
		}
	}
	if s.Vocabulary != "" {
		// A vocabulary that is not there is a setting at fault (exit 2,
		// naming it), not a warm-up that failed (exit 1): it is read at
		// warm-up, where its content is checked.
		if _, err := os.Stat(s.Vocabulary); err != nil {
			return s, fmt.Errorf("%s=%q: %w (harvest one with load-vocab, or unset it to translate without)", envVocabulary, s.Vocabulary, err)
		}
	}
	if s.OutputMode != "" && !translator.ValidMode(s.OutputMode) {
		return s, fmt.Errorf("%s=%q: want %s", envOutputMode, s.OutputMode, translator.ModeChoices)
	}
	if !session.Known(s.Backend) {
		return s, fmt.Errorf("%s=%q: want one of %s", envBackend, s.Backend, strings.Join(session.Backends, ", "))
	}
	return s, nil
}

// warmth is the backend in use and whether it is warm.
type warmth struct {
	be     backend.Backend
	warm   bool
	detail string // why it is cold
}

// server holds what /translate needs; it is shared by all requests and
// keeps no per-request state.
type server struct {
	svc    *service.Service
	mem    *service.MemoryBudget // requests admitted by estimated memory
	log    *slog.Logger
	set    settings
	getenv func(string) string

	state atomic.Pointer[warmth]
	// openBackend opens a fresh backend (a cold mtapi backend never
	// re-reads its model list, so re-warming opens a new one).
	openBackend func() (backend.Backend, error)
	// first is the backend opened to check the configuration at start
	// (sess.Backend), handed to the first warm-up (a ct2 model is loaded
	// once, not twice).
	firstMu sync.Mutex
	first   backend.Backend

	// sess holds the vocabulary, the lemmatiser and the glossary size of
	// every request; its backend is the first one, later replaced in
	// state by re-warming.
	sess       *session.Session
	components *licence.Components
	// langDegraded reports a language identifier that failed to load.
	langDegraded func() (bool, string)

	// jobs is the job API's queue (nil without JOBS_DIR).
	jobs *jobs.Queue
	// bookWorkers is BOOK_FETCH_WORKERS: the text files of a book job
	// fetched at once, ahead of the item that runs (bookJobs).
	bookWorkers int

	stopOnce sync.Once
	stop     chan struct{}
	rewarm   sync.WaitGroup

	// breaker answers synchronous requests 503 at once while the backend
	// fails them all (breaker).
	breaker breaker

	// probe is the deep health check's last live probe of a warm
	// backend (liveProbe).
	probeMu     sync.Mutex
	probeAt     time.Time
	probeDetail string
}

// newService builds the service from the environment; logOut nil means stdout.
func newService(lookup func(string) (string, bool), logOut io.Writer) (*service.Service, error) {
	s, err := newServer(lookup, logOut)
	if err != nil {
		return nil, err
	}
	return s.svc, nil
}

func newServer(lookup func(string) (string, bool), logOut io.Writer) (*server, error) {
	getenv := func(k string) string { v, _ := lookup(k); return v }
	set, err := loadSettings(getenv)
	if err != nil {
		return nil, fmt.Errorf("translate-api: configuration: %w", err)
	}
	var urlNote string
	if set.Backend == mtapi.Name {
		// TRANSLATION_URL set empty sent the text to the public service.
		if urlNote, err = mtapi.CheckURLSettings(lookup); err != nil {
			return nil, fmt.Errorf("translate-api: configuration: %w", err)
		}
	}
	s := &server{set: set, getenv: getenv, stop: make(chan struct{})}
	s.openBackend = func() (backend.Backend, error) { return session.OpenBackend(set.Backend, getenv) }
	if s.first, err = s.openBackend(); err != nil {
		return nil, fmt.Errorf("translate-api: configuration: %s=%s: %w", envBackend, set.Backend, err)
	}
	if s.sess, err = session.New(s.first, getenv); err != nil {
		s.close()
		return nil, fmt.Errorf("translate-api: configuration: %w", err)
	}
	s.langDegraded = func() (bool, string) { return langid.Shared().Degraded() }
	s.svc, err = service.New(service.Options{
		Name:               "translate-api",
		Version:            version.String(),
		DefaultMaxUploadMB: defaultMaxUploadMB,
		DefaultPort:        defaultPort,
		WarmUp:             s.warmUp,
		ServeDuringWarmUp:  true,
		DeepCheck:          s.deepCheck,
		OpenAPI:            openapiJSON,
		OnStop:             s.close,
		LookupEnv:          lookup,
		LogOutput:          logOut,
		Index:              index,
		Pages:              webpage.Routes,
	})
	if err != nil {
		s.close()
		return nil, err
	}
	s.log = s.svc.Logger
	session.WarnUnknownVariables(s.log, set.Backend, os.Environ())
	rss, _ := service.ProcessRSS()
	mem, notes, err := service.LoadMemoryBudget(lookup, rss)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("translate-api: configuration: %w", err)
	}
	s.mem = mem
	for _, n := range notes {
		s.log.Info(n)
	}
	if m, ok := s.first.(*mtapi.Backend); ok {
		if n := m.HostedNotice(); n != "" {
			s.log.Warn(n)
		}
	}
	if urlNote != "" {
		s.log.Warn(urlNote)
	}
	if s.bookWorkers, err = service.BookFetchWorkers(lookup); err != nil {
		s.close()
		return nil, fmt.Errorf("translate-api: configuration: %w", err)
	}
	s.svc.Metrics.DeclareCounter(metricUnits, "Units (ALTO blocks, metadata fields) translated.", "")
	s.svc.Metrics.DeclareCounter(metricBackendErrors, "Backend calls that failed after all retries, and translations that failed on the backend.", "")
	s.svc.Metrics.DeclareGauge("translate_backend_up", "1 when the deep health check's last probe of the translation backend was answered (or none was made yet), 0 when not.", "", s.backendUp)
	if s.jobs, err = jobs.Setup(s.svc, lookup, jobs.Options{Path: "/translate", Handler: http.HandlerFunc(s.serveTranslate), CheckFields: s.checkJobFields, Book: s.bookJobs(), RunMeta: s.jobRunMeta}); err != nil {
		s.close()
		return nil, fmt.Errorf("translate-api: configuration: %w", err)
	}
	s.svc.Route("POST /translate", "translate one ALTO, PAGE-XML, hOCR or metadata XML document, or a book by book_url (multipart form)", s.jobs.Async(s.serveTranslate))
	webpage.Serve(s.svc, "browser interface: translate one document", frontend.Handler())
	return s, nil
}

// The service's own counters in /metrics.
const (
	metricUnits         = "translate_units_translated_total"
	metricBackendErrors = "translate_backend_errors_total"
)

// warmUp loads the licence components, the vocabulary and the language
// identifier, and warms the backend (its model list). A backend that
// cannot be reached does not stop the start: it works on its built-in
// pairs, the deep health check reports it cold, and it is tried again in
// the background.
func (s *server) warmUp(ctx context.Context) error {
	c, err := licence.ReadComponents(s.set.ParaConfig)
	if err != nil {
		return fmt.Errorf("licence components (%s): %w", envParaConfig, err)
	}
	s.components = c
	if s.set.Vocabulary != "" {
		v, err := vocab.Load(s.set.Vocabulary)
		if err != nil {
			return fmt.Errorf("vocabulary (%s): %w", envVocabulary, err)
		}
		for _, e := range v.Skipped {
			s.log.Warn("vocabulary row skipped", "error", e.Error())
		}
		// After repeated failure the lemmatiser rests for a minute
		// between trial calls instead of costing every request its
		// retries.
		if err := s.sess.UseVocabulary(v, session.Breaker{Cooldown: time.Minute, OnOpen: func(err error) {
			s.log.Warn("lemmatiser failed repeatedly; single-word vocabulary terms are not protected until a trial call succeeds (one a minute)", "error", err)
		}}); err != nil {
			return err
		}
		s.log.Info("vocabulary loaded", "path", s.set.Vocabulary, "entries", v.Len())
		if n := s.sess.LemmatizerNotice(); n != "" {
			s.log.Warn(n)
		}
	}
	if _, err := translator.LoadFields(s.set.Fields, s.set.FieldsErr); err != nil {
		// Said at start (as the services docs promise), not only by the
		// deep health check and each metadata request's 422.
		s.log.Warn("the metadata field list cannot be read: metadata documents are answered 422 field_list_unreadable; ALTO, PAGE-XML and hOCR work", "variable", envFields, "error", err.Error())
	}
	t0 := time.Now()
	if bad, why := s.langDegraded(); bad {
		s.log.Error("language identification unavailable: detection answers en with confidence 0", "error", why)
	}
	s.svc.Metrics.SetModelLoadTime("langid", time.Since(t0))

	st := s.warmBackend(ctx)
	s.state.Store(st)
	if !st.warm {
		s.log.Warn("translation backend is cold; retrying in the background", "backend", s.set.Backend, "detail", st.detail)
		s.rewarm.Add(1)
		go s.rewarmLoop()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.jobs.Start(ctx)
}

// warmBackend opens a backend (the one opened at start, the first time)
// and fetches its model list.
func (s *server) warmBackend(ctx context.Context) *warmth {
	s.firstMu.Lock()
	be := s.first
	s.first = nil
	s.firstMu.Unlock()
	if be == nil {
		var err error
		if be, err = s.openBackend(); err != nil {
			return &warmth{detail: err.Error()}
		}
	}
	if c, ok := be.(*chat.Backend); ok {
		if err := c.Probe(ctx); err != nil {
			return &warmth{be: be, detail: fmt.Sprintf("translation backend %s is cold: %v", c.Name(), err)}
		}
		s.log.Info("translation backend reachable", "backend", c.Name(), "provider", c.Info()["llm_provider"], "model", c.Info()["llm_model"])
		return &warmth{be: be, warm: true}
	}
	m, ok := be.(*mtapi.Backend)
	if !ok {
		return &warmth{be: be, warm: true}
	}
	t0 := time.Now()
	pairs, from := m.Models(ctx)
	if from != "api" {
		return &warmth{be: be, detail: fmt.Sprintf("translation backend %s at %s is cold: model list unavailable, using the built-in pairs (%s)", m.Name(), m.BaseURL(), from)}
	}
	s.svc.Metrics.SetModelLoadTime("mtapi_models", time.Since(t0))
	s.log.Info("translation backend warm", "backend", m.Name(), "url", m.BaseURL(), "pairs", len(pairs))
	return &warmth{be: be, warm: true}
}

func (s *server) rewarmLoop() {
	defer s.rewarm.Done()
	t := time.NewTicker(rewarmEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), rewarmEvery)
		st := s.warmBackend(ctx)
		cancel()
		if st.warm {
			if old := s.state.Swap(st); old != nil && old.be != nil {
				old.be.Close() // waits for its calls in flight
			}
			return
		}
		if st.be != nil {
			st.be.Close()
		}
	}
}

// close stops the re-warming and closes every backend the server holds.
func (s *server) close() {
	s.stopOnce.Do(func() { close(s.stop) })
	ctx, cancel := context.WithTimeout(context.Background(), service.InFlightGrace)
	if err := s.jobs.Close(ctx); err != nil {
		s.log.Warn("job queue stop", "error", err.Error())
	}
	cancel()
	s.rewarm.Wait()
	s.firstMu.Lock()
	if s.first != nil {
		s.first.Close()
		s.first = nil
	}
	s.firstMu.Unlock()
	if st := s.state.Swap(nil); st != nil && st.be != nil {
		st.be.Close()
	}
}

// deepCheck reports a cold backend, an unreadable field list and a failed
// language identifier.
func (s *server) deepCheck(ctx context.Context) string {
	var problems []string
	if st := s.state.Load(); st == nil || !st.warm {
		d := "translation backend not warmed"
		if st != nil && st.detail != "" {
			// The health check is open without a token: the backend's
			// address is left out, as the live probe's is (the cold
			// detail named it; the log keeps it).
			d = service.Redact(st.detail)
		}
		problems = append(problems, d)
	} else if d := s.liveProbe(ctx, st.be); d != "" {
		problems = append(problems, d)
	}
	if _, err := translator.LoadFields(s.set.Fields, s.set.FieldsErr); err != nil {
		problems = append(problems, "the metadata field list cannot be read (metadata requests fail with 422, ALTO works): "+err.Error())
	}
	if bad, why := s.langDegraded(); bad {
		problems = append(problems, "language identification failed to load (detection answers en with confidence 0): "+why)
	}
	return strings.Join(problems, "; ")
}

// probeEvery is how long the deep health check reuses its last live probe
// of the backend; probeTimeout bounds one probe.
const (
	probeEvery   = 10 * time.Second
	probeTimeout = 5 * time.Second
)

// liveProbe asks a warm remote backend for its model list (mtapi, chat;
// a local ct2 model has nothing to ask): "" when it answers, else why
// not. A backend warm at start may stop answering; the deep health check
// says so (it said ok while every request failed). The answer is reused
// for probeEvery, so frequent checks do not load the backend.
func (s *server) liveProbe(ctx context.Context, be backend.Backend) string {
	type prober interface{ Probe(context.Context) error }
	p, ok := be.(prober)
	if !ok {
		return ""
	}
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if !s.probeAt.IsZero() && time.Since(s.probeAt) < probeEvery {
		return s.probeDetail
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	was, probed := s.probeDetail, !s.probeAt.IsZero()
	s.probeDetail = ""
	if err := p.Probe(ctx); err != nil {
		what := "does not answer"
		if te, ok := transport.AsUnreachable(err); ok && te.Refused {
			what = "refuses this service" // it answered: 401, 403
		}
		s.probeDetail = fmt.Sprintf("translation backend %s %s: %s", be.Name(), what, service.Redact(err.Error()))
	}
	s.probeAt = time.Now()
	// Said once when it changes (only the deep check said so, while it
	// was asked): a log pipeline sees the backend go and come back.
	switch {
	case s.probeDetail != "" && (was == "" || !probed):
		s.log.Warn("translation backend stopped answering (seen by the deep health check)", "backend", be.Name(), "detail", s.probeDetail)
	case s.probeDetail == "" && was != "":
		s.log.Info("translation backend answers again (seen by the deep health check)", "backend", be.Name())
	}
	return s.probeDetail
}

// backendUp is translate_backend_up's value: 1 when the deep health
// check's last probe of the backend was answered (or none was made yet),
// 0 when it was not.
func (s *server) backendUp() map[string]float64 {
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if s.probeDetail != "" {
		return map[string]float64{"": 0}
	}
	return map[string]float64{"": 1}
}

// backend is the backend in use (warm or not).
func (s *server) backend() backend.Backend {
	if st := s.state.Load(); st != nil && st.be != nil {
		return st.be
	}
	return nil
}
