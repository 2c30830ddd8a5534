package ledger

import (
	"log/slog"
	"path/filepath"
)

// Folder is the folder of the run ledgers inside a tool's output folder
// (both tools': <output>/ledger/<tool>_<key>/).
const Folder = "ledger"

// Run says which ledger a run opens (OpenRun).
type Run struct {
	// Output is the tool's output folder; the ledger folder is
	// Output/ledger/<Tool>_<key>.
	Output string
	// Tool names the tool ("pageclass", "translate").
	Tool string
	// Config is everything that decides an item's result; its Key names
	// the ledger folder, and it is written in the header of the run's file.
	Config any
	// Name is the run's own file name without ".jsonl": its stamp (and
	// share), so runs at the same time never share a file.
	Name string
	// Redo ends the warning logged for a torn last line of an earlier run
	// ("that input is translated again").
	Redo string
	// Resume: the run was asked to resume; with nothing recorded under its
	// settings while another configuration's ledger is in the folder, it
	// says so (OpenRun).
	Resume bool
}

// OpenRun opens the ledger of a run: it reads the ledger folder of the
// run's configuration, Output/ledger/<Tool>_<Key(Config)>, and starts the
// run's file in it (Open), warning in log of each earlier file whose last
// line a kill tore. It returns the ledger and the configuration key.
func OpenRun(r Run, log *slog.Logger) (*Ledger, string, error) {
	key, err := Key(r.Config)
	if err != nil {
		return nil, "", err
	}
	l, err := Open(filepath.Join(r.Output, Folder, r.Tool+"_"+key), r.Tool, key, r.Config, r.Name+".jsonl")
	if err != nil {
		return nil, "", err
	}
	for _, t := range l.Torn() {
		log.Warn("ledger: the last line was torn by an interrupted run and is ignored; "+r.Redo, "ledger", t)
	}
	if r.Resume && l.Len() == 0 {
		if others := otherLedgers(filepath.Join(r.Output, Folder), r.Tool, key); len(others) > 0 {
			// A resume with other settings (another service address,
			// language, model) starts a ledger of its own and does every
			// item again; it did so without a word.
			log.Warn("--resume: nothing recorded with this run's settings in this folder, but a run with other settings left a ledger here; "+
				"its items are not taken as done: give the same settings to resume it (the run metadata's config.ledger_key and each ledger's header say which)",
				"ledgers", others)
		}
	}
	return l, key, nil
}

// otherLedgers are the ledger folders of tool under dir whose key is not
// key and that hold a run's file.
func otherLedgers(dir, tool, key string) []string {
	matches, _ := filepath.Glob(filepath.Join(dir, tool+"_*"))
	var out []string
	for _, m := range matches {
		if filepath.Base(m) == tool+"_"+key {
			continue
		}
		if files, _ := filepath.Glob(filepath.Join(m, "*.jsonl")); len(files) > 0 {
			out = append(out, m)
		}
	}
	return out
}
