// Package service is the HTTP lifecycle shared by pageclass-api and
// translate-api: configuration from the environment, start-up with warm-up,
// health and readiness probes, graceful draining on SIGTERM, CORS, upload
// caps, error bodies, request logging, Prometheus metrics and the OpenAPI
// document with its /docs page.
//
// A tool builds its service like this:
//
//	svc, err := service.New(service.Options{
//		Name: "translate-api", Version: version.String(),
//		DefaultMaxUploadMB: 50,
//		WarmUp:    func(ctx context.Context) error { return backend.Warm(ctx) },
//		DeepCheck: func(ctx context.Context) string { return degradedDetail() },
//		OpenAPI:   openapiJSON,
//		Index:     &service.Index{Welcome: "translate-api: POST an XML document to /translate"},
//	})
//	if err != nil { fmt.Fprintln(os.Stderr, err); os.Exit(service.ExitConfig) }
//	svc.Route("POST /translate", "translate one XML document", translate)
//	os.Exit(svc.Run())
//
// Lifecycle: starting → ready → draining. Warm-up runs before the listener
// is opened, so during start a client sees a refused connection, which it
// treats like a 503; with Options.ServeDuringWarmUp the listener opens
// first and answers 503 while starting. Once ready, /ready answers 200. On SIGTERM or SIGINT the
// state becomes draining: /ready answers 503, every request other than the
// probes (/health, /ready, /metrics) gets 503 with a JSON detail, and the
// listener stays open for up to GRACEFUL_SHUTDOWN_S while in-flight work
// finishes (it closes as soon as none is left). Then http.Server.Shutdown
// waits up to InFlightGrace (25 s) more for requests still running; whatever
// runs after that is cut. Run then returns 143 after SIGTERM, 130 after
// SIGINT.
package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"archivekit/internal/logging"
)

// ExitCodesHelp says a service's exit codes in its --help.
const ExitCodesHelp = "Exit codes: 0 stopped cleanly, 1 warm-up failed or the port could not be opened, 2 configuration error (a bad flag or environment variable), 129 SIGHUP, 130 SIGINT, 143 SIGTERM (the clean stop of a container); each signal drains the requests under way first."

// Exit codes returned by Run.
const (
	// ExitFailure: warm-up failed or the listener could not be opened.
	ExitFailure = 1
	// ExitConfig: the environment holds an invalid or empty value; New
	// returns an error and the command should exit with this code.
	ExitConfig = 2
	// ExitSIGINT: stopped by SIGINT (128 + 2).
	ExitSIGINT = 130
	// ExitSIGHUP: stopped by SIGHUP (128 + 1), drained as after SIGTERM.
	ExitSIGHUP = 129
	// ExitSIGTERM: stopped by SIGTERM (128 + 15), the clean stop of a container.
	ExitSIGTERM = 143
)

// State is a lifecycle state.
type State int32

// The lifecycle states, in order.
const (
	Starting State = iota
	Ready
	Draining
)

