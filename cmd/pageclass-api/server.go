package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/config"
	"archivekit/internal/docrecord"
	"archivekit/internal/fetch"
	"archivekit/internal/jobs"
	"archivekit/internal/licence"
	"archivekit/internal/pageclass/batcher"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/frontend"
	"archivekit/internal/pageclass/glossary"
	"archivekit/internal/pageclass/hub"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/pageclass/settings"
	"archivekit/internal/resources"
	"archivekit/internal/service"
	"archivekit/internal/version"
	"archivekit/internal/webpage"
)

// Fixed limits of the service (spec 8).
const (
	defaultMaxUploadMB = 10
	// defaultPort is the listen port when PORT is unset (the spec's 8000;
	// translate-api takes 8001, so both start side by side).
	defaultPort = 8000
	// defaultMaxPDFPages is the most pages of a PDF classified per request
	// (spec 4.3's 50), MAX_PDF_PAGES to change it.
	defaultMaxPDFPages = 50
	maxTopN            = 11
	defaultTopN        = 3
	// pageChunk is how many pages of a PDF are classified at once; each
	// page is decoded, preprocessed and dropped before the next, so a
	// request holds one decoded page and pageChunk model inputs.
	pageChunk = 16
)

//go:embed openapi.json
var openapiJSON []byte

// options are the command-line flags.
type options struct {
	Config   string
	Models   string
	Demo     string
	Rotation string
	// RotationGiven is set when -rotation-model was given (set after
	// parsing): an empty one then turns the rotation check off, while an
	// empty default means the shipped model was not found.
	RotationGiven bool
	// DemoGiven is set when -demo was given.
	DemoGiven bool
	Device    string
	Precision string
	MaxBatch  int
	BatchWait time.Duration
	NoBatch   bool
	// MaxRender is the per-request budget of time spent decoding and
	// preparing pages; 0 means defaultMaxRender.
	MaxRender time.Duration
}

// defaultMaxRender is the rendering time one request may spend on its
// pages (-max-render): 50 A4 pages at 150 dpi take about 10 s on one
// core, so only documents whose pages cost far more than pages do reach it.
const defaultMaxRender = 60 * time.Second

func (o *options) register(fs *flag.FlagSet) {
	fs.StringVar(&o.Config, "config", "", "configuration file ([OUTPUT] FOLDER_MODELS, [HUB] repo_name); default: PAGECLASS_CONFIG, else setup/config.txt in the working directory, beside the executable, in share/archivekit, else the built-in copy")
	fs.StringVar(&o.Models, "models", "", "model folder holding model_v14 ... model_v54 (or v1.4 ...); default: config FOLDER_MODELS. A folder given here, or a FOLDER_MODELS other than the shipped ./model, never falls back to the demo models")
	fs.StringVar(&o.Demo, "demo", classify.DemoDir(), "demo ensemble served when the published models are absent (empty: no fallback); default: ARCHIVEKIT_DEMO_WEIGHTS, else weights/demo in the working directory, beside the executable or in share/archivekit")
	fs.StringVar(&o.Rotation, "rotation-model", classify.OrientationDir(), "page-orientation model flagging pages that are probably rotated (empty: pages are not checked for rotation); default: ARCHIVEKIT_ROTATION_MODEL, else weights/rotation in the working directory, beside the executable or in share/archivekit")
	fs.StringVar(&o.Device, "device", "auto", "where the models run: cpu, cuda:N, or auto (cuda:0 when a CUDA GPU is usable, else the CPU with a log record saying why; the default, as pageclass's)")
	fs.StringVar(&o.Precision, "precision", "", "arithmetic of the forward passes: auto (tf32 on CUDA, fp32 on the CPU), fp32, tf32, bf16 or fp16 (CUDA only); default: config [SETUP] precision")
	fs.IntVar(&o.MaxBatch, "max-batch", batcher.DefaultMaxBatch, "largest batch of pages sent to a model")
	fs.DurationVar(&o.BatchWait, "batch-wait", batcher.DefaultMaxWait, "how long an idle model waits for a fuller batch (0: none, run at once)")
	fs.BoolVar(&o.NoBatch, "no-batching", false, "run each request's pages on their own (no cross-request batching)")
	fs.DurationVar(&o.MaxRender, "max-render", defaultMaxRender, "time one request may spend decoding and preparing its pages; a PDF over it is refused with 422 between pages")
}

