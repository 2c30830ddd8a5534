// Command check-version is the release gate's version check (spec
// page-classification 9, translation 9 and 4.1 check_version.py): the git tag
// of the checked-out commit, CITATION.cff, the [tool] version key of both
// licence-config files (setup/para_config.txt, setup/translate/para_config.txt)
// and, when present, the VERSION file must state the same version. A leading
// "v" is ignored everywhere. Without a version tag on HEAD it compares the
// files with each other.
//
// It prints one error line per mismatch and exits 1, or prints the agreed
// version and exits 0. A missing or unreadable version source is an error
// (exit 1) naming the file. It works from any directory inside the
// repository; outside a git work tree it reads the current directory.
//
// Usage:
//
//	check-version [--version]
package main

import (
	"fmt"
	"io"
	"os"

	"archivekit/internal/release"
	"archivekit/internal/version"
)

func main() {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "check-version:", err)
		os.Exit(1)
	}
	os.Exit(run(wd, os.Args[1:], os.Stdout, os.Stderr))
}

// run checks the repository containing dir.
func run(dir string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, version.Line("check-version"))
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintln(stderr, "check-version takes no arguments; run it inside the repository")
		return 1
	}
	root := release.RepoRoot(dir)
	srcs, err := release.Sources(root)
	if err != nil {
		fmt.Fprintln(stderr, "check-version:", err)
		return 1
	}
	if bad := release.Compare(srcs); len(bad) > 0 {
		for _, l := range bad {
			fmt.Fprintln(stderr, l)
		}
		return 1
	}
	ref := srcs[0]
	fmt.Fprintf(stdout, "version %s agrees in %d sources (reference: %s)\n", release.Normalise(ref.Value), len(srcs), ref.Name)
	return 0
}