// String is the state's name: starting, ready or draining.
func (s State) String() string {
	switch s {
	case Starting:
		return "starting"
	case Ready:
		return "ready"
	case Draining:
		return "draining"
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// Options describe one service. Only Name is required.
type Options struct {
	// Name is the service name, for logs and the OpenAPI title fallback.
	Name string
	// Version is the service version, logged at start.
	Version string
	// DefaultMaxUploadMB is the upload cap when neither MAX_UPLOAD_MB nor
	// MAX_UPLOAD_BYTES is set (10 for the classifier, 50 for the translator).
	DefaultMaxUploadMB float64
	// DefaultPort is the listen port when PORT is unset; 0 means
	// DefaultPort (8000). The two services choose different ones so that
	// both can run side by side outside containers; the images set PORT
	// to the spec's 8000.
	DefaultPort int
	// WarmUp loads and warms whatever the service needs before it is ready.
	// It runs before the listener opens (see ServeDuringWarmUp); its context
	// is cancelled by SIGTERM. An error stops the service with ExitFailure.
	// Nil means nothing to warm.
	WarmUp func(ctx context.Context) error
	// ServeDuringWarmUp opens the listener before WarmUp runs: while it
	// runs, /health answers 200, /ready and /health?deep=true 503
	// "starting", and the tool's routes 503 with Retry-After (translate-api,
	// whose specification has /ready answer 503 while starting). False
	// keeps connections refused until warm-up ends (pageclass-api, whose
	// specification says warm-up finishes before connections are accepted).
	ServeDuringWarmUp bool
	// DeepCheck returns "" when the service is healthy, otherwise a detail
	// saying what is degraded (a cold backend, a language identifier that
	// failed to load). It is called by /health?deep=true only, and must be
	// bounded in time (translate-api's probes its backend within 5 s). Nil
	// means never degraded.
	DeepCheck func(ctx context.Context) string
	// OpenAPI is the tool's OpenAPI 3.1 document as JSON, served at
	// /openapi.json with the service's own paths (/health, /ready, /metrics)
	// and error schemas added. Nil serves a document with the service's paths only.
	OpenAPI []byte
	// OnStop runs after the server has stopped (drained or cut), before Run
	// returns: release models, stop batchers. Nil means nothing to do.
	OnStop func()
	// DefaultRequestTimeout is the request deadline when REQUEST_TIMEOUT_S
	// is unset; 0 means DefaultRequestTimeout (300 s).
	DefaultRequestTimeout time.Duration
	// DefaultMaxConcurrent is the cap on heavy requests served at once
	// when MAX_CONCURRENT_REQUESTS is unset; 0 means DefaultMaxConcurrent.
	DefaultMaxConcurrent int
	// LookupEnv reads the environment; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// LogOutput receives the log records; nil means os.Stdout.
	LogOutput io.Writer
	// Batching says the service batches items for a model
	// (Metrics.ObserveBatch, ObserveQueueWait): /metrics then has
	// inference_batch_size and inference_queue_wait_seconds, which a
	// service without batches showed at zero for ever.
	Batching bool
	// Pages are the tool's GET routes of static browser pages (HTML,
	// scripts, styles, such as "GET /frontend/{asset}") that load without
	// the API token when API_TOKEN is set; the API calls they make need it.
	Pages []string
	// Index, when not nil, has the service answer GET / and GET /info
	// (see Index and Route); nil leaves both unanswered.
	Index *Index
}

// Service is one HTTP service on the shared lifecycle. Create it with New,
// register the tool's routes with Handle or HandleFunc, then call Run.
type Service struct {
	// Config is the configuration read from the environment.
	Config Config
	// Logger writes the shared log format at Config.LogLevel.
	Logger *slog.Logger
	// Metrics is served at /metrics; tools record batching and model loading here.
	Metrics *Metrics

	opts      Options
	mux       *http.ServeMux
	handler   http.Handler
	state     atomic.Int32
	inFlight  atomic.Int64
	openapi   []byte
	bodies    bodySet
	slots     chan struct{} // one token per heavy request being served
	held      slotTimes     // how long the slots are held (Retry-After)
	perClient clients       // heavy requests in the slots, by client address
	tokens    *tokenList    // the bearer tokens accepted (auth)
	routes    []Endpoint    // the tool's routes listed by /info, as registered

	stopOnce sync.Once
	stop     chan os.Signal // first SIGTERM/SIGINT

	busyMu sync.Mutex
	busy   []func() int // work in flight outside the requests (AddBusy)
	// deep are the checks of /health?deep=true added to DeepCheck
	// (AddDeepCheck).
	deep []func(context.Context) string
}

// AddDeepCheck adds f to the checks of /health?deep=true: "" when healthy,
// else what is degraded (bounded in time, as Options.DeepCheck). The job
// queue adds its folder's free space: a full JOBS_DIR left jobs running for
// ever while the deep check said ok.
func (s *Service) AddDeepCheck(f func(context.Context) string) {
	s.busyMu.Lock()
	defer s.busyMu.Unlock()
	s.deep = append(s.deep, f)
}

// deepChecks runs Options.DeepCheck and the added checks, and joins what
// they say is degraded ("" when nothing is).
func (s *Service) deepChecks(ctx context.Context) string {
	s.busyMu.Lock()
	checks := slices.Clone(s.deep)
	s.busyMu.Unlock()
	if s.opts.DeepCheck != nil {
		checks = append([]func(context.Context) string{s.opts.DeepCheck}, checks...)
	}
	var says []string
	for _, c := range checks {
		if d := c(ctx); d != "" {
			says = append(says, d)
		}
	}
	return strings.Join(says, "; ")
}

// AddBusy adds f to the counts of work in flight that is not a request
// (jobs running in this process): the drain keeps the listener open, with
// /ready and new work answered 503, while f or a request counts any. The
// listener closed at once when only jobs were running, and /ready, /health
// and a job's status were refused for the rest of the drain.
func (s *Service) AddBusy(f func() int) {
	s.busyMu.Lock()
	defer s.busyMu.Unlock()
	s.busy = append(s.busy, f)
}

// working reports whether a request or other work (AddBusy) is in flight.
func (s *Service) working() bool {
	if s.inFlight.Load() > 0 {
		return true
	}
	s.busyMu.Lock()
	defer s.busyMu.Unlock()
	for _, f := range s.busy {
		if f() > 0 {
			return true
		}
	}
	return false
}

// New reads the environment, sets up logging and registers the service's own
// routes: GET /health, GET /ready, GET /metrics, GET /openapi.json, GET /docs
// and its assets under /docs/, and GET / and GET /info when Options.Index is
// set. The error names the variable at fault.
func New(opts Options) (*Service, error) {
	if opts.Name == "" {
		return nil, errors.New("service: Options.Name is empty")
	}
	if opts.DefaultMaxUploadMB <= 0 {
		return nil, fmt.Errorf("service %s: Options.DefaultMaxUploadMB must be positive", opts.Name)
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	cfg, err := LoadConfig(lookup, opts.DefaultMaxUploadMB)
	if err != nil {
		return nil, fmt.Errorf("%s: configuration: %w", opts.Name, err)
	}
	if err := checkTempDir(); err != nil {
		return nil, fmt.Errorf("%s: %w", opts.Name, err)
	}
	if _, set := lookup(EnvPort); !set && opts.DefaultPort != 0 {
		cfg.Port = opts.DefaultPort
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = cmp.Or(opts.DefaultRequestTimeout, DefaultRequestTimeout)
	}
	if cfg.MaxConcurrent == 0 {
		cfg.MaxConcurrent = cmp.Or(opts.DefaultMaxConcurrent, DefaultMaxConcurrent)
	}
	if cfg.MaxPerClient == 0 {
		cfg.MaxPerClient = max(1, cfg.MaxConcurrent-cfg.MaxConcurrent/4)
	}
	out := opts.LogOutput
	if out == nil {
		out = os.Stdout
	}
	h, err := logging.NewHandler(out, cfg.LogLevel, cfg.LogFormat)
	if err != nil {
		return nil, fmt.Errorf("%s: configuration: %w", opts.Name, err)
	}
	s := &Service{
		Config: cfg,
		Logger: slog.New(requestIDHandler{h}).With("service", opts.Name),
		opts:   opts,
		mux:    http.NewServeMux(),
		stop:   make(chan os.Signal, 2),
		slots:  make(chan struct{}, cfg.MaxConcurrent),
	}
	s.Metrics = newMetrics(s.inFlight.Load, s.State)
	s.Metrics.batching = opts.Batching
	s.declareProcessMetrics(time.Now())
	s.openapi, err = completeOpenAPI(opts.OpenAPI, opts.Name, opts.Version)
	if err == nil {
		s.openapi, err = s.secureOpenAPI(s.openapi)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: OpenAPI document: %w", opts.Name, err)
	}

	s.mux.HandleFunc("GET /health", s.serveHealth)
	s.mux.HandleFunc("GET /ready", s.serveReady)
	s.mux.Handle("GET /metrics", s.Metrics)
	s.Handle("GET /openapi.json", http.HandlerFunc(s.serveOpenAPI))
	s.Handle("GET /docs", http.HandlerFunc(serveDocsPage))
	s.Handle("GET /docs/{asset}", http.HandlerFunc(serveDocsAsset))
	// /docs/ (a typed or bookmarked trailing slash) is the page, whose
	// relative links need /docs: it was a 404.
	s.Handle("GET /docs/{$}", RelativeRedirect("../docs"))
	s.handleIndex()
	s.tokens = newTokenList(s.Config, s.Logger)
	s.handler = s.logRequests(s.cors(s.auth(http.HandlerFunc(s.route))))
	return s, nil
}

// isProbe reports whether pattern is one of the service's own probe routes,
// which are answered in every state and logged at DEBUG.
func isProbe(pattern string) bool {
	switch pattern {
	case "GET /health", "GET /ready", "GET /metrics":
		return true
	}
	return false
}

// Handle registers a work route (Go 1.22 pattern such as "POST /translate";
// write the root as "GET /{$}", since "GET /" would match every GET and hide
// the JSON 404).
// Work routes answer 503 while the service is starting or draining, count
// as in flight, and read their body through the upload cap: a declared
// Content-Length over the cap is refused with 413 before anything is read,
// and a body that grows past it while being read fails with an error for
// which TooLarge is true (answer it with WriteBodyError). The body must
// also arrive in time (BODY_TIMEOUT_S, BODY_MIN_BYTES_PER_S; BodyError is
// true for those failures too). The request's context ends when the
// client goes away or REQUEST_TIMEOUT_S passes; a handler that returns
// without answering after the deadline gets a 503 written for it. Heavy
// routes (any method but GET and HEAD) are also capped at
// MAX_CONCURRENT_REQUESTS at once; beyond it they get 503 with
// Retry-After.
func (s *Service) Handle(pattern string, h http.Handler) {
	heavy := !strings.HasPrefix(pattern, "GET ") && !strings.HasPrefix(pattern, "HEAD ")
	s.mux.Handle(pattern, s.work(h, heavy))
}

// HandleFunc is Handle for a function.
func (s *Service) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	s.Handle(pattern, http.HandlerFunc(h))
}

// Handler is the complete HTTP handler (logging, metrics, CORS, routes). Run
// serves it; tests can serve it with httptest after calling WarmUp.
func (s *Service) Handler() http.Handler { return s.handler }

// Name is the service's name (Options.Name).
func (s *Service) Name() string { return s.opts.Name }

// State is the current lifecycle state.
func (s *Service) State() State { return State(s.state.Load()) }

// InFlight is the number of work requests being served.
func (s *Service) InFlight() int64 { return s.inFlight.Load() }

// WarmUp runs Options.WarmUp, records its duration in the metrics and moves
// the service to Ready. Run calls it; call it yourself only when serving
// Handler without Run.
func (s *Service) WarmUp(ctx context.Context) error {
	start := time.Now()
	if s.opts.WarmUp != nil {
		if err := s.opts.WarmUp(ctx); err != nil {
			return err
		}
	}
	d := time.Since(start)
	s.Metrics.setWarmup(d)
	s.state.CompareAndSwap(int32(Starting), int32(Ready))
	s.Logger.Info("warm-up finished", "duration_s", d.Seconds())
	return nil
}

// BeginDrain moves the service to Draining: /ready answers 503 and new work
// is refused with 503. Run calls it on SIGTERM; it cannot be undone.
func (s *Service) BeginDrain() {
	if State(s.state.Swap(int32(Draining))) != Draining {
		s.Logger.Info("draining", "in_flight", s.inFlight.Load())
		s.bodies.beginDrain()
	}
}

// deepBody is the body of /health?deep=true.
type deepBody struct {
	Status   string `json:"status"`
	Detail   string `json:"detail"`
	InFlight int64  `json:"in_flight"`
	Draining bool   `json:"draining"`
}

// deepAsked reports whether r asks /health for the deep check (deep=true,
// 1, ...; a value that is no boolean is not).
func deepAsked(r *http.Request) bool {
	v, ok := r.URL.Query()["deep"]
	if !ok || len(v) == 0 {
		return false
	}
	b, valid := ParseBool(v[0])
	return valid && b
}

func (s *Service) serveHealth(w http.ResponseWriter, r *http.Request) {
	deep := false
	if v, ok := r.URL.Query()["deep"]; ok && len(v) > 0 {
		b, valid := ParseBool(v[0])
		if !valid {
			WriteValidation(w, BoolParsingError("query", "deep"))
			return
		}
		deep = b
	}
	if !deep {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return
	}
	body := deepBody{InFlight: s.inFlight.Load()}
	switch s.State() {
	case Starting:
		body.Status, body.Detail = "starting", "warming up: the service is not ready yet"
	case Draining:
		body.Status, body.Detail, body.Draining = "draining", "draining after a stop signal: new work is refused", true
	default:
		if d := s.deepChecks(r.Context()); d != "" {
			body.Status, body.Detail = "degraded", d
		}
	}
	if body.Status != "" {
		WriteJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	body.Status, body.Detail = "ok", "all checks passed"
	WriteJSON(w, http.StatusOK, body)
}

func (s *Service) serveReady(w http.ResponseWriter, _ *http.Request) {
	switch st := s.State(); st {
	case Ready:
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	default:
		WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": st.String()})
	}
}

func (s *Service) serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.openapi)
}

// work wraps a tool route: state gate, in-flight count, upload cap, body
// deadlines, the body read to its end (spooled) before a heavy request
// takes a work slot, the per-client cap, request deadline and answer
// write deadlines.
func (s *Service) work(h http.Handler, heavy bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec, ok := w.(*recorder)
		if !ok {
			rec = &recorder{ResponseWriter: w}
		}
		base := rec.ResponseWriter
		switch s.State() {
		case Starting:
			skipBody(base, r)
			w.Header().Set("Retry-After", "5")
			WriteError(w, http.StatusServiceUnavailable, ReasonStarting, "the service is starting: retry shortly")
			return
		case Draining:
			// Keep-alives are off while draining, so the client reconnects
			// (to another replica) for its retry.
			skipBody(base, r)
			w.Header().Set("Retry-After", "1")
			WriteError(w, http.StatusServiceUnavailable, ReasonDraining, "the service is shutting down: retry the request shortly (on another replica, if there is one)")
			return
		}
		if heavy && len(s.slots) == cap(s.slots) {
			// Full now: refuse before reading a body that could not be served.
			skipBody(base, r)
			s.refuseBusy(w, errBusy)
			return
		}
		if ce := r.Header.Get("Content-Encoding"); ce != "" && !strings.EqualFold(strings.TrimSpace(ce), "identity") {
			// A compressed body was read as it came: "multipart:
			// NextPart: EOF" (400). RFC 9110 15.5.16: 415 naming it.
			skipBody(base, r)
			WriteError(w, http.StatusUnsupportedMediaType, ReasonUnsupportedMediaType,
				fmt.Sprintf("request bodies with Content-Encoding %q are not accepted: send the body uncompressed", ce))
			return
		}
		s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		// A drain that began between the check and the increment still
		// waits for this request, so it is safe to go on.
		limit := s.Config.MaxUploadBytes
		// MaxBytesReader tells the server's own ResponseWriter that the
		// limit was hit, so that it closes the connection gracefully; it
		// cannot see through the recorder, so it gets the original (base).
		if r.ContentLength > limit {
			markTooLarge(base, r)
			writeTooLarge(w, limit)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(base, r.Body, limit)
		}
		defer s.limitBody(base, r)()
		var held *slot
		if heavy {
			// The body arrives before the work slot is taken: a client
			// trickling its body holds a connection, never a slot.
			remove, err := spool(r)
			defer remove()
			if err != nil {
				WriteBodyError(w, err)
				return
			}
			if held, err = s.acquire(r); err != nil {
				s.refuseBusy(w, err)
				return
			}
			defer held.release()
			s.setLimits(w.Header())
		}
		a := &answer{recorder: rec, rc: http.NewResponseController(base), slot: held, rate: s.Config.BodyMinRate}
		s.bodies.add(a)
		defer s.bodies.remove(a)
		s.withDeadline(a, r, h)
	})
}

