// Package resources finds the set-up files every command reads (the
// configuration, the licence components, the field list, the vocabulary) and
// the demo weights, whatever the working directory, for a checkout, an
// installed tree and a bare binary alike.
//
// A resource is looked up in this order; the first hit wins:
//
//  1. the command-line flag naming it (must exist: a missing file is an error);
//  2. its environment variable (must exist too);
//  3. the working directory, at the resource's name (setup/config.txt, ...),
//     which is where the spec's default relative paths point;
//  4. beside the executable: <bin>/<name>, then <bin>/../<name> (bin/ of a
//     checkout, so bin/pageclass finds setup/ and weights/ of its checkout);
//  5. the installed share folder <bin>/../share/archivekit/<name> (the tree of
//     make install and make dist);
//  6. the copy embedded in the binary (setup/ files only; the demo weights are
//     not embedded).
//
// Paths written inside a configuration file are resolved against that file's
// folder (Relative); for the embedded configuration, against the embedded
// setup folder, through steps 3 to 6.
package resources

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"archivekit/internal/regularfile"
	"archivekit/setup"
)

// ShareDir is the share folder of an installed tree, relative to its root
// (the parent of bin/).
const ShareDir = "share/archivekit"

// Resource is a file or folder a command reads to set itself up.
type Resource struct {
	// Name is its slash-separated path relative to a checkout or to the
	// share folder, e.g. "setup/config.txt".
	Name string
	// Env is the environment variable naming it ("" for none).
	Env string
	// Dir marks a folder (never embedded).
	Dir bool
}

// The resources of the two tools.
var (
	PageclassConfig     = Resource{Name: "setup/config.txt", Env: "PAGECLASS_CONFIG"}
	PageclassComponents = Resource{Name: "setup/para_config.txt", Env: "PAGECLASS_PARA_CONFIG"}
	TranslateConfig     = Resource{Name: "setup/translate/config.txt", Env: "TRANSLATE_CONFIG"}
	TranslateComponents = Resource{Name: "setup/translate/para_config.txt", Env: "TRANSLATE_PARA_CONFIG"}
	Fields              = Resource{Name: "setup/translate/amcr-fields.txt", Env: "AMCR_FIELDS_PATH"}
	Vocabulary          = Resource{Name: "setup/translate/vocabulary.csv", Env: "VOCABULARY_PATH"}
	DemoWeights         = Resource{Name: "weights/demo", Env: "ARCHIVEKIT_DEMO_WEIGHTS", Dir: true}
	RotationModel       = Resource{Name: "weights/rotation", Env: "ARCHIVEKIT_ROTATION_MODEL", Dir: true}
)

// Places says where a resource is looked for when no flag names it, for
// messages: its environment variable, then its name in the working
// directory, beside the executable and in the share folder.
func (r Resource) Places() string {
	p := r.Name + " in the working directory, beside the executable and in " + ShareDir
	if r.Env != "" {
		p = r.Env + ", " + p
	}
	return p
}

// Where a resource was found (File.From).
const (
	FromFlag       = "flag"
	FromEnv        = "environment"
	FromWorkDir    = "working directory"
	FromExecutable = "beside the executable"
	FromShare      = "share folder"
	FromConfig     = "config folder"
	FromEmbedded   = "embedded"
)

// ErrNotFound is returned (wrapped) when a resource is found nowhere.
var ErrNotFound = errors.New("not found")

// File is a resource found on disk or embedded.
type File struct {
	// Path is the file or folder on disk; for an embedded file it is
	// "embedded:" followed by the resource name.
	Path string
	// From says which step found it (FromFlag, ...).
	From string
	// Embedded is set for the copy built into the binary.
	Embedded bool
	name     string // embedded name, relative to the setup folder
}

// String names the file for messages.
func (f File) String() string { return f.Path }

// ReadFile returns the content of the file; a device, pipe or socket is
// refused (regularfile.Read) rather than read without end.
func (f File) ReadFile() ([]byte, error) {
	if f.Embedded {
		return fs.ReadFile(setup.FS, f.name)
	}
	return regularfile.Read(f.Path)
}

// Resolver finds resources. The zero value uses os.Getenv, os.Executable
// and the working directory.
type Resolver struct {
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Executable is the path of the running binary; "" means
	// os.Executable() with symbolic links resolved.
	Executable string
	// NoWorkDir skips step 3 (the working directory).
	NoWorkDir bool
	// NoEmbedded skips step 6 (tests of the on-disk steps).
	NoEmbedded bool
}

// Default is the resolver of the running process.
var Default = &Resolver{}

func (r *Resolver) getenv(k string) string {
	if r == nil || r.Getenv == nil {
		return os.Getenv(k)
	}
	return r.Getenv(k)
}

// exeDir is the folder of the running binary, "" when unknown.
func (r *Resolver) exeDir() string {
	exe := ""
	if r != nil {
		exe = r.Executable
	}
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return ""
		}
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return filepath.Dir(exe)
}

