package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"archivekit/internal/licence"
	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/hub"
	"archivekit/internal/pageclass/modelmeta"
	"archivekit/internal/pageclass/review"
	"archivekit/internal/paradata"
	"archivekit/internal/resources"
)

// models selects, loads and records the models of the modes that use them
// (classification, --train and --eval): where they are (-m, the hub, the
// shipped demo models, --fastcls), each model's digest (that of the bytes
// it was loaded from) and its licence in the run metadata.
type models struct {
	*runner
	// digests holds each model folder's digest for the run.
	digests classify.Digests
}

// locator builds the model locator of the run (hub when --hub).
func (r *models) locator() (*classify.Locator, error) {
	c := r.cli
	loc := &classify.Locator{Models: c.Model, Given: c.ModelGiven || c.Hub, Demo: c.DemoWeights, Log: r.log}
	if c.Given["demo-weights"] || c.Origin["demo-weights"] != "" {
		// Named by the flag or ARCHIVEKIT_DEMO_WEIGHTS: refused, naming
		// it, when not there.
		loc.DemoFrom = c.source("demo-weights")
	}
	if c.Hub {
		if strings.TrimSpace(r.settings.Hub.RepoName) == "" {
			return nil, usagef("--hub needs the hub repository: set [HUB] repo_name in %s", r.configPathOr())
		}
		hc, err := hub.FromEnv(defaultHubEndpoint)
		if err != nil {
			return nil, err
		}
		if hc.Token == "" && r.settings.Hub.Token != "" {
			hc.Token = r.settings.Hub.Token
		}
		hc.Log = r.log
		loc.Hub, loc.HubRepo = hc, r.settings.Hub.RepoName
	}
	return loc, nil
}

// singleRevision is the revision of a single-model run: -rev, else
// [HUB] revision with --hub, else [HUB] latest.
func (r *models) singleRevision() string {
	switch {
	case r.cli.Revision != "":
		return r.cli.Revision
	case r.cli.Hub:
		return r.settings.Hub.Revision
	default:
		return r.settings.Hub.Latest
	}
}

// folders selects the model folders of a classification or evaluation run:
// the fast classifier, the five ensemble models, or one revision.
func (r *models) folders(ctx context.Context) ([]classify.Folder, error) {
	c := r.cli
	if c.FastCls {
		f, err := r.fastClsFolder()
		if err != nil {
			return nil, err
		}
		return []classify.Folder{f}, nil
	}
	loc, err := r.locator()
	if err != nil {
		return nil, err
	}
	if c.Best {
		return loc.Ensemble(ctx)
	}
	f, err := loc.Folder(ctx, r.singleRevision(), r.cli.Revision != "")
	if err != nil {
		return nil, err
	}
	return []classify.Folder{f}, nil
}