// markTooLarge tells net/http that the request body is over the limit
// without reading it: a MaxBytesReader with limit 0 reads at most one byte
// and then marks the response, which makes the server close the connection
// gracefully (FIN, pause, close) even when the client asked for
// "Connection: close"; otherwise the unread body would make the close a
// reset that can destroy the 413 before the client reads it. Requests that
// expect "100 Continue" are left alone: reading would invite the body.
func markTooLarge(base http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		return
	}
	rc := http.NewResponseController(base)
	_ = rc.SetReadDeadline(time.Now().Add(time.Second))
	_, _ = http.MaxBytesReader(base, r.Body, 0).Read(make([]byte, 1))
	_ = rc.SetReadDeadline(time.Time{})
}

// skipBody is for a request refused before its body is read: net/http
// would read up to 256 KB of the unread body before sending the answer,
// which a slow client could stretch for minutes. An expired read deadline
// makes it give up at once and close the connection after the answer.
func skipBody(base http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return
	}
	_ = http.NewResponseController(base).SetReadDeadline(time.Now())
}

// route dispatches to the mux, answering unknown paths and methods with the
// JSON error body instead of the mux's plain text.
func (s *Service) route(w http.ResponseWriter, r *http.Request) {
	h, pattern := s.mux.Handler(r)
	if rec, ok := w.(*recorder); ok {
		rec.pattern = pattern
	}
	if pattern != "" && s.Config.RootPath != "" && cleanPath(r.URL.Path) != r.URL.Path {
		// The mux's redirect to the clean path ("/docs/../info" to
		// "/info"), under the service's ROOT_PATH as the client sees it.
		probe := &headerOnly{header: http.Header{}}
		h.ServeHTTP(probe, r)
		if loc := probe.header.Get("Location"); loc != "" {
			w.Header().Set("Location", s.Config.RootPath.Location(loc))
			w.WriteHeader(probe.status)
			return
		}
	}
	if pattern != "" {
		s.mux.ServeHTTP(w, r)
		return
	}
	// Learn the status (404 or 405) and Allow header the mux would send.
	probe := &headerOnly{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if allow := probe.header.Get("Allow"); allow != "" {
		w.Header().Set("Allow", allow)
	}
	if loc := probe.header.Get("Location"); loc != "" {
		// The mux's redirect of a path to its clean form ("/a/../b" to
		// "/b"): it was sent without its Location. It is under the
		// service's ROOT_PATH, as the client sees it.
		w.Header().Set("Location", s.Config.RootPath.Location(loc))
	}
	status := probe.status
	if status == 0 || status == http.StatusOK {
		status = http.StatusNotFound
	}
	reason := ReasonNotFound
	if status == http.StatusMethodNotAllowed {
		reason = ReasonMethodNotAllowed
	}
	WriteError(w, status, reason, http.StatusText(status))
}

// cleanPath is p as the mux cleans it before matching: no "." or ".."
// elements, no doubled slashes, a trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}

// headerOnly is a ResponseWriter that keeps the header and status and drops the body.
type headerOnly struct {
	header http.Header
	status int
}

func (h *headerOnly) Header() http.Header         { return h.header }
func (h *headerOnly) Write(b []byte) (int, error) { return len(b), nil }
func (h *headerOnly) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}

