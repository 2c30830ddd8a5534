// Command rocrate exports a finished document record as an RO-Crate 1.1 (spec
// page-classification 2.7, translation 4.1 and 12): it copies the record, the
// persistent step outputs it names and the contributing runs' metadata into
// the output folder and writes ro-crate-metadata.json there. It is a separate
// step over finished records; neither tool makes a crate during a run.
//
// Usage:
//
//	rocrate --document DOC.document.json [--paradata RUN.json ...] [--run] [--out-dir DIR] [--selftest]
//
// Flags:
//
//	--document   the document record (required)
//	--paradata   run metadata of a run that wrote the record (repeatable);
//	             files named by paradata_ref in the record are added when found
//	--run        declare the Process Run Crate profile
//	--out-dir    the crate folder (default: ./ro-crate)
//	--selftest   after writing, check the structure (descriptor first, graph
//	             sorted, no dangling references, root fields, source and
//	             regenerable outputs outside hasPart) and that rebuilding under
//	             other time zones gives the same bytes
//
// Exit codes: 0 written (and the self-test passed); 1 usage or input error,
// or a failed self-test. Warnings (an output named in the record that was not
// found) go to stderr.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"archivekit/internal/cliflags"
	"archivekit/internal/rocrate"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := cliflags.New("rocrate", stderr)
	var in rocrate.Input
	var paradata multi
	fs.StringVar(&in.Document, "document", "", "the document record (required)")
	fs.Var(&paradata, "paradata", "run metadata of a run that wrote the record (repeatable)")
	fs.BoolVar(&in.ProcessRun, "run", false, "declare the Process Run Crate profile")
	outDir := fs.String("out-dir", "ro-crate", "the crate folder")
	selftest := fs.Bool("selftest", false, "check the written crate's structure and determinism")
	if code, stop := fs.Parse(args, stdout); stop {
		return code
	}
	if in.Document == "" {
		fmt.Fprintln(stderr, "rocrate: --document is required")
		return 1
	}
	in.Paradata = paradata
	c, err := rocrate.Build(in)
	if err != nil {
		fmt.Fprintln(stderr, "rocrate:", err)
		return 1
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(stderr, "rocrate: warning:", w)
	}
	out, err := c.Write(*outDir)
	if err != nil {
		fmt.Fprintln(stderr, "rocrate:", err)
		return 1
	}
	for _, r := range c.Removed {
		fmt.Fprintf(stderr, "rocrate: removed %s: a part of the earlier crate in %s that this one does not have\n", r, *outDir)
	}
	fmt.Fprintf(stdout, "wrote %s: %d entities, %d files\n", out, len(c.Graph), len(c.Files))
	if *selftest {
		written, err := os.ReadFile(out)
		if err != nil {
			fmt.Fprintln(stderr, "rocrate: selftest:", err)
			return 1
		}
		if bad := rocrate.SelfTest(in, written, *outDir); len(bad) > 0 {
			for _, b := range bad {
				fmt.Fprintln(stderr, "rocrate: selftest:", b)
			}
			return 1
		}
		fmt.Fprintln(stdout, "selftest passed: descriptor first, graph sorted, no dangling references, deterministic")
	}
	return 0
}
