package archivekit_test

// The project's import rule, as a test (after Go's go/build deps_test.go).
//
// The module is one house with two wings:
//
//	classifier  cmd/pageclass, cmd/pageclass-api, cmd/pageclass-client, internal/pageclass/...
//	translator  cmd/translate, cmd/translate-api, cmd/bakeoff, cmd/load-vocab, internal/translate/...
//	shared      internal/... (the rest), the root package, setup, and the commands of both tools
//	            (cmd/healthcheck, cmd/check-version, cmd/release-tags, cmd/rocrate)
//	bindings    bindings/torch (classifier), bindings/ct2 (translator), bindings/libvips (classifier),
//	            bindings/pdfium (classifier),
//	            bindings/internal/... (the bindings' own helpers)
//	testenv     internal/testenv: what tests share about their environment, imported by tests only
//	testhelper  test/golden: tolerant golden files, which any package's tests may use
//	drivers     test/... and tools/...: end-to-end checks and maintenance, which may reach both wings
//
// A wing imports itself, shared code and its own bindings, never the other
// wing; shared code imports only shared code; `import "C"` appears only in
// the bindings. Tests may also import internal/testenv and the test
// helpers; a package named ...test (classifytest, translatortest) is test
// code of its zone and may import internal/testenv. A package this file does not place is an error: a new
// command is placed here when it is added, a new package by its folder.

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "archivekit"

// Zones of the import rule.
const (
	classifier     = "classifier"
	translator     = "translator"
	shared         = "shared"
	testenvZone    = "testenv"
	torchZone      = "bindings/torch"
	ct2Zone        = "bindings/ct2"
	libvipsZone    = "bindings/libvips"
	pdfiumZone     = "bindings/pdfium"
	bindingsShared = "bindings/internal"
	nativecheck    = "nativecheck"
	testhelper     = "testhelper"
	drivers        = "drivers"
)

// commands places each command in its zone.
var commands = map[string]string{
	"cmd/pageclass":        classifier,
	"cmd/pageclass-api":    classifier,
	"cmd/pageclass-client": classifier,
	"cmd/translate":        translator,
	"cmd/translate-api":    translator,
	"cmd/bakeoff":          translator,
	"cmd/load-vocab":       translator,
	"cmd/healthcheck":      shared,
	"cmd/check-version":    shared,
	"cmd/release-tags":     shared,
	"cmd/rocrate":          shared,
	"cmd/nativecheck":      nativecheck, // the self-check of both native cores
}

// mayImport lists, per zone, the zones its non-test code may import.
// Tests may import internal/testenv as well.
var mayImport = map[string][]string{
	classifier:     {classifier, shared, torchZone, libvipsZone, pdfiumZone},
	translator:     {translator, shared, ct2Zone},
	shared:         {shared},
	testenvZone:    {shared},
	torchZone:      {bindingsShared, shared},
	ct2Zone:        {bindingsShared, shared},
	libvipsZone:    {bindingsShared, shared},
	pdfiumZone:     {bindingsShared, shared},
	bindingsShared: {shared},
	nativecheck:    {shared, torchZone, ct2Zone},
	testhelper:     {shared, testenvZone},
	drivers:        {classifier, translator, shared, torchZone, ct2Zone, libvipsZone, pdfiumZone, testenvZone, testhelper},
}

// testHelpers are the packages outside internal/testenv that tests of any
// zone may import.
var testHelpers = []string{"test/golden"}

// cgoZones are the zones allowed to `import "C"`.
var cgoZones = []string{torchZone, ct2Zone, libvipsZone, pdfiumZone}

// zone places a package path relative to the module root ("" for the root
// package); ok is false for a package the rule does not place.
func zone(rel string) (z string, ok bool) {
	under := func(dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }
	switch {
	case slices.Contains(testHelpers, rel):
		return testhelper, true
	case rel == "" || rel == "setup":
		return shared, true
	case strings.HasPrefix(rel, "cmd/"):
		z, ok = commands[rel]
		return z, ok
	case under("internal/pageclass"):
		return classifier, true
	case under("internal/translate"):
		return translator, true
	case under("internal/testenv"):
		return testenvZone, true
	case under("internal"):
		return shared, true
	case under("bindings/torch"):
		return torchZone, true
	case under("bindings/ct2"):
		return ct2Zone, true
	case under("bindings/libvips"):
		return libvipsZone, true
	case under("bindings/pdfium"):
		return pdfiumZone, true
	case under("bindings/internal"):
		return bindingsShared, true
	case under("test"), under("tools"):
		return drivers, true
	}
	return "", false
}

// pkg is one package of the module as go/build reads it.
type pkg struct {
	rel               string   // path relative to the module root
	imports, testOnly []string // module-internal imports (relative), non-test and test-only
	cgo               bool
	zone              string
	placed            bool
}