// recorder captures the status and size of a response for logs and metrics.
type recorder struct {
	http.ResponseWriter
	status  int
	bytes   int64
	pattern string
	// client is the API_TOKENS_FILE client's name (auth); "" for none.
	client string
	// cause is why the service failed the request, for the request log
	// only (noteCause: a full disk's path and error); "" for none.
	cause string
	// reason is the error answer's reason code (WriteError); "" for none.
	reason Reason
	// gone says the client went away while its body was read
	// (goneError): the request is logged and counted as cut.
	gone bool
	// writeErr is the first error writing the answer (the client went
	// away, or its write deadline cut it): the log says the answer was
	// cut off after its bytes.
	writeErr error
}

// noteCause records cause in the request log record of the request whose
// response writer w is (w, or a writer it wraps: Unwrap), logged at ERROR:
// what the operator must know and the client is not told.
func noteCause(w http.ResponseWriter, cause string) {
	if rec := recorderOf(w); rec != nil {
		rec.cause = cause
	}
}

// noteReason records the reason of an error answer (WriteError) in the
// request log record of the request whose response writer w is.
func noteReason(w http.ResponseWriter, reason Reason) {
	if rec := recorderOf(w); rec != nil && rec.reason == "" {
		rec.reason = reason
	}
}

// recorderOf is the request log's recorder that w is or wraps (Unwrap),
// nil when none.
func recorderOf(w http.ResponseWriter) *recorder {
	for w != nil {
		if rec, ok := w.(*recorder); ok {
			return rec
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	if err != nil && r.writeErr == nil {
		r.writeErr = err
	}
	return n, err
}

// Flush lets handlers stream responses.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController access to the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

var knownMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

// StatusClientClosed is the status a request that ended without an answer
// (the client went away, or the service's stop cut it) is counted under in
// the metrics (nginx's 499, "client closed request"); its log line says
// status 0 and why.
const StatusClientClosed = 499

// logRequests writes one log line per request (DEBUG for probes, INFO
// otherwise) and records it in the metrics.
func (s *Service) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r)
		w.Header().Set(HeaderRequestID, id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id))
		addr := s.Config.ClientAddr(r)
		r = r.WithContext(context.WithValue(r.Context(), clientAddrKey{}, addr))
		// A work route's answer leaves a write deadline on the
		// connection; the next request on it starts without one.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		if len(r.TransferEncoding) > 0 {
			// A chunked request may have come with a Content-Length too,
			// which net/http drops unseen: a proxy before the service
			// that went by the length would read the rest of the body as
			// the next request (request smuggling). The connection ends
			// with the answer, as RFC 9112 section 6.1 asks; a chunked
			// upload costs one new connection.
			w.Header().Set("Connection", "close")
		}
		rec := &recorder{ResponseWriter: w}
		defer func() {
			cut := rec.gone
			if rec.status == 0 {
				rec.status = http.StatusOK
				// Nothing written and the request's context ended: the
				// client went away, or the stop cut the request.
				cut = cut || r.Context().Err() != nil
			}
			counted := rec.status
			if cut {
				// Neither a success nor a failure of either side: nginx's
				// "client closed request" (it was counted 200, or 500
				// when the upload was cut off mid-body).
				counted = StatusClientClosed
			}
			d := time.Since(start)
			path := "unmatched"
			if _, p, ok := strings.Cut(rec.pattern, " "); ok {
				path = p
			} else if rec.pattern != "" {
				path = rec.pattern
			}
			if r.Method == http.MethodOptions && rec.pattern == "" {
				path = "preflight"
			}
			if path == "/health" && deepAsked(r) {
				// The deep check's 503s were counted with the liveness
				// probe's 200s.
				path = "/health?deep"
			}
			method := r.Method
			if !knownMethods[method] {
				method = "OTHER"
			}
			s.Metrics.observeRequest(method, path, counted, d)
			level := slog.LevelInfo
			switch {
			case isProbe(rec.pattern):
				level = slog.LevelDebug
			case rec.cause != "":
				level = slog.LevelError
			case rec.status >= 500:
				level = slog.LevelWarn // seen at LOG_LEVEL=WARNING
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rec.status),
				slog.Float64("duration_ms", float64(d.Microseconds())/1000),
				slog.Int64("bytes", rec.bytes),
				slog.String("remote", r.RemoteAddr),
			}
			if host, _, _ := net.SplitHostPort(r.RemoteAddr); addr != host {
				// The client behind a trusted proxy (TRUSTED_PROXIES).
				attrs = append(attrs, slog.String("client_addr", addr))
			}
			if rec.client != "" {
				attrs = append(attrs, slog.String("client", rec.client))
			}
			if rec.reason != "" && !rec.gone {
				// (A client gone mid-body was answered 400 bad_request
				// that it never read: its line says cut, not why.)
				attrs = append(attrs, slog.String("reason", string(rec.reason)))
			}
			if rec.cause != "" {
				attrs = append(attrs, slog.String("cause", rec.cause))
			}
			if rec.writeErr != nil && !cut {
				// A results stream read in part, an answer its client did
				// not take within its write deadline: logged 200 before.
				attrs = append(attrs, slog.String("cut", "the answer was cut off after "+strconv.FormatInt(rec.bytes, 10)+" bytes: "+rec.writeErr.Error()))
				level = max(level, slog.LevelWarn)
			}
			if cut {
				attrs[2] = slog.Int("status", 0) // no answer went out
				attrs = append(attrs, slog.String("cut", "the request ended without an answer: the client went away, or the service's stop cut it"))
				level = max(level, slog.LevelWarn)
			}
			s.Logger.LogAttrs(r.Context(), level, "request", attrs...)
		}()
		next.ServeHTTP(rec, r)
	})
}

