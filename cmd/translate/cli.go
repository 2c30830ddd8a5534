package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"archivekit/internal/cliflags"
	"archivekit/internal/config"
	"archivekit/internal/resources"
	"archivekit/internal/shard"
	"archivekit/internal/translate/alto"
	"archivekit/internal/translate/mtapi"
	"archivekit/internal/translate/session"
	"archivekit/internal/translate/translator"
	"archivekit/internal/translate/transport"
)

// Exit codes (spec 4.1; cliflags).
const (
	exitOK      = cliflags.ExitOK
	exitUsage   = cliflags.ExitUsage
	exitNoInput = cliflags.ExitNoInput
	exitFailure = cliflags.ExitFailure
)

// cli holds the flags of spec 4.1. Flags without a kong default are
// resolved afterwards: flag, then config.txt, then (backend and output mode
// only) the environment, then the built-in default.
type cli struct {
	InputPath       string           `arg:"" optional:"" name:"input_path" help:"File, directory, URL, or list of URLs and books (one a line) to translate (default: config input_path). With --merge: a shard's output folder."`
	ShardDirs       []string         `arg:"" optional:"" name:"shard_dir" help:"With --merge only: more shards' output folders."`
	Config          string           `short:"c" help:"Configuration file (keys of spec 2.6). Default: TRANSLATE_CONFIG, else config.txt in the working directory, else setup/translate/config.txt in the working directory, beside the executable or in share/archivekit, else the built-in copy." placeholder:"FILE"`
	Version         kong.VersionFlag `help:"Print the version and exit."`
	Formats         string           `group:"input" help:"Comma-separated file extensions to translate in a directory, e.g. alto.xml,xml (default: config formats, alto.xml)."`
	Alto            bool             `group:"input" help:"ALTO in-place mode; on automatically when --formats contains alto.xml. Documents are still recognised by their root element."`
	Xpaths          string           `group:"input" help:"Field-list file of XPath targets for metadata documents (default: config fields)." placeholder:"FILE"`
	DownloadDir     string           `group:"input" name:"download-dir" help:"Where URL inputs are stored (default: <output>/downloaded_inputs)." placeholder:"DIR"`
	Shard           string           `group:"input" help:"Translate only share i of n (numbered from 0), chosen by a hash of each input's path relative to input_path (of the URL for URL lists), so n runs with 0/n ... n-1/n translate every input exactly once." placeholder:"I/N"`
	Output          string           `group:"output" short:"o" help:"Output directory (default: config output)." placeholder:"DIR"`
	Xsd             string           `group:"output" help:"URL or path of a schema to validate metadata output against (warnings only; a missing schema file is a usage error)." placeholder:"XSD"`
	OutputMode      string           `group:"output" name:"output-mode" help:"replace, append or alternative (ALTO: the translation in an ALTERNATIVE per String; PAGE and metadata: append) (precedence: flag, config output_mode, OUTPUT_MODE, then each format's own default: append for PAGE-XML, replace for ALTO and metadata; hOCR is always written as a parallel file)."`
	Resume          bool             `group:"output" help:"Continue an interrupted run: inputs the ledger (<output>/ledger/) records as translated or failed, with the same content and the same configuration, and whose outputs are still there, are not translated again; an output edited since is kept, with a warning."`
	RetryFailed     bool             `group:"output" name:"retry-failed" help:"As --resume, but inputs that failed are translated again."`
	Merge           bool             `group:"output" help:"Merge the run metadata and failures tables of the shard runs (--shard i/n) in the output folder (-o), or in the shard folders named after it (their translations, logs, run metadata, failures tables and ledgers copied into -o), into one run metadata <stamp>_translator.json and one failures table; shards of another configuration and repeated shards are refused (exit 1), missing or unfinished ones too, with exit 75 (merge again once they have completed); a refused merge writes nothing. Translates nothing."`
	SourceLang      string           `group:"translation" name:"source_lang" help:"Source language (ISO 639-1), or auto to detect (default: config source_lang, auto). Short form -src." placeholder:"LANG"`
	TargetLang      string           `group:"translation" name:"target_lang" help:"Target language (default: config target_lang, en). Short form -tgt." placeholder:"LANG"`
	Vocabulary      string           `group:"translation" help:"Vocabulary CSV (default: config vocabulary); an empty value disables the vocabulary. With mtapi its single words are matched by lemma through the lemmatiser at LEMMATIZER_URL (unset: LINDAT's public UDPipe service; off: none, single words not protected)." placeholder:"FILE"`
	FastAlign       bool             `group:"translation" name:"fast-align" help:"ALTO only: split block translations by source word counts instead of translating each line (one backend call per page)."`
	Backend         string           `group:"translation" help:"mtapi (a machine-translation service at TRANSLATION_URL; unset: LINDAT's hosted one), chat_compatible (an OpenAI-compatible chat API: LLM_BASE_URL, LLM_MODEL) or ct2 (a local CTranslate2 model: CT2_MODEL_DIR) (precedence: flag, config translation_backend, TRANSLATION_BACKEND, mtapi)."`
	Pages           string           `group:"books" help:"For a METS file or IIIF manifest input: the pages whose text files are translated, in OCR-D's page_id syntax (PHYS_0001..PHYS_0005, PHYS_00*, ~PHYS_0003 leaves one out); default every page." placeholder:"PAGES"`
	TextGroup       []string         `group:"books" name:"text-group" help:"For a METS input: take text files only from these fileGrp USE names (comma-separated or repeated); default every group, text files being recognised by their root element." placeholder:"USE"`
	BookOut         bool             `group:"books" name:"book-out" help:"For a METS input (file, or URL whose own locations are absolute): write <book>_<target>.mets.xml into the output folder, the input METS with one more fileGrp for the translated text files (named after its groups: OCR-D-MT-EN, FULLTEXT_EN), their fptrs and an agent for this tool; removing those gives the input back. For a IIIF manifest (file or URL): write one annotation page per canvas of the translated ALTO, PAGE-XML or hOCR lines (<book>_<target>_annotations/: W3C annotation pages for Presentation 3, sc:AnnotationLists for Presentation 2) and the derived manifest <book>_<target>.json linking them (annotations, or otherContent for Presentation 2) and the translated files (seeAlso). For a IIIF collection: the same for each of its manifests (<book>_<k>_<target>) and the derived collection <book>_<target>.json listing them. For a list or folder of books, each book's in the folder of its outputs. A book whose text files the shares of a --shard run share is written by a --resume --book-out run without --shard after them."`
	FetchWorkers    string           `group:"books" name:"fetch-workers" help:"Remote text files of a book fetched at once (a METS file's while it is read, a IIIF manifest's ahead of their turn), and the most requests to one host at once, 1 to 32 (precedence: flag, config fetch_workers, TRANSLATE_FETCH_WORKERS, 4)." placeholder:"N"`
	BookBaseURL     string           `group:"books" name:"book-base-url" help:"With --book-out and a IIIF manifest: the URL the output folder will be published at, the base of the annotation pages', manifest's and translated ALTO's ids (default: the output folder's file:// URL)." placeholder:"URL"`
	DocumentJSON    string           `group:"documents" name:"document-json" help:"Baseline document record to accrete the translation block onto." placeholder:"FILE"`
	DocumentJSONOut string           `group:"documents" name:"document-json-out" help:"Where to write the updated record (default: <output>/<doc_id>.document.json)." placeholder:"FILE"`
	orderFlags      `embed:""`
}

