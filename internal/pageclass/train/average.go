package train

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"archivekit/bindings/torch"
	"archivekit/internal/pageclass/modelmeta"
)

// Matches reports whether a model folder name is selected by an average
// pattern. The rule: the name equals the pattern, or starts with the
// pattern followed by '.', '_' or '-'. So "v4" selects "v4.4_FOLD_1" and
// "v4_FOLD_2" but not "v40_FOLD_1" or "xv4.4"; "v4.4_FOLD" selects every
// fold of v4.4. Folders made by an earlier average ("..._AVG_k") are never
// selected.
func Matches(name, pattern string) bool {
	if pattern == "" || strings.Contains(name, "_AVG_") {
		return false
	}
	if name == pattern {
		return true
	}
	if !strings.HasPrefix(name, pattern) {
		return false
	}
	switch name[len(pattern)] {
	case '.', '_', '-':
		return true
	}
	return false
}

// AverageName is the folder name of the mean of n models selected by pattern.
func AverageName(pattern string, n int) string { return fmt.Sprintf("%s_AVG_%d", pattern, n) }

// Average writes the element-wise mean of the models in dir whose folder
// names match pattern (see Matches), and returns the new model folder and how
// many models were averaged. The models must share architecture, labels and
// preprocessing; otherwise it is an error naming the odd one out.
func Average(dir, pattern string) (string, int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", 0, err
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() && Matches(e.Name(), pattern) {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), modelmeta.MetaFile)); err == nil {
				names = append(names, e.Name())
			}
		}
	}
	sort.Strings(names)
	if len(names) < 2 {
		return "", 0, fmt.Errorf("%s: pattern %q selects %d model folder(s) (%s); averaging needs at least 2",
			dir, pattern, len(names), strings.Join(names, ", "))
	}
	var metas []*modelmeta.Meta
	var mods []*torch.Module
	defer func() {
		for _, m := range mods {
			m.Close()
		}
	}()
	for _, n := range names {
		p := filepath.Join(dir, n)
		meta, err := modelmeta.Load(p)
		if err != nil {
			return "", 0, err
		}
		if len(metas) > 0 {
			if err := sameKind(metas[0], meta); err != nil {
				return "", 0, fmt.Errorf("cannot average %s with %s: %w", n, names[0], err)
			}
		}
		m, err := torch.Load(filepath.Join(p, modelmeta.WeightsFile), "cpu")
		if err != nil {
			return "", 0, err
		}
		metas = append(metas, meta)
		mods = append(mods, m)
	}
	avg, err := torch.Average(mods...)
	if err != nil {
		return "", 0, fmt.Errorf("cannot average %s: %w (the architectures differ)", strings.Join(names, ", "), err)
	}
	defer avg.Close()
	meta := *metas[0]
	meta.Provenance = modelmeta.Provenance{
		Method:       "average",
		Command:      strings.Join(os.Args, " "),
		Source:       dir,
		AveragedFrom: names,
		Created:      time.Now().UTC().Format(time.RFC3339),
		Notes:        fmt.Sprintf("element-wise mean of parameters and floating buffers of %d models", len(names)),
	}
	out := filepath.Join(dir, AverageName(pattern, len(names)))
	if err := saveModel(avg, out, &meta); err != nil {
		return "", 0, err
	}
	return out, len(names), nil
}

func sameKind(a, b *modelmeta.Meta) error {
	switch {
	case a.Base != b.Base:
		return fmt.Errorf("base architectures differ (%s vs %s)", a.Base, b.Base)
	case strings.Join(a.Labels, ",") != strings.Join(b.Labels, ","):
		return fmt.Errorf("labels differ")
	case a.Preprocess != b.Preprocess:
		return fmt.Errorf("preprocessing differs (%+v vs %+v)", a.Preprocess, b.Preprocess)
	}
	return nil
}
