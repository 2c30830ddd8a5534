// Package modelmeta describes a page-classification model on disk: a folder
// holding the TorchScript module "model.pt" and its metadata "model.json".
// Preprocessing comes from this metadata only, never from flags or
// configuration, so a model can never be run with another model's
// normalisation. The package is also the single source of the eleven
// category names.
package modelmeta

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"archivekit/internal/atomicfile"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/regularfile"
)

// Categories are the eleven page categories in canonical (sorted) order: the
// column order of RAW outputs and the label order of shipped models.
var Categories = []string{"DRAW", "DRAW_L", "LINE_HW", "LINE_P", "LINE_T", "PHOTO", "PHOTO_L", "TEXT", "TEXT_HW", "TEXT_P", "TEXT_T"}

// File names inside a model folder.
const (
	WeightsFile = "model.pt"
	MetaFile    = "model.json"
)

// FormatVersion is the model.json format this package writes and the newest
// it reads.
const FormatVersion = 1

// FastClsBase is the base_architecture of the fast classifier
// (tools/make_fastcls.py): a small depthwise-separable CNN of this project,
// independent of the input size.
const FastClsBase = "fastcls-small"

// TaskRotation is the task of a page-orientation model: it tells by how
// much a page was turned clockwise from upright.
const TaskRotation = "rotation"

// RotationLabels are the labels of an orientation model, in order: the page
// as scanned is upright, or turned clockwise by 90, 180 or 270 degrees.
var RotationLabels = []string{"ROT_0", "ROT_90", "ROT_180", "ROT_270"}

// IsRotation reports whether the model is a page-orientation model.
func (m *Meta) IsRotation() bool { return m.Task == TaskRotation }

// IsFastCls reports whether the model is the fast classifier.
func (m *Meta) IsFastCls() bool { return m.Base == FastClsBase }

// CategoryIndex returns the canonical index of a category name, or -1.
func CategoryIndex(name string) int {
	i := sort.SearchStrings(Categories, name)
	if i < len(Categories) && Categories[i] == name {
		return i
	}
	return -1
}

// Provenance records how a model was made.
type Provenance struct {
	// Method is "export" (converted from a published checkpoint), "train",
	// "average" (mean of fold models), "pretrained" (an ImageNet checkpoint
	// given a new head, the base of the shipped models) or "random-init"
	// (test models).
	Method string `json:"method"`
	// Command is the exact command line that produced the model.
	Command string `json:"command,omitempty"`
	// Source names what the model came from: a checkpoint id, a base model,
	// the data folder.
	Source string `json:"source,omitempty"`
	// Fold is the training fold, 0 when not applicable.
	Fold int `json:"fold,omitempty"`
	// AveragedFrom lists the models averaged into this one.
	AveragedFrom []string `json:"averaged_from,omitempty"`
	// Created is an RFC 3339 time stamp.
	Created string `json:"created,omitempty"`
	// Notes is free text (measured accuracy, caveats).
	Notes string `json:"notes,omitempty"`
}

// Meta is the content of model.json.
type Meta struct {
	FormatVersion int `json:"format_version"`
	// Labels are the category names of the model's outputs, in output order.
	Labels []string `json:"labels"`
	// Preprocess is the input size, resize rule, mean and std.
	Preprocess registry.Preprocess `json:"preprocess"`
	// Revision is the registry revision this model implements, when any.
	Revision string `json:"revision,omitempty"`
	// Base is the base architecture, e.g. "regnety_160".
	Base string `json:"base_architecture"`
	// License is the licence of the weights.
	License string `json:"license"`
	// Trainable is true when model.pt is a scripted module that can be
	// fine-tuned (a traced module freezes dropout/batch-norm modes).
	Trainable bool `json:"trainable"`
	// Dropout is the dropout rate built into model.pt, when recorded (the
	// fast classifier: tools/make_fastcls.py).
	Dropout *float64 `json:"dropout,omitempty"`
	// Task is empty for a page classifier (labels: categories) and
	// TaskRotation for a page-orientation model (labels: RotationLabels).
	Task string `json:"task,omitempty"`
	// Provenance says how the model was made.
	Provenance Provenance `json:"provenance"`
}

// Validate checks the metadata and returns every problem found, joined.
func (m *Meta) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if m.FormatVersion < 1 || m.FormatVersion > FormatVersion {
		bad("format_version %d: this build reads 1 to %d", m.FormatVersion, FormatVersion)
	}
	if len(m.Labels) < 2 {
		bad("labels: want at least 2, got %d", len(m.Labels))
	}
	seen := map[string]bool{}
	switch m.Task {
	case "":
	case TaskRotation:
		if strings.Join(m.Labels, ",") != strings.Join(RotationLabels, ",") {
			bad("labels of a %s model: want %s", TaskRotation, strings.Join(RotationLabels, ", "))
		}
	default:
		bad("task %q: want none (a page classifier) or %q", m.Task, TaskRotation)
	}
	for _, l := range m.Labels {
		if m.Task == TaskRotation {
			break
		}
		if CategoryIndex(l) < 0 {
			bad("labels: %q is not a category (want one of %s)", l, strings.Join(Categories, ", "))
		}
		if seen[l] {
			bad("labels: %q listed twice", l)
		}
		seen[l] = true
	}
	p := m.Preprocess
	if p.Size < 8 || p.Size > 4096 {
		bad("preprocess.size %d: want 8 to 4096", p.Size)
	}
	if p.Resize != registry.ResizeBilinear {
		bad("preprocess.resize %q: the only supported rule is %q", p.Resize, registry.ResizeBilinear)
	}
	for c := 0; c < 3; c++ {
		if !(p.Std[c] > 0) {
			bad("preprocess.std[%d] = %v: want a positive number", c, p.Std[c])
		}
	}
	if m.Base == "" {
		bad("base_architecture is empty")
	}
	if strings.TrimSpace(m.License) == "" {
		bad("license is empty")
	}
	if m.Revision != "" {
		if err := registry.CheckRevision(m.Revision); err != nil {
			bad("revision: %v", err)
		}
	}
	if m.Provenance.Method == "" {
		bad("provenance.method is empty")
	}
	if m.Dropout != nil && !(*m.Dropout >= 0 && *m.Dropout < 1) {
		bad("dropout %v: want 0 <= p < 1", *m.Dropout)
	}
	return errors.Join(errs...)
}

