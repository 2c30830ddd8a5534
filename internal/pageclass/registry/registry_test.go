package registry

import (
	"testing"
)

func TestEnsembleDistinctBases(t *testing.T) {
	seen := map[string]string{}
	ms := EnsembleModels()
	if len(ms) != 5 {
		t.Fatalf("%d ensemble models", len(ms))
	}
	for _, m := range ms {
		if prev, dup := seen[m.Base]; dup {
			t.Errorf("%s and %s share base %s", prev, m.Revision, m.Base)
		}
		seen[m.Base] = m.Revision
	}
}

func TestEnsembleTable(t *testing.T) {
	tests := []struct {
		rev   string
		base  string
		fold  int
		res   int
		bytes int64
		mean  [3]float64
	}{
		{"v1.4", "efficientnetv2_m", 1, 384, 211489788, HalfMean},
		{"v2.4", "vit-base-patch16-224", 5, 224, 343228460, HalfMean},
		{"v3.4", "vit-base-patch16-384", 2, 384, 344395820, HalfMean},
		{"v4.4", "regnety_160", 1, 384, 322393660, ImageNetMean},
		{"v5.4", "vit-large-patch16-384", 2, 384, 1214808108, HalfMean},
	}
	var total int64
	for i, tc := range tests {
		m, ok := Lookup(tc.rev)
		if !ok || m.Revision != Ensemble[i] {
			t.Fatalf("Lookup(%s) = %+v, %v", tc.rev, m, ok)
		}
		if m.Base != tc.base || m.Fold != tc.fold || m.Resolution != tc.res || m.ParamBytes != tc.bytes {
			t.Errorf("%s = %+v", tc.rev, m)
		}
		p := m.Preprocess
		if p.Size != tc.res || p.Resize != ResizeBilinear || p.Mean != tc.mean {
			t.Errorf("%s preprocessing %+v", tc.rev, p)
		}
		total += m.ParamBytes
	}
	// spec 8: the five models weigh about 2.44 GB.
	if total < 2_435_000_000 || total > 2_445_000_000 {
		t.Errorf("total parameter bytes %d", total)
	}
}

func TestLookupNamespaces(t *testing.T) {
	tests := []struct {
		rev  string
		ns   Namespace
		base string
	}{
		{"v1.3", Published, "efficientnetv2_m"},
		{"v4.3", Published, "regnety_160"}, // collides with sweep v4.: published wins
		{"v4.1", Sweep, "efficientnetv2_l"},
		{"v4.3.1", Sweep, "efficientnetv2_l"},
		{"v7.3.1", Sweep, "regnety_160"},
		{"v12.3.1", Sweep, "efficientnetv2_m"},
		{"v6.0", Sweep, "regnety_120"},
		{"v8.2", Sweep, "regnety_640"},
		{"v10.1", Sweep, "dit"},
		{"v5.3", Published, "vit-large-patch16-384"},
	}
	for _, tc := range tests {
		m, ok := Lookup(tc.rev)
		if !ok || m.Namespace != tc.ns || m.Base != tc.base {
			t.Errorf("Lookup(%q) = %+v, %v; want %s %s", tc.rev, m, ok, tc.ns, tc.base)
		}
	}
	for _, bad := range []string{"v1.2", "v3.9", "v13.1", "main", "v4", "4.4", ""} {
		if m, ok := Lookup(bad); ok {
			t.Errorf("Lookup(%q) = %+v, want not found", bad, m)
		}
	}
}

func TestFoldColumns(t *testing.T) {
	tests := []struct{ explicit, rev, want string }{
		{"", "v1.4", "fold 1"}, {"", "v2.4", "fold 5"}, {"", "v3.4", "fold 2"},
		{"", "v4.4", "fold 1"}, {"", "v5.4", "fold 2"}, {"fold 3", "v2.4", "fold 3"}, {"fold 4", "v9.1", "fold 4"},
	}
	for _, tc := range tests {
		got, err := ResolveFoldColumn(tc.explicit, tc.rev)
		if err != nil || got != tc.want {
			t.Errorf("ResolveFoldColumn(%q, %q) = %q, %v", tc.explicit, tc.rev, got, err)
		}
	}
	if _, err := ResolveFoldColumn("", "v4.3"); err == nil {
		t.Error("v4.3 has no recorded fold; want an error")
	}
}

func TestCheckRevision(t *testing.T) {
	for _, ok := range []string{"main", "v1.0", "v4.4", "v12.3", "v10.0"} {
		if err := CheckRevision(ok); err != nil {
			t.Errorf("CheckRevision(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "Main", "v4", "4.4", "v4.4.1", "v4.x", "latest", " v4.4", "v-1.0"} {
		if err := CheckRevision(bad); err == nil {
			t.Errorf("CheckRevision(%q) accepted", bad)
		}
	}
	if got := ModelDirName("v4.4"); got != "model_v44" {
		t.Errorf("ModelDirName = %q", got)
	}
	if !IsEnsemble("v3.4") || IsEnsemble("v3.3") {
		t.Error("IsEnsemble")
	}
}

// TestGeneration: another generation of an ensemble family (the original
// tool's v4.3) names the ensemble's revision; an ensemble revision or no
// family's names none.
func TestGeneration(t *testing.T) {
	for rev, want := range map[string]string{"v4.3": "v4.4", "v1.2": "v1.4", "v4.4": "", "v9.3": "", "4.3": "", "v4": ""} {
		if got := Generation(rev); got != want {
			t.Errorf("Generation(%q) = %q, want %q", rev, got, want)
		}
	}
}
