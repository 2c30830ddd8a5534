package licence

import (
	"archivekit/internal/resources"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// translatorComponents declares the components of translation spec 10.3 in
// the file format of this package.
const translatorComponents = `
[langid_model]
license = CC BY-NC 4.0
counts_when = detection
[mtapi]
license = CC BY-NC-SA 4.0
counts_when = mtapi
[lemmatiser_engine]
license = MPL 2.0
counts_when = lemma
[lemmatiser_models]
license = CC BY-NC-SA 4.0
counts_when = lemma
[records_vocabulary]
license = CC BY-NC 4.0
counts_when = vocabulary
[thesaurus]
license = CC BY-NC 4.0
counts_when = thesaurus
[chat_provider]
license = provider terms of service
counts_when = chat_compatible
[ct2_runtime]
license = MIT
counts_when = ct2
[llm_nmt1_models]
license = Apache-2.0
counts_when = ct2_llm, ct2_nmt1
[nmt3_model]
license = CC BY 4.0
counts_when = ct2_nmt3
[nmt2_model]
license = CC BY-NC 4.0
counts_when = ct2_nmt2
`

func shippedClassifier(t *testing.T) *Components {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	c, err := LoadComponents(filepath.Join(filepath.Dir(file), "..", "..", "setup", "para_config.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolve(t *testing.T) {
	cls := shippedClassifier(t)
	tr, err := ParseComponents("translator.txt", strings.NewReader(translatorComponents))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		comps        *Components
		conditions   []string
		extra        []string // names added to Counting's result (undeclared ones)
		want         string
		determinedBy []string
		nc, sa, cl   bool
		warnings     int
	}{
		{"inference", cls, nil, nil, "MIT", []string{"vit_models"}, false, false, false, 0},
		{"evaluation", cls, []string{"eval"}, nil, "MIT", []string{"vit_models"}, false, false, false, 0},
		{"training", cls, []string{"training"}, nil, "CC BY-NC 4.0", []string{"training_dataset"}, true, false, false, 0},
		{"fast classifier", cls, []string{"fastcls"}, nil, "AGPL-3.0", []string{"fastcls_library"}, false, false, true, 0},
		{"fast classifier training", cls, []string{"fastcls", "training"}, nil, "CC BY-NC 4.0", []string{"training_dataset"}, true, false, true, 1},
		{"demo models", cls, []string{"demo"}, nil, "CC BY-NC 4.0", []string{"demo_weights"}, true, false, false, 0},
		{"demo models training", cls, []string{"demo", "training"}, nil, "CC BY-NC 4.0", []string{"training_dataset", "demo_weights"}, true, false, false, 0},
		{"undeclared component", cls, nil, []string{"mystery_weights"}, "UNKNOWN", []string{"mystery_weights"}, true, true, true, 1},
		{"translator default", tr, []string{"detection", "mtapi", "lemma", "vocabulary", "thesaurus"}, nil, "CC BY-NC-SA 4.0", []string{"mtapi", "lemmatiser_models"}, true, true, true, 0},
		{"translator chat provider", tr, []string{"chat_compatible", "mtapi"}, nil, "provider terms of service", []string{"chat_provider"}, true, true, true, 1},
		{"translator permissive recipe", tr, []string{"ct2", "ct2_nmt3"}, nil, "CC BY 4.0", []string{"nmt3_model"}, false, false, false, 0},
		{"translator llm", tr, []string{"ct2", "ct2_llm"}, nil, "Apache-2.0", []string{"llm_nmt1_models"}, false, false, false, 0},
		{"translator nmt2", tr, []string{"ct2", "ct2_nmt2"}, nil, "CC BY-NC 4.0", []string{"nmt2_model"}, true, false, false, 0},
		{"nothing counted", tr, nil, nil, "UNKNOWN", []string{}, true, true, true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			names := append(tc.comps.Counting(tc.conditions...), tc.extra...)
			r := tc.comps.Resolve(names...)
			if r.EffectiveLicense != tc.want {
				t.Errorf("effective licence %q, want %q (components %v)", r.EffectiveLicense, tc.want, names)
			}
			if !reflect.DeepEqual(r.DeterminedBy, tc.determinedBy) {
				t.Errorf("determined by %v, want %v", r.DeterminedBy, tc.determinedBy)
			}
			if r.IsNonCommercial != tc.nc || r.IsShareAlike != tc.sa || r.IsCopyleft != tc.cl {
				t.Errorf("flags nc=%v sa=%v copyleft=%v, want %v %v %v", r.IsNonCommercial, r.IsShareAlike, r.IsCopyleft, tc.nc, tc.sa, tc.cl)
			}
			if len(r.Warnings) != tc.warnings {
				t.Errorf("warnings %q, want %d", r.Warnings, tc.warnings)
			}
			if len(r.Components) != len(names) {
				t.Errorf("derivation lists %d components, want %d", len(r.Components), len(names))
			}
		})
	}
}

func TestUnknownRanksAboveEverything(t *testing.T) {
	unknown, ok := Lookup("provider terms of service")
	if ok {
		t.Fatal("free text recognised as a licence")
	}
	for _, l := range Table() {
		if l.Rank >= unknown.Rank {
			t.Errorf("%s rank %d not below unknown rank %d", l.ID, l.Rank, unknown.Rank)
		}
	}
	nc, _ := Lookup("CC BY-NC 4.0")
	agpl, _ := Lookup("AGPL-3.0")
	if nc.Rank <= agpl.Rank {
		t.Errorf("CC BY-NC 4.0 rank %d must exceed AGPL-3.0 rank %d", nc.Rank, agpl.Rank)
	}
}

func TestLookupSpellings(t *testing.T) {
	tests := map[string]string{
		"MIT": "MIT", "mit": "MIT", "Apache 2.0": "Apache-2.0", "apache-2.0": "Apache-2.0",
		"CC-BY-NC-4.0": "CC BY-NC 4.0", "cc_by_nc_4.0": "CC BY-NC 4.0", "CC BY-NC-SA 4.0": "CC BY-NC-SA 4.0",
		"MPL 2.0": "MPL-2.0", "AGPL-3.0-only": "AGPL-3.0", "GPL-3.0-or-later": "GPL-3.0", "CC BY 4.0": "CC BY 4.0",
	}
	for in, want := range tests {
		l, ok := Lookup(in)
		if !ok || l.ID != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", in, l.ID, ok, want)
		}
	}
	for _, bad := range []string{"", "CC BY 4.0 (older versions Apache-2.0)", "CC BY-NC-ND 4.0", "proprietary"} {
		if l, ok := Lookup(bad); ok || l.Rank != RankUnknown || !l.NonCommercial || !l.ShareAlike {
			t.Errorf("Lookup(%q) = %+v, %v; want unknown with both flags", bad, l, ok)
		}
	}
}

