package notices

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// imageSet is a group of Debian packages the images hold: the base image,
// or what one tool's stages install on top of it.
type imageSet struct {
	title    string   // the table's heading sentence
	packages []string // every package of the set, dependencies included
}

var installRE = regexp.MustCompile(`apt-get install -y --no-install-recommends ([a-z0-9.+\- ]+?) *\\?\n? *&&`)

// installs returns the sorted package list of each apt-get install line in
// text.
func installs(text string) [][]string {
	var out [][]string
	for _, m := range installRE.FindAllStringSubmatch(text, -1) {
		pkgs := strings.Fields(m[1])
		slices.Sort(pkgs)
		out = append(out, pkgs)
	}
	return out
}

func installSentence(pkgs []string) string {
	return "`apt-get install --no-install-recommends " + strings.Join(pkgs, " ") + "`"
}

// TestDebianPackagesMatchBuildFiles fails when a build file installs a
// package list the notice's Debian tables were not made from.
func TestDebianPackagesMatchBuildFiles(t *testing.T) {
	body := generated(t, "debian", debianTables)
	found := false
	for _, s := range stages(t) {
		for _, pkgs := range installs(s.text) {
			found = true
			if !strings.Contains(body, installSentence(pkgs)) {
				t.Errorf("%s, stage %s, installs %v, which the notice's Debian tables do not cover (go test ./test/notices -update on a bookworm machine with them installed)", s.file, s.name, pkgs)
			}
		}
	}
	if !found {
		t.Error("the build files have no apt-get install line")
	}
}

// debianTables lists the packages of the base image (the Essential ones
// and apt, as mmdebstrap --variant=apt makes it) and of what each tool's
// stages install, with their dependencies (apt-cache depends, no
// recommends; an alternative counts when it is installed here), each with
// the licences its copyright file names.
func debianTables(t *testing.T) string {
	t.Helper()
	installed := map[string]string{} // package → version
	var essential []string
	out := run(t, root, "dpkg-query", "-W", "-f", "${db:Status-Abbrev}\t${Package}\t${Version}\t${Essential}\n")
	for _, line := range strings.Split(out, "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 || !strings.HasPrefix(f[0], "ii") {
			continue
		}
		installed[f[1]] = f[2]
		if f[3] == "yes" {
			essential = append(essential, f[1])
		}
	}
	closure := func(roots []string) []string {
		args := append([]string{"depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
			"--no-breaks", "--no-replaces", "--no-enhances"}, roots...)
		deps := parseDepends(run(t, root, "apt-cache", args...))
		var pkgs []string
		todo := slices.Clone(roots)
		for len(todo) > 0 {
			p := todo[0]
			todo = todo[1:]
			if _, ok := installed[p]; !ok || slices.Contains(pkgs, p) {
				continue
			}
			pkgs = append(pkgs, p)
			for _, group := range deps[p] {
				if c := choose(group, installed); c != "" {
					todo = append(todo, c)
				}
			}
		}
		slices.Sort(pkgs)
		return pkgs
	}
	base := closure(append(essential, "apt"))
	sets := []imageSet{{
		title:    "The base image (Debian bookworm as `mmdebstrap --variant=apt` makes it: the Essential packages and apt), in every image",
		packages: base,
	}}
	seen := map[string]bool{}
	for _, s := range stages(t) {
		for _, pkgs := range installs(s.text) {
			key := strings.Join(pkgs, " ")
			if seen[key] {
				continue
			}
			seen[key] = true
			var add []string
			for _, p := range closure(pkgs) {
				if !slices.Contains(base, p) {
					add = append(add, p)
				}
			}
			sets = append(sets, imageSet{
				title:    "Added by " + stagesInstalling(t, pkgs) + " (" + installSentence(pkgs) + ")",
				packages: add,
			})
		}
	}
	var b strings.Builder
	for i, s := range sets {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s: %d packages.\n\n", s.title, len(s.packages))
		b.WriteString("| package | version (bookworm, when generated) | licences its copyright file names |\n|---|---|---|\n")
		for _, p := range s.packages {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", p, installed[p], debianLicences(t, p))
		}
	}
	return b.String()
}

