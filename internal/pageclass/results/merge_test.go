package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMerge(t *testing.T) {
	dir := t.TempDir()
	file := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	a := file("a.csv", "FILE,PAGE,CLASS-1\nb,2,TEXT\nb,10,DRAW\n")
	b := file("b.csv", "FILE,PAGE,CLASS-1\na,,PHOTO\nb,3,LINE_T\n")
	other := file("c.csv", "FILE,PAGE,CLASS-1,SCORE-1\nz,,TEXT,0.5\n")
	dup := file("d.csv", "FILE,PAGE,CLASS-1\nb,10,TEXT\n")
	notTable := file("e.csv", "X,Y\n1,2\n")
	for _, c := range []struct {
		name string
		ins  []string
		want string
		err  string
	}{
		{"sorted as one run", []string{a, b}, "FILE,PAGE,CLASS-1\na,,PHOTO\nb,2,TEXT\nb,3,LINE_T\nb,10,DRAW\n", ""},
		{"other columns", []string{a, other}, "", "different columns"},
		{"a row twice", []string{a, dup}, "", "the shards overlap"},
		{"not a result table", []string{notTable}, "", "not a result table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Merge(c.ins)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out.csv")
			if err := m.Write(out); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(out); string(got) != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}