// groups orders and titles the --help sections, as pageclass's (its
// --help was one list of 30 flags).
var groups = []kong.Group{
	{Key: "input", Title: "Input:"},
	{Key: "output", Title: "Output:"},
	{Key: "translation", Title: "Translation:"},
	{Key: "order", Title: "Source-language order:"},
	{Key: "books", Title: "Books (METS, IIIF):"},
	{Key: "documents", Title: "Document records:"},
}

// shortForms are the multi-letter short flags of the original command line,
// which kong (single-rune shorts) cannot declare, and -c and -o, so that
// -c=FILE is FILE.
var shortForms = map[string]string{"-src": "--source_lang", "-tgt": "--target_lang",
	// Kong reads -c=FILE as the value "=FILE"; Go's flag package and
	// pageclass read FILE.
	"-c": "--config", "-o": "--output"}

// rewriteArgs turns -src/-tgt (also -src=x) into their long forms. Words
// after a bare "--" are left alone.
func rewriteArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, val, hasVal := strings.Cut(a, "=")
		if long, ok := shortForms[name]; ok {
			if hasVal {
				a = long + "=" + val
			} else {
				a = long
			}
		}
		out = append(out, a)
	}
	return out
}

// settings are the resolved options of a run.
type settings struct {
	Input, Output, Source, Target string
	Formats                       []string
	FormatsRaw                    string
	FormatsGiven                  bool // --formats given (not the configuration's or the default)
	// InputFrom says where the input came from when none was given
	// ("the configuration's input_path", "the default input"); "" when
	// given.
	InputFrom               string
	ConfigPath              string
	ConfigFile              resources.File
	FieldsFile              resources.File
	FieldsErr               error
	Alto                    bool
	Fields, XSD, Vocabulary string
	VocabularyExplicit      bool
	FieldsExplicit          bool
	DocJSON, DocJSONOut     string
	DownloadDir             string
	Mode, Backend           string
	ModeFrom, BackendFrom   string
	FastAlign               bool
	// ConfigUnknown are the configuration's unknown keys ("[DEFAULT] soruce"),
	// warned about as pageclass warns about its own.
	ConfigUnknown []string
	// EnvFromConfig are the environment variables the configuration file
	// sets (its translation_url: TRANSLATION_URL; public_services:
	// TRANSLATE_PUBLIC_SERVICES; lemmatizer_url: LEMMATIZER_URL), read as
	// if exported: a job run by cron,
	// which loses the shell's environment, sent the text to the public
	// service with only a warning. See withConfigEnv.
	EnvFromConfig map[string]string
	// PathWarnings are the warnings about output paths with backslashes
	// (checkOutputPaths), to be logged before the run writes anything.
	PathWarnings []string
	// Shard is this run's share of the inputs (internal/shard); zero for all.
	Shard shard.Spec
	// Resume and RetryFailed continue a run from its ledger.
	Resume, RetryFailed bool
	// Merge combines the shard runs in Output, or in MergeFrom (the
	// shards' output folders, copied into Output).
	Merge     bool
	MergeFrom []string
	// Pages and TextGroups select a book's pages and METS text groups.
	Pages      string
	TextGroups []string
	// BookOut writes a METS book's new METS (--book-out).
	BookOut bool
	// BookBaseURL is where the output folder is published (--book-base-url).
	BookBaseURL string
	// Order is the source-language order (langorder.go); OrderFrom says
	// where each of its settings came from.
	Order     alto.LangOrder
	OrderFrom map[string]string
	// RetryRounds is the number of end-of-document rounds
	// (--retry-rounds); RetryRoundsFrom where it came from.
	RetryRounds     int
	RetryRoundsFrom string
	// FetchWorkers is how many of a book's remote text files are fetched
	// at once (--fetch-workers); FetchWorkersFrom where it came from.
	FetchWorkers     int
	FetchWorkersFrom string
}

