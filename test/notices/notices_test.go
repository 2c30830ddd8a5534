// Package notices checks THIRD_PARTY_NOTICES.md against what the commands
// and the CTranslate2 bridge really link, and that the tarball's installer
// and the image build files ship it with LICENSE.
//
// The notice's tables of Go modules, crates and Debian packages are
// generated from the real sources (go list and the module cache, cargo and
// the registry, apt and /usr/share/doc) between marker lines:
//
//	go test ./test/notices -update
//
// rewrites them (it needs cargo, the fetched crates and, for the Debian
// tables, a Debian bookworm machine with the images' packages installed,
// as `make apt` leaves this one). Without -update the tests only read.
package notices

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated tables of THIRD_PARTY_NOTICES.md from go list, cargo and apt")

// root is the repository root, relative to this package.
const root = "../.."

// noticeFile is the notice, relative to the repository root.
const noticeFile = "THIRD_PARTY_NOTICES.md"

func readNotice(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, noticeFile))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// block returns the text between the marker lines of the generated block
// name, and whether both markers were found.
func block(notice, name string) (string, bool) {
	begin, end := beginMarker(name), endMarker(name)
	_, after, ok := strings.Cut(notice, begin+"\n")
	if !ok {
		return "", false
	}
	body, _, ok := strings.Cut(after, end)
	return body, ok
}

func beginMarker(name string) string {
	return "<!-- BEGIN generated " + name + ": go test ./test/notices -update -->"
}

func endMarker(name string) string { return "<!-- END generated " + name + " -->" }

// replaceBlock returns notice with the body of block name replaced.
func replaceBlock(t *testing.T, notice, name, body string) string {
	t.Helper()
	begin, end := beginMarker(name)+"\n", endMarker(name)
	i := strings.Index(notice, begin)
	j := strings.Index(notice, end)
	if i < 0 || j < i {
		t.Fatalf("%s: markers of block %q missing", noticeFile, name)
	}
	return notice[:i+len(begin)] + body + notice[j:]
}

// generated returns the body of the notice's block name; with -update it
// first rewrites that body with make's table.
func generated(t *testing.T, name string, make func(*testing.T) string) string {
	t.Helper()
	notice := readNotice(t)
	if *update {
		notice = replaceBlock(t, notice, name, make(t))
		if err := os.WriteFile(filepath.Join(root, noticeFile), []byte(notice), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	body, ok := block(notice, name)
	if !ok {
		t.Fatalf("%s: no %s block", noticeFile, name)
	}
	return body
}

func run(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// goModule is one module linked into a command.
type goModule struct {
	path, version, licence, files string
}

// goModules lists the modules (the main module left out) of every package
// linked into the commands under cmd/, with the licence read from the
// licence files in the module cache.
func goModules(t *testing.T) []goModule {
	t.Helper()
	// go test puts its own toolchain first on PATH.
	out := run(t, root, "go", "list", "-deps", "-f",
		"{{with .Module}}{{if not .Main}}{{.Path}}\t{{.Version}}\t{{.Dir}}{{end}}{{end}}", "./cmd/...")
	seen := map[string]bool{}
	var mods []goModule
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" || seen[line] {
			continue
		}
		seen[line] = true
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[2] == "" {
			t.Fatalf("go list: module line %q without a folder (is the module downloaded?)", line)
		}
		licence, files := licenceOfDir(t, f[2])
		mods = append(mods, goModule{path: f[0], version: f[1], licence: licence, files: files})
	}
	slices.SortFunc(mods, func(a, b goModule) int { return strings.Compare(a.path, b.path) })
	return mods
}

var licenceFileRE = regexp.MustCompile(`(?i)^(licen[cs]e|copying|patents|notice)(\.(md|txt))?$`)

// licenceOfDir returns the licence of the files in dir (see classify) and
// the names of its licence-like files.
func licenceOfDir(t *testing.T, dir string) (licence, files string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && licenceFileRE.MatchString(e.Name()) {
			names = append(names, e.Name())
			if strings.EqualFold(e.Name(), "patents") || strings.HasPrefix(strings.ToLower(e.Name()), "notice") {
				continue
			}
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if l := classify(string(b)); l != "" && licence == "" {
				licence = l
			}
		}
	}
	if licence == "" {
		t.Errorf("%s: no licence file this test recognises (%v)", dir, names)
	}
	return licence, strings.Join(names, ", ")
}