// cors answers preflight requests and adds Access-Control-Allow-Origin for
// allowed origins. A refused origin gets no CORS headers (the browser then
// blocks the response); a refused preflight gets 400.
func (s *Service) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Add("Vary", "Origin")
		allowed := s.Config.Origins.Allows(origin)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if !allowed {
				WriteError(w, http.StatusBadRequest, ReasonOriginNotAllowed, "Disallowed CORS origin: "+origin)
				return
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS") // DELETE /jobs/{id}
			if req := r.Header.Get("Access-Control-Request-Headers"); req != "" {
				h.Set("Access-Control-Allow-Headers", req)
			}
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allowed {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", ExposedHeaders)
		}
		next.ServeHTTP(w, r)
	})
}

// ExposedHeaders are the answer headers of both services a page of an
// allowed origin may read (CORS hides the others from its scripts): the
// file name, a job's Location, when to retry, the limits applied and
// translate-api's counts, licence and backend (only Content-Disposition
// was exposed).
//
// A job item's answer keeps those that describe it (internal/jobs'
// answerHeaders): a header added here is stored with job answers too.
const ExposedHeaders = "Content-Disposition, Link, Location, Retry-After, X-Request-ID, X-Limits-Applied, X-Translation-Units, X-Translation-Translated, X-Translation-Skipped, X-Translation-Backend-Calls, X-Translation-Warnings, X-Translation-Files-Failed, X-Translation-Files-Without-Text, X-Translation-License, X-Translation-Backend"