// checkWeightVariables refuses a weight variable (ARCHIVEKIT_ROTATION_MODEL,
// ARCHIVEKIT_DEMO_WEIGHTS) that is set and names nothing, when its flag was
// not given: the service started with the rotation check off (or no demo
// fallback) without a word, while pageclass refuses it as it refuses the
// flag.
func checkWeightVariables(o options, lookup func(string) (string, bool)) error {
	for _, w := range []struct {
		res   resources.Resource
		given bool
	}{{resources.RotationModel, o.RotationGiven}, {resources.DemoWeights, o.DemoGiven}} {
		v, _ := lookup(w.res.Env)
		if w.given {
			continue
		}
		// The resolver's own check (a variable naming nothing is its error;
		// found nowhere, ErrNotFound, is the usual warning, not this one).
		res := resources.Resolver{Getenv: func(k string) string { v, _ := lookup(k); return v }}
		if _, err := res.Find(w.res, ""); err != nil && !errors.Is(err, resources.ErrNotFound) {
			return fmt.Errorf("%s=%q names no weights folder (%v): give its folder, or unset it to use the shipped weights", w.res.Env, v, err)
		}
	}
	return nil
}

// loadConfig reads the configuration found by internal/resources (flag,
// PAGECLASS_CONFIG, working directory, beside the executable, share
// folder, built-in copy).
func loadConfig(flagVal string, lookup func(string) (string, bool)) (settings.Settings, error) {
	r := &resources.Resolver{Getenv: func(k string) string { v, _ := lookup(k); return v }}
	f, err := r.Find(resources.PageclassConfig, flagVal)
	if err != nil {
		return settings.Defaults(), err
	}
	data, err := f.ReadFile()
	if err != nil {
		return settings.Defaults(), err
	}
	ini, err := config.Parse(f.Path, bytes.NewReader(data))
	if err != nil {
		return settings.Defaults(), err
	}
	return settings.FromFile(ini)
}

// The service's own settings (besides the shared ones of internal/service).
const (
	// EnvMaxPDFPages is the most pages of a PDF classified per request
	// (with a pages field: the most pages selected).
	EnvMaxPDFPages = "MAX_PDF_PAGES"
	// EnvPDFRenderDPI is the resolution PDF pages are rendered at.
	EnvPDFRenderDPI = "PDF_RENDER_DPI"
	// EnvPDFRenderer is the renderer of PDF pages: poppler (the default)
	// or pdfium (imageio.RendererPDFium).
	EnvPDFRenderer = "PDF_RENDERER"
	// EnvDecodeInProcess, set to 1, decodes uploads inside the service;
	// unset or 0, in decoder processes of their own (imageio.Isolation),
	// so that a file that crashes or hangs a C decoder fails its request
	// only.
	EnvDecodeInProcess = "DECODE_IN_PROCESS"
	// EnvDecodeTimeoutS is the longest decoding of one file's header or
	// one page in a decoder process, in seconds (default 120).
	EnvDecodeTimeoutS = "DECODE_TIMEOUT_S"
	// EnvDecodeMemoryMB is the most data memory each decoder process may
	// allocate, in MiB (default 2048, at least 512).
	EnvDecodeMemoryMB = "DECODE_MEMORY_MB"
)

// decoders reads DECODE_IN_PROCESS, DECODE_TIMEOUT_S and
// DECODE_MEMORY_MB: the decoder processes of the service, or nil to decode
// in it.
func decoders(lookup func(string) (string, bool)) (*imageio.Isolation, error) {
	inProcess, err := service.EnvInt(lookup, EnvDecodeInProcess, 0, 0, 1)
	if err != nil {
		return nil, err
	}
	timeout, err := service.EnvInt(lookup, EnvDecodeTimeoutS, int(imageio.DefaultDecodeTimeout/time.Second), 1, 3600)
	if err != nil {
		return nil, err
	}
	memory, err := service.EnvInt(lookup, EnvDecodeMemoryMB, imageio.DefaultDecodeMemory>>20, imageio.MinDecodeMemory>>20, 1<<20)
	if err != nil || inProcess == 1 {
		return nil, err
	}
	if testDecoders != nil {
		return testDecoders, nil
	}
	iso, err := imageio.NewIsolation(0, time.Duration(timeout)*time.Second)
	if err != nil {
		return nil, err
	}
	iso.MaxMemory = int64(memory) << 20
	return iso, nil
}

// testDecoders, when a test sets it, are the decoder processes of every
// service of the test binary, instead of processes started and stopped
// by each.
var testDecoders *imageio.Isolation