// Canonical reports whether the labels are all eleven categories in
// canonical order.
func (m *Meta) Canonical() bool {
	if len(m.Labels) != len(Categories) {
		return false
	}
	for i, l := range m.Labels {
		if l != Categories[i] {
			return false
		}
	}
	return true
}

// ToCanonical maps a vector of per-label scores in the model's output order
// to the eleven canonical categories; categories the model lacks score 0.
func (m *Meta) ToCanonical(scores []float32) ([]float32, error) {
	if len(scores) != len(m.Labels) {
		return nil, fmt.Errorf("model gives %d scores for %d labels", len(scores), len(m.Labels))
	}
	out := make([]float32, len(Categories))
	for i, l := range m.Labels {
		out[CategoryIndex(l)] = scores[i]
	}
	return out, nil
}

// Load reads and validates dir/model.json and checks that dir/model.pt
// exists. Errors name the file.
func Load(dir string) (*Meta, error) {
	m, _, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(filepath.Join(dir, WeightsFile)); err != nil {
		return nil, fmt.Errorf("%s: model folder lacks %s: %w", dir, WeightsFile, err)
	} else if st.IsDir() || st.Size() == 0 {
		return nil, fmt.Errorf("%s: %s is empty or not a file", dir, WeightsFile)
	}
	return m, nil
}

// readMeta reads and parses model.json of dir; it returns its bytes too.
// Errors name the file.
func readMeta(dir string) (*Meta, []byte, error) {
	path := filepath.Join(dir, MetaFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	m, err := Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, b, nil
}

// Parse decodes and validates model.json content. Unknown fields are an
// error, so a misspelt key cannot silently fall back to a zero value.
func Parse(b []byte) (*Meta, error) {
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("not valid model metadata: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Save validates m and writes dir/model.json atomically (indented JSON).
func Save(dir string, m *Meta) error {
	if m.FormatVersion == 0 {
		m.FormatVersion = FormatVersion
	}
	if err := m.Validate(); err != nil {
		return fmt.Errorf("%s: refusing to write invalid metadata: %w", filepath.Join(dir, MetaFile), err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, MetaFile), append(b, '\n'), 0o666)
}

// ForRevision returns metadata for a registry revision with the registry's
// preprocessing and canonical labels; the caller fills License, Trainable
// and Provenance.
func ForRevision(rev string) (*Meta, error) {
	r, ok := registry.Lookup(rev)
	if !ok || r.Preprocess.Size == 0 {
		return nil, fmt.Errorf("revision %q: no preprocessing recorded in the registry", rev)
	}
	return &Meta{
		FormatVersion: FormatVersion,
		Labels:        append([]string(nil), Categories...),
		Preprocess:    r.Preprocess,
		Revision:      rev,
		Base:          r.Base,
	}, nil
}

// Digest identifies the model in a folder: "sha256:" and the hex SHA-256 of
// model.json's bytes followed by model.pt's. Two folders with the same
// digest give the same results; it keys chunked-run resumption and is
// recorded in the run metadata. A model that is loaded takes its digest
// from the bytes it loads (ReadFolder); Digest reads the folder for callers
// that load nothing.
func Digest(dir string) (string, error) {
	h := newDigest()
	for _, name := range []string{MetaFile, WeightsFile} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		err = h.add(name, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
	}
	return h.sum(), nil
}

// digest computes Digest: each file's name, a NUL and its bytes.
type digest struct{ hash.Hash }

func newDigest() digest { return digest{sha256.New()} }

func (d digest) add(name string, r io.Reader) error {
	fmt.Fprintf(d, "%s\x00", name)
	_, err := io.Copy(d, r)
	return err
}

func (d digest) sum() string { return "sha256:" + hex.EncodeToString(d.Sum(nil)) }

// Contents is a model folder read once (ReadFolder): the metadata parsed
// from model.json, the bytes of model.pt, and the Digest of exactly the
// bytes read. A model loaded from Weights is the one Digest names, even if
// the folder's files are replaced meanwhile.
type Contents struct {
	Meta    *Meta
	Weights []byte
	Digest  string
}

// ReadFolder reads model.json and model.pt of dir once each (model.pt
// into one buffer of its size, regularfile.ReadSized) and returns them
// with their Digest. Errors name the file: model.json as Load reports it;
// a missing, empty or non-regular model.pt, or one whose size changed while
// it was read.
func ReadFolder(dir string) (*Contents, error) {
	m, mb, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	wb, err := regularfile.ReadSized(filepath.Join(dir, WeightsFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s: model folder lacks %s: %w", dir, WeightsFile, err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", dir, err)
	case len(wb) == 0:
		return nil, fmt.Errorf("%s: %s is empty or not a file", dir, WeightsFile)
	}
	h := newDigest()
	h.add(MetaFile, bytes.NewReader(mb))
	h.add(WeightsFile, bytes.NewReader(wb))
	return &Contents{Meta: m, Weights: wb, Digest: h.sum()}, nil
}