// fastClsFolder finds the fast classifier (spec 4.1 rule 3: --fastcls
// overrides --base and --revision): --fastcls_base is a model folder (or its
// model.pt), or a short tag found as <models>/fastcls_<tag>; when no model
// location was given and that is absent, the shipped <demo>/fastcls_<tag>
// answers, with the demo warning. The folder must hold the fast classifier
// (model.json base_architecture modelmeta.FastClsBase), not any model.
func (r *models) fastClsFolder() (classify.Folder, error) {
	c := r.cli
	base := c.FastClsBase
	var f classify.Folder
	switch {
	case strings.HasSuffix(base, ".pt"):
		f.Dir = filepath.Dir(base)
	case strings.ContainsAny(base, `/\`):
		f.Dir = base
	default:
		// A bare name is a tag first (<models>/fastcls_<tag>, then the
		// shipped demo one), and a folder of the working directory only
		// when no tag answers: what a tag means does not depend on the
		// directory the command runs in.
		f.Dir = filepath.Join(c.Model, "fastcls_"+base)
		demo := ""
		if !classify.IsModelDir(f.Dir) && !c.ModelGiven && c.DemoWeights != "" {
			if d := filepath.Join(c.DemoWeights, "fastcls_"+base); classify.IsModelDir(d) {
				demo = d
			}
		}
		switch {
		case classify.IsModelDir(f.Dir):
		case demo == "" && classify.IsModelDir(base):
			f.Dir = base
		case demo != "":
			r.log.Warn("DEMO MODEL: no model location given and "+f.Dir+" is absent: using the shipped demo fast classifier (low accuracy, CC BY-NC 4.0)",
				"demo", demo, "hint", "train one with pageclass --train --fastcls (docs/pageclass.md, Fast classifier)")
			f = classify.Folder{Dir: demo, Demo: true}
		}
	}
	if !classify.IsModelDir(f.Dir) {
		return f, fmt.Errorf("fast classifier %q not found: no %s in %s; make a base with tools/make_fastcls.py --out DIR and train it with pageclass --train --fastcls --fastcls_base DIR (docs/pageclass.md, Fast classifier)",
			base, modelmeta.MetaFile, f.Dir)
	}
	meta, err := modelmeta.Load(f.Dir)
	if err != nil {
		return f, err
	}
	if !meta.IsFastCls() {
		return f, fmt.Errorf("%s is not the fast classifier: its base_architecture is %q, not %q (--fastcls runs only models made by tools/make_fastcls.py and trained with --fastcls)",
			f.Dir, meta.Base, modelmeta.FastClsBase)
	}
	return f, nil
}

// loadModels loads folders onto the run's device and records them.
func (r *models) loadModels(folders []classify.Folder) ([]*classify.Model, error) {
	ms, err := classify.LoadAllAs(folders, r.device, r.precision)
	if err != nil {
		return nil, err
	}
	var copies []string
	for i, m := range ms {
		if err := r.addModel(m); err != nil {
			classify.CloseAll(ms)
			return nil, err
		}
		if m.Demo && !folders[i].Demo {
			copies = append(copies, m.Dir)
		}
	}
	if len(copies) > 0 {
		// Given with -m (or found as ./model), yet the shipped demo models:
		// the results are labelled demo as the fallback's are.
		r.log.Warn("DEMO MODEL: these folders hold the shipped demo models (their digests are the demo models'): fine-tuned on the sample pages only, CC BY-NC 4.0, not the published weights; the outputs say demo: true",
			"folders", copies)
	}
	return ms, nil
}

// addModel records a loaded model in the run metadata, with the digest of
// the bytes it was loaded from.
func (r *models) addModel(m *classify.Model) error {
	// Set-up detail: the models and their folders are in the run metadata
	// (the demo models are also said by a warning).
	r.log.Debug("model loaded", "model", m.Name, "folder", m.Dir, "input", m.Size(), "device", r.device, "precision", m.Precision.String(), "demo", m.Demo)
	if err := r.digests.Loaded(m.Dir, m.Digest); err != nil {
		return err
	}
	return r.recordModel(m.Name, m.Dir, m.Meta, m.Demo)
}

// recordModel records a model (with its digest) in the run metadata; a demo
// model adds the demo weights' licence to the run's.
func (r *models) recordModel(name, dir string, meta *modelmeta.Meta, demo bool) error {
	digest, err := r.digests.Of(dir)
	if err != nil {
		return err
	}
	r.countModel(paradata.Model{Revision: name, Path: dir, Base: meta.Base, License: meta.License, Digest: digest, Demo: demo})
	r.lic.demo = r.lic.demo || demo
	return r.resolveLicence(r.lic.demo)
}

// countModel records a model the run used in the run metadata and counts
// its licence among the run's (resolveLicence).
func (r *runner) countModel(m paradata.Model) {
	r.para.AddModel(m)
	r.lic.models = append(r.lic.models, licence.Component{Name: "model " + m.Revision, License: m.License,
		When: []string{licence.Always}, Description: "weights of " + m.Path})
}

// readFolders reads each folder once (classify.Folder.Contents) and
// records its digest, that of those bytes, for runs that need the digests
// before the models load or load a model more than once: --parallel (the
// ledger, calibration and chunk key before the groups load) and --eval
// (each model alone, then in the ensemble). The models then load from the
// bytes digested, so a model.pt replaced meanwhile is neither read nor
// recorded.
func (r *models) readFolders(folders []classify.Folder) error {
	return r.digests.Read(folders)
}

// loadOrientation loads the page-orientation model of --rotation-model and
// records it in the run metadata; none given means pages are not checked
// for rotation, which is said and recorded too.
func (r *models) loadOrientation() (*classify.Orientation, error) {
	dir := r.cli.RotationModel
	if dir == "" {
		if r.cli.Given["rotation-model"] {
			r.log.Info("pages are not checked for rotation: no orientation model (--rotation-model)")
		} else {
			// Not turned off: the shipped model was looked for and is
			// missing, which the user did not ask for.
			r.log.Warn("pages are not checked for rotation: the shipped orientation model was not found",
				"looked_for", resources.RotationModel.Places(),
				"hint", "give --rotation-model DIR (or set "+resources.RotationModel.Env+"); --rotation-model \"\" turns the check off")
		}
		r.para.SetReview("rotation_model", nil)
		return nil, nil
	}
	// Named with its source: ARCHIVEKIT_ROTATION_MODEL names it when the
	// flag does not, and must name a model as the flag must.
	flag := r.cli.source("rotation-model")
	o, err := classify.LoadOrientationAs(dir, r.device, r.precision)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if err := r.digests.Loaded(dir, o.Digest); err != nil {
		o.Close()
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	digest := o.Digest
	r.log.Debug("orientation model loaded", "folder", dir, "input", o.Size(), "rotated_confidence", review.RotatedConfidence)
	r.para.SetReview("rotation_model", map[string]any{"path": dir, "digest": digest, "license": o.Meta.License,
		"rotated_confidence": review.RotatedConfidence})
	r.lic.models = append(r.lic.models, licence.Component{Name: "orientation model", License: o.Meta.License,
		When: []string{licence.Always}, Description: "weights of " + dir})
	if err := r.resolveLicence(r.lic.demo); err != nil {
		o.Close()
		return nil, err
	}
	return o, nil
}
