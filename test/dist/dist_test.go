// Package dist tests the relocatable tree of `make dist` as a new user would
// meet it: unpacked into a temporary folder, moved, run by an unprivileged
// user from another directory, with no build cache, checkout or Go toolchain
// reachable (the cache and the checkout live under /root, which that user
// cannot enter). `make test` builds the tarball and names it in
// ARCHIVEKIT_DIST_TARBALL.
package dist

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"archivekit/internal/service/servicetest"
	"archivekit/internal/translate/translator/translatortest"

	"archivekit/internal/testenv"
)

// nobody is the unprivileged account the tree runs as when the test runs as
// root.
const nobody = 65534

// tree unpacks the tarball, moves the tree to another folder (it must not
// depend on where it was unpacked) and returns the tree and a writable
// working folder outside it.
func tree(t *testing.T) (root, work string) {
	t.Helper()
	tarball := os.Getenv("ARCHIVEKIT_DIST_TARBALL")
	if tarball == "" {
		t.Skip("ARCHIVEKIT_DIST_TARBALL is not set: `make test` builds the tarball with `make dist` and sets it")
	}
	base := t.TempDir()
	unpack := filepath.Join(base, "unpacked")
	if err := os.MkdirAll(unpack, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tar", "--zstd", "-xf", tarball, "-C", unpack).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	entries, err := os.ReadDir(unpack)
	if err != nil || len(entries) != 1 || !entries[0].IsDir() {
		t.Fatalf("the tarball must hold one top folder: %v %v", entries, err)
	}
	want := strings.TrimSuffix(filepath.Base(tarball), ".tar.zst")
	if entries[0].Name() != want {
		t.Errorf("top folder %q, want %q (the tarball's name)", entries[0].Name(), want)
	}
	root = filepath.Join(base, "opt", "somewhere-else")
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(unpack, entries[0].Name()), root); err != nil {
		t.Fatal(err)
	}
	work = filepath.Join(base, "home", "user")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	// The test's temporary folders are private to root: open the path.
	for d := base; d != filepath.Dir(d) && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if os.Getuid() == 0 {
		if err := os.Chown(work, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	return root, work
}

// command runs in work as the unprivileged user with a bare environment:
// no LD_LIBRARY_PATH, no ARCHIVEKIT_* variables, HOME in work.
func command(root, work, name string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(root, "bin", name), args...)
	cmd.Dir = work
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + work, "LOG_FORMAT=json"}, env...)
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	return cmd
}