// pdfRenderer reads PDF_RENDERER and loads PDFium when it is asked for,
// so that a service that cannot render as configured does not start. With
// poppler it loads PDFium where it finds it, for a second look at a page
// poppler draws in one colour (imageio.Doc.Use).
func pdfRenderer(lookup func(string) (string, bool)) (string, error) {
	v, ok := lookup(EnvPDFRenderer)
	if !ok || strings.TrimSpace(v) == imageio.RendererPoppler {
		_, _ = imageio.LoadPDFium(func(k string) string { s, _ := lookup(k); return s })
	}
	if !ok {
		return imageio.RendererPoppler, nil
	}
	v = strings.TrimSpace(v)
	if err := imageio.CheckRenderer(v); err != nil || v == "" {
		return "", fmt.Errorf("%s=%q: use %s (the default) or %s", EnvPDFRenderer, v, imageio.RendererPoppler, imageio.RendererPDFium)
	}
	if v == imageio.RendererPDFium {
		if _, err := imageio.LoadPDFium(func(k string) string { s, _ := lookup(k); return s }); err != nil {
			return "", fmt.Errorf("%s=pdfium: %w", EnvPDFRenderer, err)
		}
	}
	return v, nil
}

// server is the classifier service; it keeps no per-request state.
type server struct {
	// maxPDFPages is MAX_PDF_PAGES; decode the options pages are decoded
	// with (PDF_RENDER_DPI).
	maxPDFPages int
	decode      imageio.Options
	// books is the fetcher of BOOK_HOSTS whose connections book requests
	// share (bookFetcher).
	books *fetch.Fetcher
	// bookWorkers is BOOK_FETCH_WORKERS: the pages of a book a request
	// fetches at once.
	bookWorkers int
	svc         *service.Service
	engine      *engine
	// comps are the licence components (setup/para_config.txt) the
	// provenance block of returned records is resolved from.
	comps *licence.Components
	// jobs is the job API's queue (nil without JOBS_DIR).
	jobs *jobs.Queue
	// maxRender is the per-request rendering budget (-max-render).
	maxRender time.Duration
}

