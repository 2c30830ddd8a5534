package resources

import (
	"archivekit/internal/regularfile"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree lays out an installed tree under root and returns the resolver of
// its bin/pageclass, with an empty working directory and no environment.
func tree(t *testing.T, env map[string]string) (string, *Resolver) {
	t.Helper()
	root := t.TempDir()
	write(t, filepath.Join(root, "bin", "pageclass"), "#!")
	t.Chdir(t.TempDir())
	return root, &Resolver{Executable: filepath.Join(root, "bin", "pageclass"), Getenv: func(k string) string { return env[k] }}
}

func TestFindOrder(t *testing.T) {
	embedded, err := os.ReadFile(filepath.Join("..", "..", "setup", "config.txt"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		files    []string // relative to the tree root; "wd:" prefix: working directory
		env      string   // PAGECLASS_CONFIG value, relative to the root
		flag     string
		wantFrom string
		wantPath string // relative to the root ("" for embedded)
	}{
		{name: "embedded when nothing on disk", wantFrom: FromEmbedded},
		{name: "share folder", files: []string{"share/archivekit/setup/config.txt"}, wantFrom: FromShare, wantPath: "share/archivekit/setup/config.txt"},
		{name: "checkout beside bin beats share", files: []string{"setup/config.txt", "share/archivekit/setup/config.txt"}, wantFrom: FromExecutable, wantPath: "setup/config.txt"},
		{name: "bin folder itself", files: []string{"bin/setup/config.txt", "setup/config.txt"}, wantFrom: FromExecutable, wantPath: "bin/setup/config.txt"},
		{name: "working directory beats the executable", files: []string{"wd:setup/config.txt", "setup/config.txt"}, wantFrom: FromWorkDir},
		{name: "environment beats all", files: []string{"wd:setup/config.txt", "mine.txt"}, env: "mine.txt", wantFrom: FromEnv + " PAGECLASS_CONFIG", wantPath: "mine.txt"},
		{name: "flag beats environment", files: []string{"mine.txt", "flag.txt"}, env: "mine.txt", flag: "flag.txt", wantFrom: FromFlag, wantPath: "flag.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{}
			root, r := tree(t, env)
			wd, _ := os.Getwd()
			for _, f := range c.files {
				if rel, ok := strings.CutPrefix(f, "wd:"); ok {
					write(t, filepath.Join(wd, rel), "x")
				} else {
					write(t, filepath.Join(root, f), "x")
				}
			}
			if c.env != "" {
				env["PAGECLASS_CONFIG"] = filepath.Join(root, c.env)
			}
			flag := ""
			if c.flag != "" {
				flag = filepath.Join(root, c.flag)
			}
			got, err := r.Find(PageclassConfig, flag)
			if err != nil {
				t.Fatal(err)
			}
			if got.From != c.wantFrom {
				t.Errorf("From = %q, want %q (path %s)", got.From, c.wantFrom, got.Path)
			}
			if c.wantPath != "" && got.Path != filepath.Join(root, c.wantPath) {
				t.Errorf("Path = %s, want %s", got.Path, filepath.Join(root, c.wantPath))
			}
			data, err := got.ReadFile()
			if err != nil {
				t.Fatal(err)
			}
			if c.wantFrom == FromEmbedded && string(data) != string(embedded) {
				t.Error("embedded config differs from setup/config.txt")
			}
		})
	}
}

func TestFindErrors(t *testing.T) {
	env := map[string]string{}
	root, r := tree(t, env)
	if _, err := r.Find(PageclassConfig, filepath.Join(root, "missing.txt")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing flag file: %v", err)
	}
	env["PAGECLASS_CONFIG"] = filepath.Join(root, "gone.txt")
	if _, err := r.Find(PageclassConfig, ""); err == nil || !strings.Contains(err.Error(), "PAGECLASS_CONFIG") {
		t.Errorf("missing env file: %v", err)
	}
	// The demo weights are a folder and never embedded.
	if _, err := r.Find(DemoWeights, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("demo weights absent: %v", err)
	}
	write(t, filepath.Join(root, "share/archivekit/weights/demo/model_v14/model.json"), "{}")
	got, err := r.Find(DemoWeights, "")
	if err != nil || got.Path != filepath.Join(root, "share/archivekit/weights/demo") {
		t.Errorf("demo weights in share: %+v, %v", got, err)
	}
	if _, err := r.Find(DemoWeights, filepath.Join(root, "bin", "pageclass")); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("a file as the demo folder: %v", err)
	}
	r.NoEmbedded = true
	if _, err := r.Find(Fields, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("no embedded fields: %v", err)
	}
}

