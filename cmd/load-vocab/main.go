// Command load-vocab harvests the translator's vocabulary file (spec
// translation 2.5 and 4.1 load_vocab.py) from the records source (OAI-PMH
// ListRecords, resumptionToken paging) and the thesaurus (GraphQL), merges
// them (the records source wins on a conflict) and writes the five-column CSV
// source_lemma,target_translation,source,source_id,uri that
// translate --vocabulary loads. See internal/translate/vocabharvest for the protocols.
//
// Usage:
//
//	load-vocab [--out FILE] [--delay S] [--skip-arch] [--skip-thesaurus]
//	           [--arch-url URL] [--arch-set SET] [--arch-prefix P]
//	           [--thesaurus-url URL] [--thesaurus-query FILE] [--thesaurus-field F]
//
// The endpoints default to $LOAD_VOCAB_ARCH_URL (else the records source's
// public OAI-PMH endpoint) and $LOAD_VOCAB_THESAURUS_URL (no default).
//
// Exit codes: 0 every source harvested completely; 1 usage error, or nothing
// harvested (no file written, an existing one is left as it was); 3 a source
// failed (on any page): the terms read before the failure are written, with
// a warning naming the source, the page and the error.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"archivekit/internal/cliflags"
	"archivekit/internal/translate/vocabharvest"
)

const (
	exitOK      = cliflags.ExitOK
	exitUsage   = cliflags.ExitUsage
	exitPartial = cliflags.ExitFailure
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr, nil))
}

// run parses the flags and harvests; adjust, when not nil, changes the
// harvester before it starts (tests).
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, adjust func(*vocabharvest.Harvester)) int {
	h := vocabharvest.New()
	fs := cliflags.New("load-vocab", stderr)
	out := fs.String("out", "data_samples/vocabulary.csv", "the vocabulary CSV to write")
	delay := fs.Float64("delay", 0.5, "seconds to wait between two requests")
	skipArch := fs.Bool("skip-arch", false, "do not harvest the records source")
	skipThes := fs.Bool("skip-thesaurus", false, "do not harvest the thesaurus")
	archURL := fs.String("arch-url", cmp.Or(getenv("LOAD_VOCAB_ARCH_URL"), vocabharvest.DefaultArchURL), "OAI-PMH endpoint of the records source")
	fs.StringVar(&h.ArchSet, "arch-set", h.ArchSet, "OAI-PMH set of the vocabulary records (empty: no set)")
	fs.StringVar(&h.ArchPrefix, "arch-prefix", h.ArchPrefix, "OAI-PMH metadataPrefix")
	thesURL := fs.String("thesaurus-url", getenv("LOAD_VOCAB_THESAURUS_URL"), "GraphQL endpoint of the thesaurus")
	queryFile := fs.String("thesaurus-query", "", "file holding the GraphQL query (default: the built-in concepts query)")
	fs.StringVar(&h.ThesaurusField, "thesaurus-field", h.ThesaurusField, "field of data holding the concept connection")
	if code, stop := fs.Parse(args, stdout); stop {
		return code
	}
	usage := fs.Misuse
	switch {
	case *skipArch && *skipThes:
		return usage("--skip-arch and --skip-thesaurus together leave nothing to harvest")
	case *delay < 0:
		return usage("--delay %g: want 0 or more seconds", *delay)
	case !*skipThes && *thesURL == "":
		return usage("no thesaurus endpoint: pass --thesaurus-url or set LOAD_VOCAB_THESAURUS_URL, or --skip-thesaurus")
	}
	if *queryFile != "" {
		q, err := os.ReadFile(*queryFile)
		if err != nil {
			return usage("%v", err)
		}
		h.ThesaurusQuery = string(q)
	}
	h.ArchURL, h.ThesaurusURL = *archURL, *thesURL
	h.Delay = time.Duration(*delay * float64(time.Second))
	if adjust != nil {
		adjust(h)
	}

	var lists [][]vocabharvest.Term
	failed := false
	harvest := func(name string, f func(context.Context) ([]vocabharvest.Term, error)) {
		terms, err := f(ctx)
		if err != nil {
			failed = true
			var pe *vocabharvest.PartialError
			if errors.As(err, &pe) {
				fmt.Fprintf(stderr, "load-vocab: warning: %v; keeping the %d terms read before it\n", err, len(terms))
			} else {
				fmt.Fprintf(stderr, "load-vocab: warning: %v; nothing harvested from it\n", err)
			}
		}
		fmt.Fprintf(stdout, "%s: %d terms\n", name, len(terms))
		lists = append(lists, terms)
	}
	if !*skipArch {
		harvest("records source", h.Arch)
	}
	if !*skipThes {
		harvest("thesaurus", h.Thesaurus)
	}
	terms, dropped := vocabharvest.Merge(lists...)
	if len(terms) == 0 {
		fmt.Fprintf(stderr, "load-vocab: no terms harvested; %s not written\n", *out)
		return exitUsage
	}
	if err := vocabharvest.Write(*out, terms); err != nil {
		fmt.Fprintln(stderr, "load-vocab:", err)
		return exitUsage
	}
	fmt.Fprintf(stdout, "wrote %s: %d terms (%d duplicates dropped, records source first), %d requests\n", *out, len(terms), dropped, h.Requests())
	if failed {
		fmt.Fprintf(stderr, "load-vocab: incomplete: %s holds only what was read before the failure\n", *out)
		return exitPartial
	}
	return exitOK
}