// Built-in defaults: the shipped config.txt values (spec 2.6).
const (
	defInput      = "./data_samples/my_documents"
	defOutput     = "./data_samples/translated_files"
	defFormats    = "alto.xml"
	defFields     = "amcr-fields.txt"
	defVocabulary = "data_samples/vocabulary.csv"
	defConfig     = "config.txt"
)

var configKeys = []string{"input_path", "source_lang", "target_lang", "formats", "output", "fields",
	"vocabulary", "translation_backend", "output_mode", "lang_min_length", "lang_min_confidence", "default_source_lang", "element_lang", "retry_rounds", "fetch_workers",
	"translation_url", "public_services", "lemmatizer_url"}

// parse reads the command line and the configuration file and resolves every
// setting. Errors are usage errors (cliflags.UsageError).
func parse(args []string, getenv func(string) string, stdout io.Writer) (*settings, bool, error) {
	var c cli
	parser, err := cliflags.NewKong("translate", &c, stdout, stdout,
		kong.Description("Translate the text of OCR files (ALTO, PAGE-XML, hOCR), archival metadata XML and books (METS, IIIF), keeping every other byte. "+
			"The translations come from the backend --backend names: by default a machine-translation service at TRANSLATION_URL.\n\n"+cliflags.ExitCodesHelp),
		kong.ExplicitGroups(groups), kong.UsageOnError())
	if err != nil {
		return nil, false, err
	}
	kctx, _, helped, err := parser.Parse(rewriteArgs(args))
	if helped {
		return nil, true, nil // --help
	}
	if err != nil {
		return nil, false, err
	}
	set := map[string]bool{}
	for _, f := range kctx.Flags() {
		if f.Set {
			set[f.Name] = true
		}
	}
	s, err := resolve(&c, set, getenv)
	if err != nil {
		return nil, false, err
	}
	return s, false, nil
}