// Run runs the whole lifecycle and returns the process exit code: warm-up
// (SIGTERM during warm-up cancels it and returns 143 at once), listen on
// Config.Addr, serve until SIGTERM or SIGINT, drain, stop. A second signal
// during the drain window skips the rest of the window.
func (s *Service) Run() int {
	// SIGHUP stops the service as SIGTERM does, drained and logged (it
	// ended the process at once, without a word: a session closed over a
	// service started in it, a supervisor's reload).
	signal.Notify(s.stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(s.stop)
	// A log reader gone (| logger, | svlogd restarted) makes writes to
	// the log fail, not end the service with SIGPIPE: the requests go on
	// being answered, their lines lost until a reader is back.
	signal.Ignore(syscall.SIGPIPE)
	for _, w := range s.Config.Warnings {
		s.Logger.Warn(w)
	}
	if !s.Config.Closed() {
		s.Logger.Warn("no API_TOKEN, API_TOKEN_FILE or API_TOKENS_FILE: every route is open to whoever can reach the port")
	}
	if n := len(s.Config.Clients); n > 0 {
		s.Logger.Info("clients of API_TOKENS_FILE, each with its own token", "clients", n)
	}
	s.Logger.Info("starting", "version", s.opts.Version, "addr", s.Config.Addr(),
		"max_upload_bytes", s.Config.MaxUploadBytes, "graceful_shutdown_s", s.Config.GracefulShutdown.Seconds(),
		"request_timeout_s", s.Config.RequestTimeout.Seconds(), "max_concurrent_requests", s.Config.MaxConcurrent,
		"max_concurrent_per_client", s.Config.MaxPerClient,
		"body_timeout_s", s.Config.BodyTimeout.Seconds(), "body_min_bytes_per_s", s.Config.BodyMinRate,
		"token_required", s.Config.Closed(), "allowed_origins", s.Config.Origins.String())

	var srv *http.Server
	var addr string
	served := make(chan error, 1)
	if s.opts.ServeDuringWarmUp {
		if srv, addr = s.listen(served); srv == nil {
			return ExitFailure
		}
		s.Logger.Info("listening while warming up: /ready answers 503 until warm-up ends", "addr", addr)
	} else if !s.addrFree() {
		// Said before the warm-up (a port already taken was said only
		// after the models had loaded); the address is opened for good
		// once it ends, connections being refused until then.
		return ExitFailure
	}
	if code, ok := s.warmOrStop(srv); !ok {
		return code
	}
	if srv == nil {
		if srv, addr = s.listen(served); srv == nil {
			return ExitFailure
		}
	}
	s.Logger.Info("ready", "addr", addr)

	var sig os.Signal
	select {
	case sig = <-s.stop:
	case err := <-served:
		s.Logger.Log(context.Background(), logging.LevelCritical, "server stopped", "error", err.Error())
		s.runOnStop()
		return ExitFailure
	}
	s.Logger.Info("stop signal received", "signal", sig.String())
	srv.SetKeepAlivesEnabled(false)
	s.BeginDrain()
	s.drain(srv)
	s.runOnStop()
	code := exitCodeFor(sig)
	s.Logger.Info("stopped", "exit_code", code)
	return code
}

// addrFree opens Config.Addr and closes it again at once: false (after
// logging why and running OnStop) when it cannot be opened.
func (s *Service) addrFree() bool {
	ln, err := net.Listen("tcp", s.Config.Addr())
	if err != nil {
		s.Logger.Log(context.Background(), logging.LevelCritical, "cannot listen", "addr", s.Config.Addr(), "error", err.Error())
		s.runOnStop()
		return false
	}
	_ = ln.Close()
	return true
}

// listen opens Config.Addr and serves it, sending Serve's end to served; nil
// (after logging why and running OnStop) when the address cannot be opened.
func (s *Service) listen(served chan<- error) (*http.Server, string) {
	ln, err := net.Listen("tcp", s.Config.Addr())
	if err != nil {
		s.Logger.Log(context.Background(), logging.LevelCritical, "cannot listen", "addr", s.Config.Addr(), "error", err.Error())
		s.runOnStop()
		return nil, ""
	}
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.Logger.Handler(), slog.LevelWarn),
	}
	go func() { served <- srv.Serve(ln) }()
	return srv, ln.Addr().String()
}