func TestResolutionJSONShape(t *testing.T) {
	r := shippedClassifier(t).Resolve("vit_models")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	for _, k := range []string{"effective_license", "effective_license_url", "is_non_commercial", "is_share_alike", "determined_by", "components", "unknown_licenses", "notes"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	comp := m["components"].([]any)[0].(map[string]any)
	if comp["name"] != "vit_models" || comp["license"] != "MIT" || comp["rank"] != 1.0 || comp["license_url"] != "https://opensource.org/license/mit/" {
		t.Errorf("component entry %v", comp)
	}
}

func TestParseComponentsErrors(t *testing.T) {
	tests := map[string]string{
		"[a]\ncounts_when = always\n":   "missing key license",
		"[a]\nlicense = MIT\n":          "missing key counts_when",
		"license = MIT\n":               "outside any section",
		"[a]\nlicense=MIT\nLICENSE=x\n": "duplicate key",
	}
	for in, want := range tests {
		_, err := ParseComponents("p.txt", strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "p.txt") {
			t.Errorf("ParseComponents(%q) error %v, want one naming p.txt and %q", in, err, want)
		}
	}
}

// A component added at run time (a model's own licence) counts like a
// declared one.
func TestAddComponent(t *testing.T) {
	cls := shippedClassifier(t)
	cls.Add(Component{Name: "model v4.4", License: "CC BY-NC 4.0", When: []string{Always}})
	r := cls.Resolve(append(cls.Counting(), "model v4.4")...)
	if r.EffectiveLicense != "CC BY-NC 4.0" || !reflect.DeepEqual(r.DeterminedBy, []string{"model v4.4"}) || len(r.Warnings) != 0 ||
		r.EffectiveLicenseURL == "" {
		t.Errorf("resolution %+v", r)
	}
}

// ReadComponents reads what internal/resources finds, on disk or embedded, and
// names the file in its errors.
func TestReadComponents(t *testing.T) {
	for _, name := range []resources.Resource{resources.PageclassComponents, resources.TranslateComponents} {
		f, err := resources.Default.Find(name, "")
		if err != nil {
			t.Fatal(err)
		}
		c, err := ReadComponents(f)
		if err != nil || len(c.All()) == 0 {
			t.Errorf("%s: %v, %d components", f, err, len(c.All()))
		}
	}
	bad := filepath.Join(t.TempDir(), "para_config.txt")
	os.WriteFile(bad, []byte("[x\n"), 0o644)
	if _, err := ReadComponents(resources.File{Path: bad}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("broken file: %v, want an error naming it", err)
	}
}