// envLemmatizer is the variable naming the lemmatiser, which the
// configuration's lemmatizer_url sets (a cron job with public_services =
// refuse and no lemmatiser could not start: the file could not say off).
const envLemmatizer = "LEMMATIZER_URL"

// withConfigEnv is the environment lookup with what the configuration file
// sets (settings.EnvFromConfig): its translation_url wins over
// TRANSLATION_URL (and its aliases), as its translation_backend wins over
// TRANSLATION_BACKEND; public_services = refuse refuses whatever the
// environment says, and allow leaves the environment's refuse standing
// (refusing is the safe side). The variables that are not the
// configuration's pass through.
func withConfigEnv(s *settings, lookup func(string) (string, bool)) func(string) (string, bool) {
	if len(s.EnvFromConfig) == 0 {
		return lookup
	}
	return func(k string) (string, bool) {
		if u, ok := s.EnvFromConfig[mtapi.URLSettings[0]]; ok {
			switch {
			case k == mtapi.URLSettings[0]:
				return u, true
			case slices.Contains(mtapi.URLSettings, k):
				return "", false // an alias: the configuration's address is the one
			}
		}
		if v, ok := s.EnvFromConfig[envLemmatizer]; ok && (k == envLemmatizer || k == "UDPIPE_URL") {
			// The configuration's lemmatiser (an address, or off) wins
			// over the environment's, as its translation_url does.
			if k == envLemmatizer {
				return v, true
			}
			return "", false
		}
		if k == transport.EnvPublicServices {
			if v, ok := s.EnvFromConfig[k]; ok {
				if env, set := lookup(k); set && strings.EqualFold(strings.TrimSpace(env), "refuse") {
					return env, true
				}
				return v, true
			}
		}
		return lookup(k)
	}
}

// configURLNote says, when the configuration's translation_url and a
// variable of the environment (lookup) name different translation APIs,
// which is used, as two variables that differ are said; "" otherwise.
func configURLNote(s *settings, lookup func(string) (string, bool)) string {
	u, ok := s.EnvFromConfig[mtapi.URLSettings[0]]
	if !ok {
		return ""
	}
	for _, k := range mtapi.URLSettings {
		if v, set := lookup(k); set && strings.TrimSpace(v) != "" && strings.TrimRight(strings.TrimSpace(v), "/") != strings.TrimRight(u, "/") {
			return fmt.Sprintf("the configuration's translation_url (%s) and %s name different translation APIs: the configuration's is used, %s is not",
				s.ConfigPath, k, k)
		}
	}
	return ""
}

// picker resolves a setting from the flags set on the command line, then
// the configuration file's values.
type picker struct {
	set map[string]bool   // the flags given
	cfg map[string]string // the configuration's known keys
}

// pick is the flag's value when it was given, else the configuration's
// non-empty value of key, else def.
func (p picker) pick(flagName, flagVal, key, def string) string {
	if p.set[flagName] {
		return flagVal
	}
	if v, ok := p.cfg[key]; ok && v != "" {
		return v
	}
	return def
}

// resolve resolves every setting from the parsed flags c (those given in
// set), the configuration file and the environment. Errors are
// usage errors.
func resolve(c *cli, set map[string]bool, getenv func(string) string) (*settings, error) {
	// The configuration file (findConfig): a file given with -c must exist.
	res := &resources.Resolver{Getenv: getenv}
	cfgFile, err := findConfig(res, c.Config, getenv)
	if err != nil {
		return nil, cliflags.Usage(fmt.Errorf("config: %w", err))
	}
	c.Config = cfgFile.Path
	ini, err := loadConfig(cfgFile)
	if err != nil {
		return nil, cliflags.Usage(fmt.Errorf("config %s: %w", c.Config, err))
	}
	cfg, unknown := configValues(ini)
	p := picker{set: set, cfg: cfg}
	s := &settings{ConfigPath: c.Config, ConfigFile: cfgFile, ConfigUnknown: unknown, FastAlign: c.FastAlign, XSD: c.Xsd,
		DocJSON: c.DocumentJSON, DocJSONOut: c.DocumentJSONOut, Resume: c.Resume || c.RetryFailed, RetryFailed: c.RetryFailed, Merge: c.Merge,
		Pages: c.Pages, TextGroups: c.TextGroup, BookOut: c.BookOut, BookBaseURL: c.BookBaseURL}
	if err := s.setShard(c); err != nil {
		return nil, err
	}
	for key, env := range map[string]string{"translation_url": mtapi.URLSettings[0], "public_services": transport.EnvPublicServices, "lemmatizer_url": envLemmatizer} {
		if v := strings.TrimSpace(cfg[key]); v != "" {
			if s.EnvFromConfig == nil {
				s.EnvFromConfig = map[string]string{}
			}
			s.EnvFromConfig[env] = v
		}
	}
	if err := s.setFolders(c, p); err != nil {
		return nil, err
	}
	s.Source = translator.NormalizeLang(p.pick("source_lang", c.SourceLang, "source_lang", "auto"))
	s.Target = translator.NormalizeLang(p.pick("target_lang", c.TargetLang, "target_lang", "en"))
	if err := s.setFormats(c, p); err != nil {
		return nil, err
	}
	s.setFiles(c, p, res, getenv)
	s.DownloadDir = c.DownloadDir
	if s.DownloadDir == "" {
		s.DownloadDir = filepath.Join(s.Output, "downloaded_inputs")
	}
	if err := s.setBackend(c, p, getenv); err != nil {
		return nil, err
	}
	if err := s.setLangOrder(c, p, getenv); err != nil {
		return nil, err
	}
	if err := s.setFetchWorkers(c, p, getenv); err != nil {
		return nil, err
	}
	return s, nil
}

