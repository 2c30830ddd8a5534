package main

import (
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/shard"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"archivekit/internal/cliflags"
	"archivekit/internal/config"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/settings"
	"archivekit/internal/resources"
)

// CLI is the command line of pageclass (spec page-classification 4.1). Every
// default that names a config key comes from setup/config.txt, read before
// parsing (see loadConfig); a flag given on the command line wins.
type CLI struct {
	Config  string           `name:"config" placeholder:"FILE" help:"Configuration file supplying the defaults, read before the flags; -c for short (default: PAGECLASS_CONFIG, else setup/config.txt in the working directory, beside the executable, in share/archivekit, else the built-in copy)."`
	Version kong.VersionFlag `name:"version" help:"Print the version and exit."`

	// Input.
	File            string        `short:"f" name:"file" group:"input" placeholder:"FILE" help:"One page image or PDF to classify, or a book: a METS file or a IIIF manifest or collection, as a file or an http(s) URL (recognised by content), whose pages are classified in physical order."`
	Directory       string        `short:"d" name:"directory" group:"input" placeholder:"DIR" help:"Folder of pages to classify; METS files and IIIF manifests in it (recognised by content) are classified page by page, and images that are pages of such a book only as its pages. With --train or --eval: the folder of labelled pages (one sub-folder per category), in place of [TRAIN] and [EVAL] FOLDER_PAGES."`
	Dir             bool          `name:"dir" group:"input" help:"Classify the folder named by [INPUT] FOLDER_INPUT (${folder_input}) instead of -d."`
	FileFormat      string        `name:"file_format" group:"input" default:"${files_format}" placeholder:"EXT[,EXT]" help:"Extension(s) collected from a folder, or all (every format pageclass reads); -ff for short (jpg also collects jpeg, tif also tiff). Readable files left out are reported by extension ([SETUP] files_format: ${files_format})."`
	Inner           bool          `name:"inner" negatable:"" group:"input" default:"${inner}" help:"Recurse into nested folders ([SETUP] inner: ${inner})."`
	PageFromName    bool          `name:"page-from-name" group:"input" help:"Read an image's page number from the end of its name (scan-09.png: FILE scan, PAGE 9); set by --document-json-out(-dir), whose documents are the images sharing a stem. Without it an image keeps its whole name as FILE with an empty PAGE; in every case the last column, SOURCE, is the file as on disk."`
	Shard           string        `name:"shard" group:"input" placeholder:"I/N" help:"Classify only share I of N (numbered from 0): the files whose path relative to the input folder hashes to I, so N runs with 0/N ... N-1/N classify every file exactly once."`
	ImageGroup      string        `name:"image-group" group:"input" placeholder:"USE" help:"For a METS book: the fileGrp (USE) of the page images (default: the first of DEFAULT, MAX, OCR-D-IMG ... present, else the group with images for the most pages)."`
	BookPages       string        `name:"book-pages" group:"input" placeholder:"IDS" help:"Pages of a book to classify, by METS div ID or canvas id, in OCR-D's syntax: PHYS_0001..PHYS_0005, lists with commas, ~ID to leave one out."`
	BookSkipTypes   string        `name:"book-skip-types" group:"input" placeholder:"TYPE[,TYPE]" help:"Leave out the pages of a METS book that a logical div of these TYPEs links to (binding, colour_checker ...), before anything is fetched."`
	FetchWorkers    int           `name:"fetch-workers" group:"input" default:"${fetch_workers}" placeholder:"N" help:"Remote page images of a book fetched at once ahead of the classification, in page order, and the most requests to one host at once ([INPUT] fetch_workers: ${fetch_workers})."`
	FetchPrivate    bool          `name:"fetch-private" group:"input" help:"Let a remote book's links reach loopback and private network addresses (an institution's internal IIIF server); without it only the host of the URL given to -f (or of a list's URLs) may. The links of a book read from a local file are the file's writer's, yours, and reach any address."`
	PDFRenderer     string        `name:"pdf-renderer" group:"input" default:"poppler" enum:"poppler,pdfium" env:"PDF_RENDERER" placeholder:"NAME" help:"Renderer of PDF pages: poppler (libvips' PDF loader, GPL) or pdfium (PDFium, BSD-3-Clause and Apache-2.0; needs libpdfium.so: the installed tree's lib/, make pdfium's, or PDFIUM_LIBRARY). Recorded in the run metadata."`
	DecodeInProcess bool          `name:"decode-in-process" group:"input" env:"DECODE_IN_PROCESS" help:"Decode page images and PDFs inside pageclass itself, as before 2026-11-27. By default they are decoded in decoder processes of their own, so that a file that crashes or hangs a C decoder (libvips, OpenJPEG, poppler, PDFium) fails that file only, named in FAILURES.csv. Recorded in the run metadata."`
	DecodeMemory    int           `name:"decode-memory" group:"input" default:"2048" env:"DECODE_MEMORY" placeholder:"MiB" help:"Most data memory, in MiB, each decoder process may allocate (RLIMIT_DATA); a page that needs more fails, named (out of memory). Refused with --decode-in-process, which has no cap (default ${default}; DECODE_MEMORY)."`
	DecodeTimeout   time.Duration `name:"decode-timeout" group:"input" default:"2m" env:"DECODE_TIMEOUT" placeholder:"DURATION" help:"Longest decoding of one file's header or one page in a decoder process; a longer one is stopped and the page fails, named. Refused with --decode-in-process, which has no time limit."`

	// Output.
	TopN        int  `name:"topn" group:"output" default:"${top_n}" placeholder:"N" help:"Number of categories reported per page, 1 to 11; -tn for short ([SETUP] top_N: ${top_n})."`
	Raw         bool `name:"raw" negatable:"" group:"output" default:"${raw}" help:"Also write the scores of all 11 categories, the RAW table ([SETUP] raw: ${raw})."`
	Chunk       bool `name:"chunk" negatable:"" group:"output" default:"${chunking}" help:"Append rows every [INPUT] chunk_size (${chunk_size}) pages as the run proceeds, to tables named chunk-<hash of input and options>; a re-run with the same input and options continues them (as --resume: the ledger says what is done) ([INPUT] chunking: ${chunking})."`
	Resume      bool `name:"resume" group:"output" help:"Continue an interrupted run: files the ledger (<results>/ledger/) records as done or failed, with the same content and the same models, are not classified again; their rows come from the ledger, so the tables equal an uninterrupted run's."`
	RetryFailed bool `name:"retry-failed" group:"output" help:"As --resume, but files that failed are classified again."`
	Merge       bool `name:"merge" group:"output" help:"Merge the tables of the shard runs (--shard i/n) found in the folders or run-metadata files given after the flags into one set of tables under --results, with one run metadata listing the shards; shards of other models or options and repeated shards are refused (exit 1), missing or unfinished ones too, with exit 75 (merge again once they have completed); a refused merge writes nothing."`
	// MergeFrom are the results folders or run-metadata files of --merge.
	MergeFrom         []string `arg:"" optional:"" name:"shard-results" help:"With --merge: results folders (every shard run metadata in them) or run-metadata files of the shards."`
	Results           string   `name:"results" group:"output" default:"${folder_results}" placeholder:"DIR" help:"Folder of the result tables and run metadata ([OUTPUT] FOLDER_RESULTS: ${folder_results})."`
	NoAverageBest     bool     `name:"no-average-best" group:"output" help:"With --best: do not write the averaged AVG_TOP-N table."`
	BookOut           string   `name:"book-out" group:"output" placeholder:"DIR" help:"For IIIF manifest inputs: write into DIR, per manifest, one annotation page per canvas classified (a W3C annotation page for Presentation 3, an sc:AnnotationList for Presentation 2) (<book>_classes/<n>.json: a classifying annotation per class of the page's TOP-N row scored above 0.0000, its TextualBody the category with the row's score, and a commenting annotation with the reasons when the REVIEW row flags the page) and the derived manifest <book>_classes.json linking them; for a IIIF collection, the same for each of its manifests (<book>_<k>_classes) and the derived collection <book>_classes.json listing them; a METS file gets a warning. With --shard nothing is written: run --resume --book-out without --shard into the shards' results folder after them."`
	BookBaseURL       string   `name:"book-base-url" group:"output" placeholder:"URL" help:"With --book-out: the URL DIR will be published at, the base of the written ids (default: DIR's file:// URL)."`
	SaveIntermediates bool     `name:"save-intermediates" group:"output" help:"With --best: also write each model's own TOP-N (and RAW) table."`

	// Models.
	Model string `short:"m" name:"model" group:"models" placeholder:"DIR" help:"Folder holding one sub-folder per revision (model_v14 or v1.4 ...), or one model folder itself (default [OUTPUT] FOLDER_MODELS: ${folder_models}). A folder given here (or a non-default FOLDER_MODELS) never falls back to the demo models."`
	// ModelGiven is set when the model location was given (-m, or an
	// [OUTPUT] FOLDER_MODELS other than the shipped one): see applyDefaults.
	ModelGiven bool `kong:"-"`
	// Given holds the names of the flags given on the command line (set
	// after parsing): a flag of a mode that does not run is refused only
	// when given, not when its value is a default.
	Given map[string]bool `kong:"-"`
	// Origin says where the values not given on the command line came
	// from, by flag name (valueOrigins), for messages (source).
	Origin        map[string]string `kong:"-"`
	Base          string            `short:"b" name:"base" group:"models" default:"${base_model}" placeholder:"REV|DIR" help:"Base model for --train: a registry revision or a model folder ([SETUP] base_model: ${base_model})."`
	Revision      string            `name:"revision" group:"models" placeholder:"REV" help:"Model revision: main, vN.0 or vN.M; -rev for short (default [HUB] latest = ${latest}; with --hub [HUB] revision = ${hub_revision})."`
	Hub           bool              `name:"hub" negatable:"" group:"models" default:"${use_hub}" help:"Download the model files from the hub repository [HUB] repo_name ([HUB] use_hub: ${use_hub})."`
	FastCls       bool              `name:"fastcls" negatable:"" group:"models" default:"${use_fastcls}" help:"Use the fast classifier instead of the registry models; overrides --base and --revision ([FASTCLS] use_fastcls: ${use_fastcls})."`
	FastClsBase   string            `name:"fastcls_base" group:"models" default:"${fastcls_base}" placeholder:"TAG|DIR" help:"Fast classifier (fastcls-small, tools/make_fastcls.py): a model folder, or a short tag found as <model>/fastcls_<tag>, else (no model location given) the shipped demo fastcls_<tag> ([FASTCLS] fastcls_base: ${fastcls_base})."`
	Best          bool              `name:"best" group:"models" help:"Run the five ensemble models (v1.4 ... v5.4) and average their probabilities."`
	Parallel      bool              `name:"parallel" group:"models" help:"With --best: run the models in groups that fit the GPU's memory at once (needs a CUDA GPU)."`
	Device        string            `name:"device" group:"models" default:"auto" placeholder:"DEV" help:"cpu, cuda:N, or auto (cuda:0 when a GPU is available; default ${default})."`
	Precision     string            `name:"precision" group:"models" default:"${precision}" enum:"auto,fp32,tf32,bf16,fp16" placeholder:"P" help:"Arithmetic of the forward passes: auto (tf32 on CUDA, fp32 on the CPU), fp32, tf32 (CUDA matmuls and convolutions; fp32 on the CPU), bf16, or fp16 (CUDA only); recorded in the run metadata ([SETUP] precision: ${precision})."`
	Batch         int               `name:"batch" group:"models" default:"${batch}" placeholder:"N" help:"Pages each forward pass takes at once ([SETUP] batch: ${batch}). On a CUDA GPU a run given neither --batch nor a [SETUP] batch other than the shipped 16 sizes its batch by the GPU's free memory instead (--parallel sizes each group's always); the batch that ran is recorded in the run metadata."`
	Upload        string            `name:"upload" group:"models" default:"auto" enum:"auto,float,u8,page" placeholder:"U" help:"How pages travel to the models' device: auto (page to a GPU, float on the CPU), float (each model's normalised input, made on the host), u8 (8-bit pixels resized on the host once per input size, normalised on the device), or page (the decoded 8-bit page, at most 1.33 MP for 384-pixel inputs, uploaded once, resized and normalised on the device); recorded in the run metadata."`
	GPUStreams    string            `name:"gpu-streams" group:"models" default:"pool" enum:"pool,one" placeholder:"S" help:"How forward passes share a CUDA GPU: pool (each on a stream of its own, so the two lanes and --parallel's models overlap on the device) or one (one after another on one stream); recorded in the run metadata. No effect on the CPU."`
	JITOptimize   string            `name:"jit-optimize" group:"models" default:"auto" enum:"auto,on,off" placeholder:"O" help:"Whether TorchScript optimises the models' graphs: auto (off on a GPU, on on the CPU), on (the first batches of each batch size are profiled, then fused graphs are compiled: seconds of warm-up on a GPU) or off (each graph runs as scripted); recorded in the run metadata."`
	WarmUp        string            `name:"warm-up" group:"models" default:"auto" enum:"auto,on,off" placeholder:"W" help:"Whether the models classify one batch of synthetic pages as soon as they are loaded, while the run hashes the models and reads its ledger: auto (on a GPU, where the first calls pay the device's set-up; off on the CPU, where the batch would cost real compute), on or off; recorded in the run metadata."`
	RotationModel string            `name:"rotation-model" group:"models" default:"${rotation}" placeholder:"DIR" help:"Page-orientation model flagging pages that are probably rotated in the review table (default: the shipped weights/rotation, found like the demo models; empty: pages are not checked for rotation)."`
	DemoWeights   string            `name:"demo-weights" group:"models" default:"${demo}" placeholder:"DIR" help:"Shipped demo models, used (with a warning, recorded as demo in the run metadata) when no model location is given and the default models folder lacks the models."`

	// Training.
	Train           bool    `name:"train" negatable:"" group:"training" default:"${training}" help:"Fine-tune the base model ([TRAIN] Training: ${training})."`
	Eval            bool    `name:"eval" negatable:"" group:"training" default:"${testing}" help:"Evaluate the model on [EVAL] FOLDER_PAGES ([TRAIN] Testing: ${testing})."`
	Folds           int     `name:"folds" group:"training" default:"${cross_runs}" placeholder:"N" help:"Number of cross-validation folds, split 80/10/10 ([TRAIN] cross_runs: ${cross_runs})."`
	FoldsCSV        string  `name:"folds_csv" group:"training" default:"${folds_csv}" placeholder:"CSV" help:"Explicit folds CSV; takes precedence over --folds ([TRAIN] folds_csv: ${folds_csv})."`
	FoldColumn      string  `name:"fold_column" group:"training" placeholder:"COL" help:"Fold column of the folds CSV (default: the revision's best fold)."`
	Average         bool    `name:"average" group:"training" help:"Average existing fold weights matching -ap into one model."`
	Calibrate       bool    `name:"calibrate" group:"training" help:"With --eval: calibrate the needs_review flag of each evaluated model set (each model, and with --best the ensemble) for --review-precision and --review-rate on the evaluated pages, and write it to calibration.json in the folder holding the model folders, where classification runs find it."`
	ReviewPrecision float64 `name:"review-precision" group:"training" default:"0.9" placeholder:"P" help:"Target precision of the pages not flagged for review, used by --eval --calibrate (default 0.9)."`
	ReviewRate      float64 `name:"review-rate" group:"training" default:"0.3" placeholder:"R" help:"Largest share of the evaluated pages the calibrated flag may flag for doubt, used by --eval --calibrate (default 0.3; 1: no cap). When P is not reached within R, the thresholds with the highest precision within R are kept."`
	AveragePattern  string  `name:"average_pattern" group:"training" placeholder:"PATTERN" help:"Which model folders --average takes, e.g. a revision prefix; -ap for short."`

	// Documents.
	DocumentJSON       string `name:"document-json" group:"documents" default:"${document_json}" placeholder:"FILE" help:"Baseline document record of a single-document run ([DOCUMENT] document_json: ${document_json})."`
	DocumentJSONOut    string `name:"document-json-out" group:"documents" default:"${document_json_out}" placeholder:"FILE" help:"Where to write the updated record of a single-document run ([DOCUMENT] document_json_out: ${document_json_out})."`
	DocumentJSONDir    string `name:"document-json-dir" group:"documents" default:"${document_json_dir}" placeholder:"DIR" help:"Folder of baseline records <doc_id>.document.json ([DOCUMENT] document_json_dir: ${document_json_dir})."`
	DocumentJSONOutDir string `name:"document-json-out-dir" group:"documents" default:"${document_json_out_dir}" placeholder:"DIR" help:"Folder receiving one <doc_id>.document.json per document ([DOCUMENT] document_json_out_dir: ${document_json_out_dir})."`
	StrictDocumentJSON bool   `name:"strict-document-json" negatable:"" group:"documents" default:"${strict}" help:"Turn ownership and schema warnings of the records into errors ([DOCUMENT] strict: ${strict})."`
}