func newServer(o options, lookup func(string) (string, bool), logOut io.Writer) (*server, error) {
	if err := checkWeightVariables(o, lookup); err != nil {
		return nil, fmt.Errorf("pageclass-api: configuration: %w", err)
	}
	set, err := loadConfig(o.Config, lookup)
	if err != nil {
		return nil, fmt.Errorf("pageclass-api: configuration: %w", err)
	}
	// The same rule as the command line: a models folder given with
	// -models, or a FOLDER_MODELS other than the shipped one, never falls
	// back to the demo models.
	models, given := o.Models, o.Models != ""
	if models == "" {
		models = set.Output.FolderModels
		given = filepath.Clean(models) != filepath.Clean(settings.Defaults().Output.FolderModels)
	}
	loc := &classify.Locator{Models: models, Given: given, Demo: o.Demo, Flag: "-models"}
	if set.Hub.RepoName != "" {
		getenv := func(k string) string { v, _ := lookup(k); return v }
		if getenv("HUB_ENDPOINT") != "" || set.Hub.UseHub {
			c, err := hub.FromEnv("")
			if err != nil {
				return nil, fmt.Errorf("pageclass-api: hub: %w", err)
			}
			loc.Hub, loc.HubRepo = c, set.Hub.RepoName
		}
	}
	if o.MaxBatch < 1 {
		return nil, fmt.Errorf("pageclass-api: -max-batch %d: want at least 1", o.MaxBatch)
	}
	s := &server{decode: imageio.DefaultOptions, maxRender: cmp.Or(o.MaxRender, defaultMaxRender)}
	if s.maxPDFPages, err = service.EnvInt(lookup, EnvMaxPDFPages, defaultMaxPDFPages, 1, 10000); err != nil {
		return nil, fmt.Errorf("pageclass-api: configuration: %w", err)
	}
	if s.decode.DPI, err = service.EnvInt(lookup, EnvPDFRenderDPI, imageio.DefaultDPI, 36, 600); err != nil {
		return nil, fmt.Errorf("pageclass-api: configuration: %w", err)
	}
	if s.decode.Renderer, err = pdfRenderer(lookup); err != nil {
		return nil, fmt.Errorf("pageclass-api: configuration: %w", err)
	}
	if s.decode.Isolation, err = decoders(lookup); err != nil {
		return nil, fmt.Errorf("pageclass-api: configuration: %w", err)
	}
	if s.bookWorkers, err = service.BookFetchWorkers(lookup); err != nil {
		return nil, fmt.Errorf("pageclass-api: configuration: %w", err)
	}
	if s.comps, err = loadComponents(); err != nil {
		return nil, fmt.Errorf("pageclass-api: licence components: %w", err)
	}
	s.svc, err = service.New(service.Options{
		Name:               "pageclass-api",
		Batching:           true,
		Version:            version.String(),
		DefaultMaxUploadMB: defaultMaxUploadMB,
		DefaultPort:        defaultPort,
		// Cross-request batching gains up to 32 requests at once; decoded
		// pixels are bounded separately (imageio.MaxPixelsInFlight).
		DefaultMaxConcurrent:  32,
		DefaultRequestTimeout: 120 * time.Second,
		WarmUp:                s.warmUp,
		OpenAPI:               openapiJSON,
		// The browser interface loads without the API token; its calls
		// to /info and the predict routes send it (app.js asks for it).
		Pages:     webpage.Routes,
		OnStop:    s.close,
		LookupEnv: lookup,
		LogOutput: logOut,
		Index:     newIndex(s.maxPDFPages, s.decode),
	})
	if err != nil {
		return nil, err
	}
	loc.Log = s.svc.Logger
	s.books = newBookFetcher(s.svc.Config) // BOOK_HOSTS (or its old name BOOK_ALLOW_HOSTS)
	s.decode.OnBrokenPages = func(name string, err error) {
		s.svc.Logger.Warn("a PDF's page tree has broken pages", "file", name, "error", err.Error())
	}
	s.decode.OnLabelError = func(name string, err error) {
		s.svc.Logger.Warn("the PDF's page labels cannot be read: its pages are numbered only", "file", name, "error", err.Error())
	}
	s.svc.Metrics.DeclareCounter(metricPages, "Pages classified, by first category.", "category")
	for _, c := range modelmeta.Categories {
		// Every category's series from the start, at 0: it appeared only
		// once a page of it was classified.
		s.svc.Metrics.AddCount(metricPages, c, 0)
	}
	s.svc.Metrics.DeclareCounter(metricFlagged, "Pages classified that were flagged for review.", "")
	if err := torch.CheckDevice(o.Device); err != nil {
		// It failed the warm-up, naming a model file (torch load: bad device).
		return nil, fmt.Errorf("pageclass-api: -device: %w", err)
	}
	precision := o.Precision
	if precision == "" {
		precision = set.Setup.Precision
	}
	if precision != "auto" {
		p, err := torch.ParsePrecision(precision)
		if err == nil && o.Device == "cpu" {
			_, _, err = p.Effective("cpu")
		}
		if err != nil {
			return nil, fmt.Errorf("pageclass-api: -precision: %w", err)
		}
	}
	s.engine = &engine{opt: engineOptions{Locator: loc, Device: o.Device, Precision: precision, Rotation: o.Rotation, RotationOff: o.RotationGiven, Batching: !o.NoBatch,
		MaxBatch: o.MaxBatch, MaxWait: o.BatchWait, Metrics: s.svc.Metrics, Log: s.svc.Logger}}
	if s.jobs, err = jobs.Setup(s.svc, lookup, jobs.Options{Path: "/predict_image", Handler: s.predict(false), Pick: s.pick, CheckFields: s.checkJobFields, Book: s.bookJobs(), RunMeta: s.jobRunMeta}); err != nil {
		return nil, fmt.Errorf("pageclass-api: configuration: %w", err)
	}
	s.svc.Route("POST /predict_image", "classify one page image (multipart form: file, version, topn, document_json, document_json_out)", s.jobs.Async(s.predict(false)))
	s.svc.Route("POST /predict_document", fmt.Sprintf("classify every page of a PDF or a multi-page TIFF of at most %d pages, or the pages selected (same form fields, and pages)", s.maxPDFPages), s.jobs.Async(s.predict(true)))
	if s.jobs != nil {
		if err := s.svc.AddOpenAPI(jobThumbOpenAPI); err != nil {
			return nil, fmt.Errorf("pageclass-api: %w", err)
		}
		s.svc.Route("GET /jobs/{id}/results/{item}/thumbnail", "a JPEG thumbnail of a job's page image, made from the file the job keeps", s.jobThumbnail)
	}
	webpage.Serve(s.svc, "browser interface", frontend.Handler())
	return s, nil
}

// The service's own counters in /metrics: the run summary of the command
// line, counted over the service's life.
const (
	metricPages   = "pageclass_pages_classified_total"
	metricFlagged = "pageclass_pages_flagged_total"
)

