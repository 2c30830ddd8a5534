// Package registry is the one table of model revisions of the page
// classifier (spec page-classification 2.6 and 9). It drives --best, the
// --parallel memory grouping, version=all, --fold_column resolution and the
// revision syntax check.
//
// Two revision namespaces share the table:
//   - published numbering "vN.M": N names the base model (1 efficientnetv2_m,
//     2 vit-base-224, 3 vit-base-384, 4 regnety_160, 5 vit-large-384) and M
//     the generation; v*.4 is the canonical ensemble, v*.3 the generation
//     before it;
//   - sweep numbering from the accuracy table, one major number per
//     candidate base model: v4. efficientnetv2_L, v6. regnety_120, v7.
//     regnety_160, v8. regnety_640, v9./v10./v11. the DiT family, v12.
//     efficientnetv2_M (for example "v12.3.1").
//
// Lookup tries the exact published key first and only then the sweep major
// number, so "v4.3" is the published regnety_160 model, not the sweep's
// efficientnetv2_L, and "v1.3" is the published efficientnetv2_m model.
package registry

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Namespace tells which numbering a revision belongs to.
type Namespace string

// The two revision namespaces.
const (
	Published Namespace = "published"
	Sweep     Namespace = "sweep"
)

// Resize rules of Preprocess.
const (
	// ResizeBilinear is a plain bilinear resize to Size x Size, no crop and
	// no aspect-preserving padding.
	ResizeBilinear = "bilinear"
)

// Normalisation constants used by the base models.
var (
	// HalfMean and HalfStd are the mean/std of the ViTs and EfficientNetV2.
	HalfMean = [3]float64{0.5, 0.5, 0.5}
	HalfStd  = [3]float64{0.5, 0.5, 0.5}
	// ImageNetMean and ImageNetStd are used by RegNetY.
	ImageNetMean = [3]float64{0.485, 0.456, 0.406}
	ImageNetStd  = [3]float64{0.229, 0.224, 0.225}
)

// Preprocess is how a page image becomes the model's input tensor: resize
// to Size x Size with Resize, scale to [0,1], then (x - Mean) / Std per
// RGB channel.
type Preprocess struct {
	Size   int        `json:"size"`
	Resize string     `json:"resize"`
	Mean   [3]float64 `json:"mean"`
	Std    [3]float64 `json:"std"`
}

// Model is one row of the registry.
type Model struct {
	// Revision is the key, e.g. "v1.4", or a sweep major prefix like "v7.".
	Revision  string
	Namespace Namespace
	// Base is the base architecture, e.g. "efficientnetv2_m".
	Base string
	// BaseDetail says how the base was pre-trained, when known.
	BaseDetail string
	// Fold is the cross-validation fold the published weights came from
	// (split N = column "fold N" = seed 420 + N - 1); 0 when not recorded.
	Fold int
	// Resolution is the input side in pixels; 0 when not recorded.
	Resolution int
	// ParamBytes is the size of the parameters in bytes; 0 when not recorded.
	ParamBytes int64
	// Preprocess is the original preprocessing; zero when not recorded.
	Preprocess Preprocess
}

// Ensemble lists the five canonical revisions, in column order.
var Ensemble = []string{"v1.4", "v2.4", "v3.4", "v4.4", "v5.4"}

type base struct {
	name, detail string
	res          int
	mean, std    [3]float64
}

var bases = map[int]base{
	1: {"efficientnetv2_m", "pre-trained on the larger set, fine-tuned on the 1k set", 384, HalfMean, HalfStd},
	2: {"vit-base-patch16-224", "", 224, HalfMean, HalfStd},
	3: {"vit-base-patch16-384", "", 384, HalfMean, HalfStd},
	4: {"regnety_160", "swag pre-trained, fine-tuned on the 1k set", 384, ImageNetMean, ImageNetStd},
	5: {"vit-large-patch16-384", "", 384, HalfMean, HalfStd},
}

var published = func() map[string]Model {
	m := map[string]Model{}
	gen4 := map[int]struct {
		fold  int
		bytes int64
	}{1: {1, 211489788}, 2: {5, 343228460}, 3: {2, 344395820}, 4: {1, 322393660}, 5: {2, 1214808108}}
	for n := 1; n <= 5; n++ {
		b := bases[n]
		for _, gen := range []int{3, 4} {
			mod := Model{
				Revision: fmt.Sprintf("v%d.%d", n, gen), Namespace: Published,
				Base: b.name, BaseDetail: b.detail, Resolution: b.res,
				Preprocess: Preprocess{Size: b.res, Resize: ResizeBilinear, Mean: b.mean, Std: b.std},
			}
			if gen == 4 {
				mod.Fold, mod.ParamBytes = gen4[n].fold, gen4[n].bytes
			}
			m[mod.Revision] = mod
		}
	}
	return m
}()

