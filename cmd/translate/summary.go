package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// summaryFigures are the figures of a run's summary (runner.logSummary).
type summaryFigures struct {
	files, translated, doneBefore, failed, failedBefore, untried, withoutText int
	units, unitsSkipped, notCollected                                         int
	segments, languages                                                       map[string]int
	output                                                                    string
}

// summaryText is the summary a run writes at its end on a terminal: what
// was translated, failed and left, then the units, the segments' states
// and the source languages, largest first.
func summaryText(f summaryFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Summary: %s, %d translated, %d failed", plural(f.files, "file"), f.translated, f.failed)
	if f.failed > 0 {
		b.WriteString(" (the failures table says why)")
	}
	b.WriteString("\n")
	if f.doneBefore > 0 || f.failedBefore > 0 {
		fmt.Fprintf(&b, "  of them %d translated and %d failed in earlier runs (kept from the ledger)\n", f.doneBefore, f.failedBefore)
	}
	if f.untried > 0 {
		fmt.Fprintf(&b, "  NOT FINISHED: %s left to do; run again with --resume to translate them\n", plural(f.untried, "file"))
	}
	if f.withoutText > 0 {
		as := "they were"
		if f.withoutText == 1 {
			as = "it was"
		}
		fmt.Fprintf(&b, "  %s without text, written as %s\n", plural(f.withoutText, "document"), as)
	}
	fmt.Fprintf(&b, "  units (blocks, regions, fields): %d translated, %d skipped\n", f.units, f.unitsSkipped)
	list := func(title string, m map[string]int) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(&b, "  %s:\n", title)
		keys := slices.SortedFunc(maps.Keys(m), func(a, c string) int { return cmp.Or(cmp.Compare(m[c], m[a]), cmp.Compare(a, c)) })
		for _, k := range keys {
			fmt.Fprintf(&b, "    %7d  %s\n", m[k], k)
		}
	}
	list("segments by state (the _log.csv files)", f.segments)
	list("source languages (units)", f.languages)
	if f.notCollected > 0 {
		fmt.Fprintf(&b, "  %s of the folder not collected (listed in the run metadata's config.not_collected)\n", plural(f.notCollected, "file"))
	}
	fmt.Fprintf(&b, "  outputs in %s\n", f.output)
	return b.String()
}

// plural is n and noun, plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