// setShard reads --shard and refuses the combinations of --merge and
// --shard that cannot work.
func (s *settings) setShard(c *cli) error {
	var err error
	if s.Shard, err = shard.Parse(c.Shard); err != nil {
		return cliflags.Usage(fmt.Errorf("--shard: %w", err))
	}
	if c.Merge && (c.Shard != "" || c.Resume || c.RetryFailed || c.DocumentJSON != "") {
		return cliflags.Usage(errors.New("--merge combines finished shard runs: it takes no --shard, --resume, --retry-failed or --document-json"))
	}
	if !c.Merge && len(c.ShardDirs) > 0 {
		return cliflags.Usage(fmt.Errorf("one input_path is translated at a time (%q follows it): give a folder or a list of files", c.ShardDirs[0]))
	}
	if !s.Shard.Whole() && s.DocJSON != "" {
		return cliflags.Usage(fmt.Errorf("--shard with --document-json: one record cannot be accreted by several runs at once"))
	}
	return nil
}

// setFolders resolves the input and the output folder, which must differ.
func (s *settings) setFolders(c *cli, p picker) error {
	if p.set["output"] && strings.TrimSpace(c.Output) == "" {
		return cliflags.Usage(fmt.Errorf("-o is empty: give the output folder, or leave -o out for the configuration's output (default %s)", defOutput))
	}
	if c.Merge {
		s.Output = p.pick("output", c.Output, "output", defOutput)
		if c.InputPath != "" {
			s.MergeFrom = append([]string{c.InputPath}, c.ShardDirs...)
		}
		return s.checkOutputPaths(c, p)
	}
	s.Input = c.InputPath
	if s.Input == "" {
		s.Input = p.pick("", "", "input_path", defInput)
		s.InputFrom = "the default input"
		if v := p.cfg["input_path"]; v != "" {
			s.InputFrom = "the configuration's input_path"
		}
	}
	s.Output = p.pick("output", c.Output, "output", defOutput)
	if err := s.checkOutputPaths(c, p); err != nil {
		return err
	}
	if sameDir(s.Input, s.Output) {
		return cliflags.Usage(fmt.Errorf("output folder %s is the input folder: the translations would be written among the inputs (and taken as inputs by the next run); give another -o", s.Output))
	}
	return nil
}

// checkOutputPaths refuses a Windows path given for what the run writes
// (cliflags.WindowsPath): the output folder (-o, else the configuration's
// output), --download-dir and --document-json-out, naming where it came
// from; before, -o 'C:\Users\scan\out' made a folder of that very name in
// the working folder, without a word. A path with backslashes otherwise
// is taken, and warned about (PathWarnings).
func (s *settings) checkOutputPaths(c *cli, p picker) error {
	outFrom := "-o"
	if !p.set["output"] {
		outFrom = "-o (from output in " + s.ConfigPath + ")"
	}
	var errs []error
	for _, o := range []struct{ where, path string }{
		{outFrom, s.Output},
		{"--download-dir", c.DownloadDir},
		{"--document-json-out", c.DocumentJSONOut},
	} {
		warn, err := cliflags.WindowsPath(o.where, o.path)
		if err != nil {
			errs = append(errs, err)
		} else if warn != "" {
			s.PathWarnings = append(s.PathWarnings, warn)
		}
	}
	if len(errs) > 0 {
		return cliflags.Usage(errors.Join(errs...))
	}
	return nil
}