// classify names the licence of a licence file's text by its defining
// sentences; "" when it recognises none.
func classify(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	has := func(s string) bool { return strings.Contains(text, s) }
	switch {
	case has("Apache License") && has("Version 2.0"):
		return "Apache-2.0"
	case has("Mozilla Public License Version 2.0"):
		return "MPL-2.0"
	case has("Permission is hereby granted, free of charge"):
		return "MIT"
	case has("Redistribution and use in source and binary forms"):
		if has("Neither the name") || has("may be used to endorse or promote") {
			return "BSD-3-Clause"
		}
		return "BSD-2-Clause"
	case has("Permission to use, copy, modify, and/or distribute"):
		return "ISC"
	}
	return ""
}

func goTable(mods []goModule) string {
	var b strings.Builder
	b.WriteString("| module | version | licence | licence files in the module |\n|---|---|---|---|\n")
	for _, m := range mods {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", m.path, m.version, m.licence, m.files)
	}
	return b.String()
}

// TestGoModulesListed fails when a module linked into a command is missing
// from the notice, is listed at another version or licence, or is listed
// but no longer linked.
func TestGoModulesListed(t *testing.T) {
	want := goTable(goModules(t))
	got := generated(t, "go-modules", func(*testing.T) string { return want })
	if got != want {
		t.Errorf("%s: the Go modules linked into cmd/... differ from the notice (go test ./test/notices -update rewrites it)\n%s",
			noticeFile, lineDiff(got, want))
	}
}

// lineDiff lists the lines only in got (-) and only in want (+).
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// lockedCrate is one package of native/Cargo.lock.
type lockedCrate struct{ name, version string }

var lockRE = regexp.MustCompile(`(?m)^\[\[package\]\]\nname = "([^"]+)"\nversion = "([^"]+)"\n(source = )?`)

// lockedCrates reads native/Cargo.lock: every crate but the bridge itself
// (the packages without a source).
func lockedCrates(t *testing.T) []lockedCrate {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "native", "Cargo.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var out []lockedCrate
	for _, m := range lockRE.FindAllStringSubmatch(string(b), -1) {
		if m[3] == "" {
			continue
		}
		out = append(out, lockedCrate{m[1], m[2]})
	}
	if len(out) == 0 {
		t.Fatal("native/Cargo.lock: no crates read")
	}
	return out
}

var crateRowRE = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([^ |]+) \\|")

// TestCratesListed fails when a crate of native/Cargo.lock is missing from
// the notice (at its locked version) or the notice lists one the lock file
// no longer holds.
func TestCratesListed(t *testing.T) {
	body := generated(t, "crates", crateTable)
	listed := map[lockedCrate]bool{}
	for _, m := range crateRowRE.FindAllStringSubmatch(body, -1) {
		listed[lockedCrate{m[1], m[2]}] = true
	}
	locked := lockedCrates(t)
	for _, c := range locked {
		if !listed[c] {
			t.Errorf("%s: crate %s %s of native/Cargo.lock is not listed (go test ./test/notices -update)", noticeFile, c.name, c.version)
		}
		delete(listed, c)
	}
	for c := range listed {
		t.Errorf("%s lists crate %s %s, which native/Cargo.lock does not hold", noticeFile, c.name, c.version)
	}
}

