// Package images holds the checks of the container build files (the
// build-file rule of the page-classification specification, section 9).
// The gate that builds and runs the images is tools/images/gate.sh
// (make image-test).
package images

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// instruction is one build-file instruction with its continuation lines
// joined.
type instruction struct {
	line int    // 1-based line of its first line
	op   string // upper-case keyword
	args string
}

// parse splits a build file into instructions (comments and blank lines
// dropped, backslash continuations joined).
func parse(text string) []instruction {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if cur.Len() == 0 && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		} else if strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasSuffix(t, `\`) {
			cur.WriteString(strings.TrimSuffix(t, `\`) + " ")
			continue
		}
		cur.WriteString(t)
		op, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{line: start, op: strings.ToUpper(op), args: strings.TrimSpace(args)})
		cur.Reset()
	}
	return out
}

var (
	upgradeRE   = regexp.MustCompile(`apt-get\s+(-\S+\s+)*(upgrade|dist-upgrade)`)
	aptRE       = regexp.MustCompile(`apt-get\s+(-\S+\s+)*(update|install|upgrade|dist-upgrade)`)
	listsRE     = regexp.MustCompile(`rm -rf [^&;]*/var/lib/apt/lists/\*`)
	runnerRefRE = regexp.MustCompile(`(^|\s)RUNNER_REF=`)
)

// checkRule returns the breaches of the build-file rule in one file: in
// every stage built from outside the file, the operating-system upgrade
// layer sits below the ENV line that sets the runner reference (RUNNER_REF)
// and above the USER line; a stage built on another stage of the file adds
// no upgrade of its own; every RUN that uses apt removes the package lists
// in the same layer.
func checkRule(text string) []string {
	var errs []string
	type stage struct {
		name, from         string
		line               int
		env, upgrade, user []int
	}
	var stages []*stage
	names := map[string]bool{}
	for _, in := range parse(text) {
		if in.op == "FROM" {
			f := strings.Fields(in.args)
			st := &stage{line: in.line}
			for _, w := range f {
				if !strings.HasPrefix(w, "--") {
					st.from = w
					break
				}
			}
			if len(f) >= 3 && strings.EqualFold(f[len(f)-2], "AS") {
				st.name = f[len(f)-1]
				names[st.name] = true
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			continue // ARG before the first FROM
		}
		st := stages[len(stages)-1]
		switch in.op {
		case "ENV":
			if runnerRefRE.MatchString(in.args) {
				st.env = append(st.env, in.line)
			}
		case "USER":
			st.user = append(st.user, in.line)
		case "RUN":
			if upgradeRE.MatchString(in.args) {
				st.upgrade = append(st.upgrade, in.line)
			}
			if aptRE.MatchString(in.args) && !listsRE.MatchString(in.args) {
				errs = append(errs, fmt.Sprintf("line %d: RUN uses apt-get but does not remove /var/lib/apt/lists/* in the same layer", in.line))
			}
		}
	}
	if len(stages) == 0 {
		return append(errs, "no FROM line")
	}
	for _, st := range stages {
		label := fmt.Sprintf("stage %q (line %d)", st.name, st.line)
		if names[st.from] {
			if len(st.upgrade) > 0 {
				errs = append(errs, fmt.Sprintf("%s: an upgrade layer in a stage built on stage %q (it belongs to the first stage, below the runner reference)", label, st.from))
			}
			continue
		}
		switch {
		case len(st.upgrade) == 0:
			errs = append(errs, label+": no operating-system upgrade layer (apt-get upgrade)")
		case len(st.env) == 0:
			errs = append(errs, label+": no ENV line setting RUNNER_REF")
		case len(st.user) == 0:
			errs = append(errs, label+": no USER line")
		default:
			up := st.upgrade[0]
			if st.env[0] > up {
				errs = append(errs, fmt.Sprintf("%s: the upgrade layer (line %d) sits above the runner-reference ENV (line %d)", label, up, st.env[0]))
			}
			if u := st.user[0]; u < st.upgrade[len(st.upgrade)-1] {
				errs = append(errs, fmt.Sprintf("%s: the upgrade layer (line %d) sits below USER (line %d)", label, st.upgrade[len(st.upgrade)-1], u))
			}
		}
	}
	return errs
}

// buildFiles lists the repository's build files.
func buildFiles(t *testing.T) []string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pat := range []string{"Dockerfile*", "Containerfile*", "*.Dockerfile", "*/Dockerfile*", "*/*/Dockerfile*"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	return files
}

func TestBuildFilesKeepTheRule(t *testing.T) {
	files := buildFiles(t)
	if len(files) < 2 {
		t.Fatalf("found %d build files (want Dockerfile.cpu and Dockerfile.cuda): %v", len(files), files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range checkRule(string(b)) {
			t.Errorf("%s: %s", filepath.Base(f), e)
		}
	}
}

func TestCheckRule(t *testing.T) {
	const good = `ARG BASE=debian
FROM ${BASE} AS a
ARG RUNNER_REF=x
ENV RUNNER_REF=${RUNNER_REF} DOCKER_IMAGE=a
RUN apt-get update && apt-get -y upgrade \
    && rm -rf /var/lib/apt/lists/*
USER atrium
FROM a AS a-api
EXPOSE 8000
`
	cases := []struct {
		name, text, want string
	}{
		{"good", good, ""},
		{"upgrade above ENV", strings.Replace(good, "ENV RUNNER_REF=${RUNNER_REF} DOCKER_IMAGE=a\nRUN apt-get update && apt-get -y upgrade \\\n    && rm -rf /var/lib/apt/lists/*",
			"RUN apt-get update && apt-get -y upgrade \\\n    && rm -rf /var/lib/apt/lists/*\nENV RUNNER_REF=${RUNNER_REF} DOCKER_IMAGE=a", 1), "sits above the runner-reference ENV"},
		{"upgrade below USER", strings.Replace(good, "USER atrium\n", "", 1) + "", "no USER line"},
		{"USER above upgrade", strings.Replace(good, "ENV RUNNER_REF=${RUNNER_REF} DOCKER_IMAGE=a\n", "ENV RUNNER_REF=${RUNNER_REF} DOCKER_IMAGE=a\nUSER atrium\n", 1), "sits below USER"},
		{"lists kept", strings.Replace(good, " \\\n    && rm -rf /var/lib/apt/lists/*", "", 1), "does not remove /var/lib/apt/lists"},
		{"no upgrade", strings.Replace(good, "apt-get -y upgrade", "apt-get install -y curl", 1), "no operating-system upgrade layer"},
		{"runner reference under another name", strings.Replace(good, "ENV RUNNER_REF=", "ENV ARCHIVEKIT_RUNNER_REF=", 1), "no ENV line setting RUNNER_REF"},
		{"upgrade in a derived stage", good + "RUN apt-get update && apt-get upgrade -y && rm -rf /var/lib/apt/lists/*\n", "built on stage \"a\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			errs := checkRule(c.text)
			if c.want == "" {
				if len(errs) > 0 {
					t.Fatalf("want no breach, got %v", errs)
				}
				return
			}
			if !strings.Contains(strings.Join(errs, "\n"), c.want) {
				t.Fatalf("want a breach containing %q, got %v", c.want, errs)
			}
		})
	}
}
