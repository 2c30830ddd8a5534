// Package ledger records, item by item, what a long batch run has done, so
// that a run stopped at any point (Ctrl-C, kill -9, a lost machine) can be
// resumed without repeating a completed item.
//
// A ledger is a folder per tool and run configuration (its key, Key of
// everything that decides an item's result: models and their digests,
// program version). Each run appends to a file of its own in that folder,
// created exclusively, so runs at the same time (shards, or two runs on one
// results folder) never write to the same file and need no lock. A file is
// JSON lines: a header (tool, configuration key and its detail), then one
// Entry per completed item: the item's name (its path relative to the input
// root), the SHA-256 of its content, its state (done, failed with a reason,
// skipped) and the tool's result data, written as soon as the item
// completes, in one write call.
//
// Open reads every file of the folder. An item is known by its name and
// content digest together: a file rewritten since it was recorded has
// another digest and is done again. When several runs recorded one item, a
// done entry beats a skipped one, which beats a failure (the content and the
// configuration are the same, so a result is a result); among equals the
// later file (by name) and line wins. A kill can leave a torn last line (no
// newline, or not JSON): it is ignored, and that item is simply done again.
// A bad line elsewhere is damage and an error naming the file and line.
package ledger

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"archivekit/internal/atomicfile"
	"archivekit/internal/fileowner"
	"archivekit/internal/regularfile"
)

// Version is the ledger format written in the header.
const Version = 1

// State is what became of an item.
type State string

// The states of an item.
const (
	Done    State = "done"
	Failed  State = "failed"
	Skipped State = "skipped"
)

// Entry is one completed item.
type Entry struct {
	// Item names the item: its path relative to the input root, with "/".
	Item string `json:"item"`
	// Digest is the SHA-256 (hex) of the item's content (Digest).
	Digest string `json:"sha256"`
	State  State  `json:"state"`
	// Reason says why a failed or skipped item has no result.
	Reason string `json:"reason,omitempty"`
	// At is when the item completed (RFC 3339, UTC).
	At string `json:"at,omitempty"`
	// Data is the tool's result of the item, from which its outputs are
	// written again on a resumed run.
	Data json.RawMessage `json:"data,omitempty"`
}

// entryJSON is Entry without its methods, for its JSON form.
type entryJSON Entry

// entryText is an entry's JSON form, its item a Text.
type entryText struct {
	entryJSON
	Item Text `json:"item"`
}

// MarshalJSON writes an entry, its Item as a Text: a name that is not
// valid UTF-8 (a file name in a one-byte encoding, "z\xe1pis.png" unpacked
// from a Windows archive) is kept whole, so a resumed run finds the item
// again (JSON strings cannot hold it: it was written with U+FFFD, and the
// file was translated or classified again on every resumed run).
func (e Entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(entryText{entryJSON(e), Text(e.Item)})
}

// UnmarshalJSON reads an entry written by MarshalJSON.
func (e *Entry) UnmarshalJSON(b []byte) error {
	var v entryText
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Entry(v.entryJSON)
	e.Item = string(v.Item)
	return nil
}

// Text is a string that keeps, through JSON, bytes that are not UTF-8: it
// is written as a JSON string when it is valid UTF-8, else as
// {"text": ..., "bytes": ...}, the text with U+FFFD for the stray bytes (to
// be read) and the bytes in base64, which UnmarshalJSON takes back. A JSON
// string reads as it always did.
type Text string

type textBytes struct {
	Text  string `json:"text"`
	Bytes []byte `json:"bytes"`
}

// MarshalJSON writes t as a JSON string, or as an object when it is not
// valid UTF-8.
func (t Text) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(t)) {
		return json.Marshal(string(t))
	}
	return json.Marshal(textBytes{strings.ToValidUTF8(string(t), "\uFFFD"), []byte(t)})
}

// UnmarshalJSON reads a Text written by MarshalJSON.
func (t *Text) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var v textBytes
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*t = Text(v.Bytes)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = Text(s)
	return nil
}

// header is the first line of a ledger.
type header struct {
	Ledger int             `json:"ledger"`
	Tool   string          `json:"tool"`
	Config string          `json:"config"`
	Detail json.RawMessage `json:"config_detail,omitempty"`
}

// Ledger is the ledger folder of one configuration, read, with this run's
// file open for appending. Its methods are safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	dir     string
	path    string
	f       *os.File
	entries map[string]Entry
	items   map[string]bool // the items with any entry
	files   int
	torn    []string
	foreign []Foreign // earlier files another user owns
	ended   []string  // the other runs' files that no live process holds
	now     func() time.Time
}

// Key is the configuration key of v: the first 16 hex digits of the SHA-256
// of its JSON encoding.
func Key(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])[:16], nil
}