// setFormats resolves the formats (at least one extension) and the ALTO
// mode they imply.
func (s *settings) setFormats(c *cli, p picker) error {
	s.FormatsRaw = p.pick("formats", c.Formats, "formats", defFormats)
	s.FormatsGiven = p.set["formats"]
	for _, f := range strings.Split(s.FormatsRaw, ",") {
		if f = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(f), ".")); f != "" {
			s.Formats = append(s.Formats, f)
		}
	}
	if len(s.Formats) == 0 {
		return cliflags.Usage(fmt.Errorf("--formats %q names no extension", s.FormatsRaw))
	}
	s.Alto = c.Alto
	for _, f := range s.Formats {
		s.Alto = s.Alto || f == "alto.xml"
	}
	return nil
}

// setFiles resolves the field list (--xpaths, the environment, the
// configuration) and the vocabulary; either may be missing here.
func (s *settings) setFiles(c *cli, p picker, res *resources.Resolver, getenv func(string) string) {
	cfgFile := s.ConfigFile
	s.FieldsExplicit = p.set["xpaths"]
	switch {
	case s.FieldsExplicit:
		s.FieldsFile, s.FieldsErr = res.Find(resources.Fields, c.Xpaths)
	case strings.TrimSpace(getenv(resources.Fields.Env)) != "", p.cfg["fields"] == "":
		// From the environment, or, when the configuration names no field
		// list, found as the other set-up files are (working directory,
		// beside the program, the share folder, the built-in copy): a
		// configuration without the key is not said to name one beside it.
		s.FieldsFile, s.FieldsErr = res.Find(resources.Fields, "")
	default:
		s.FieldsFile, s.FieldsErr = res.Relative(cfgFile, p.pick("", "", "fields", defFields), false)
	}
	s.Fields = s.FieldsFile.Path
	if s.FieldsErr != nil {
		s.Fields = p.pick("xpaths", c.Xpaths, "fields", defFields)
	}
	s.VocabularyExplicit = p.set["vocabulary"]
	if s.VocabularyExplicit {
		s.Vocabulary = c.Vocabulary
	} else {
		v := defVocabulary
		if cv, ok := p.cfg["vocabulary"]; ok {
			v = cv
		}
		s.Vocabulary = setupPath(res, cfgFile, v)
	}
}

// setBackend resolves the backend and the output mode (flag, config,
// environment, default) and checks them, the languages and
// --document-json-out.
func (s *settings) setBackend(c *cli, p picker, getenv func(string) string) error {
	s.Backend, s.BackendFrom = precedence(p.set["backend"], c.Backend, p.cfg["translation_backend"], getenv("TRANSLATION_BACKEND"), "mtapi")
	s.Mode, s.ModeFrom = precedence(p.set["output-mode"], c.OutputMode, p.cfg["output_mode"], getenv("OUTPUT_MODE"), "replace")
	s.Backend, s.Mode = strings.ToLower(s.Backend), strings.ToLower(s.Mode)
	if !translator.ValidMode(s.Mode) {
		return cliflags.Usage(fmt.Errorf("output mode %q (from %s): want %s", s.Mode, s.ModeFrom, translator.ModeChoices))
	}
	if !session.Known(s.Backend) {
		return cliflags.Usage(fmt.Errorf("backend (from %s): %w", s.BackendFrom, session.Unknown(s.Backend)))
	}
	if !translator.ValidLang(s.Source, true) {
		return cliflags.Usage(fmt.Errorf("source language %q: want an ISO 639-1 code or auto", s.Source))
	}
	if !translator.ValidLang(s.Target, false) {
		return cliflags.Usage(fmt.Errorf("target language %q: want an ISO 639-1 code", s.Target))
	}
	if s.DocJSONOut != "" && s.DocJSON == "" {
		return cliflags.Usage(errors.New("--document-json-out needs --document-json: doc_id comes from the baseline record, never from file names"))
	}
	return nil
}

