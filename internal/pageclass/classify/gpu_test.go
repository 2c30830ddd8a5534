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

// TestBatchForMemory sizes batches from injected free-memory figures.
func TestBatchForMemory(t *testing.T) {
	const MB = 1 << 20
	in384, in224 := classify.InputBytes([]int{384}), classify.InputBytes([]int{224})
	if want := int64(2 * 3 * 384 * 384 * 4); in384 != want {
		t.Fatalf("InputBytes(384) = %d, want %d", in384, want)
	}
	if got, want := classify.InputBytes([]int{384, 384, 224}), 3*in384/2+in224; got != want {
		t.Fatalf("InputBytes(384, 384, 224) = %d, want %d (one resized page a size, one normalised copy a model)", got, want)
	}
	tests := []struct {
		name       string
		budget     int64
		per        []int64
		input      int64
		lanes      int
		concurrent bool
		most       int
		want       int
	}{
		{"one model", 1000 * MB, []int64{9 * MB}, 1 * MB, 1, false, 1000, 100},
		{"two lanes halve it", 1000 * MB, []int64{9 * MB}, 1 * MB, 2, false, 1000, 50},
		{"in turn: the largest counts", 1000 * MB, []int64{9 * MB, 4 * MB}, 1 * MB, 1, false, 1000, 100},
		{"at once: the sum counts", 1000 * MB, []int64{9 * MB, 4 * MB}, 1 * MB, 1, true, 1000, 71},
		{"capped", 80000 * MB, []int64{9 * MB}, 1 * MB, 2, true, 128, 128},
		{"too little: one page", 5 * MB, []int64{9 * MB}, 1 * MB, 2, true, 128, 1},
		{"no budget left", -3, []int64{9 * MB}, 1 * MB, 2, true, 128, 1},
	}
	for _, tt := range tests {
		if got := classify.BatchForMemory(tt.budget, tt.per, tt.input, tt.lanes, tt.concurrent, tt.most); got != tt.want {
			t.Errorf("%s: BatchForMemory = %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestGroupBatches sizes each --parallel group's batch from a profile with
// injected figures (an 80 GB card's free memory) and keeps the configured
// batch (nil) for a profile measured before the weights were recorded.
func TestGroupBatches(t *testing.T) {
	const MB = 1 << 20
	names := []string{"small", "vitl"}
	sizes := []int{224, 384}
	p := &classify.GPUProfile{GPU: "H100", TotalBytes: 80 << 30, Batch: 16,
		// weights + 16 pages' forward pass: 16 MB + 16·2 MB, 1200 MB + 16·60 MB
		Models: map[string]int64{"small": 48 * MB, "vitl": 2160 * MB},
		Params: map[string]int64{"small": 16 * MB, "vitl": 1200 * MB}}
	per, ok := p.PerPage(names)
	if !ok || per[0] != 2*MB || per[1] != 60*MB {
		t.Fatalf("PerPage = %v, %v; want [2 MB, 60 MB]", per, ok)
	}
	groups := [][]int{{0}, {1}}
	got := p.GroupBatches(names, sizes, groups, 4000*MB)
	page := func(act int64, size int) int64 { return 2 * (act + classify.InputBytes([]int{size})) }
	// the small model's batch capped (632 would fit), the ViT-L's 22
	want := []int{classify.MaxGPUBatch, int((4000*MB - 1200*MB) / page(60*MB, 384))}
	if (4000*MB-16*MB)/page(2*MB, 224) <= classify.MaxGPUBatch || want[1] != 22 || !reflect.DeepEqual(got, want) {
		t.Fatalf("GroupBatches = %v, want %v", got, want)
	}
	if got := p.GroupBatches(names, sizes, [][]int{{0, 1}}, 80000*MB); !reflect.DeepEqual(got, []int{classify.MaxGPUBatch}) {
		t.Fatalf("GroupBatches on the whole card = %v, want [%d]", got, classify.MaxGPUBatch)
	}
	old := *p
	old.Params = nil
	if got := old.GroupBatches(names, sizes, groups, 4000*MB); got != nil {
		t.Fatalf("GroupBatches without Params = %v, want nil", got)
	}
	path := filepath.Join(t.TempDir(), classify.GPUProfileName)
	if err := p.Save(path); err != nil {
		t.Fatal(err)
	}
	if back, err := classify.LoadGPUProfile(path); err != nil || !reflect.DeepEqual(back.Params, p.Params) {
		t.Fatalf("Params read back %v, %v", back, err)
	}
}

// TestSequentialBatch sizes a plain GPU run's batch (the models resident
// together, run one after another) from injected profile figures.
func TestSequentialBatch(t *testing.T) {
	const MB = 1 << 20
	// weights + 16 pages' forward pass: 16 MB + 16·2 MB, 1200 MB + 16·60 MB,
	// 300 MB + 16·20 MB
	p := &classify.GPUProfile{GPU: "H100", TotalBytes: 80 << 30, Batch: 16,
		Models: map[string]int64{"small": 48 * MB, "vitl": 2160 * MB, "cnn": 620 * MB},
		Params: map[string]int64{"small": 16 * MB, "vitl": 1200 * MB, "cnn": 300 * MB}}
	// the two lanes' pages: the inputs of both sizes, and the ViT-L's 60 MB
	// (the larger forward pass; the models do not run at once)
	both := 2 * (60*MB + classify.InputBytes([]int{224, 384}))
	tests := []struct {
		name   string
		names  []string
		sizes  []int
		budget int64
		want   int
	}{
		{"small and ViT-L in 4 GB", []string{"small", "vitl"}, []int{224, 384}, 4000 * MB, 21},
		{"formula", []string{"small", "vitl"}, []int{224, 384}, 4000 * MB, int((4000*MB - 16*MB - 1200*MB) / both)},
		{"the largest forward pass, not the sum", []string{"vitl", "cnn"}, []int{384, 384}, 6000 * MB,
			int((6000*MB - 1500*MB) / (2 * (60*MB + classify.InputBytes([]int{384, 384}))))},
		{"whole card: capped", []string{"small", "vitl", "cnn"}, []int{224, 384, 384}, 80000 * MB, classify.MaxGPUBatch},
		{"weights fill the budget: one page", []string{"small", "vitl"}, []int{224, 384}, 1000 * MB, 1},
		{"small model alone", []string{"small"}, []int{224}, 400 * MB, int((400*MB - 16*MB) / (2 * (2*MB + classify.InputBytes([]int{224}))))},
		{"model not in the profile", []string{"small", "other"}, []int{224, 224}, 4000 * MB, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.SequentialBatch(tt.names, tt.sizes, tt.budget); got != tt.want {
				t.Fatalf("SequentialBatch = %d, want %d", got, tt.want)
			}
		})
	}
	// One after another needs less than the same models at once.
	names, sizes := []string{"vitl", "cnn"}, []int{384, 384}
	seq, conc := p.SequentialBatch(names, sizes, 6000*MB), p.GroupBatches(names, sizes, [][]int{{0, 1}}, 6000*MB)[0]
	if seq <= conc {
		t.Fatalf("SequentialBatch %d, GroupBatches (at once) %d: one after another should fit more pages", seq, conc)
	}
	old := *p
	old.Params = nil
	if got := old.SequentialBatch([]string{"small"}, []int{224}, 4000*MB); got != 0 {
		t.Fatalf("SequentialBatch without Params = %d, want 0 (keep the configured batch)", got)
	}
}

// TestProfileName keys a folder found for a revision by it and a model
// folder given by path by its folder's name.
func TestProfileName(t *testing.T) {
	for _, tt := range []struct {
		f    classify.Folder
		want string
	}{
		{classify.Folder{Revision: "v4.4", Dir: "/m/model_v44"}, "v4.4"},
		{classify.Folder{Dir: "/data/models/lite0/"}, "lite0"},
	} {
		if got := tt.f.ProfileName(); got != tt.want {
			t.Errorf("ProfileName(%+v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}
