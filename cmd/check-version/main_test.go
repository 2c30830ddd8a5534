package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a git repository whose CITATION.cff, licence-config files and
// (when version is not empty) VERSION file state the given versions, and
// commits them.
func repo(t *testing.T, citation, classifier, translator, version string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("CITATION.cff", "cff-version: 1.2.0\ntitle: x\nauthors:\n  - name: a\n    version: 9.9.9\nversion: \""+citation+"\"\n")
	write("setup/para_config.txt", "[tool]\nname = pageclass\nversion = "+classifier+"\n\n[vit_models]\nlicense = MIT\ncounts_when = always\n")
	write("setup/translate/para_config.txt", "# c\n[tool]\nversion = "+translator+"\n")
	if version != "" {
		write("VERSION", version+"\n")
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", ".")
	git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "init")
	return dir
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestCheckVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	cases := []struct {
		name              string
		cit, cls, tr, ver string
		tags              []string
		wantRC            int
		wantLines         int      // error lines on stderr
		wantIn            []string // substrings of the output
	}{
		{name: "tag and files agree", cit: "1.2.0", cls: "1.2.0", tr: "v1.2.0", tags: []string{"v1.2.0"}, wantIn: []string{"version 1.2.0 agrees in 4 sources (reference: git tag v1.2.0)"}},
		{name: "beta with and without v", cit: "v1.2.0-beta", cls: "1.2.0-beta", tr: "1.2.0-beta", tags: []string{"1.2.0-beta"}, wantIn: []string{"version 1.2.0-beta agrees"}},
		{name: "tag differs from every file", cit: "1.2.0", cls: "1.2.0", tr: "1.2.0", tags: []string{"v1.3.0"}, wantRC: 1, wantLines: 3,
			wantIn: []string{`CITATION.cff says "1.2.0" but git tag v1.3.0 says "v1.3.0"`, `setup/translate/para_config.txt [tool] version says "1.2.0"`}},
		{name: "one file differs from the tag", cit: "1.3.0", cls: "1.2.0", tr: "1.3.0", tags: []string{"v1.3.0"}, wantRC: 1, wantLines: 1,
			wantIn: []string{`setup/para_config.txt [tool] version says "1.2.0"`}},
		{name: "no tag compares the files", cit: "1.2.0", cls: "1.2.0", tr: "1.2.1", wantRC: 1, wantLines: 1,
			wantIn: []string{`setup/translate/para_config.txt [tool] version says "1.2.1" but CITATION.cff says "1.2.0"`}},
		{name: "no tag, files agree", cit: "1.2.0", cls: "v1.2.0", tr: "1.2.0", wantIn: []string{"agrees in 3 sources (reference: CITATION.cff)"}},
		{name: "a tag that is not a version is ignored", cit: "1.2.0", cls: "1.2.0", tr: "1.2.0", tags: []string{"test", "release-candidate"}, wantIn: []string{"agrees in 3 sources"}},
		{name: "VERSION file is a source", cit: "1.2.0", cls: "1.2.0", tr: "1.2.0", ver: "1.2.2", tags: []string{"v1.2.0"}, wantRC: 1, wantLines: 1,
			wantIn: []string{`VERSION says "1.2.2" but git tag v1.2.0 says "v1.2.0"`}},
		{name: "VERSION agrees", cit: "1.2.0", cls: "1.2.0", tr: "1.2.0", ver: "v1.2.0", tags: []string{"v1.2.0"}, wantIn: []string{"agrees in 5 sources"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := repo(t, c.cit, c.cls, c.tr, c.ver)
			for _, tag := range c.tags {
				git(t, dir, "tag", tag)
			}
			sub := filepath.Join(dir, "setup", "translate") // any directory inside the repository
			var out, errb bytes.Buffer
			rc := run(sub, nil, &out, &errb)
			if rc != c.wantRC {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", rc, c.wantRC, out.String(), errb.String())
			}
			if n := strings.Count(errb.String(), "\n"); n != c.wantLines {
				t.Errorf("%d error lines, want %d:\n%s", n, c.wantLines, errb.String())
			}
			all := out.String() + errb.String()
			for _, w := range c.wantIn {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
		})
	}
}

func TestMissingSourceIsAnError(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := repo(t, "1.0.0", "1.0.0", "1.0.0", "")
	if err := os.WriteFile(filepath.Join(dir, "setup", "translate", "para_config.txt"), []byte("[mtapi_engine]\nlicense = MIT\ncounts_when = mtapi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "CITATION.cff")); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if rc := run(dir, nil, &out, &errb); rc != 1 {
		t.Fatalf("exit %d, want 1", rc)
	}
	for _, w := range []string{"CITATION.cff", "setup/translate/para_config.txt: no [tool] version key"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, errb.String())
		}
	}
}

// TestThisRepository runs the gate on the project itself: the shipped files
// must agree (the tag, if the checkout has one, too).
func TestThisRepository(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run(".", nil, &out, &errb); rc != 0 {
		t.Fatalf("the repository's versions disagree (exit %d):\n%s%s", rc, out.String(), errb.String())
	}
}

func TestExtraArgument(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := run(t.TempDir(), []string{"extra"}, &out, &errb); rc != 1 || !strings.Contains(errb.String(), "takes no arguments") {
		t.Errorf("extra argument: exit %d, stderr %q", rc, errb.String())
	}
}

// TestOutsideGit compares the files of a directory that is no git work tree
// (an unpacked source archive).
func TestOutsideGit(t *testing.T) {
	dir := t.TempDir()
	for rel, s := range map[string]string{
		"CITATION.cff":                    "version: 2.0.0\n",
		"setup/para_config.txt":           "[tool]\nversion = 2.0.0\n",
		"setup/translate/para_config.txt": "[tool]\nversion = 2.0.1\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if rc := run(dir, nil, &out, &errb); rc != 1 || !strings.Contains(errb.String(), `says "2.0.1" but CITATION.cff says "2.0.0"`) {
		t.Errorf("exit %d, stderr %q", rc, errb.String())
	}
}
