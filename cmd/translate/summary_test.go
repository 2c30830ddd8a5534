package main

import "testing"

// TestSummaryText: the block a run writes at its end on a terminal.
func TestSummaryText(t *testing.T) {
	got := summaryText(summaryFigures{files: 90, translated: 20, doneBefore: 6, failed: 1, untried: 63, withoutText: 1, units: 2380, unitsSkipped: 6,
		segments: map[string]int{"ok": 4158, "in_target": 6, "unsupported_lang": 24}, languages: map[string]int{"cs": 2078, "sk": 302}, notCollected: 1, output: "out"})
	want := `Summary: 90 files, 20 translated, 1 failed (the failures table says why)
  of them 6 translated and 0 failed in earlier runs (kept from the ledger)
  NOT FINISHED: 63 files left to do; run again with --resume to translate them
  1 document without text, written as it was
  units (blocks, regions, fields): 2380 translated, 6 skipped
  segments by state (the _log.csv files):
       4158  ok
         24  unsupported_lang
          6  in_target
  source languages (units):
       2078  cs
        302  sk
  1 file of the folder not collected (listed in the run metadata's config.not_collected)
  outputs in out
`
	if got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}