// warmOrStop runs the warm-up, interruptible by a signal. It reports false
// with the exit code when the service is to stop: warm-up failed, or a stop
// signal came first. srv, when not nil, is the server already answering
// during warm-up; it is closed then.
func (s *Service) warmOrStop(srv *http.Server) (int, bool) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	warmed := make(chan error, 1)
	go func() { warmed <- s.WarmUp(ctx) }()
	code, ok, stopped := 0, true, false
	select {
	case err := <-warmed:
		if err != nil {
			s.Logger.Log(context.Background(), logging.LevelCritical, "warm-up failed", "error", err.Error())
			code, ok = ExitFailure, false
		}
	case sig := <-s.stop:
		s.state.Store(int32(Draining))
		s.Logger.Warn("stop signal during warm-up: exiting without serving", "signal", sig.String())
		code, ok, stopped = exitCodeFor(sig), false, true
	}
	// The server answering during warm-up is closed before what the
	// service holds is released (OnStop).
	if !ok && srv != nil {
		_ = srv.Close()
	}
	if stopped {
		s.runOnStop()
	}
	return code, ok
}

// drain waits for in-flight work, requests and jobs (AddBusy), with the
// listener open (up to
// GRACEFUL_SHUTDOWN_S, ending early when none is left or on a second
// signal), then shuts the server down, giving running requests up to
// InFlightGrace more before cutting them.
func (s *Service) drain(srv *http.Server) {
	window := time.NewTimer(s.Config.GracefulShutdown)
	defer window.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
wait:
	for s.working() {
		select {
		case <-window.C:
			s.Logger.Warn("drain window over, closing the listener", "in_flight", s.inFlight.Load())
			break wait
		case sig := <-s.stop:
			s.Logger.Warn("second stop signal: closing the listener now", "signal", sig.String())
			break wait
		case <-tick.C:
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), InFlightGrace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		s.Logger.Error("in-flight work cut after the grace period", "in_flight", s.inFlight.Load(), "grace_s", InFlightGrace.Seconds())
		_ = srv.Close()
	}
}

func (s *Service) runOnStop() {
	s.stopOnce.Do(func() {
		if s.opts.OnStop != nil {
			s.opts.OnStop()
		}
	})
}

