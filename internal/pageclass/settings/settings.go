// Package settings is the classifier's set-up file (setup/config.txt,
// spec page-classification 2.8), typed: Settings, its defaults and how the
// INI file of internal/config maps onto it.
package settings

import (
	"archivekit/internal/config"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Settings holds every key of setup/config.txt (spec page-classification
// 2.8), typed. Field comments give the section and key.
type Settings struct {
	Output struct {
		FolderResults string // [OUTPUT] FOLDER_RESULTS
		FolderCPoints string // [OUTPUT] FOLDER_CPOINTS
		FolderModels  string // [OUTPUT] FOLDER_MODELS
	}
	Eval struct {
		FolderPages string // [EVAL] FOLDER_PAGES
	}
	Train struct {
		FolderPages string  // [TRAIN] FOLDER_PAGES
		CrossRuns   int     // [TRAIN] cross_runs
		FoldsCSV    string  // [TRAIN] folds_csv
		TestSize    float64 // [TRAIN] test_size
		LogStep     int     // [TRAIN] log_step
		Epochs      int     // [TRAIN] epochs
		LR          float64 // [TRAIN] lr
		MaxCateg    int     // [TRAIN] max_categ
		// InputSize is the input size to train at instead of the base's
		// (size-independent CNNs such as EfficientNet-Lite); 0 keeps the
		// base's. An extension of spec 2.8.
		InputSize int // [TRAIN] input_size
		// Augment turns the training augmentation (colour jitter,
		// sharpness, slight blur) on or off. An extension of spec 2.8.
		Augment  bool // [TRAIN] augment
		Training bool // [TRAIN] Training
		Testing  bool // [TRAIN] Testing
	}
	Setup struct {
		FilesFormat string // [SETUP] files_format
		Seed        int    // [SETUP] seed
		// BaseModel is a registry revision (e.g. "v4.4") or a path to a
		// model folder holding model.pt and model.json.
		BaseModel string // [SETUP] base_model
		Batch     int    // [SETUP] batch
		// Precision is the arithmetic of the forward passes: auto (tf32
		// on CUDA, fp32 on the CPU), fp32, tf32, bf16 or fp16 (CUDA
		// only). An extension of spec 2.8.
		Precision string // [SETUP] precision
		TopN      int    // [SETUP] top_N
		Raw       bool   // [SETUP] raw
		Inner     bool   // [SETUP] inner
	}
	FastCls struct {
		Use      bool    // [FASTCLS] use_fastcls
		Base     string  // [FASTCLS] fastcls_base
		ImgSz    int     // [FASTCLS] fastcls_imgsz
		Epochs   int     // [FASTCLS] fastcls_epochs
		Patience int     // [FASTCLS] fastcls_patience
		LR0      float64 // [FASTCLS] fastcls_lr0
		Dropout  float64 // [FASTCLS] fastcls_dropout
		Cache    bool    // [FASTCLS] fastcls_cache
	}
	Input struct {
		FolderInput string // [INPUT] FOLDER_INPUT
		ChunkSize   int    // [INPUT] chunk_size
		Chunking    bool   // [INPUT] chunking
		// FetchWorkers is the number of a book's remote page images
		// fetched at once (and the most requests to one host at once).
		FetchWorkers int // [INPUT] fetch_workers
	}
	Hub struct {
		// RepoName is the hub repository id of the published models. It
		// ships empty: --hub refuses to run until it is set.
		RepoName string // [HUB] repo_name
		// Token ships blank; HUB_TOKEN from the environment is used at run time.
		Token    string // [HUB] token
		UseHub   bool   // [HUB] use_hub
		Revision string // [HUB] revision
		Latest   string // [HUB] latest
	}
	Document struct {
		DocumentJSON       string // [DOCUMENT] document_json
		DocumentJSONOut    string // [DOCUMENT] document_json_out
		DocumentJSONDir    string // [DOCUMENT] document_json_dir
		DocumentJSONOutDir string // [DOCUMENT] document_json_out_dir
		Strict             bool   // [DOCUMENT] strict
	}
	// Unknown lists "[SECTION] key" entries of the file that no field reads,
	// so the caller can warn about misspelt keys.
	Unknown []string
}

// binding ties one section/key to a field.
type binding struct {
	section, key string
	ptr          any // *string, *int, *float64 or *bool
	check        func(any) string
}

func (s *Settings) bindings() []binding {
	positive := func(v any) string {
		if v.(int) < 1 {
			return "an integer of at least 1"
		}
		return ""
	}
	nonNeg := func(v any) string {
		if v.(int) < 0 {
			return "an integer of at least 0"
		}
		return ""
	}
	return []binding{
		{"OUTPUT", "FOLDER_RESULTS", &s.Output.FolderResults, nil},
		{"OUTPUT", "FOLDER_CPOINTS", &s.Output.FolderCPoints, nil},
		{"OUTPUT", "FOLDER_MODELS", &s.Output.FolderModels, nil},
		{"EVAL", "FOLDER_PAGES", &s.Eval.FolderPages, nil},
		{"TRAIN", "FOLDER_PAGES", &s.Train.FolderPages, nil},
		{"TRAIN", "cross_runs", &s.Train.CrossRuns, nonNeg},
		{"TRAIN", "folds_csv", &s.Train.FoldsCSV, nil},
		{"TRAIN", "test_size", &s.Train.TestSize, func(v any) string {
			if x := v.(float64); x <= 0 || x >= 0.5 {
				return "a fraction between 0 and 0.5"
			}
			return ""
		}},
		{"TRAIN", "log_step", &s.Train.LogStep, positive},
		{"TRAIN", "epochs", &s.Train.Epochs, positive},
		{"TRAIN", "lr", &s.Train.LR, func(v any) string {
			if v.(float64) <= 0 {
				return "a positive number"
			}
			return ""
		}},
		{"TRAIN", "max_categ", &s.Train.MaxCateg, positive},
		{"TRAIN", "input_size", &s.Train.InputSize, nonNeg},
		{"TRAIN", "augment", &s.Train.Augment, nil},
		{"TRAIN", "Training", &s.Train.Training, nil},
		{"TRAIN", "Testing", &s.Train.Testing, nil},
		{"SETUP", "files_format", &s.Setup.FilesFormat, nil},
		{"SETUP", "seed", &s.Setup.Seed, nil},
		{"SETUP", "base_model", &s.Setup.BaseModel, nil},
		{"SETUP", "batch", &s.Setup.Batch, positive},
		{"SETUP", "precision", &s.Setup.Precision, func(v any) string {
			for _, p := range Precisions {
				if v.(string) == p {
					return ""
				}
			}
			return "one of " + strings.Join(Precisions, ", ")
		}},
		{"SETUP", "top_N", &s.Setup.TopN, func(v any) string {
			if n := v.(int); n < 1 || n > 11 {
				return "an integer from 1 to 11"
			}
			return ""
		}},
		{"SETUP", "raw", &s.Setup.Raw, nil},
		{"SETUP", "inner", &s.Setup.Inner, nil},
		{"FASTCLS", "use_fastcls", &s.FastCls.Use, nil},
		{"FASTCLS", "fastcls_base", &s.FastCls.Base, nil},
		{"FASTCLS", "fastcls_imgsz", &s.FastCls.ImgSz, positive},
		{"FASTCLS", "fastcls_epochs", &s.FastCls.Epochs, positive},
		{"FASTCLS", "fastcls_patience", &s.FastCls.Patience, nonNeg},
		{"FASTCLS", "fastcls_lr0", &s.FastCls.LR0, nil},
		{"FASTCLS", "fastcls_dropout", &s.FastCls.Dropout, nil},
		{"FASTCLS", "fastcls_cache", &s.FastCls.Cache, nil},
		{"INPUT", "FOLDER_INPUT", &s.Input.FolderInput, nil},
		{"INPUT", "chunk_size", &s.Input.ChunkSize, positive},
		{"INPUT", "chunking", &s.Input.Chunking, nil},
		{"INPUT", "fetch_workers", &s.Input.FetchWorkers, positive},
		{"HUB", "repo_name", &s.Hub.RepoName, nil},
		{"HUB", "token", &s.Hub.Token, nil},
		{"HUB", "use_hub", &s.Hub.UseHub, nil},
		{"HUB", "revision", &s.Hub.Revision, nil},
		{"HUB", "latest", &s.Hub.Latest, nil},
		{"DOCUMENT", "document_json", &s.Document.DocumentJSON, nil},
		{"DOCUMENT", "document_json_out", &s.Document.DocumentJSONOut, nil},
		{"DOCUMENT", "document_json_dir", &s.Document.DocumentJSONDir, nil},
		{"DOCUMENT", "document_json_out_dir", &s.Document.DocumentJSONOutDir, nil},
		{"DOCUMENT", "strict", &s.Document.Strict, nil},
	}
}

// Precisions are the values of [SETUP] precision (the --precision flag's).
var Precisions = []string{"auto", "fp32", "tf32", "bf16", "fp16"}

// Defaults returns the shipped values of spec 2.8, used for keys a config
// file leaves out.
func Defaults() Settings {
	var s Settings
	s.Output.FolderResults, s.Output.FolderCPoints, s.Output.FolderModels = "./result", "./checkpoint", "./model"
	s.Eval.FolderPages = "./small_data_samples"
	s.Train.FolderPages = "./small_data_samples"
	s.Train.TestSize, s.Train.LogStep, s.Train.Epochs, s.Train.LR, s.Train.MaxCateg = 0.1, 100, 3, 5e-5, 14000
	s.Train.Augment = true
	s.Setup.FilesFormat, s.Setup.Seed, s.Setup.BaseModel = "png", 420, "v4.4"
	s.Setup.Batch, s.Setup.TopN, s.Setup.Inner = 16, 3, true
	s.Setup.Precision = "auto"
	s.FastCls.Base, s.FastCls.ImgSz, s.FastCls.Epochs, s.FastCls.Patience = "small", 224, 30, 20
	s.FastCls.Dropout, s.FastCls.Cache = 0.1, true
	s.Input.FolderInput, s.Input.ChunkSize, s.Input.FetchWorkers = "./small_data_samples", 100, 4
	s.Hub.Revision, s.Hub.Latest = "main", "v4.4"
	return s
}

// LoadSettings reads the config file at path over Defaults. Every bad value
// is reported (errors joined), each naming file, section, key and value.
func LoadSettings(path string) (Settings, error) {
	f, err := config.Load(path)
	if err != nil {
		return Defaults(), err
	}
	return FromFile(f)
}

// FromFile converts a parsed file to Settings over Defaults.
func FromFile(f *config.File) (Settings, error) {
	s := Defaults()
	var errs []error
	known := map[string]bool{}
	var sections []string
	for _, b := range s.bindings() {
		if !slices.Contains(sections, b.section) {
			sections = append(sections, b.section)
		}
	}
	f.MatchSections(sections) // [setup] is read as [SETUP]
	for _, b := range s.bindings() {
		known[b.section+"\x00"+strings.ToLower(b.key)] = true
		var err error
		switch p := b.ptr.(type) {
		case *string:
			*p = f.String(b.section, b.key, *p)
		case *int:
			*p, err = f.Int(b.section, b.key, *p)
		case *float64:
			*p, err = f.Float(b.section, b.key, *p)
		case *bool:
			*p, err = f.Bool(b.section, b.key, *p)
		}
		if err == nil && b.check != nil {
			if want := b.check(deref(b.ptr)); want != "" {
				err = f.Invalid(b.section, b.key, want)
			}
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, sec := range f.Sections() {
		for _, k := range f.OwnKeys(sec) {
			if !known[sec+"\x00"+k] {
				s.Unknown = append(s.Unknown, fmt.Sprintf("[%s] %s", sec, k))
			}
		}
	}
	return s, errors.Join(errs...)
}

func deref(p any) any {
	switch p := p.(type) {
	case *int:
		return *p
	case *float64:
		return *p
	case *string:
		return *p
	}
	return nil
}