// alternative is one package of a dependency: a real package, or a
// virtual one with the packages that provide it.
type alternative struct {
	name      string
	virtual   bool
	providers []string
}

// parseDepends reads the output of apt-cache depends --recurse: for each
// package, its dependencies as groups of alternatives ("a | b").
func parseDepends(out string) map[string][][]alternative {
	deps := map[string][][]alternative{}
	var pkg string
	cont := false // the previous dependency line ended an "|" alternative
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "":
		case !strings.HasPrefix(line, " "):
			pkg, _, _ = strings.Cut(line, ":")
			pkg = strings.Trim(pkg, "<>")
			cont = false
		case strings.HasPrefix(line, "    "):
			groups := deps[pkg]
			if n := len(groups); n > 0 {
				last := &groups[n-1][len(groups[n-1])-1]
				last.providers = append(last.providers, strings.TrimSpace(line))
			}
		default:
			alt := strings.HasPrefix(line, " |")
			_, dep, ok := strings.Cut(line, ": ")
			if !ok {
				continue
			}
			a := alternative{name: strings.Trim(dep, "<>"), virtual: strings.HasPrefix(dep, "<")}
			if name, _, ok := strings.Cut(a.name, ":"); ok {
				a.name = name
			}
			if cont {
				deps[pkg][len(deps[pkg])-1] = append(deps[pkg][len(deps[pkg])-1], a)
			} else {
				deps[pkg] = append(deps[pkg], []alternative{a})
			}
			cont = alt
		}
	}
	return deps
}

// choose returns the package apt would have installed for a group of
// alternatives on this machine: the first real one installed here, else the
// first installed provider of a virtual one; "" when none is installed.
func choose(group []alternative, installed map[string]string) string {
	for _, a := range group {
		if _, ok := installed[a.name]; ok && !a.virtual {
			return a.name
		}
		for _, p := range a.providers {
			if _, ok := installed[p]; ok {
				return p
			}
		}
	}
	return ""
}

// stagesInstalling names the stages of the build files whose apt-get
// install line installs exactly pkgs.
func stagesInstalling(t *testing.T, pkgs []string) string {
	t.Helper()
	var names []string
	for _, s := range stages(t) {
		for _, got := range installs(s.text) {
			if slices.Equal(got, pkgs) && !slices.Contains(names, s.name) {
				names = append(names, s.name)
			}
		}
	}
	return "the `" + strings.Join(names, "`, `") + "` stage and those built on it"
}

// debianLicences names the licences of a package's copyright file: the
// License fields of its Files paragraphs when it is machine-readable
// (DEP-5), or the licences its free-form text names.
func debianLicences(t *testing.T, pkg string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/usr/share/doc", pkg, "copyright"))
	if err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	text := string(b)
	var names []string
	add := func(n string) {
		if n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if strings.HasPrefix(text, "Format:") {
		for _, para := range strings.Split(text, "\n\n") {
			if !strings.HasPrefix(para, "Files:") && !strings.Contains(para, "\nFiles:") {
				continue
			}
			for _, line := range strings.Split(para, "\n") {
				if v, ok := strings.CutPrefix(line, "License:"); ok {
					add(strings.TrimSpace(v))
				}
			}
		}
	} else {
		flat := strings.Join(strings.Fields(text), " ")
		for _, k := range []struct{ phrase, name string }{
			{"GNU Lesser General Public License", "LGPL"},
			{"GNU Library General Public License", "LGPL"},
			{"GNU General Public License", "GPL"},
			{"Apache License", "Apache-2.0"},
			{"Mozilla Public License", "MPL"},
			{"Permission is hereby granted, free of charge", "MIT"},
			{"Redistribution and use in source and binary forms", "BSD"},
			{"This software is provided 'as-is'", "Zlib"},
			{"public domain", "public domain"},
			{"Permission to use, copy, modify, and distribute", "permissive (X11/ISC style)"},
		} {
			if strings.Contains(flat, k.phrase) {
				add(k.name)
			}
		}
		if len(names) == 0 {
			add("see its copyright file")
		}
		names[0] = "free-form file: " + names[0]
	}
	const most = 8
	if len(names) > most {
		return strings.Join(names[:most], "; ") + fmt.Sprintf("; and %d more", len(names)-most)
	}
	return strings.Join(names, "; ")
}