// warmUp loads the models, then starts the job workers (if any).
func (s *server) warmUp(ctx context.Context) error {
	if err := s.engine.load(ctx); err != nil {
		return err
	}
	if s.jobs != nil && strings.HasPrefix(s.engine.opt.Device, "cuda") {
		// A job's pages fill the GPU's batches as concurrent requests
		// do (JOBS_ITEM_WORKERS sets another number).
		s.jobs.DefaultItemWorkers(gpuItemWorkers)
		s.svc.Logger.Info("jobs run several pages at once on the GPU", "items_at_once", s.jobs.ItemWorkers(), "device", s.engine.opt.Device)
	}
	return s.jobs.Start(ctx)
}

// gpuItemWorkers is how many of a job's items run at once on a GPU unless
// JOBS_ITEM_WORKERS says otherwise: /predict_image at concurrency 8 gave
// 4.96 times concurrency 1 on an H100 (docs/benchmarks.md, "GPU").
const gpuItemWorkers = 8

// close stops the job workers (their item in flight finishes, up to
// InFlightGrace), then releases the models.
func (s *server) close() {
	ctx, cancel := context.WithTimeout(context.Background(), service.InFlightGrace)
	if err := s.jobs.Close(ctx); err != nil {
		s.svc.Logger.Warn("job queue stop", "error", err.Error())
	}
	cancel()
	s.engine.close()
	if s.decode.Isolation != testDecoders {
		s.decode.Isolation.Close()
	}
}

// versions are the values of the version field listed by /info.
var versions = append(append([]string(nil), registry.Ensemble...), "all")

// newIndex is what pageclass-api adds to the service's / and /info (spec
// 2.4), with its limits.
func newIndex(maxPDFPages int, dec imageio.Options) *service.Index {
	return &service.Index{
		Welcome: "pageclass-api: POST a page image to /predict_image or a PDF to /predict_document; see /info for the service description, /docs for the API and /frontend for the browser interface",
		Limits: struct {
			MaxPDFPages  int    `json:"max_pdf_pages"`
			PDFRenderDPI int    `json:"pdf_render_dpi"`
			PDFRenderer  string `json:"pdf_renderer"`
			// PDFSecondLook: a page the renderer draws in one colour is
			// rendered again with the other (imageio.SecondLook).
			PDFSecondLook bool `json:"pdf_second_look"`
			// DecodeInProcess is DECODE_IN_PROCESS, DecodeTimeoutS
			// DECODE_TIMEOUT_S and DecodeMemoryMB DECODE_MEMORY_MB (0 in
			// process: no limit).
			DecodeInProcess bool `json:"decode_in_process"`
			DecodeTimeoutS  int  `json:"decode_timeout_s"`
			DecodeMemoryMB  int  `json:"decode_memory_mb"`
		}{maxPDFPages, dec.DPI, dec.Renderer, imageio.SecondLook(dec.Renderer), dec.Isolation == nil, decodeTimeoutS(dec), decodeMemoryMB(dec)},
		Info: struct {
			Categories      []string `json:"categories"`
			AvailableModels []string `json:"available_models"`
			// Glossary says what each category means (not in spec 2.4),
			// and GlossaryDocument where the same table is for people.
			Glossary         []glossary.Entry `json:"glossary"`
			GlossaryDocument string           `json:"glossary_document"`
		}{modelmeta.Categories, versions, glossary.Entries, glossary.Installed + " in the release tree, " + glossary.Document + " in the source"},
	}
}

// decodeTimeoutS is the longest decoding of one header or page in a
// decoder process, in whole seconds; 0 when the service decodes in
// process (no limit).
func decodeTimeoutS(dec imageio.Options) int {
	if dec.Isolation == nil {
		return 0
	}
	return int(dec.Isolation.Timeout / time.Second)
}

// decodeMemoryMB is the data memory cap of each decoder process, in MiB;
// 0 when the service decodes in process (no cap).
func decodeMemoryMB(dec imageio.Options) int {
	if dec.Isolation == nil {
		return 0
	}
	return int(cmp.Or(dec.Isolation.MaxMemory, imageio.DefaultDecodeMemory) >> 20)
}

// prediction is one entry of a Top-N (spec 2.1).
type prediction struct {
	Label string  `json:"label"`
	Score float64 `json:"score"`
}