var sweep = map[int]Model{
	4:  {Revision: "v4.", Namespace: Sweep, Base: "efficientnetv2_l"},
	6:  {Revision: "v6.", Namespace: Sweep, Base: "regnety_120"},
	7:  {Revision: "v7.", Namespace: Sweep, Base: "regnety_160"},
	8:  {Revision: "v8.", Namespace: Sweep, Base: "regnety_640"},
	9:  {Revision: "v9.", Namespace: Sweep, Base: "dit", BaseDetail: "DiT family"},
	10: {Revision: "v10.", Namespace: Sweep, Base: "dit", BaseDetail: "DiT family"},
	11: {Revision: "v11.", Namespace: Sweep, Base: "dit", BaseDetail: "DiT family"},
	12: {Revision: "v12.", Namespace: Sweep, Base: "efficientnetv2_m"},
}

var sweepKey = regexp.MustCompile(`^v(\d+)\.\d+(\.\d+)*$`)

// Lookup resolves a revision: an exact published key first, then the sweep
// namespace by major number. The returned Model's Revision is the key that
// matched (the sweep prefix for sweep revisions).
func Lookup(rev string) (Model, bool) {
	if m, ok := published[rev]; ok {
		return m, true
	}
	if g := sweepKey.FindStringSubmatch(rev); g != nil {
		n, _ := strconv.Atoi(g[1])
		if m, ok := sweep[n]; ok {
			return m, true
		}
	}
	return Model{}, false
}

// EnsembleModels returns the five canonical models in Ensemble order.
func EnsembleModels() []Model {
	out := make([]Model, len(Ensemble))
	for i, r := range Ensemble {
		out[i] = published[r]
	}
	return out
}

// GenerationNote is what a refusal of rev adds when rev is another
// generation of an ensemble family: " (the ensemble's model of this family
// is v4.4)" for "v4.3"; "" otherwise (Generation).
func GenerationNote(rev string) string {
	if g := Generation(rev); g != "" {
		return " (the ensemble's model of this family is " + g + ")"
	}
	return ""
}

// Generation names the ensemble revision of rev's model family when rev is
// another generation of it ("v4.4" for the original tool's "v4.3"), or ""
// (rev is an ensemble revision itself, or no family's).
func Generation(rev string) string {
	if IsEnsemble(rev) || len(rev) < 4 || rev[0] != 'v' || rev[2] != '.' {
		return ""
	}
	for _, e := range Ensemble {
		if e[:2] == rev[:2] {
			return e
		}
	}
	return ""
}

// IsEnsemble reports whether rev is one of the five canonical revisions.
func IsEnsemble(rev string) bool {
	for _, r := range Ensemble {
		if r == rev {
			return true
		}
	}
	return false
}

// BestFold returns the fold whose weights were published for rev (the
// best-fold table); ok is false when the registry does not record one.
func BestFold(rev string) (fold int, ok bool) {
	m, found := published[rev]
	if !found || m.Fold == 0 {
		return 0, false
	}
	return m.Fold, true
}

// FoldColumn is the --fold_column value for fold n: "fold n".
func FoldColumn(n int) string { return fmt.Sprintf("fold %d", n) }

// ResolveFoldColumn returns the explicit column when given, else the
// best-fold column of rev, else an error naming the revision.
func ResolveFoldColumn(explicit, rev string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	if n, ok := BestFold(rev); ok {
		return FoldColumn(n), nil
	}
	return "", fmt.Errorf("no best fold recorded for revision %q; give --fold_column", rev)
}

var revSyntax = regexp.MustCompile(`^v[0-9]+\.[0-9]+$`)

// CheckRevision accepts the command-line revision forms "main", "vN.0" and
// "vN.M" (N and M decimal numbers).
func CheckRevision(rev string) error {
	if rev == "main" || revSyntax.MatchString(rev) {
		return nil
	}
	return fmt.Errorf("revision %q: want main, vN.0 or vN.M (for example v4.4)", rev)
}

// ModelDirName is the default model folder name of a revision:
// "model_" + the revision without dots (v4.4 -> model_v44).
func ModelDirName(rev string) string {
	return "model_" + strings.ReplaceAll(rev, ".", "")
}