// outputMode is the mode asked of the translator: the one given (flag,
// configuration or environment), or "" when none was, so that each format
// takes its own default (translator.DefaultMode: append for PAGE-XML,
// replace for the others). s.Mode stays "replace" then, the spec's default
// for ALTO and metadata.
func (s *settings) outputMode() alto.Mode {
	if s.ModeFrom == "default" {
		return ""
	}
	return alto.Mode(s.Mode)
}

// findConfig finds the configuration file: -c (must exist), then
// TRANSLATE_CONFIG, then config.txt in the working directory (the spec's
// default), then setup/translate/config.txt through internal/resources (working
// directory, beside the executable, share folder, built-in copy).
func findConfig(res *resources.Resolver, flagVal string, getenv func(string) string) (resources.File, error) {
	if flagVal == "" && strings.TrimSpace(getenv(resources.TranslateConfig.Env)) == "" {
		if st, err := os.Stat(defConfig); err == nil && !st.IsDir() {
			return resources.File{Path: defConfig, From: resources.FromWorkDir}, nil
		}
	}
	return res.Find(resources.TranslateConfig, flagVal)
}

// loadConfig reads an INI configuration file. Its text is read as
// config.Decode reads it: a leading UTF-8 byte order mark is skipped, and
// a file saved as UTF-16 (Notepad's "Unicode") is decoded, as Windows
// editors write them; config.Parse drops a Ctrl-Z at its very end. A file
// whose keys come before any section header (plain "key = value" lines) is
// read as one [translate] section; line numbers in its errors count the
// file's own lines.
func loadConfig(f resources.File) (*config.File, error) {
	data, err := f.ReadFile()
	if err != nil {
		return nil, err
	}
	if data, err = config.Decode(f.Path, data); err != nil {
		return nil, err
	}
	if !headerless(data) {
		return config.Parse(f.Path, bytes.NewReader(data))
	}
	ini, err := config.Parse(f.Path, io.MultiReader(strings.NewReader("[translate]\n"), bytes.NewReader(data)))
	var syn *config.SyntaxError
	if errors.As(err, &syn) {
		syn.Line-- // the [translate] line added above is not the file's
	}
	return ini, err
}

// headerless reports whether the first line of data that is neither blank
// nor a comment is something other than a section header.
func headerless(data []byte) bool {
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		return t[0] != '['
	}
	return false
}

// precedence picks flag, then config, then environment, then default, and
// says where the value came from.
func precedence(flagSet bool, flagVal, cfgVal, envVal, def string) (string, string) {
	switch {
	case flagSet:
		return flagVal, "command line"
	case strings.TrimSpace(cfgVal) != "":
		return strings.TrimSpace(cfgVal), "config"
	case strings.TrimSpace(envVal) != "":
		return strings.TrimSpace(envVal), "environment"
	}
	return def, "default"
}

// configValues takes the known keys from the file's sections (the first
// section holding one; a key of [DEFAULT], where the original tool's own
// config.txt has them all, when no other section sets it) and warns about
// unknown keys (the section and the key: "[DEFAULT] soruce").
func configValues(f *config.File) (map[string]string, []string) {
	out := map[string]string{}
	var unknown []string
	knownKey := map[string]bool{}
	for _, k := range configKeys {
		knownKey[k] = true
	}
	sections := f.Sections()
	if f.HasSection(config.DefaultSection) {
		sections = append(sections, config.DefaultSection)
	}
	for _, sec := range sections {
		for _, k := range f.OwnKeys(sec) {
			v, _ := f.Get(sec, k)
			if !knownKey[k] {
				unknown = append(unknown, fmt.Sprintf("[%s] %s", sec, k))
				continue
			}
			if _, seen := out[k]; !seen {
				out[k] = strings.TrimSpace(v)
			}
		}
	}
	return out, unknown
}

// setupPath resolves the vocabulary path p written in (or defaulted for)
// the configuration cfg: against the configuration's folder (for the
// built-in configuration, through internal/resources), then against the working
// directory, where load-vocab writes its default data_samples/vocabulary.csv
// (the spec's default value). A file found nowhere keeps the path it would
// have had beside the configuration, so the warning names it.
func setupPath(res *resources.Resolver, cfg resources.File, p string) string {
	if p == "" {
		return ""
	}
	if f, err := res.Relative(cfg, p, false); err == nil {
		return f.Path
	}
	if !filepath.IsAbs(p) {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return resources.RelativePath(cfg, p)
}

// sameDir reports whether a and b name the same existing folder.
func sameDir(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil || !sa.IsDir() {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}