// demoStatus is an extra part of both answers (not in spec 2.2 and 2.3):
// present only when shipped demo models answered (the published models were
// absent), with their names, so that no answer of a demo model passes for
// one of the published models.
type demoStatus struct {
	Demo       bool     `json:"demo,omitempty"`
	DemoModels []string `json:"demo_models,omitempty"`
	// Models is an extra field: the models that answered, each with the
	// digest of the bytes it was loaded from (modelmeta.Digest), so that
	// an answer says exactly what produced it (version alone did not: a
	// revision's folder may hold another model).
	Models []modelRef `json:"models,omitempty"`
	// License and LicenseURL are the licence the answer carries: the
	// most restrictive of the models that answered (the demo models'
	// CC BY-NC 4.0), as the run metadata and the records resolve it; an
	// answer said it nowhere unless a record was asked for.
	License    string `json:"license,omitempty"`
	LicenseURL string `json:"license_url,omitempty"`
}

// modelRef names a model that answered and its digest.
type modelRef struct {
	Name   string `json:"name"`
	Digest string `json:"digest"`
}

// imageResponse is the body of /predict_image (spec 2.2).
type imageResponse struct {
	Type        string       `json:"type"`
	Version     string       `json:"version"`
	Predictions []prediction `json:"predictions"`
	Record      any          `json:"document_json"`
	SchemaError []string     `json:"document_json_schema_error"`
	// Review and ReviewCalibration are extra fields (not in spec 2.2): the
	// page's doubt and page-condition flags, and the calibration in force.
	Review            *review.Page    `json:"review"`
	ReviewCalibration *review.Applied `json:"review_calibration"`
	// Thumbnail is an extra field: a small JPEG of the page as a data:
	// URL, present only when the form asked for thumbnails (the browser
	// interface does for a book job, whose items are page images the
	// service keeps no copy of).
	Thumbnail string `json:"thumbnail,omitempty"`
	demoStatus
}

// pageResult is one page of /predict_document.
type pageResult struct {
	Page int `json:"page"`
	// Label is an extra field: the page's label in the PDF ("iv",
	// "12a"), present when the PDF defines page labels; for a book, the
	// METS ORDERLABEL or the canvas label.
	Label string `json:"label,omitempty"`
	// ID and Order are extra fields of a book's page: the METS div ID and
	// ORDER, or the canvas id.
	ID          string       `json:"id,omitempty"`
	Order       string       `json:"order,omitempty"`
	Predictions []prediction `json:"predictions"`
	// Review is an extra field: the page's doubt and condition flags.
	Review *review.Page `json:"review"`
	// Thumbnail is a small JPEG of the page as a data: URL, present only
	// when the form asked for thumbnails (the browser interface does).
	Thumbnail string `json:"thumbnail,omitempty"`
}

// documentResponse is the body of /predict_document (spec 2.3);
// document_json appears only when a record was requested.
type documentResponse struct {
	Type        string       `json:"type"`
	Version     string       `json:"version"`
	PageCount   int          `json:"page_count"`
	Pages       []pageResult `json:"pages"`
	Record      any          `json:"document_json,omitempty"`
	SchemaError []string     `json:"document_json_schema_error,omitempty"`
	// ReviewCalibration is an extra field: the calibration that set the
	// pages' needs_review, null when there is none.
	ReviewCalibration *review.Applied `json:"review_calibration"`
	// Skipped is an extra field of a book: its pages not classified, with
	// the reason (an image that could not be fetched or read).
	Skipped []skippedPage `json:"skipped,omitempty"`
	// BookProblems is an extra field of a book: what the reader left out
	// or found (a canvas painted by two images: only the first is read),
	// as pageclass's run metadata warns of them.
	BookProblems []string `json:"book_problems,omitempty"`
	demoStatus
}

// checkVersion refuses a version field that names no revision.
func checkVersion(v string) *service.ValidationError {
	if v != "all" && registry.CheckRevision(v) != nil {
		return &service.ValidationError{Loc: []any{"body", "version"},
			Msg: "Input should be 'v1.4', 'v2.4', 'v3.4', 'v4.4', 'v5.4', 'all' or another published revision vN.M", Type: "literal_error"}
	}
	return nil
}

// parseTopN reads a topn field: a whole number from 1 to maxTopN.
func parseTopN(v string) (int, *service.ValidationError) {
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		e := service.IntParsingError("body", "topn")
		return n, &e
	case n < 1:
		e := service.GreaterEqualError(1, "body", "topn")
		return n, &e
	case n > maxTopN:
		e := service.LessEqualError(maxTopN, "body", "topn")
		return n, &e
	}
	return n, nil
}

