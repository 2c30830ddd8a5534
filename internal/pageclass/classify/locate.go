package classify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/hub"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/registry"
	"archivekit/internal/resources"
)

// DefaultDemoDir is the shipped demo ensemble, relative to the working
// directory: one folder per ensemble revision named like the model folders
// (weights/demo/model_v14 ... weights/demo/model_v54).
const DefaultDemoDir = "weights/demo"

// DemoDir is the shipped demo models folder found by internal/resources
// (ARCHIVEKIT_DEMO_WEIGHTS, weights/demo in the working directory, beside the
// executable, in the installed share folder); DefaultDemoDir when none is
// found, so the error names the folder looked for. The default of the
// command's and the service's demo flag.
func DemoDir() string {
	if f, err := resources.Default.Find(resources.DemoWeights, ""); err == nil {
		return f.Path
	}
	return DefaultDemoDir
}

// HubFiles are the files of a model revision in a hub repository.
var HubFiles = []string{modelmeta.WeightsFile, modelmeta.MetaFile}

// Folder is a model folder found for a revision.
type Folder struct {
	// Revision is the registry revision asked for ("" for a plain path).
	// The model is named after it when its model.json names no revision.
	Revision string
	// Want, when set, is the revision the model must be: loading fails when
	// model.json names another one (a folder named for v4.4 holding v1.4).
	Want string
	// Dir holds model.pt and model.json.
	Dir string
	// Demo is true when the folder belongs to the shipped demo models.
	Demo bool
	// Contents, when set, is the folder read once (modelmeta.ReadFolder)
	// by a caller that needs its digest before the model loads (pageclass
	// --parallel loads its models group by group): Meta and LoadFolder
	// use these bytes instead of reading the folder again, so the model
	// that runs is the one digested even if its files are replaced
	// meanwhile.
	Contents *modelmeta.Contents
}

