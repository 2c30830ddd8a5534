package classify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"archivekit/pkg/hub"
	"archivekit/pkg/modelmeta"
	"archivekit/pkg/registry"
)

// DefaultDemoDir is the shipped demo ensemble, relative to the working
// directory: one folder per ensemble revision named like the model folders
// (weights/demo/model_v14 ... weights/demo/model_v54).
const DefaultDemoDir = "weights/demo"

// HubFiles are the files of a model revision in a hub repository.
var HubFiles = []string{modelmeta.WeightsFile, modelmeta.MetaFile}

// Folder is a model folder found for a revision.
type Folder struct {
	// Revision is the registry revision asked for ("" for a plain path).
	Revision string
	// Dir holds model.pt and model.json.
	Dir string
	// Demo is true when the folder belongs to the demo ensemble.
	Demo bool
}

// Locator finds model folders for revisions.
type Locator struct {
	// Models is the folder holding one sub-folder per revision,
	// model_<rev without dots> (the -m flag, [OUTPUT] FOLDER_MODELS).
	Models string
	// Demo is the demo ensemble root (DefaultDemoDir); "" disables the
	// fallback.
	Demo string
	// Hub, when not nil, downloads revisions from HubRepo instead of
	// reading Models (the --hub flag).
	Hub     *hub.Client
	HubRepo string
	// Log receives the demo-ensemble warning; nil means slog.Default().
	Log *slog.Logger
}

func (l *Locator) log() *slog.Logger {
	if l.Log != nil {
		return l.Log
	}
	return slog.Default()
}

// IsModelDir reports whether dir holds a model.json.
func IsModelDir(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, modelmeta.MetaFile))
	return err == nil && !st.IsDir()
}

// Folder finds the folder of one revision: downloaded from the hub when a hub
// is set; else Models itself when it is a model folder (holds model.json);
// else Models/model_<rev without dots>. The revision is checked first
// (registry.CheckRevision).
func (l *Locator) Folder(ctx context.Context, rev string) (Folder, error) {
	if err := registry.CheckRevision(rev); err != nil {
		return Folder{}, err
	}
	if l.Hub != nil {
		if strings.TrimSpace(l.HubRepo) == "" {
			return Folder{}, errors.New("--hub needs a repository: set [HUB] repo_name in the config file")
		}
		dir, err := l.Hub.Download(ctx, l.HubRepo, rev, HubFiles)
		if err != nil {
			return Folder{}, err
		}
		return Folder{Revision: rev, Dir: dir}, nil
	}
	if IsModelDir(l.Models) {
		return Folder{Revision: rev, Dir: l.Models}, nil
	}
	dir := filepath.Join(l.Models, registry.ModelDirName(rev))
	if !IsModelDir(dir) {
		return Folder{}, fmt.Errorf("model %s not found: %s has no %s (download it with --hub, or point -m at the folder holding %s)",
			rev, dir, modelmeta.MetaFile, registry.ModelDirName(rev))
	}
	return Folder{Revision: rev, Dir: dir}, nil
}

// Ensemble finds the five canonical ensemble folders (registry.Ensemble
// order). From the hub, all five are downloaded. Otherwise, when all five
// exist under Models they are used; when any is missing and the demo root
// holds all five, the demo ensemble is used instead, as a whole (published
// and demo models are never mixed), with a WARNING log line; else the error
// names every missing folder.
func (l *Locator) Ensemble(ctx context.Context) ([]Folder, error) {
	var out []Folder
	if l.Hub != nil {
		for _, rev := range registry.Ensemble {
			f, err := l.Folder(ctx, rev)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
		return out, nil
	}
	var missing []string
	for _, rev := range registry.Ensemble {
		dir := filepath.Join(l.Models, registry.ModelDirName(rev))
		if !IsModelDir(dir) {
			missing = append(missing, dir)
			continue
		}
		out = append(out, Folder{Revision: rev, Dir: dir})
	}
	if len(missing) == 0 {
		return out, nil
	}
	if l.Demo != "" {
		demo, err := DemoEnsemble(l.Demo)
		if err == nil {
			l.log().Warn("published ensemble models missing: using the shipped demo ensemble (not the published weights)",
				"missing", strings.Join(missing, ", "), "demo", l.Demo)
			return demo, nil
		}
		missing = append(missing, err.Error())
	}
	return nil, fmt.Errorf("ensemble models missing: %s", strings.Join(missing, "; "))
}

// DemoEnsemble returns the five demo folders under root
// (root/model_v14 ... root/model_v54), all marked Demo, or an error naming the
// missing ones.
func DemoEnsemble(root string) ([]Folder, error) {
	var out []Folder
	var missing []string
	for _, rev := range registry.Ensemble {
		dir := filepath.Join(root, registry.ModelDirName(rev))
		if !IsModelDir(dir) {
			missing = append(missing, dir)
			continue
		}
		out = append(out, Folder{Revision: rev, Dir: dir, Demo: true})
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("demo ensemble incomplete: missing %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// LoadAll loads folders onto device, closing what was loaded when one fails.
func LoadAll(folders []Folder, device string) ([]*Model, error) {
	var ms []*Model
	for _, f := range folders {
		m, err := LoadFolder(f, device)
		if err != nil {
			CloseAll(ms)
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}