// form is a validated prediction request.
type form struct {
	file       []byte
	name       string
	ctype      string
	version    string
	topn       int
	baseline   []byte
	hasBase    bool
	wantRecord bool
	thumbnails bool
	// pages is the pages field parsed (nil: every page).
	pages []pageRange
	// book is the book field: the URL of a METS file or a IIIF manifest
	// classified instead of an uploaded file ("" for an upload).
	book string
}

// readBaseline reads the document_json of the form mf, a file part or a
// text field (curl -F 'document_json={...}', as translate-api takes it; it
// was ignored without a word).
func (f *form) readBaseline(mf *multipart.Form) error {
	if fhs := mf.File["document_json"]; len(fhs) > 0 {
		b, err := readUpload(fhs[0])
		if err != nil {
			return err
		}
		f.baseline, f.hasBase = b, true
	} else if vs := mf.Value["document_json"]; len(vs) > 0 {
		f.baseline, f.hasBase = []byte(vs[0]), true
	}
	return nil
}

// duplicated refuses the fields of mf that must come once and came more
// often, rather than read their first value (as translate-api refuses them).
func duplicated(mf *multipart.Form) []service.ValidationError {
	var verrs []service.ValidationError
	for _, k := range []string{"version", "topn", "document_json", "document_json_out", "thumbnails", "book", "pages"} {
		if n := len(mf.Value[k]) + len(mf.File[k]); n > 1 {
			verrs = append(verrs, service.DuplicateError(n, "body", k))
		}
	}
	return verrs
}

// parseForm reads and validates the form fields of spec 4.3; it answers
// the request itself when they are not valid.
func parseForm(w http.ResponseWriter, r *http.Request) (*form, bool) {
	f := &form{version: "all", topn: defaultTopN}
	var verrs []service.ValidationError
	if err := r.ParseMultipartForm(32 << 20); err != nil {
		if service.BodyError(err) {
			service.WriteBodyError(w, err)
			return nil, false
		}
		if !errors.Is(err, http.ErrNotMultipart) {
			service.WriteError(w, http.StatusBadRequest, service.ReasonBadRequest, "the multipart form cannot be read: "+err.Error())
			return nil, false
		}
		// A JSON or URL-encoded form lacks the file (422 below, the
		// validation's list form); an image or text sent as the body
		// itself is told how to send it, as translate-api tells it.
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" && mt != "application/x-www-form-urlencoded" {
			ct := cmp.Or(r.Header.Get("Content-Type"), "none")
			service.WriteError(w, http.StatusUnsupportedMediaType, service.ReasonUnsupportedMediaType,
				fmt.Sprintf("Content-Type %s is not supported: send the page as multipart/form-data with a file field (curl -F file=@page.png ...)", ct))
			return nil, false
		}
	}
	mf := r.MultipartForm
	if mf == nil {
		mf = &multipart.Form{}
	}
	if fhs := mf.File["file"]; len(fhs) > 1 {
		verrs = append(verrs, service.DuplicateError(len(fhs), "body", "file"))
	} else if len(fhs) == 1 {
		b, err := readUpload(fhs[0])
		if err != nil {
			service.WriteBodyError(w, err)
			return nil, false
		}
		f.file, f.name, f.ctype = b, cmp.Or(service.ClientName(fhs[0].Filename), "upload"), fhs[0].Header.Get("Content-Type")
	} else if len(mf.Value["book"]) == 0 {
		verrs = append(verrs, service.MissingError("body", "file"))
	}
	if err := f.readBaseline(mf); err != nil {
		service.WriteBodyError(w, err)
		return nil, false
	}
	verrs = append(verrs, duplicated(mf)...)
	value := func(k string) (string, bool) {
		if vs := mf.Value[k]; len(vs) > 0 {
			return strings.TrimSpace(vs[0]), true
		}
		return "", false
	}
	if v, ok := value("version"); ok && v != "" {
		if verr := checkVersion(v); verr != nil {
			verrs = append(verrs, *verr)
		}
		f.version = v
	}
	if v, ok := value("topn"); ok {
		n, verr := parseTopN(v)
		if verr != nil {
			verrs = append(verrs, *verr)
		}
		f.topn = n
	}
	if v, ok := value("document_json_out"); ok {
		b, valid := service.ParseBool(v)
		if !valid {
			verrs = append(verrs, service.BoolParsingError("body", "document_json_out"))
		}
		f.wantRecord = b
	}
	if v, ok := value("thumbnails"); ok {
		b, valid := service.ParseBool(v)
		if !valid {
			verrs = append(verrs, service.BoolParsingError("body", "thumbnails"))
		}
		f.thumbnails = b
	}
	if v, ok := value("book"); ok {
		if msg := checkBookField(v, f.file != nil); msg != "" {
			verrs = append(verrs, service.ValidationError{Loc: []any{"body", "book"}, Msg: msg, Type: "value_error"})
		}
		f.book, f.name = v, bookName(v)
	}
	if v, ok := value("pages"); ok {
		rs, verr := parsePagesField(v)
		if verr != nil {
			verrs = append(verrs, *verr)
		}
		f.pages = rs
	}
	if len(verrs) > 0 {
		service.WriteValidation(w, verrs...)
		return nil, false
	}
	f.wantRecord = f.wantRecord || f.hasBase
	return f, true
}