func run(t *testing.T, cmd *exec.Cmd) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.ProcessState == nil {
		t.Fatalf("%s did not start: %v", cmd.Path, err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// copyIn copies a sample file into work, readable by the user. Missing
// sample data skips the test only when ARCHIVEKIT_SHARED is unset; make test
// sets it (and builds its fixtures from the same folder), so there a missing
// file is a failure, not a silent pass.
func copyIn(t *testing.T, src, work string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		if os.Getenv("ARCHIVEKIT_SHARED") != "" {
			t.Fatalf("sample data missing under ARCHIVEKIT_SHARED: %v", err)
		}
		t.Skipf("sample data missing: %v", err)
	}
	dst := filepath.Join(work, filepath.Base(src))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// toolVersion finds the run metadata (the JSON file with tool_version) in
// dir and returns its tool_version.
func toolVersion(t *testing.T, dir string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil {
			if v, ok := m["tool_version"].(string); ok {
				return v
			}
		}
	}
	t.Fatalf("no run metadata with tool_version in %s (%v)", dir, files)
	return ""
}

// shared is rel ("data/...") under the shared folder (testenv.Data:
// $ARCHIVEKIT_SHARED, else found above the package).
func shared(t *testing.T, rel string) string {
	t.Helper()
	return testenv.Data(t, strings.TrimPrefix(rel, "data/"))
}

func TestTarballRunsAnywhere(t *testing.T) {
	root, work := tree(t)
	vb, err := os.ReadFile(filepath.Join(root, "share", "archivekit", "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(vb))

	t.Run("every command reports the version", func(t *testing.T) {
		cmds, err := os.ReadDir(filepath.Join(root, "bin"))
		if err != nil || len(cmds) < 7 {
			t.Fatalf("bin/ holds %d commands (%v), want every command", len(cmds), err)
		}
		for _, c := range cmds {
			name := c.Name()
			code, out := run(t, command(root, work, name, nil, "--version"))
			if code != 0 || !strings.HasPrefix(strings.TrimSpace(out), name+" "+version+" ") {
				t.Errorf("%s --version: exit %d, %q; want %q", name, code, out, name+" "+version)
			}
		}
	})

	t.Run("no command or library searches for libraries outside the tree", func(t *testing.T) {
		// The libtorch wheel's libraries searched $ORIGIN/../../nvidia/...
		// first: from lib/, the folder the tarball was unpacked into, where
		// another user of /tmp could plant a libcudart.so.12 that ran in
		// every pageclass.
		var seen int
		for _, dir := range []string{"bin", "lib"} {
			files, err := os.ReadDir(filepath.Join(root, dir))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range files {
				f, err := elf.Open(filepath.Join(root, dir, e.Name()))
				if err != nil {
					continue // not ELF
				}
				seen++
				for _, tag := range []elf.DynTag{elf.DT_RPATH, elf.DT_RUNPATH} {
					paths, _ := f.DynString(tag)
					for _, p := range paths {
						for _, entry := range filepath.SplitList(p) {
							local := strings.Replace(entry, "$ORIGIN", filepath.Join(root, dir), 1)
							if rel, err := filepath.Rel(root, filepath.Clean(local)); !strings.HasPrefix(entry, "$ORIGIN") || err != nil || strings.HasPrefix(rel, "..") {
								t.Errorf("%s/%s: %s entry %q is outside the tree", dir, e.Name(), tag, entry)
							}
						}
					}
				}
				f.Close()
			}
		}
		if seen < 10 {
			t.Errorf("%d ELF files in bin/ and lib/, want the commands and libraries", seen)
		}
	})

	t.Run("the tree ships the licence, the notice and the licence texts", func(t *testing.T) {
		doc := filepath.Join(root, "share", "doc", "archivekit")
		var notice string
		for _, name := range []string{"LICENSE", "THIRD_PARTY_NOTICES.md"} {
			want, _ := shippedAsChecked(t, doc, name)
			notice = string(want)
		}
		// Each Go module (versions start with v) and crate the notice lists,
		// and the parts built from bundled sources, have their licence files.
		dirs := []string{"go/std", "torch", "gomp", "c/CTranslate2", "c/CTranslate2/ruy", "c/sentencepiece", "c/oniguruma"}
		for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([^ |]+) \\|").FindAllStringSubmatch(notice, -1) {
			if strings.HasPrefix(m[2], "v") {
				dirs = append(dirs, "go/"+m[1]+"@"+m[2])
			} else {
				dirs = append(dirs, "rust/"+m[1]+"-"+m[2])
			}
		}
		if len(dirs) < 50 {
			t.Errorf("the notice lists %d modules and crates; want them all", len(dirs)-7)
		}
		for _, d := range dirs {
			if files, err := os.ReadDir(filepath.Join(doc, "licenses", d)); err != nil || len(files) == 0 {
				t.Errorf("share/doc/archivekit/licenses/%s: %d files (%v), want its licence files", d, len(files), err)
			}
		}
	})

	// The tarball unpacked to bin, lib and share: a newcomer found no
	// README at its top. Its README names where to start; each path it
	// names is in the tree.
	t.Run("the tree's top says where to start", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join(root, "README"))
		if err != nil {
			t.Fatal(err)
		}
		paths := regexp.MustCompile(`(?m)(?:bin|share)/[\w./-]*`).FindAllString(string(b), -1)
		if len(paths) < 3 || !strings.Contains(string(b), "share/doc/archivekit/README.md") {
			t.Errorf("README names %q; want the README's place, bin/ and the licences", paths)
		}
		for _, p := range paths {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("README names %s: %v", p, err)
			}
		}
	})

	t.Run("the tree ships the README and docs/, and their links hold", func(t *testing.T) {
		doc := filepath.Join(root, "share", "doc", "archivekit")
		pages, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
		if err != nil || len(pages) == 0 {
			t.Fatalf("docs/*.md of the checkout: %d pages (%v)", len(pages), err)
		}
		names := []string{"README.md", filepath.Join("tools", "README.md")}
		for _, p := range pages {
			names = append(names, filepath.Join("docs", filepath.Base(p)))
		}
		skills, _ := filepath.Glob(filepath.Join("..", "..", "docs", "skills", "*", "SKILL.md"))
		if len(skills) < 2 {
			t.Errorf("docs/skills/*/SKILL.md of the checkout: %d skills, want one per service", len(skills))
		}
		for _, p := range skills {
			names = append(names, filepath.Join("docs", "skills", filepath.Base(filepath.Dir(p)), "SKILL.md"))
		}
		link := regexp.MustCompile(`\]\(([^)#:]+\.md)(#[^)]*)?\)`)
		for _, name := range names {
			got, ok := shippedAsChecked(t, doc, name)
			if !ok {
				continue
			}
			// Every link to another page of the documentation finds it in the tree.
			for _, m := range link.FindAllStringSubmatch(string(got), -1) {
				target := filepath.Join(doc, filepath.Dir(name), m[1])
				if !strings.HasPrefix(target, doc+string(filepath.Separator)) {
					continue // a file of the repository outside the documentation
				}
				if _, err := os.Stat(target); err != nil {
					t.Errorf("share/doc/archivekit/%s links %s: %v", name, m[1], err)
				}
			}
		}
	})

	t.Run("pageclass classifies a sample page with the demo ensemble", func(t *testing.T) {
		page := copyIn(t, shared(t, "data/pages/TEXT/caa_conference-04.png"), work)
		results := filepath.Join(work, "results")
		code, out := run(t, command(root, work, "pageclass", nil, "--best", "-f", page, "--results", results))
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		tables, _ := filepath.Glob(filepath.Join(results, "*.csv"))
		found := false
		for _, f := range tables {
			b, _ := os.ReadFile(f)
			found = found || strings.Contains(string(b), "caa_conference")
		}
		if !found {
			t.Errorf("no result table names the page: %v\n%s", tables, out)
		}
		if v := toolVersion(t, results); v != version {
			t.Errorf("run metadata tool_version %q, want %q", v, version)
		}
	})

	t.Run("translate translates a sample record against a local MT API", func(t *testing.T) {
		mt := translatortest.New(translatortest.Config{})
		defer mt.Close()
		var mu sync.Mutex
		agents := map[string]bool{}
		target, _ := url.Parse(mt.URL)
		proxy := httputil.NewSingleHostReverseProxy(target)
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			agents[r.Header.Get("User-Agent")] = true
			mu.Unlock()
			proxy.ServeHTTP(w, r)
		}))
		defer api.Close()
		record, out, log := translateSample(t, root, work, api.URL, "data/translator/records/C-9100725A.xml")
		got, err := os.ReadFile(filepath.Join(out, "C-9100725A_en.xml"))
		if err != nil {
			t.Fatalf("translated record: %v\n%s", err, log)
		}
		orig, _ := os.ReadFile(record)
		if bytes.Equal(got, orig) || mt.Posts.Load() == 0 {
			t.Errorf("the record was not translated (%d requests to the MT API)", mt.Posts.Load())
		}
		if v := toolVersion(t, out); v != version {
			t.Errorf("run metadata tool_version %q, want %q", v, version)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(agents) != 1 || !agents["archivekit/"+version] {
			t.Errorf("User-Agents seen by the MT API: %v, want only archivekit/%s", agents, version)
		}
	})

	t.Run("the services report the version in /info", func(t *testing.T) {
		mt := translatortest.New(translatortest.Config{})
		defer mt.Close()
		for _, svc := range []struct {
			name string
			env  []string
		}{{"pageclass-api", nil}, {"translate-api", []string{"TRANSLATION_URL=" + mt.URL}}} {
			p := servicetest.StartCmd(t, command(root, work, svc.name, svc.env))
			p.WaitReady(t, 3*time.Minute)
			resp, err := http.Get(p.Base + "/info")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var info struct{ Version string }
			if err := json.Unmarshal(b, &info); err != nil || info.Version != version {
				t.Errorf("%s /info version %q (%v), want %q", svc.name, info.Version, err, version)
			}
		}
	})
}

// shippedAsChecked reads the checkout's file name (a path relative to the
// repository root) and reports, as an error of t, when the tree's copy under
// doc is missing or differs; it returns the checkout's bytes and whether the
// copy is the same.
func shippedAsChecked(t *testing.T, doc, name string) ([]byte, bool) {
	t.Helper()
	want, err := os.ReadFile(filepath.Join("..", "..", name))
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(doc, name))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("share/doc/archivekit/%s: %v, or not the checkout's", name, err)
		return want, false
	}
	return want, true
}