// Locator finds model folders for revisions.
//
// The layout of a models folder (the -m flag, [OUTPUT] FOLDER_MODELS, the
// output of tools/export_models.py --published) is one sub-folder per
// revision, named model_<rev without dots> (model_v14) or after the revision
// itself (v1.4); both spellings are accepted, and a folder holding both for
// one revision is an error rather than a guess.
//
// Demo fallback: when the location was not given (Given is false: no -m, no
// hub) and the default folder holds none of the models asked for, the
// shipped demo models under Demo answer instead, with one WARNING, and their
// folders are marked Demo. A location that was given never falls back, and
// an incomplete ensemble is an error naming every missing revision.
type Locator struct {
	// Models is the folder holding one sub-folder per revision, or one model
	// folder itself.
	Models string
	// Given is true when the user named the model location (-m on the
	// command line, a non-default [OUTPUT] FOLDER_MODELS, or the hub): no
	// demo fallback then.
	Given bool
	// Demo is the demo models root (DefaultDemoDir); "" disables the
	// fallback.
	Demo string
	// DemoFrom, when set, names where Demo was given (`--demo-weights
	// (from envar ARCHIVEKIT_DEMO_WEIGHTS="/x")`): a fallback to a Demo
	// that is not there is then an error naming it.
	DemoFrom string
	// Hub, when not nil, downloads revisions from HubRepo instead of
	// reading Models (the --hub flag); the hub is always a given location.
	Hub     *hub.Client
	HubRepo string
	// Log receives the demo warning; nil means slog.Default().
	Log *slog.Logger
	// Flag is the caller's flag that names Models, as its hints give it
	// ("-models" for pageclass-api); "" means -m, pageclass's.
	Flag string
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

// RevisionDirs are the accepted names of a revision's folder inside a models
// folder: model_<rev without dots>, then the revision itself.
func RevisionDirs(root, rev string) []string {
	return []string{filepath.Join(root, registry.ModelDirName(rev)), filepath.Join(root, rev)}
}

// findRevision returns the folder of rev under root: "" when there is none,
// an error when both spellings exist.
func findRevision(root, rev string) (string, error) {
	var found []string
	for _, d := range RevisionDirs(root, rev) {
		if IsModelDir(d) {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 0:
		return "", nil
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("model %s: two folders in %s (%s); keep one", rev, root, strings.Join(found, " and "))
}

// lookedFor names the folders searched for rev under root, for messages.
func lookedFor(root, rev string) string {
	d := RevisionDirs(root, rev)
	return d[0] + " or " + d[1]
}

// demoHolds says which ensemble revisions the demo folder holds, for
// messages: a folder that holds none is named as such, since it is then
// most likely not the demo weights at all.
func demoHolds(dir string) string {
	var have []string
	for _, rev := range registry.Ensemble {
		if d, _ := findRevision(dir, rev); d != "" {
			have = append(have, rev)
		}
	}
	if len(have) == 0 {
		return "it holds none of " + strings.Join(registry.Ensemble, ", ") + ": is it the demo weights folder? (--demo-weights, ARCHIVEKIT_DEMO_WEIGHTS)"
	}
	return "it holds " + strings.Join(have, ", ")
}

// HintExport is the hint of every missing-model error: where published
// models come from, and the caller's flag (Locator.Flag) that names them.
func (l *Locator) HintExport() string {
	flag := l.Flag
	if flag == "" {
		flag = "-m"
	}
	return "convert the published checkpoints with tools/export_models.py --published CHECKPOINTS --out DIR (in a release tree share/doc/archivekit/tools/; see docs/pageclass.md and tools/README.md) and give " + flag + " DIR"
}

// CheckDownload is the hub client's check of a downloaded model file
// before it enters the cache (hub.Client.Check): model.pt must load as a
// TorchScript module (on the CPU) and model.json must be valid model
// metadata, so a file that does not load is never cached and served again.
func CheckDownload(file, path string) error {
	switch file {
	case modelmeta.WeightsFile:
		m, err := torch.Load(path, "cpu")
		if err != nil {
			return err
		}
		m.Close()
	case modelmeta.MetaFile:
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		meta, err := modelmeta.Parse(b)
		if err != nil {
			return err
		}
		return meta.Validate()
	}
	return nil
}

// Folder finds the folder of one revision: downloaded from the hub when a hub
// is set; else Models itself when it is a model folder (holds model.json);
// else the revision's sub-folder of Models; else, when the location was not
// given, the demo model of that revision (with a warning). want says that rev
// was asked for explicitly, so a model folder named by Models must be that
// revision. The revision is checked first (registry.CheckRevision).
func (l *Locator) Folder(ctx context.Context, rev string, want bool) (Folder, error) {
	if err := registry.CheckRevision(rev); err != nil {
		return Folder{}, err
	}
	if l.Hub != nil {
		if strings.TrimSpace(l.HubRepo) == "" {
			return Folder{}, errors.New("--hub needs a repository: set [HUB] repo_name in the config file")
		}
		if l.Hub.Check == nil {
			l.Hub.Check = CheckDownload
		}
		dir, err := l.Hub.Download(ctx, l.HubRepo, rev, HubFiles)
		if err != nil {
			return Folder{}, err
		}
		f := Folder{Revision: rev, Dir: dir}
		if !hub.Moving(rev) {
			f.Want = rev
		}
		return f, nil
	}
	if IsModelDir(l.Models) {
		f := Folder{Dir: l.Models}
		if want {
			f.Revision, f.Want = rev, rev
		}
		return f, nil
	}
	dir, err := findRevision(l.Models, rev)
	if err != nil {
		return Folder{}, err
	}
	if dir != "" {
		return Folder{Revision: rev, Want: rev, Dir: dir}, nil
	}
	missing := fmt.Sprintf("model %s not found: no model.json in %s", rev, lookedFor(l.Models, rev)) + registry.GenerationNote(rev)
	if fi, err := os.Stat(l.Models); err == nil && !fi.IsDir() {
		// -m page.png, or -m model.pt: a file where a folder is wanted.
		missing = fmt.Sprintf("model %s not found: %s is a file, not a folder: give the folder holding the model folders (model_v14, ...) or a model folder itself (its model.json and model.pt)", rev, l.Models)
	}
	if l.Given || l.Demo == "" {
		return Folder{}, fmt.Errorf("%s; %s", missing, l.HintExport())
	}
	if err := l.demoAbsent(); err != nil {
		return Folder{}, fmt.Errorf("%s, and %w; %s", missing, err, l.HintExport())
	}
	demo, err := findRevision(l.Demo, rev)
	if err != nil {
		return Folder{}, err
	}
	if demo == "" {
		return Folder{}, fmt.Errorf("%s, and the shipped demo models (%s) have none for %s (%s); %s",
			missing, l.Demo, rev, demoHolds(l.Demo), l.HintExport())
	}
	msg := "DEMO MODEL: no model location given and " + l.Models + " has no " + rev + ": using the shipped demo model (fine-tuned on the sample pages only, CC BY-NC 4.0), not the published weights"
	l.log().Warn(msg+passedOver(l.Models), "revision", rev, "demo", demo, "hint", l.HintExport())
	return Folder{Revision: rev, Dir: demo, Demo: true}, nil
}

// Ensemble finds the five canonical ensemble folders (registry.Ensemble
// order). From the hub, all five are downloaded. Otherwise all five must be
// under Models; when none is and the location was not given, the demo
// ensemble answers as a whole (published and demo models are never mixed),
// with one WARNING. Any other gap is an error naming every missing revision.
func (l *Locator) Ensemble(ctx context.Context) ([]Folder, error) {
	var out []Folder
	if l.Hub != nil {
		for _, rev := range registry.Ensemble {
			f, err := l.Folder(ctx, rev, true)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
		return out, nil
	}
	if IsModelDir(l.Models) {
		return nil, fmt.Errorf("%s is one model folder; the ensemble needs the folder holding the five (%s)",
			l.Models, strings.Join(RevisionDirs("DIR", "v1.4"), " or ")+" ... v5.4")
	}
	out, missing, err := ensembleIn(l.Models, false)
	if err != nil {
		return nil, err
	}
	if len(missing) == 0 {
		return out, nil
	}
	msg := fmt.Sprintf("published ensemble incomplete in %s: %d of %d models, missing %s",
		l.Models, len(out), len(registry.Ensemble), strings.Join(missing, ", "))
	if l.Given || len(out) > 0 || l.Demo == "" {
		return nil, fmt.Errorf("%s; %s", msg, l.HintExport())
	}
	demo, err := DemoEnsemble(l.Demo)
	if absent := l.demoAbsent(); absent != nil {
		err = absent
	}
	if err != nil {
		return nil, fmt.Errorf("no model location given, no published models in %s, and %w; %s", l.Models, err, l.HintExport())
	}
	msg = "DEMO MODELS: no model location given and " + l.Models + " holds no published model: using the shipped demo ensemble (fine-tuned on the sample pages only, CC BY-NC 4.0), not the published weights"
	l.log().Warn(msg+passedOver(l.Models), "demo", l.Demo, "hint", l.HintExport())
	return demo, nil
}

// demoAbsent is the error of a fallback to a demo folder given (DemoFrom)
// that is not there (an ARCHIVEKIT_DEMO_WEIGHTS naming nothing), naming
// where it was given; nil when the folder exists or was not given.
func (l *Locator) demoAbsent() error {
	if l.DemoFrom == "" {
		return nil
	}
	st, err := os.Stat(l.Demo)
	switch {
	case err == nil && st.IsDir():
		return nil
	case err == nil:
		err = fmt.Errorf("%s is not a folder", l.Demo)
	}
	return fmt.Errorf("the demo models folder named by %s is not there: %w", l.DemoFrom, err)
}

// passedOver is what the demo warnings add about root's folders that are
// not model folders (notModelDirs), "" when there are none.
func passedOver(root string) string {
	others := notModelDirs(root)
	if len(others) == 0 {
		return ""
	}
	return "; its folders " + strings.Join(others, ", ") + " hold no " + modelmeta.MetaFile + " (the original tool's Hugging Face checkpoints are not read: convert them)"
}

// notModelDirs lists (up to five, then a count) the folders in root that
// are not model folders: the original tool's checkpoints (model_v13 ...,
// config.json and safetensors), which a user migrating keeps in ./model.
func notModelDirs(root string) []string {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	n := 0
	for _, e := range entries {
		if !e.IsDir() || IsModelDir(filepath.Join(root, e.Name())) {
			continue
		}
		if n++; n <= 5 {
			out = append(out, e.Name())
		}
	}
	if n > 5 {
		out = append(out, fmt.Sprintf("and %d more", n-5))
	}
	return out
}

// ensembleIn finds the five ensemble folders under root; missing lists the
// revisions absent, each with the folders looked for.
func ensembleIn(root string, demo bool) (found []Folder, missing []string, err error) {
	for _, rev := range registry.Ensemble {
		dir, err := findRevision(root, rev)
		if err != nil {
			return nil, nil, err
		}
		if dir == "" {
			missing = append(missing, fmt.Sprintf("%s (%s)", rev, lookedFor(root, rev)))
			continue
		}
		found = append(found, Folder{Revision: rev, Want: rev, Dir: dir, Demo: demo})
	}
	return found, missing, nil
}

// DemoEnsemble returns the five demo folders under root (root/model_v14 ...
// root/model_v54, or root/v1.4 ...), all marked Demo, or an error naming the
// missing ones.
func DemoEnsemble(root string) ([]Folder, error) {
	out, missing, err := ensembleIn(root, true)
	if err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("demo ensemble incomplete: missing %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// LoadAll loads folders onto device, closing what was loaded when one fails.
func LoadAll(folders []Folder, device string) ([]*Model, error) {
	return LoadAllAs(folders, device, torch.DefaultPrecision(device))
}

// LoadAllAs is LoadAll at precision prec (LoadFolderAs).
func LoadAllAs(folders []Folder, device string, prec torch.Precision) ([]*Model, error) {
	var ms []*Model
	for _, f := range folders {
		m, err := LoadFolderAs(f, device, prec)
		if err != nil {
			CloseAll(ms)
			return nil, err
		}
		ms = append(ms, m)
	}
	return ms, nil
}
