package classify_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"archivekit/internal/pageclass/classify"
	"archivekit/internal/pageclass/hub"
)

// hubClient is a hub that is never reached: the locator refuses before.
var hubClient = hub.Client{Endpoint: "http://127.0.0.1:1", Home: "unused"}

func TestGroupByMemory(t *testing.T) {
	const MB = 1 << 20
	// The ensemble's measured needs on a 24 GB and an 8 GB card and a tiny one.
	ens := []int64{900 * MB, 1400 * MB, 1400 * MB, 1300 * MB, 4800 * MB}
	tests := []struct {
		name   string
		need   []int64
		budget int64
		want   [][]int
	}{
		{"everything fits", ens, 20000 * MB, [][]int{{0, 1, 2, 3, 4}}},
		{"large model alone", ens, 5000 * MB, [][]int{{0, 1, 2, 3}, {4}}},
		{"two groups and the large one", ens, 3000 * MB, [][]int{{0, 3}, {1, 2}, {4}}},
		{"too small for one", ens, 1000 * MB, [][]int{{0}, {1}, {2}, {3}, {4}}},
		{"exact fit", []int64{5, 5, 10}, 10, [][]int{{0, 1}, {2}}},
		{"none", nil, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify.GroupByMemory(tt.need, tt.budget)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			seen := map[int]bool{}
			for _, g := range got {
				sum := int64(0)
				for _, i := range g {
					if seen[i] {
						t.Fatalf("model %d in two groups", i)
					}
					seen[i] = true
					sum += tt.need[i]
				}
				if sum > tt.budget && len(g) > 1 {
					t.Fatalf("group %v needs %d > budget %d", g, sum, tt.budget)
				}
			}
			if len(seen) != len(tt.need) {
				t.Fatalf("%d of %d models grouped", len(seen), len(tt.need))
			}
		})
	}
}

func TestGPUProfileRefresh(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model", classify.GPUProfileName)
	p, err := classify.LoadGPUProfile(path)
	if err != nil || p != nil {
		t.Fatalf("missing profile: %v, %v", p, err)
	}
	names := []string{"v1.4", "v2.4"}
	if p.Matches("A100", 40<<30, 16, names) {
		t.Fatal("nil profile matches")
	}
	saved := &classify.GPUProfile{GPU: "A100", TotalBytes: 40 << 30, Batch: 16, Models: map[string]int64{"v1.4": 1, "v2.4": 2}}
	if err := saved.Save(path); err != nil {
		t.Fatal(err)
	}
	p, err = classify.LoadGPUProfile(path)
	if err != nil || !reflect.DeepEqual(p, saved) {
		t.Fatalf("read back %+v, %v", p, err)
	}
	tests := []struct {
		name  string
		gpu   string
		total uint64
		batch int
		names []string
		want  bool
	}{
		{"same", "A100", 40 << 30, 16, names, true},
		{"other gpu", "T4", 40 << 30, 16, names, false},
		{"other memory", "A100", 80 << 30, 16, names, false},
		{"other batch", "A100", 40 << 30, 32, names, false},
		{"new model", "A100", 40 << 30, 16, []string{"v1.4", "v3.4"}, false},
	}
	for _, tt := range tests {
		if got := p.Matches(tt.gpu, tt.total, tt.batch, tt.names); got != tt.want {
			t.Errorf("%s: Matches = %v, want %v", tt.name, got, tt.want)
		}
	}
}
