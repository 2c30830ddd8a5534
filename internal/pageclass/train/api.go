// Package train fine-tunes, evaluates and averages page-classification
// models (spec page-classification 4.1: --train, --eval, --folds,
// --folds_csv, --fold_column, --average). Go drives the loops; libtorch does
// the maths through bindings/torch.
package train

import (
	"io"
	"log/slog"
	"time"

	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/paradata"
)

// Options configure training (the [TRAIN] section and the flags of spec 4.1).
type Options struct {
	// Decode decodes the pages (the zero value: as imageio.DefaultOptions;
	// with Decode.Isolation, in decoder processes).
	Decode      imageio.Options
	Base        string   // model folder (model.pt + model.json) to fine-tune; must be scripted (trainable)
	Pages       string   // [TRAIN] FOLDER_PAGES: one sub-folder per category
	Exts        []string // extensions collected (default png)
	Epochs      int      // [TRAIN] epochs
	Batch       int      // [SETUP] batch
	LR          float64  // [TRAIN] lr (peak; 10% linear warm-up, then linear decay)
	MaxPerClass int      // [TRAIN] max_categ
	TestSize    float64  // [TRAIN] test_size (0.1: 80/10/10)
	Seed        int64    // [SETUP] seed (split N uses Seed + N - 1)
	Folds       int      // --folds: number of folds; 0 trains split 1 only
	FoldsCSV    string   // --folds_csv: takes precedence over Folds
	FoldColumn  string   // --fold_column: one column of FoldsCSV; "" = every fold column
	Revision    string   // label used in output names, e.g. "v4.4" or "demo-vit"
	Checkpoints string   // [OUTPUT] FOLDER_CPOINTS: best checkpoint by dev accuracy
	Models      string   // [OUTPUT] FOLDER_MODELS: final models (TorchScript + metadata)
	Results     string   // [OUTPUT] FOLDER_RESULTS: DATASETS files, eval tables
	Stamp       string   // run time stamp used in file names
	Device      string   // "cpu" or "cuda:N"
	Workers     int      // decode/augment workers (0 = number of CPUs)
	LogStep     int      // [TRAIN] log_step: steps between progress log lines
	Augment     bool     // colour jitter, sharpness, slight blur (no flips)
	Patience    int      // stop a fold when dev accuracy has not improved for this many epochs; 0 never stops early
	Size        int      // [TRAIN] input_size / [FASTCLS] fastcls_imgsz: input size to train at instead of the base's (size-independent CNNs); 0 keeps it
	NoCache     bool     // decode the pages from disk for every batch instead of keeping them in memory
	// NoFeatureCache runs every step through the whole model even when the
	// base's frozen backbone lets the head train on features computed once
	// per page (FoldResult.FeaturesCached); for comparisons.
	NoFeatureCache bool
	// BaseContents, when set, is Base as the caller read it once
	// (modelmeta.ReadFolder), having recorded its digest: every fold
	// trains a module loaded from these bytes. Nil: Train reads Base once.
	BaseContents *modelmeta.Contents
	Log          *slog.Logger
	Progress     io.Writer // terminal progress (nil: none)
	Run          *paradata.Run
}

// FoldResult is what one trained fold produced.
type FoldResult struct {
	Fold        int     // 1-based
	ModelDir    string  // final model folder under Options.Models
	Checkpoint  string  // best checkpoint folder under Options.Checkpoints
	DatasetFile string  // the {stamp}_{rev}_FOLD_{n}_DATASETS.txt written
	DevAccuracy float64 // best dev accuracy (0 when DevPages is 0)
	DevPages    int     // dev pages the checkpoint was chosen on; 0: the split has none and the last epoch is kept
	// TrainableParams of TotalParams parameter elements were trained; the
	// others are frozen in the base (requires_grad off, e.g. a backbone).
	TrainableParams, TotalParams int64
	TestTop1                     float64 // accuracy on the fold's test split (0 when TestPages is 0)
	TestTop3                     float64
	TestPages                    int // pages of the test split; 0: the test accuracies were not measured
	StoppedEarly                 int // the last epoch run when early stopping ended the fold; 0 when every epoch ran
	// FeaturesCached: the base's frozen backbone ran once per page and the
	// head trained on its features (tools/export_models.py --freeze-backbone
	// bases, no augmentation); otherwise every step ran the whole model.
	// FeatureCache says which and why (logged and written to the model's
	// notes).
	FeaturesCached bool
	FeatureCache   string
	// Elapsed is the fold's training time: features (when cached), steps,
	// dev evaluations, checkpoints and the test evaluation, not the page
	// decoding shared by all folds.
	Elapsed time.Duration
}

// EvalOptions configure --eval.
type EvalOptions struct {
	// Decode decodes the pages, as Options.Decode.
	Decode   imageio.Options
	Model    string   // model folder
	Ensemble []string // model folders whose averaged probabilities are evaluated (instead of Model)
	Pages    string   // [EVAL] FOLDER_PAGES (category sub-folders give the gold labels)
	Exts     []string
	Only     []string // restrict to these relative paths (a split's test set); nil = all
	TopN     int
	Count    int    // {n} in the output names (fold number or model count)
	Revision string // {rev} in the output names
	Results  string
	Stamp    string
	Device   string
	Batch    int
	Workers  int
	Log      *slog.Logger
	Progress io.Writer
	Run      *paradata.Run
	// Read holds model folders as the caller read them once
	// (modelmeta.ReadFolder), by folder, having recorded their digests:
	// those models are evaluated from these bytes. A folder not in it is
	// read once here.
	Read map[string]*modelmeta.Contents
}

// EvalResult summarises an evaluation; the files are written under Results:
// {stamp}_{n}_{rev}_TOP-{N}_EVAL.csv, {stamp}_{n}_{rev}_EVAL_RAW.csv and
// {stamp}_{n}_{rev}_conf_mat_TOP-{N}.png.
type EvalResult struct {
	Revision string // the evaluated model's label in file names and the report
	Pages    int    // the pages evaluated
	// Unreadable are the labelled pages that could not be read (skipped),
	// with why.
	Unreadable map[string]string
	Top1       float64
	TopN       float64
	PerClass   []ClassScore // canonical order
	Confusion  [][]int      // [true][predicted], canonical order
	Files      []string
	// Digests are modelmeta.Digest of each model's bytes evaluated, in the
	// order of EvalOptions.Ensemble (or Model alone).
	Digests []string
	// Samples are the pages' doubt and whether the averaged Top-1 is right,
	// in table order: what review.Calibrate calibrates on.
	Samples []review.Sample

	rows       []results.Row // the evaluated pages, for WriteReview
	reviewPath string
	run        *paradata.Run
}

// ClassScore is precision, recall and F1 of one category.
type ClassScore struct {
	Label                 string
	Precision, Recall, F1 float64
	Support               int
}