func TestRelative(t *testing.T) {
	env := map[string]string{}
	root, r := tree(t, env)
	write(t, filepath.Join(root, "conf", "translate.txt"), "fields = lists/f.txt")
	write(t, filepath.Join(root, "conf", "lists", "f.txt"), "//a:b")
	cfg, err := r.Find(TranslateConfig, filepath.Join(root, "conf", "translate.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Relative(cfg, filepath.Join("lists", "f.txt"), false)
	if err != nil || got.Path != filepath.Join(root, "conf", "lists", "f.txt") {
		t.Errorf("relative to the config folder: %+v, %v", got, err)
	}
	if _, err := r.Relative(cfg, "nothere.txt", false); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "translate.txt") {
		t.Errorf("missing relative file: %v", err)
	}
	if p := RelativePath(cfg, "out"); p != filepath.Join(root, "conf", "out") {
		t.Errorf("RelativePath = %s", p)
	}

	// The embedded config's amcr-fields.txt is the embedded field list.
	emb, err := r.Find(TranslateConfig, "")
	if err != nil || !emb.Embedded {
		t.Fatalf("embedded translate config: %+v, %v", emb, err)
	}
	f, err := r.Relative(emb, "amcr-fields.txt", false)
	if err != nil || !f.Embedded || f.Path != "embedded:setup/translate/amcr-fields.txt" {
		t.Fatalf("fields of the embedded config: %+v, %v", f, err)
	}
	data, err := f.ReadFile()
	if err != nil || !strings.Contains(string(data), "//arch:amcr") {
		t.Errorf("embedded fields: %q, %v", data, err)
	}
	if p := RelativePath(emb, "out"); p != "out" {
		t.Errorf("RelativePath of the embedded config = %s, want out", p)
	}
}

func TestEveryShippedSetupFileIsEmbedded(t *testing.T) {
	for _, res := range []Resource{PageclassConfig, PageclassComponents, TranslateConfig, TranslateComponents, Fields} {
		want, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(res.Name)))
		if err != nil {
			t.Fatal(err)
		}
		r := &Resolver{NoWorkDir: true, Executable: filepath.Join(t.TempDir(), "x")}
		f, err := r.Find(res, "")
		if err != nil || !f.Embedded {
			t.Fatalf("%s: %+v, %v", res.Name, f, err)
		}
		got, _ := f.ReadFile()
		if string(got) != string(want) {
			t.Errorf("%s: embedded copy differs", res.Name)
		}
	}
}

// A resource that resolves to a pipe is refused, not read without end.
func TestReadFileRefusesPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fields.txt")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := (File{Path: fifo}).ReadFile(); !errors.Is(err, regularfile.ErrNotRegular) {
		t.Fatalf("ReadFile(pipe) = %v, want ErrNotRegular", err)
	}
}

// Places names the environment variable and the folders looked in, in the
// order Find looks.
func TestPlaces(t *testing.T) {
	want := "ARCHIVEKIT_ROTATION_MODEL, weights/rotation in the working directory, beside the executable and in share/archivekit"
	if got := RotationModel.Places(); got != want {
		t.Errorf("Places() = %q, want %q", got, want)
	}
	if got := (Resource{Name: "x.txt"}).Places(); strings.Contains(got, ", x.txt") || !strings.HasPrefix(got, "x.txt in") {
		t.Errorf("no variable: %q", got)
	}
}