// packages reads every package of the module (not the nested modules
// deploy/ and tools/k8s/*, not testdata).
func packages(t *testing.T) map[string]*pkg {
	t.Helper()
	root, err := os.Getwd() // go test runs in the package folder: the module root
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*pkg{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // a module of its own
			}
		}
		bp, err := build.Default.ImportDir(path, 0)
		if err != nil {
			var none *build.NoGoError
			if errors.As(err, &none) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		p := &pkg{rel: rel, cgo: len(bp.CgoFiles) > 0}
		p.zone, p.placed = zone(rel)
		p.imports = internalImports(bp.Imports)
		for _, imp := range internalImports(append(slices.Clone(bp.TestImports), bp.XTestImports...)) {
			if imp != rel && !slices.Contains(p.imports, imp) && !slices.Contains(p.testOnly, imp) {
				p.testOnly = append(p.testOnly, imp)
			}
		}
		out[rel] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 50 {
		t.Fatalf("found %d packages under %s: is this the module root?", len(out), root)
	}
	return out
}

// internalImports keeps the module's own imports, relative to its root.
func internalImports(imports []string) []string {
	var out []string
	for _, imp := range imports {
		switch {
		case imp == module:
			out = append(out, "")
		case strings.HasPrefix(imp, module+"/"):
			out = append(out, strings.TrimPrefix(imp, module+"/"))
		}
	}
	return out
}

func name(rel string) string {
	if rel == "" {
		return module
	}
	return module + "/" + rel
}

func TestImportRule(t *testing.T) {
	pkgs := packages(t)
	var rels []string
	for rel := range pkgs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		p := pkgs[rel]
		if !p.placed {
			t.Errorf("%s: not placed by the import rule (a new command goes into deps_test.go's commands table)", name(rel))
			continue
		}
		if p.cgo && !slices.Contains(cgoZones, p.zone) {
			t.Errorf("%s: import \"C\" outside bindings/ (zone %s): put the native calls in a package under bindings/", name(rel), p.zone)
		}
		check := func(imports []string, allowed []string, what string) {
			for _, imp := range imports {
				q, ok := pkgs[imp]
				if !ok {
					continue // not a package of this module's tree (vet reports real problems)
				}
				if !slices.Contains(allowed, q.zone) {
					t.Errorf("%s (%s) %s %s (%s): not allowed", name(rel), p.zone, what, name(imp), q.zone)
				}
			}
		}
		allowed := mayImport[p.zone]
		if strings.HasSuffix(rel, "test") {
			// a test helper package (classifytest, translatortest...) is
			// test code of its zone
			allowed = append(slices.Clone(allowed), testenvZone)
		}
		check(p.imports, allowed, "imports")
		check(p.testOnly, append(slices.Clone(allowed), testenvZone, testhelper, p.zone), "imports in tests")
	}
}

// deps is the transitive closure of the module-internal imports of the
// named packages; withTests adds the test imports of the named packages
// themselves (what `go test` links for them).
func deps(pkgs map[string]*pkg, roots []string, withTests bool) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(rel string) {
		if seen[rel] {
			return
		}
		seen[rel] = true
		if p, ok := pkgs[rel]; ok {
			for _, imp := range p.imports {
				walk(imp)
			}
		}
	}
	for _, r := range roots {
		walk(r)
		if withTests {
			for _, imp := range pkgs[r].testOnly {
				walk(imp)
			}
		}
	}
	return seen
}

// TestWhatBinariesLink checks what the tools' binaries (and the
// translator's tests) link, transitively: the translate binaries none of the
// classifier (review, modelmeta, registry, libtorch), the classifier's none
// of the translator (CTranslate2), and the translator core's tests not the
// CTranslate2 bridge.
func TestWhatBinariesLink(t *testing.T) {
	pkgs := packages(t)
	for _, c := range []struct {
		roots     []string
		withTests bool
		forbidden []string
	}{
		{[]string{"cmd/translate", "cmd/translate-api", "cmd/bakeoff", "cmd/load-vocab"}, false,
			[]string{"internal/pageclass/", "bindings/torch", "bindings/libvips", "bindings/pdfium"}},
		{[]string{"cmd/pageclass", "cmd/pageclass-api", "cmd/pageclass-client"}, false,
			[]string{"internal/translate/", "bindings/ct2"}},
		{[]string{"internal/translate/translator"}, true, []string{"bindings/ct2", "internal/translate/ct2backend"}},
	} {
		for _, r := range c.roots {
			if _, ok := pkgs[r]; !ok {
				t.Fatalf("%s: no such package", name(r))
			}
		}
		for d := range deps(pkgs, c.roots, c.withTests) {
			for _, f := range c.forbidden {
				if d == strings.TrimSuffix(f, "/") || strings.HasPrefix(d, f) {
					t.Errorf("%v (tests: %v) link %s", c.roots, c.withTests, name(d))
				}
			}
		}
	}
}