// groups orders and titles the --help sections.
var groups = []kong.Group{
	{Key: "input", Title: "Input:"},
	{Key: "output", Title: "Output:"},
	{Key: "models", Title: "Models:"},
	{Key: "training", Title: "Training and evaluation:"},
	{Key: "documents", Title: "Document records:"},
}

// twoLetter maps the two-letter short forms of the original tool to flags,
// and -c to --config as translate has it. Kong's short flags are single
// runes, and the config file is read before parsing, so they are rewritten
// before that.
var twoLetter = map[string]string{
	"-c":   "--config",
	"-tn":  "--topn",
	"-ff":  "--file_format",
	"-rev": "--revision",
	"-ap":  "--average_pattern",
}

// rewriteShorts turns "-tn 3" and "-tn=3" (and -ff, -rev, -ap, -c) into
// their long forms. A long flag name written with one dash ("-best",
// "-raw=false"), which kong would read as "-b est" (--base est), is turned
// into that flag by the parser (cliflags.Kong.OneDash). Arguments after
// "--" are left alone.
func rewriteShorts(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, val, hasVal := strings.Cut(a, "=")
		if long, ok := twoLetter[name]; ok {
			if hasVal {
				out = append(out, long+"="+val)
			} else {
				out = append(out, long)
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// longNames are the long flag names of CLI (with their no- forms where
// negatable), from its struct tags.
var longNames = func() map[string]bool {
	names := map[string]bool{}
	t := reflect.TypeOf(CLI{})
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag
		name := tag.Get("name")
		if name == "" {
			continue
		}
		names[name] = true
		if _, neg := tag.Lookup("negatable"); neg {
			names["no-"+name] = true
		}
	}
	return names
}()

// configArg returns the --config value given in args (also -config; -c
// is rewritten to it before), if any.
func configArg(args []string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if (a == "--config" || a == "-config") && i+1 < len(args) {
			return args[i+1], true
		}
		// --config=FILE and -config=FILE (it was read as no --config,
		// and the shipped settings used without a word).
		if v, ok := strings.CutPrefix(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "config="); ok && strings.HasPrefix(a, "-") {
			return v, true
		}
	}
	return "", false
}

// DefaultConfig is the config file looked up when --config is not given.
const DefaultConfig = "setup/config.txt"

// findConfig resolves the config file through internal/resources: --config (must
// exist), PAGECLASS_CONFIG, setup/config.txt in the working directory,
// beside the executable, in the installed share folder, else the copy
// embedded in the binary.
func findConfig(args []string) (resources.File, error) {
	p, _ := configArg(args)
	f, err := resources.Default.Find(resources.PageclassConfig, p)
	if err != nil {
		return f, fmt.Errorf("config file: %w", err)
	}
	return f, nil
}

// loadSettings reads the config file found by findConfig; ini is the file
// as read, which says which keys it sets.
func loadSettings(f resources.File) (s settings.Settings, ini *config.File, err error) {
	data, err := f.ReadFile()
	if err != nil {
		return settings.Defaults(), nil, fmt.Errorf("config file: %w", err)
	}
	ini, err = config.Parse(f.Path, bytes.NewReader(data))
	if err != nil {
		return settings.Defaults(), nil, err
	}
	s, err = settings.FromFile(ini)
	return s, ini, err
}

// vars are the kong interpolation variables: the config-file defaults.
func vars(s settings.Settings) kong.Vars {
	b := strconv.FormatBool
	i := strconv.Itoa
	return kong.Vars{
		"folder_input":          s.Input.FolderInput,
		"files_format":          s.Setup.FilesFormat,
		"inner":                 b(s.Setup.Inner),
		"top_n":                 i(s.Setup.TopN),
		"precision":             s.Setup.Precision,
		"batch":                 i(s.Setup.Batch),
		"raw":                   b(s.Setup.Raw),
		"chunking":              b(s.Input.Chunking),
		"chunk_size":            i(s.Input.ChunkSize),
		"fetch_workers":         i(s.Input.FetchWorkers),
		"folder_results":        s.Output.FolderResults,
		"folder_models":         s.Output.FolderModels,
		"base_model":            s.Setup.BaseModel,
		"latest":                s.Hub.Latest,
		"hub_revision":          s.Hub.Revision,
		"use_hub":               b(s.Hub.UseHub),
		"use_fastcls":           b(s.FastCls.Use),
		"fastcls_base":          s.FastCls.Base,
		"demo":                  resourceDefault("demo-weights", classify.DemoDir()),
		"rotation":              resourceDefault("rotation-model", classify.OrientationDir()),
		"training":              b(s.Train.Training),
		"testing":               b(s.Train.Testing),
		"cross_runs":            i(s.Train.CrossRuns),
		"folds_csv":             s.Train.FoldsCSV,
		"document_json":         s.Document.DocumentJSON,
		"document_json_out":     s.Document.DocumentJSONOut,
		"document_json_dir":     s.Document.DocumentJSONDir,
		"document_json_out_dir": s.Document.DocumentJSONOutDir,
		"strict":                b(s.Document.Strict),
	}
}

// usagef is a usage error (exit code 1) with a formatted message.
var usagef = cliflags.Usagef

// applyDefaults fills the defaults that depend on whether a flag was given:
// -m defaults to [OUTPUT] FOLDER_MODELS, and the location counts as given
// when -m was on the command line or FOLDER_MODELS differs from the shipped
// value.
func (c *CLI) applyDefaults(s settings.Settings) {
	if c.Model != "" {
		c.ModelGiven = true
		return
	}
	c.Model = s.Output.FolderModels
	c.ModelGiven = filepath.Clean(c.Model) != filepath.Clean(settings.Defaults().Output.FolderModels)
}

// labelledPages puts -d, given with --train or --eval, in place of the
// labelled pages folders of the config file ([TRAIN] and [EVAL]
// FOLDER_PAGES): a folder on the command line is never silently left for
// the config file's.
func (c *CLI) labelledPages(s *settings.Settings) {
	if c.Directory != "" && (c.Train || c.Eval) {
		s.Train.FolderPages, s.Eval.FolderPages = c.Directory, c.Directory
	}
}

// onlyWith are the flags that act in one mode only: given on the command
// line without that mode they are usage errors, never silently ignored
// (their defaults, from the config file, are not).
var onlyWith = []struct {
	flag   string
	needs  string
	active func(c *CLI) bool
}{
	{"review-precision", "--eval --calibrate", func(c *CLI) bool { return c.Eval && c.Calibrate }},
	{"review-rate", "--eval --calibrate", func(c *CLI) bool { return c.Eval && c.Calibrate }},
	{"average_pattern", "--average", func(c *CLI) bool { return c.Average }},
	{"base", "--train", func(c *CLI) bool { return c.Train }},
	{"folds", "--train", func(c *CLI) bool { return c.Train }},
	{"folds_csv", "--train", func(c *CLI) bool { return c.Train }},
	{"fold_column", "--train", func(c *CLI) bool { return c.Train }},
	{"decode-timeout", "decoder processes (not --decode-in-process)", func(c *CLI) bool { return !c.DecodeInProcess }},
	{"decode-memory", "decoder processes (not --decode-in-process)", func(c *CLI) bool { return !c.DecodeInProcess }},
}

// validate checks flag combinations that kong cannot express (checks),
// and reports every problem found.
func (c *CLI) validate() error {
	var errs []error
	for _, check := range checks {
		if err := check(c); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return cliflags.Usage(errors.Join(errs...))
	}
	return nil
}

// checks are the rules of validate, in the order their problems are
// reported: each returns the problem of a command line, or nil.
var checks = []func(c *CLI) error{
	checkValues,
	func(c *CLI) error {
		return problemIf(c.Given["batch"] && (c.Merge || c.Average), "--batch applies to classification, --train and --eval: --merge and --average run no model")
	},
	func(c *CLI) error { return problemIf(c.Parallel && !c.Best, "--parallel applies to --best only") },
	func(c *CLI) error {
		return problemIf((c.NoAverageBest || c.SaveIntermediates) && !c.Best, "--no-average-best and --save-intermediates apply to --best only")
	},
	func(c *CLI) error { return problemIf(c.Best && c.FastCls, "--best and --fastcls exclude each other") },
	func(c *CLI) error {
		return problemIf(c.Average && strings.TrimSpace(c.AveragePattern) == "", "--average needs -ap/--average_pattern PATTERN (which model folders to average)")
	},
	func(c *CLI) error {
		return problemIf(c.File != "" && (c.Directory != "" || c.Dir), "give one input: -f, -d or --dir")
	},
	func(c *CLI) error { return problemIf(c.Directory != "" && c.Dir, "-d and --dir exclude each other") },
	func(c *CLI) error {
		return problemIf((c.Train || c.Eval) && !c.Merge && (c.File != "" || c.Dir), "--train and --eval read a folder of labelled pages, one sub-folder per category: give it with -d DIR (else [TRAIN]/[EVAL] FOLDER_PAGES), not -f or --dir")
	},
	checkMerge,
	checkOutputPaths,
	// Flags of a mode that does not run are errors, never silently ignored.
	func(c *CLI) error {
		return problemIf(c.Calibrate && (c.Merge || c.Average || !c.Eval), "--calibrate calibrates during an evaluation: add --eval (it takes no --average or --merge)")
	},
	checkOnlyWith,
	func(c *CLI) error {
		return problemIf((c.Resume || c.RetryFailed) && !c.Merge && (c.Average || c.Train || c.Eval), "--resume and --retry-failed continue a classification run: they take no --train, --eval or --average")
	},
	func(c *CLI) error {
		if c.Revision != "" && !c.FastCls {
			return checkRevision(c.Revision)
		}
		return nil
	},
}

// valueChecks are the checks of one flag's value, whether given on the
// command line, by an environment variable or in the config file: each
// returns the problem of the value, or nil, and checkValues adds where the
// value came from.
var valueChecks = []struct {
	flag    string
	problem func(c *CLI) error
}{
	{"topn", func(c *CLI) error {
		return problemIf(c.TopN < 1 || c.TopN > 11, "-tn/--topn must be an integer from 1 to 11, got %d", c.TopN)
	}},
	{"decode-timeout", func(c *CLI) error {
		return problemIf(c.DecodeTimeout <= 0, "--decode-timeout must be positive, got %s", c.DecodeTimeout)
	}},
	{"decode-memory", func(c *CLI) error {
		return problemIf(c.DecodeMemory < imageio.MinDecodeMemory>>20, "--decode-memory must be at least %d (MiB: a decoder process, the whole program, needs about 300 to start), got %d", imageio.MinDecodeMemory>>20, c.DecodeMemory)
	}},
	{"fetch-workers", func(c *CLI) error {
		return problemIf(c.FetchWorkers < 1, "--fetch-workers must be at least 1, got %d", c.FetchWorkers)
	}},
	{"batch", func(c *CLI) error { return problemIf(c.Batch < 1, "--batch must be at least 1, got %d", c.Batch) }},
	{"folds", func(c *CLI) error { return problemIf(c.Folds < 0, "--folds must not be negative, got %d", c.Folds) }},
	// Checked here, before anything is written: found when the inputs
	// were collected, they left the run metadata of a run that never
	// started (and named -ff where the config file's files_format was
	// wrong).
	{"file_format", func(c *CLI) error { _, err := parseExts(c.FileFormat); return err }},
	{"shard", func(c *CLI) error {
		if _, err := shard.Parse(c.Shard); err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
		return nil
	}},
}

// checkValues runs valueChecks, each problem naming where the value came
// from when not from the command line (c.Origin): the environment
// variable, or the config file and key.
func checkValues(c *CLI) error {
	var errs []error
	for _, v := range valueChecks {
		errs = append(errs, withOrigin(v.problem(c), v.flag, c.Origin))
	}
	return errors.Join(errs...)
}

// problemIf is the problem format (with a) when bad holds, else nil.
func problemIf(bad bool, format string, a ...any) error {
	if !bad {
		return nil
	}
	return fmt.Errorf(format, a...)
}

// outputPaths are the flags naming a folder (or file) pageclass writes:
// a Windows path given for one is refused, and backslashes are warned
// about (cliflags.WindowsPath), whether it came from the command line or
// the config file ([OUTPUT] FOLDER_RESULTS = C:\results made a folder of
// that name in the working folder, without a word).
var outputPaths = []struct {
	flag  string
	value func(c *CLI) string
}{
	{"results", func(c *CLI) string { return c.Results }},
	{"book-out", func(c *CLI) string { return c.BookOut }},
	{"document-json-out", func(c *CLI) string { return c.DocumentJSONOut }},
	{"document-json-out-dir", func(c *CLI) string { return c.DocumentJSONOutDir }},
}

// checkOutputPaths refuses a Windows path given for an output
// (outputPaths), naming the flag and where its value came from.
func checkOutputPaths(c *CLI) error {
	var errs []error
	for _, o := range outputPaths {
		if _, err := cliflags.WindowsPath(c.source(o.flag), o.value(c)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pathWarnings are the warnings about the outputs (outputPaths) whose
// paths hold backslashes, which make one folder named with them; logged
// before the run writes anything.
func (c *CLI) pathWarnings() []string {
	var out []string
	for _, o := range outputPaths {
		if w, _ := cliflags.WindowsPath(c.source(o.flag), o.value(c)); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// checkMerge checks --merge against the folders after the flags and the
// flags it does not take.
func checkMerge(c *CLI) error {
	switch {
	case c.Merge && len(c.MergeFrom) == 0:
		return errors.New("--merge needs the shards' results folders (or run-metadata files) after the flags")
	case !c.Merge && len(c.MergeFrom) > 0:
		return fmt.Errorf("unexpected argument %q: only --merge takes folders after the flags (use -d DIR for the input)", c.MergeFrom[0])
	case c.Merge && (c.Shard != "" || c.Train || c.Eval || c.Average || c.Resume || c.RetryFailed):
		return errors.New("--merge combines finished shard runs: it takes no --shard, --train, --eval, --average, --resume or --retry-failed")
	}
	return nil
}

// checkOnlyWith refuses the flags of onlyWith given without their mode,
// one problem per flag.
func checkOnlyWith(c *CLI) error {
	var errs []error
	for _, o := range onlyWith {
		if c.Given[o.flag] && !o.active(c) {
			errs = append(errs, fmt.Errorf("--%s applies to %s only: without it the value would be ignored", o.flag, o.needs))
		}
	}
	return errors.Join(errs...)
}