// candidates are steps 3 to 5 for a slash-separated name.
func (r *Resolver) candidates(name string) []File {
	rel := filepath.FromSlash(name)
	var out []File
	if r == nil || !r.NoWorkDir {
		out = append(out, File{Path: rel, From: FromWorkDir})
	}
	if d := r.exeDir(); d != "" {
		out = append(out,
			File{Path: filepath.Join(d, rel), From: FromExecutable},
			File{Path: filepath.Join(filepath.Dir(d), rel), From: FromExecutable},
			File{Path: filepath.Join(filepath.Dir(d), filepath.FromSlash(ShareDir), rel), From: FromShare})
	}
	return out
}

// exists reports whether p exists as a file (dir false) or folder (dir true).
func exists(p string, dir bool) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir() == dir
}

// check returns an error naming the file when p is missing or of the wrong
// kind.
func check(p string, dir bool, via string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return fmt.Errorf("%s (%s): %w", p, via, err)
	case dir && !st.IsDir():
		return fmt.Errorf("%s (%s): not a folder", p, via)
	case !dir && st.IsDir():
		return fmt.Errorf("%s (%s): is a folder, want a file", p, via)
	}
	return nil
}

// Find looks res up; explicit is the value of its flag ("" when not given).
// A flag or environment value that names nothing is an error; a resource
// found nowhere is an error wrapping ErrNotFound.
func (r *Resolver) Find(res Resource, explicit string) (File, error) {
	if explicit != "" {
		if err := check(explicit, res.Dir, "flag"); err != nil {
			return File{}, err
		}
		return File{Path: explicit, From: FromFlag}, nil
	}
	if res.Env != "" {
		if v := strings.TrimSpace(r.getenv(res.Env)); v != "" {
			if err := check(v, res.Dir, res.Env); err != nil {
				return File{}, err
			}
			return File{Path: v, From: FromEnv + " " + res.Env}, nil
		}
	}
	return r.findName(res.Name, res.Dir)
}

// findName is steps 3 to 6 for a name.
func (r *Resolver) findName(name string, dir bool) (File, error) {
	for _, c := range r.candidates(name) {
		if exists(c.Path, dir) {
			return c, nil
		}
	}
	if !dir && (r == nil || !r.NoEmbedded) {
		if inner, ok := strings.CutPrefix(name, "setup/"); ok {
			if st, err := fs.Stat(setup.FS, inner); err == nil && !st.IsDir() {
				return File{Path: "embedded:" + name, From: FromEmbedded, Embedded: true, name: inner}, nil
			}
		}
	}
	return File{}, fmt.Errorf("%s: %w (looked in the working directory, beside the executable and in %s)", name, ErrNotFound, ShareDir)
}

// Relative resolves p, a path written inside the configuration file cfg:
// an absolute p is taken as it is; a relative one is joined to the folder
// of cfg. Inside the embedded configuration, p names a set-up file looked up
// like any resource (working directory, executable, share folder,
// embedded). The result must exist (else an error wrapping fs.ErrNotExist
// or ErrNotFound, naming the file and the configuration).
func (r *Resolver) Relative(cfg File, p string, dir bool) (File, error) {
	if filepath.IsAbs(p) {
		if err := check(p, dir, "in "+cfg.Path); err != nil {
			return File{}, err
		}
		return File{Path: p, From: FromConfig}, nil
	}
	if cfg.Embedded {
		name := path.Join(path.Dir("setup/"+cfg.name), filepath.ToSlash(p))
		f, err := r.findName(name, dir)
		if err != nil {
			return File{}, fmt.Errorf("%s (written in %s): %w", p, cfg.Path, err)
		}
		return f, nil
	}
	full := filepath.Join(filepath.Dir(cfg.Path), p)
	if err := check(full, dir, "written in "+cfg.Path); err != nil {
		return File{}, err
	}
	return File{Path: full, From: FromConfig}, nil
}

// RelativePath is Relative without the existence check, for paths a
// command creates (an output folder) or checks itself: p joined to the
// folder of an on-disk cfg; unchanged when p is absolute or cfg is
// embedded (relative to the working directory).
func RelativePath(cfg File, p string) string {
	if p == "" || filepath.IsAbs(p) || cfg.Embedded || cfg.Path == "" {
		return p
	}
	return filepath.Join(filepath.Dir(cfg.Path), p)
}

// Beside finds res as a companion of the configuration file cfg: its
// environment variable first, then the file of the same base name in cfg's
// folder (setup/para_config.txt beside setup/config.txt), then steps 3 to 6.
func (r *Resolver) Beside(cfg File, res Resource) (File, error) {
	if res.Env != "" {
		if v := strings.TrimSpace(r.getenv(res.Env)); v != "" {
			return r.Find(res, "")
		}
	}
	if !cfg.Embedded && cfg.Path != "" {
		p := filepath.Join(filepath.Dir(cfg.Path), path.Base(res.Name))
		if exists(p, res.Dir) {
			return File{Path: p, From: FromConfig}, nil
		}
	}
	return r.findName(res.Name, res.Dir)
}