func exitCodeFor(sig os.Signal) int {
	switch sig {
	case syscall.SIGINT:
		return ExitSIGINT
	case syscall.SIGHUP:
		return ExitSIGHUP
	}
	return ExitSIGTERM
}

// completeOpenAPI parses the tool's document and adds the service's own
// paths and error schemas where the tool has not defined them. The result
// is re-encoded with sorted keys, so it is stable for golden files.
func completeOpenAPI(doc []byte, name, version string) ([]byte, error) {
	root := map[string]any{}
	if len(doc) > 0 {
		if err := json.Unmarshal(doc, &root); err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		v, _ := root["openapi"].(string)
		if !strings.HasPrefix(v, "3.") {
			return nil, fmt.Errorf(`"openapi" is %q, want an OpenAPI 3 version such as "3.1.0"`, v)
		}
	} else {
		root["openapi"] = "3.1.0"
	}
	// The document's version is the release's, whatever the tool's
	// document says ("dev" in the checked-in files).
	info, err := objectAt(root, "info")
	if err != nil {
		return nil, err
	}
	if _, ok := info["title"]; !ok {
		info["title"] = name
	}
	if _, ok := info["version"]; !ok || version != "" {
		info["version"] = version
	}
	if _, ok := info["license"]; !ok {
		// The software's licence (LICENSE); an answer's own licence is in
		// its license field or header.
		info["license"] = map[string]any{"name": "MIT", "identifier": "MIT"}
	}
	if err := mergeDefaults(root, serviceOpenAPI()); err != nil {
		return nil, err
	}
	return json.MarshalIndent(root, "", "  ")
}

// AddOpenAPI adds the paths and component schemas of an OpenAPI fragment
// (a JSON object with "paths" and "components": {"schemas"}) that the
// document lacks: a shared package that registers routes (internal/jobs)
// describes them this way.
func (s *Service) AddOpenAPI(fragment []byte) error {
	root, frag := map[string]any{}, map[string]any{}
	if err := json.Unmarshal(s.openapi, &root); err != nil {
		return err
	}
	if err := json.Unmarshal(fragment, &frag); err != nil {
		return fmt.Errorf("OpenAPI fragment: %w", err)
	}
	if _, ok := frag["paths"].(map[string]any); !ok {
		return errors.New(`OpenAPI fragment: no "paths" object`)
	}
	if c, ok := frag["components"].(map[string]any); !ok || c["schemas"] == nil {
		return errors.New(`OpenAPI fragment: no "components": {"schemas"} object`)
	}
	if err := mergeDefaults(root, frag); err != nil {
		return err
	}
	if err := s.describeAuth(root); err != nil {
		return err
	}
	if err := describeHeaders(root); err != nil {
		return err
	}
	b, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return err
	}
	s.openapi = b
	return nil
}

// FormFields returns the fields of the multipart form the OpenAPI document
// describes for the operation "METHOD path" (POST /translate): a copy of its
// schema's properties, nil when it has none. A package that takes the same
// form elsewhere (internal/jobs: POST /jobs) describes those fields with it.
func (s *Service) FormFields(method, path string) map[string]any {
	var root map[string]any
	if err := json.Unmarshal(s.openapi, &root); err != nil {
		return nil
	}
	m := root
	for _, k := range []string{"paths", path, strings.ToLower(method), "requestBody", "content", "multipart/form-data", "schema"} {
		if m, _ = m[k].(map[string]any); m == nil {
			return nil
		}
	}
	return schemaProperties(root, m, 0)
}

// schemaProperties is the properties of schema in the document root: a
// local $ref followed (pageclass-api's forms are #/components/schemas/…),
// those of allOf's parts merged; nil when there are none.
func schemaProperties(root, schema map[string]any, depth int) map[string]any {
	if depth > 8 {
		return nil
	}
	if ref, ok := schema["$ref"].(string); ok {
		m := root
		for _, k := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			if m, _ = m[k].(map[string]any); m == nil {
				return nil
			}
		}
		return schemaProperties(root, m, depth+1)
	}
	out := map[string]any{}
	if props, ok := schema["properties"].(map[string]any); ok {
		maps.Copy(out, props)
	}
	if parts, ok := schema["allOf"].([]any); ok {
		for _, p := range parts {
			if pm, ok := p.(map[string]any); ok {
				maps.Copy(out, schemaProperties(root, pm, depth+1))
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// mergeDefaults adds to dst every key of the service fragment under
// "paths" and "components/schemas" that dst lacks.
func mergeDefaults(dst, frag map[string]any) error {
	paths, err := objectAt(dst, "paths")
	if err != nil {
		return err
	}
	for k, v := range frag["paths"].(map[string]any) {
		if _, ok := paths[k]; !ok {
			paths[k] = v
		}
	}
	comps, err := objectAt(dst, "components")
	if err != nil {
		return err
	}
	schemas, err := objectAt(comps, "schemas")
	if err != nil {
		return fmt.Errorf("components: %w", err)
	}
	for k, v := range frag["components"].(map[string]any)["schemas"].(map[string]any) {
		if _, ok := schemas[k]; !ok {
			schemas[k] = v
		}
	}
	return nil
}

func objectAt(m map[string]any, key string) (map[string]any, error) {
	v, ok := m[key]
	if !ok {
		o := map[string]any{}
		m[key] = o
		return o, nil
	}
	o, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%q is not an object", key)
	}
	return o, nil
}