// Digest is the SHA-256 (hex) of the content of the file at path; a path
// that is not a regular file (a link to /dev/zero, a pipe) is refused
// unread (regularfile.ErrNotRegular).
func Digest(path string) (string, error) {
	f, err := regularfile.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// DigestBytes is Digest of content already read: a tool that reads an
// input to process it takes its digest from the same bytes, reading it
// once.
func DigestBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Open reads the ledger folder dir of tool and the configuration key
// config (every *.jsonl file in it), then creates dir/name (a name of this
// run's own, such as its time stamp; where a file of that name exists, an
// earlier run of the same stamp whose run metadata was since removed,
// name_2.jsonl, name_3.jsonl, …, which sort after it) for this run's
// entries, with a header holding detail (any JSON value) for people reading
// it. A file of another tool or configuration in dir is refused: the key is
// in the folder name chosen by the caller, so a mismatch means the folder
// is not what its name says.
func Open(dir, tool, config string, detail any, name string) (*Ledger, error) {
	for _, d := range []string{filepath.Dir(dir), dir} { // ledger/ and its folder for this configuration
		if err := atomicfile.NotOthersLink(d); err != nil {
			return nil, fmt.Errorf("ledger folder: %w", err)
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("ledger folder: %w", err)
	}
	l := &Ledger{dir: dir, entries: map[string]Entry{}, items: map[string]bool{}, now: time.Now}
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sortRuns(paths)
	for _, p := range paths {
		if err := l.read(p, tool, config); err != nil {
			return nil, err
		}
		if uid, ok := ownerOf(p); ok && uid != geteuid() {
			l.foreign = append(l.foreign, Foreign{File: p, UID: uid})
		}
		if !held(p) {
			l.ended = append(l.ended, p)
		}
	}
	det, err := json.Marshal(detail)
	if err != nil {
		return nil, err
	}
	head, err := json.Marshal(header{Ledger: Version, Tool: tool, Config: config, Detail: det})
	if err != nil {
		return nil, err
	}
	f, err := l.create(dir, name)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	// The run holds its file locked while it runs, so a later run can tell
	// a run still going from one that ended (Ended); the lock dies with the
	// process, also when it is killed. The file is new (created
	// exclusively), so the lock fails only where the file system has no
	// flock; held then says every file is held, and no run counts as ended.
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if _, err := f.Write(append(head, '\n')); err != nil {
		f.Close()
		return nil, fmt.Errorf("ledger %s: %w", l.path, err)
	}
	l.f = f
	return l, nil
}

// sortRuns sorts run files in the order the runs began, for later
// entries to replace earlier ones of the same rank (put): by folder, then
// by name without ".jsonl", so that a stamp comes before the same stamp
// with a suffix, as the runs claimed them (paradata.Claim's stamp-2,
// create's stamp_2), where "stamp-2.jsonl" would sort before
// "stamp.jsonl" as a whole name and an earlier run's row would win.
func sortRuns(paths []string) {
	key := func(p string) (string, string) {
		return filepath.Dir(p), strings.TrimSuffix(filepath.Base(p), ".jsonl")
	}
	sort.SliceStable(paths, func(i, j int) bool {
		di, ni := key(paths[i])
		dj, nj := key(paths[j])
		if di != dj {
			return di < dj
		}
		return naturalLess(ni, nj)
	})
}

// naturalLess orders names with their runs of digits compared as numbers,
// so a run stamped S-9 comes before S-10 (and S before S-2).
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		ca, ra := leadingRun(a)
		cb, rb := leadingRun(b)
		a, b = ra, rb
		if ca == cb {
			continue
		}
		if isDigit(ca[0]) && isDigit(cb[0]) {
			na, nb := strings.TrimLeft(ca, "0"), strings.TrimLeft(cb, "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			return len(ca) < len(cb)
		}
		return ca < cb
	}
	return len(a) < len(b)
}

// leadingRun splits s after its first run of digits or of other bytes.
func leadingRun(s string) (run, rest string) {
	d := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == d {
		i++
	}
	return s[:i], s[i:]
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// create creates this run's file, dir/name or the first of name_2,
// name_3, … (before its extension) that does not exist, and sets l.path.
func (l *Ledger) create(dir, name string) (*os.File, error) {
	ext := filepath.Ext(name)
	for i := 1; ; i++ {
		try := name
		if i > 1 {
			try = fmt.Sprintf("%s_%d%s", strings.TrimSuffix(name, ext), i, ext)
		}
		l.path = filepath.Join(dir, try)
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o666)
		if !errors.Is(err, os.ErrExist) || i == 1000 {
			return f, err
		}
	}
}

// read adds the entries of one run's file, whose header must name tool
// and config (any, when tool is "").
func (l *Ledger) read(path, tool, config string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("ledger %s: %w", path, err)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	l.files++
	for i, line := range lines {
		last := i == len(lines)-1
		complete := line[len(line)-1] == '\n'
		if i == 0 {
			var h header
			if !complete || json.Unmarshal(line, &h) != nil {
				if last {
					return nil // a header torn by a kill: no entry
				}
				return fmt.Errorf("ledger %s: line 1 is not a ledger header", path)
			}
			if tool != "" && (h.Tool != tool || h.Config != config || h.Ledger != Version) {
				return fmt.Errorf("ledger %s belongs to %s configuration %s (format %d), not %s configuration %s: move it away",
					path, h.Tool, h.Config, h.Ledger, tool, config)
			}
			continue
		}
		var e Entry
		if !complete || json.Unmarshal(line, &e) != nil || e.Item == "" || e.Digest == "" || !known(e.State) {
			if last {
				l.torn = append(l.torn, path) // torn by a kill: that item is done again
				return nil
			}
			return fmt.Errorf("ledger %s: line %d is not a ledger entry (the file is damaged; move it away and its items are done again)", path, i+1)
		}
		l.put(e)
	}
	return nil
}

// Finished counts the items a ledger file records as finished (done,
// skipped or failed; a fetch record is not an item), for the run metadata
// of the run that wrote it (a killed run's, which says nothing of them). A
// torn last line is not counted.
func Finished(path string) (int, error) {
	l := &Ledger{entries: map[string]Entry{}, items: map[string]bool{}}
	if err := l.read(path, "", ""); err != nil { // any tool's and configuration's
		return 0, err
	}
	n := 0
	for item := range l.items {
		if !strings.HasPrefix(item, FetchItem("")) {
			n++
		}
	}
	return n, nil
}

// rank orders the states: a result beats a skip beats a failure.
var rank = map[State]int{Failed: 0, Skipped: 1, Done: 2}

// known reports whether s is one of the states (an entry of another state
// would be restored as neither a result nor a failure).
func known(s State) bool {
	_, ok := rank[s]
	return ok
}

func id(item, digest string) string { return item + "\x00" + digest }

func (l *Ledger) put(e Entry) {
	l.items[e.Item] = true
	k := id(e.Item, e.Digest)
	if old, ok := l.entries[k]; ok && rank[old.State] > rank[e.State] {
		return
	}
	l.entries[k] = e
}

// Path returns this run's ledger file.
func (l *Ledger) Path() string { return l.path }

// Dir returns the ledger folder.
func (l *Ledger) Dir() string { return l.dir }

// Foreign is an earlier run's file written by another user.
type Foreign struct {
	File string
	UID  int
}

// Foreign returns the earlier run files read that another user owns: in a
// shared results folder a resume takes their entries as done (a team's
// group folder is meant to share them), which OpenRun says.
func (l *Ledger) Foreign() []Foreign { return append([]Foreign(nil), l.foreign...) }

// geteuid is os.Geteuid; a test stands in for another user with it.
var geteuid = os.Geteuid

// ownerOf is the user id owning path.
func ownerOf(path string) (int, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, false
	}
	return fileowner.Of(fi)
}

