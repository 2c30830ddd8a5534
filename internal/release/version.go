// Package release holds the release gate of the project: the check that every
// place carrying the project's version agrees (spec page-classification 9,
// translation 9 and 4.1 check_version.py).
//
// The sources are the git tag of the checked-out commit (when it has one),
// CITATION.cff, the [tool] version key of both licence-config files and, when
// the file exists, the top-level VERSION file. A leading "v" is ignored
// everywhere, so "1.2.0-beta" equals "v1.2.0-beta".
package release

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"archivekit/internal/config"
	"archivekit/internal/licence"
)

// Files carrying the version, relative to the repository root.
const (
	CitationFile       = "CITATION.cff"
	VersionFile        = "VERSION"
	ClassifierParaFile = "setup/para_config.txt"
	TranslatorParaFile = "setup/translate/para_config.txt"
	ToolSection        = licence.ToolSection
	ToolVersionKey     = "version"
)

// Source is one place that states the version.
type Source struct {
	// Name says where the value was read, e.g. "git tag v1.2.0" or
	// "CITATION.cff".
	Name string
	// Value is the version as written there.
	Value string
}

// Normalise strips white space and one leading "v" or "V".
func Normalise(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > 0 && (v[0] == 'v' || v[0] == 'V') {
		v = v[1:]
	}
	return v
}

// Compare checks that every source states the same version. The first source
// is the reference; the result has one line per source that differs from it,
// in source order. An empty result means the versions agree.
func Compare(sources []Source) []string {
	if len(sources) < 2 {
		return nil
	}
	ref := sources[0]
	var out []string
	for _, s := range sources[1:] {
		if Normalise(s.Value) != Normalise(ref.Value) {
			out = append(out, fmt.Sprintf("version mismatch: %s says %q but %s says %q", s.Name, s.Value, ref.Name, ref.Value))
		}
	}
	return out
}

// CitationVersion reads the top-level "version:" key of a CITATION.cff file
// (YAML; the value may be quoted).
func CitationVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for line := 1; sc.Scan(); line++ {
		t := sc.Text()
		if !strings.HasPrefix(t, "version:") { // top level only: no indentation
			continue
		}
		v := strings.TrimSpace(strings.TrimPrefix(t, "version:"))
		if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		if v == "" {
			return "", fmt.Errorf("%s:%d: empty version", path, line)
		}
		return v, nil
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return "", fmt.Errorf("%s: no top-level version key", path)
}

// ToolVersion reads the [tool] version key of a licence-config file.
func ToolVersion(path string) (string, error) {
	f, err := config.Load(path)
	if err != nil {
		return "", err
	}
	v, ok := f.Get(ToolSection, ToolVersionKey)
	if !ok || strings.TrimSpace(v) == "" {
		return "", fmt.Errorf("%s: no [%s] %s key", path, ToolSection, ToolVersionKey)
	}
	return strings.TrimSpace(v), nil
}

// PlainVersion reads a file holding only the version (the VERSION file).
func PlainVersion(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(b))
	if v == "" || strings.ContainsAny(v, " \t\n") {
		return "", fmt.Errorf("%s: want one version and nothing else, have %q", path, v)
	}
	return v, nil
}

// IsVersionTag reports whether a git tag names a release: "v" or a digit
// first, then a digit (v1.2.0, 1.2.0-beta).
func IsVersionTag(tag string) bool {
	t := strings.TrimPrefix(tag, "v")
	return t != "" && t[0] >= '0' && t[0] <= '9'
}

// HeadTags lists the version tags pointing at HEAD of the repository at
// root, sorted. A directory that is not a git work tree has none.
func HeadTags(root string) ([]string, error) {
	cmd := exec.Command("git", "-C", root, "tag", "--points-at", "HEAD")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if strings.Contains(stderr.String(), "not a git repository") {
			return nil, nil
		}
		return nil, fmt.Errorf("git tag --points-at HEAD in %s: %v: %s", root, err, strings.TrimSpace(stderr.String()))
	}
	var tags []string
	for _, t := range strings.Fields(string(out)) {
		if IsVersionTag(t) {
			tags = append(tags, t)
		}
	}
	sort.Strings(tags)
	return tags, nil
}

// Sources gathers the version sources of the repository at root: the version
// tags at HEAD first (so they are the reference), then CITATION.cff, the two
// licence-config files and VERSION when it exists. A missing or unreadable
// required file is an error naming it; all such errors are returned joined.
func Sources(root string) ([]Source, error) {
	var srcs []Source
	tags, err := HeadTags(root)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		srcs = append(srcs, Source{Name: "git tag " + t, Value: t})
	}
	var errs []error
	add := func(rel string, read func(string) (string, error), name string) {
		v, err := read(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			errs = append(errs, err)
			return
		}
		srcs = append(srcs, Source{Name: name, Value: v})
	}
	add(CitationFile, CitationVersion, CitationFile)
	add(ClassifierParaFile, ToolVersion, ClassifierParaFile+" [tool] version")
	add(TranslatorParaFile, ToolVersion, TranslatorParaFile+" [tool] version")
	if _, err := os.Stat(filepath.Join(root, VersionFile)); err == nil {
		add(VersionFile, PlainVersion, VersionFile)
	} else if !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	return srcs, errors.Join(errs...)
}

// RepoRoot returns the top of the git work tree containing dir, or dir itself
// when it is not in one.
func RepoRoot(dir string) string {
	out, err := exec.Command("git", "-C", dir, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return dir
	}
	return strings.TrimSpace(string(out))
}
