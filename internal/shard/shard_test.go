package shard

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Spec
		err  bool
	}{
		{"", Spec{}, false},
		{"0/1", Spec{0, 1}, false},
		{"3/4", Spec{3, 4}, false},
		{" 1 / 2 ", Spec{1, 2}, false},
		{"4/4", Spec{}, true},
		{"-1/4", Spec{}, true},
		{"1/0", Spec{}, true},
		{"1", Spec{}, true},
		{"a/b", Spec{}, true},
		{"1/2/3", Spec{}, true},
	} {
		got, err := Parse(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("Parse(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.err)
		}
	}
}

// keys are 10,000 inputs laid out as an archive would be: books of pages.
func keys() []string {
	var ks []string
	for b := 0; b < 100; b++ {
		for p := 1; p <= 100; p++ {
			ks = append(ks, fmt.Sprintf("book%03d/%04d.alto.xml", b, p))
		}
	}
	return ks
}

// Every input lands in exactly one shard, for every n, and the shares do
// not depend on the order the inputs are listed in.
func TestCoverExactlyOnce(t *testing.T) {
	ks := keys()
	for n := 1; n <= 9; n++ {
		owner := map[string]int{}
		for i := 0; i < n; i++ {
			s := Spec{i, n}
			shuffled := append([]string(nil), ks...)
			rand.New(rand.NewSource(int64(i))).Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
			for _, k := range shuffled {
				if s.Has(k) {
					if prev, ok := owner[k]; ok {
						t.Fatalf("n=%d: %s in shards %d and %d", n, k, prev, i)
					}
					owner[k] = i
				}
			}
		}
		if len(owner) != len(ks) {
			t.Fatalf("n=%d: %d of %d inputs covered", n, len(owner), len(ks))
		}
	}
}

// The shares are even enough to be worth spreading: within 5% of 1/n for
// 10,000 inputs (the hash is fixed, so these counts are too).
func TestBalance(t *testing.T) {
	ks := keys()
	for _, n := range []int{2, 4, 8} {
		for i := 0; i < n; i++ {
			got := 0
			for _, k := range ks {
				if (Spec{i, n}).Has(k) {
					got++
				}
			}
			want := len(ks) / n
			if got < want*95/100 || got > want*105/100 {
				t.Errorf("shard %d/%d holds %d of %d inputs, want about %d", i, n, got, len(ks), want)
			}
		}
	}
}

func TestKey(t *testing.T) {
	root := filepath.Join("mnt", "archive")
	for _, c := range []struct{ path, want string }{
		{filepath.Join(root, "book1", "0001.xml"), "book1/0001.xml"},
		{filepath.Join(root, "0001.xml"), "0001.xml"},
		{filepath.Join("elsewhere", "x.xml"), "elsewhere/x.xml"},
	} {
		if got := Key(root, c.path); got != c.want {
			t.Errorf("Key(%q, %q) = %q, want %q", root, c.path, got, c.want)
		}
	}
	// Two machines mounting the archive at different places agree.
	a, b := Key("/mnt/a", "/mnt/a/book/1.xml"), Key("/data/input", "/data/input/book/1.xml")
	if a != b {
		t.Errorf("keys differ across mount points: %q, %q", a, b)
	}
}

// TestWholeAndFileSuffix: no --shard and --shard 0/1 are the whole run, whose
// files have no shard suffix; any other share adds _shard-<i>-of-<n>. If it
// failed, a run with --shard 0/1 would write its tables as
// "..._shard-0-of-1.csv", files a user looking for the run's tables does not
// find, and that a merge then wants merged.
func TestWholeAndFileSuffix(t *testing.T) {
	for _, c := range []struct {
		spec   Spec
		whole  bool
		str    string
		suffix string
	}{
		{Spec{}, true, "", ""},
		{Spec{0, 1}, true, "0/1", ""},
		{Spec{0, 2}, false, "0/2", "_shard-0-of-2"},
		{Spec{2, 3}, false, "2/3", "_shard-2-of-3"},
	} {
		if c.spec.Whole() != c.whole || c.spec.String() != c.str || c.spec.FileSuffix() != c.suffix {
			t.Errorf("%#v: Whole %v String %q FileSuffix %q, want %v %q %q", c.spec, c.spec.Whole(), c.spec.String(), c.spec.FileSuffix(), c.whole, c.str, c.suffix)
		}
	}
}