// Files returns the number of earlier runs' files read.
func (l *Ledger) Files() int { return l.files }

// Torn returns the files whose torn last line was ignored.
func (l *Ledger) Torn() []string { return l.torn }

// Len returns the number of items recorded (each item once).
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// Lookup returns the last entry of the item with this content digest.
func (l *Ledger) Lookup(item, digest string) (Entry, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.entries[id(item, digest)]
	return e, ok
}

// Has reports whether the item has an entry of any content digest: an
// item it has not cannot be done, whatever its content, so a caller need
// not read the item to look it up.
func (l *Ledger) Has(item string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.items[item]
}

// Record appends e as one line to this run's file. It is written with a
// single write call, so a process killed at any point leaves either the
// whole line or a torn last line that Open ignores. It is not synced to the disk (Close syncs): a
// process kill loses nothing written, a power cut may lose the last lines.
func (l *Ledger) Record(e Entry) error {
	if e.Item == "" || e.Digest == "" {
		return fmt.Errorf("ledger %s: entry without item or digest", l.path)
	}
	if !known(e.State) {
		return fmt.Errorf("ledger %s: %s: unknown state %q", l.path, e.Item, e.State)
	}
	if e.At == "" {
		e.At = l.now().UTC().Format(time.RFC3339)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return fmt.Errorf("ledger %s: record after close", l.path)
	}
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("ledger %s: %w", l.path, err)
	}
	l.put(e)
	return nil
}

// held reports whether a live process holds the ledger file at path (its
// run is still going). A file that cannot be opened counts as not held; one
// that cannot be locked (a file system without flock) counts as held.
func held(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil
}

// Ended returns the files of the folder's earlier runs whose runs have
// ended (finished, failed or killed): no process holds them. A run still
// going, and this run's own file, are not listed.
func (l *Ledger) Ended() []string { return append([]string(nil), l.ended...) }

// Close syncs and closes this run's file. It is safe to call twice.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// Read returns the entries of one ledger file (for tests and tools); a torn
// last line ends the list.
func Read(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	n := 0
	for sc.Scan() {
		n++
		if n == 1 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			break // a torn last line
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