// crateTable builds the crates table: each crate of the lock file with the
// licence its manifest declares (cargo metadata, all features; the
// registry's Cargo.toml for lock entries cargo metadata leaves out) and
// whether the CPU bridge links it (cargo tree, normal edges, no
// proc-macros, the Linux x86-64 target) or it only serves the build.
func crateTable(t *testing.T) string {
	t.Helper()
	native := filepath.Join(root, "native")
	var meta struct {
		Packages []struct {
			Name, Version, License string
			ManifestPath           string `json:"manifest_path"`
		}
	}
	out := run(t, native, "cargo", "metadata", "--format-version", "1", "--offline", "--locked", "--all-features")
	if err := json.Unmarshal([]byte(out), &meta); err != nil {
		t.Fatal(err)
	}
	licences := map[lockedCrate]string{}
	var registry string
	for _, p := range meta.Packages {
		licences[lockedCrate{p.Name, p.Version}] = p.License
		// The registry folder, for the lock entries cargo metadata leaves
		// out (build tools of a dependency's optional artifacts).
		if registry == "" && strings.Contains(p.ManifestPath, "/registry/src/") {
			registry = filepath.Dir(filepath.Dir(p.ManifestPath))
		}
	}
	tree := run(t, native, "cargo", "tree", "-e", "normal,no-proc-macro", "--target", "x86_64-unknown-linux-gnu",
		"--prefix", "none", "--offline", "--locked")
	linked := map[lockedCrate]bool{}
	for _, line := range strings.Split(tree, "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			linked[lockedCrate{f[0], strings.TrimPrefix(f[1], "v")}] = true
		}
	}
	var b strings.Builder
	b.WriteString("| crate | version | licence (its manifest) | in the bridge |\n|---|---|---|---|\n")
	for _, c := range lockedCrates(t) {
		lic, ok := licences[c]
		if !ok {
			lic = manifestLicence(t, filepath.Join(registry, c.name+"-"+c.version, "Cargo.toml"))
		}
		use := "build only"
		if linked[c] {
			use = "linked"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.name, c.version, lic, use)
	}
	return b.String()
}

func manifestLicence(t *testing.T, manifest string) string {
	t.Helper()
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatalf("a crate of Cargo.lock outside cargo metadata: %v (cargo fetch --locked)", err)
	}
	m := regexp.MustCompile(`(?m)^license = "([^"]+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s: no license key", manifest)
	}
	return string(m[1])
}

// buildFiles are the images' build files.
var buildFiles = []string{"Dockerfile.cpu", "Dockerfile.cuda"}

// stage is one stage of a build file.
type stage struct {
	file, name, from string
	text             string // from its FROM line to the next stage's
}

// stages splits the build files into their stages.
func stages(t *testing.T) []stage {
	t.Helper()
	stageRE := regexp.MustCompile(`(?m)^FROM (\S+) AS (\S+)`)
	var out []stage
	for _, f := range buildFiles {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		idx := stageRE.FindAllStringSubmatchIndex(text, -1)
		if len(idx) == 0 {
			t.Fatalf("%s: no stages", f)
		}
		for i, m := range idx {
			end := len(text)
			if i+1 < len(idx) {
				end = idx[i+1][0]
			}
			out = append(out, stage{file: f, from: text[m[2]:m[3]], name: text[m[4]:m[5]], text: text[m[0]:end]})
		}
	}
	return out
}

// TestImagesShipNotice fails when a stage of a build file that starts from
// the base image copies no share/doc/ of the tree (where tools/install.sh
// puts LICENSE, the notice and the licence texts).
func TestImagesShipNotice(t *testing.T) {
	copyRE := regexp.MustCompile(`(?m)^COPY (archivekit/share/|archivekit/share/doc/) /opt/archivekit/share/(doc/)?\s*$`)
	for _, s := range stages(t) {
		// A stage built on another stage of the file ships what that one does.
		if s.from == "${BASE}" && !copyRE.MatchString(s.text) {
			t.Errorf("%s: stage %s does not copy archivekit/share/doc/ (LICENSE and %s)", s.file, s.name, noticeFile)
		}
	}
}

// TestInstallerShipsNotice fails when tools/install.sh no longer installs
// LICENSE and the notice into share/doc/archivekit/ (test/dist checks the
// unpacked tarball itself).
func TestInstallerShipsNotice(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "tools", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`doc="$prefix/share/doc/archivekit"`, `install -m 0644 "$root/LICENSE" "$root/` + noticeFile + `" "$doc/"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("tools/install.sh: %q missing", want)
		}
	}
}