func readUpload(fh *multipart.FileHeader) ([]byte, error) {
	rc, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

// top is the Top-N of mean probabilities, scores to 4 decimals.
func top(mean []float64, n int) []prediction {
	ranked := results.TopN(mean, n)
	out := make([]prediction, len(ranked))
	for i, r := range ranked {
		out[i] = prediction{Label: r.Label, Score: math.Round(r.Score*1e4) / 1e4}
	}
	return out
}

// record accretes the page categories onto the baseline (or a new record
// named after the file) and validates it. A baseline that was already
// invalid gives a record with schema errors reported instead of a refusal;
// an invalid record made from a valid baseline is an error (500).
func (s *server) record(baseline *docrecord.Record, f *form, res *predicted, demo bool) (any, []string, error) {
	schema, err := docrecord.ProjectSchema()
	if err != nil {
		return nil, nil, fmt.Errorf("document record schema: %w", err)
	}
	docID, numbers := strings.TrimSuffix(f.name, path.Ext(f.name)), res.numbers
	if f.book == "" && len(numbers) == 1 && !imageio.IsPDF(f.file) {
		// An image named as a page of a document ("atrium-34.png") is
		// that page of that document, as the command line's records read
		// it: doc_id "atrium", page "34" (it was doc_id "atrium-34", page
		// "1", so the two records of one scan did not merge).
		if name, page := results.SplitPageSuffix(docID); page > 0 {
			docID, numbers = name, []int{page}
		}
	}
	labels := docrecord.PageLabels(numbers, res.labels)
	preds := make([]docrecord.PagePrediction, len(res.probs))
	for i, p := range res.probs {
		t := results.TopN(p, 1)[0]
		preds[i] = docrecord.PagePrediction{Label: labels[i], Index: numbers[i], Category: t.Label, Confidence: t.Score, Review: res.reviews[i].Record()}
	}
	id, at := service.RunID(), time.Now().UTC()
	var src *docrecord.Source
	if f.book == "" && len(f.file) > 0 {
		// The uploaded file is the record's source, as the command line's
		// records name the file classified.
		sum := sha256.Sum256(f.file)
		src = docrecord.NewSource(hex.EncodeToString(sum[:]), f.name, res.pages, imageio.IsPDF(f.file))
	}
	rec, err := docrecord.ApplyPages(schema, docrecord.PageUpdate{
		Baseline: baseline, DocID: docID, Pages: preds,
		Program: "pageclass-api", RunID: id, At: at, Owners: docrecord.PageClassifierPrograms, Source: src,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("document record for %q: %w", f.name, err)
	}
	// The provenance entry of this request, with the licence of the models
	// that answered (the demo models add their condition).
	c := docrecord.NewContributor("pageclass-api", version.String(), id, at, s.answerLicence(demo), "page_categories")
	c.ContainerImage, c.RunnerRef = s.svc.Config.Build.ContainerImage, s.svc.Config.Build.RunnerRef
	if err := rec.AddProvenance(c); err != nil {
		return nil, nil, fmt.Errorf("document record for %q: %w", f.name, err)
	}
	var schemaErr []string
	if e := rec.SchemaError(); e != "" {
		schemaErr = []string{"the uploaded document_json does not follow the record schema; the updated record is returned anyway: " + e}
	}
	for _, w := range rec.Warnings {
		s.svc.Logger.Warn("document record", "file", f.name, "warning", w)
	}
	b, err := rec.Bytes()
	if err != nil {
		return nil, nil, err
	}
	return json.RawMessage(b), schemaErr, nil
}

// loadComponents reads the classifier's licence components through
// internal/resources (PAGECLASS_PARA_CONFIG, the working directory, beside the
// executable, the share folder, or the embedded copy).
func loadComponents() (*licence.Components, error) {
	f, err := resources.Default.Find(resources.PageclassComponents, "")
	if err != nil {
		return nil, err
	}
	return licence.ReadComponents(f)
}
