package ledger

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
	if f := l.Foreign(); r.Resume && len(f) > 0 {
		// A shared folder's ledger (a team's) is taken as it was; one
		// planted by another user of a world-writable folder was taken
		// without a word.
		files := make([]string, len(f))
		uids := map[int]bool{}
		for i, x := range f {
			files[i] = x.File
			uids[x.UID] = true
		}
		log.Warn("--resume: items recorded by another user's runs are taken as done (their ledger files are not yours); move them away to do those items again",
			"ledgers", files, "owners", ownerNames(uids))
	}
	if r.Resume && l.Len() == 0 {
		if others := otherLedgers(filepath.Join(r.Output, Folder), r.Tool, key); len(others) > 0 {
			// A resume with other settings (another service address,
			// language, model) starts a ledger of its own and does every
			// item again; it did so without a word.
			log.Warn("--resume: nothing recorded with this run's settings in this folder, but a run with other settings left a ledger here; "+
				"its items are not taken as done: give the same settings to resume it (differs says which settings differ)",
				"ledgers", others, "differs", settingsDiffer(others, r.Config))
		}
	}
	return l, key, nil
}

// ownerNames names the users of uids (their numbers where the system
// cannot), sorted.
func ownerNames(uids map[int]bool) []string {
	var out []string
	for uid := range uids {
		name := strconv.Itoa(uid)
		if u, err := user.LookupId(name); err == nil {
			name = u.Username
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
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

// settingsDiffer says, for each ledger folder in ledgers, which settings of
// the run that wrote it differ from config ("url: http://a there,
// http://b now"), read from the header of one of its files; at most
// maxDiffers settings each.
func settingsDiffer(ledgers []string, config any) []string {
	now := flatSettings(config)
	var out []string
	for _, dir := range ledgers {
		there, err := ledgerSettings(dir)
		if err != nil {
			out = append(out, fmt.Sprintf("%s: %v", filepath.Base(dir), err))
			continue
		}
		var diffs []string
		for _, k := range unionKeys(there, now) {
			a, inThere := there[k]
			b, inNow := now[k]
			switch {
			case !inThere:
				diffs = append(diffs, fmt.Sprintf("%s: not set there, %s now", k, b))
			case !inNow:
				diffs = append(diffs, fmt.Sprintf("%s: %s there, not set now", k, a))
			case a != b:
				diffs = append(diffs, fmt.Sprintf("%s: %s there, %s now", k, a, b))
			}
		}
		if len(diffs) > maxDiffers {
			diffs = append(diffs[:maxDiffers], fmt.Sprintf("and %d more", len(diffs)-maxDiffers))
		}
		if len(diffs) == 0 {
			diffs = []string{"the same settings under another ledger format"}
		}
		out = append(out, filepath.Base(dir)+": "+strings.Join(diffs, "; "))
	}
	return out
}

// maxDiffers bounds the settings settingsDiffer lists for one ledger.
const maxDiffers = 6

// ledgerSettings reads the configuration in the header of the first run
// file of the ledger folder dir, flattened (flatSettings).
func ledgerSettings(dir string) (map[string]string, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no run file")
	}
	sortRuns(files)
	f, err := os.Open(files[0])
	if err != nil {
		return nil, err
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return nil, fmt.Errorf("%s: header not read: %w", filepath.Base(files[0]), err)
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("%s: header not read: %w", filepath.Base(files[0]), err)
	}
	var v any
	if err := json.Unmarshal(h.Detail, &v); err != nil {
		return nil, fmt.Errorf("%s: header without settings", filepath.Base(files[0]))
	}
	return flatSettings(v), nil
}

// flatSettings flattens a configuration's JSON form into dotted names and
// their values as JSON text ("model.name": "\"v4\"").
func flatSettings(config any) map[string]string {
	b, err := json.Marshal(config)
	if err != nil {
		return nil
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, x := range m {
				name := k
				if prefix != "" {
					name = prefix + "." + k
				}
				walk(name, x)
			}
			return
		}
		b, _ := json.Marshal(v)
		out[prefix] = string(b)
	}
	walk("", v)
	return out
}

// unionKeys are the keys of a and b, sorted.
func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}
