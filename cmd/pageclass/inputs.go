package main

import (
	"archivekit/internal/dirwalk"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"archivekit/internal/book"
	"archivekit/internal/cliflags"
	"archivekit/internal/filekind"
	"archivekit/internal/pageclass/imageio"
	"archivekit/internal/pageclass/results"
	"archivekit/internal/paradata"
	"archivekit/internal/shard"
)

// inputSet is what a run classifies: files under a root folder, which the
// FILE column is relative to.
type inputSet struct {
	Root  string
	Files []string
	// Exts are the collected extensions (lower case, with the dot).
	Exts []string
	// Keys gives each file its row key (results.Keyer: no two files share
	// one).
	Keys *results.Keyer
	// Skipped are the sub-folders that could not be read, with the reason.
	Skipped []paradata.Skipped
	// Left counts the files of a folder run that a decoder reads but whose
	// extension was not asked for, by extension (lower case, with the
	// dot): the run says what it left (leftReport).
	Left map[string]int
	// Nested counts the readable files in the sub-folders of a run
	// without --inner, which are looked into but not collected.
	Nested int
	// ByContent counts the files without a page extension whose content
	// reads as a page format (imageio.Sniff), by that format, when the run
	// did not take every format (-ff all collects them).
	ByContent map[string]int
	// oddNames are the files counted in ByContent whose names end in a
	// dot or a space (trailingOddity), which hides their extension: the
	// report names them (they were counted as ".png" left out of a run
	// asking for png, without a word of why).
	oddNames []string
	// Unread counts the images of formats that are not page formats (a
	// GIF, a BMP, a HEIF photo: filekind.OtherImage), by format: they were
	// left without a word, even by a run taking every format (-ff all).
	Unread map[string]int
	// Shard is the run's share (--shard; zero for all) and All the number
	// of files collected before it was taken.
	Shard shard.Spec
	All   int
	// PDF is set when any file collected (before the shard was taken)
	// is a PDF: the tables then have the PAGE_LABEL column.
	PDF bool
	// AllDigest is shard.InputsDigest of every file collected, for a
	// shard ("" for a whole run): --merge refuses shards of other lists.
	AllDigest string
	// books holds the pages of the books among the inputs (books.go);
	// nil when there is none.
	books *bookInputs
	// BookImages counts the image files of a folder run left out because
	// they are pages of a book of the run.
	BookImages int
	// leftFiles and nestedFiles are the files counted in Left and Nested:
	// those that turn out to be a book's pages are not left out
	// (addBooks takes them off).
	leftFiles, nestedFiles []string
}

// share keeps the files of one shard, keyed by their path relative to the
// root (internal/shard). Row keys stay those of the whole input (Keys is built
// from every file), so the shards' rows are the rows of a one-shot run.
func (s *inputSet) share(spec shard.Spec) {
	s.Shard, s.All = spec, len(s.Files)
	// Decided over every file, so that every shard's tables have the
	// same columns (--merge needs them).
	s.PDF = s.hasPDF()
	if spec.Whole() {
		return
	}
	mine := s.Files[:0:0]
	keys := make([]string, len(s.Files))
	for i, f := range s.Files {
		keys[i] = shard.Key(s.Root, f)
		if bp := s.page(f); bp != nil {
			keys[i] = bp.name
		}
		if spec.Has(keys[i]) {
			mine = append(mine, f)
		}
	}
	s.Files, s.AllDigest = mine, shard.InputsDigest(keys)
}

// extAliases are extensions collected together.
var extAliases = map[string][]string{
	".jpg":  {".jpg", ".jpeg"},
	".jpeg": {".jpg", ".jpeg"},
	".tif":  {".tif", ".tiff"},
	".tiff": {".tif", ".tiff"},
}

// AllFormats is the -ff value that collects every extension a decoder
// reads (imageio.Extensions).
const AllFormats = "all"

// parseExts turns "png" or "png,pdf" (dots optional) into lower-case
// extensions with the dot, aliases included; "all" is every extension
// pageclass reads.
func parseExts(list string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	if strings.EqualFold(strings.TrimSpace(list), AllFormats) {
		list = strings.Join(imageio.Extensions, ",")
	}
	for _, e := range strings.Split(list, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		all := extAliases[e]
		if all == nil {
			all = []string{e}
		}
		for _, a := range all {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-ff/--file_format: no extension in %q", list)
	}
	for _, e := range out {
		// Collecting files no decoder reads would fail each of them after
		// the models are loaded; say so at once.
		if !imageio.Supported(e) {
			return nil, fmt.Errorf("-ff/--file_format: %s is not a format pageclass reads (%s)", e, strings.Join(imageio.Extensions, ", "))
		}
	}
	return out, nil
}

// checkInput refuses a missing input: no -f, -d or --dir, a file that is
// not there or is a folder, a folder that is not there or is a file. It
// reads no folder, so a run checks it before it writes anything.
func checkInput(file, dir string) error {
	if isURL(file) {
		return nil // a book (books.go)
	}
	if file != "" {
		st, err := os.Stat(file)
		if err != nil {
			return cliflags.NoInput(fmt.Errorf("input file: %w", err))
		}
		if st.IsDir() {
			return cliflags.NoInput(fmt.Errorf("input file %s is a folder (use -d)", file))
		}
		return nil
	}
	if dir == "" {
		return cliflags.NoInput(errors.New("no input: give -f FILE, -d DIR or --dir"))
	}
	st, err := os.Stat(dir)
	if err != nil {
		hint := ""
		if errors.Is(err, fs.ErrNotExist) {
			hint = " (give -d an existing folder, or -f a file; a relative path is read from the current folder)"
		}
		return cliflags.NoInput(fmt.Errorf("input folder: %w%s", err, hint))
	}
	if !st.IsDir() {
		return cliflags.NoInput(fmt.Errorf("input folder %s is not a folder (use -f for one file)", dir))
	}
	return nil
}

// collect finds the inputs: -f one file (any extension), -d or --dir a folder
// (files whose extension is one of exts, sorted by path, nested folders
// only with inner). Hidden files and folders (".name") are skipped; files a
// decoder reads with another extension are counted in Left. pageFromName
// is the Keyer's rule (results.NewKeyer).
func collect(file, dir string, exts []string, inner, pageFromName bool) (*inputSet, error) {
	if err := checkInput(file, dir); err != nil {
		return nil, err
	}
	if file != "" {
		set := &inputSet{Root: filepath.Dir(file), Files: []string{file}, Exts: exts}
		set.Keys = results.NewKeyer(set.Root, set.Files, pageFromName)
		return set, nil
	}
	want := map[string]bool{}
	for _, e := range exts {
		want[e] = true
	}
	set := &inputSet{Root: dir, Exts: exts, Left: map[string]int{}, ByContent: map[string]int{}, Unread: map[string]int{}}
	all := true // every format is asked for: files are also taken by content
	for _, e := range imageio.Extensions {
		all = all && want[e]
	}
	err := walkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p != dir && d != nil && d.IsDir() && !inner {
				return filepath.SkipDir // not searched: nothing to report
			}
			if p != dir && d != nil && d.IsDir() {
				// An unreadable sub-folder is skipped and recorded like an
				// unreadable file; the rest of the folder is classified.
				reason := folderNotReadable + err.Error()
				if errors.Is(err, dirwalk.ErrWalked) {
					// A link back to a folder above, or a second link to
					// one folder: its files are classified once.
					reason = "a link to a folder already read (" + err.Error() + "): its files are classified once"
				}
				set.Skipped = append(set.Skipped, paradata.Skipped{File: p, Reason: reason})
				return filepath.SkipDir
			}
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			// Without inner, sub-folders are looked into only to count
			// the readable files left there.
			return nil
		}
		set.take(p, want, all, !inner && filepath.Dir(p) != filepath.Clean(dir))
		return nil
	})
	if err != nil {
		return nil, cliflags.NoInput(fmt.Errorf("reading input folder: %w", err))
	}
	sort.Strings(set.Files)
	set.Keys = results.NewKeyer(set.Root, set.Files, pageFromName)
	if len(set.Files) == 0 && set.books == nil {
		err := fmt.Errorf("no %s files in %s%s", strings.Join(exts, "/"), dir, map[bool]string{true: " or its sub-folders", false: " (nested folders not searched: --inner)"}[inner])
		if left := set.leftReport(); left != "" {
			err = fmt.Errorf("%w; %s", err, left)
		}
		return nil, cliflags.NoInput(err)
	}
	return set, nil
}

// take sorts one file of a folder walk: collected when its extension is
// wanted (or, with all, when it reads as a page by content), else counted
// as left; nested (in a sub-folder not searched) it is only counted.
func (s *inputSet) take(p string, want map[string]bool, all, nested bool) {
	if nested {
		if imageio.Supported(p) {
			s.Nested++
			s.nestedFiles = append(s.nestedFiles, p)
		}
		return
	}
	ext := strings.ToLower(filepath.Ext(p))
	switch {
	case want[ext]:
		s.Files = append(s.Files, p)
	case imageio.Supported(p):
		s.Left[ext]++
		s.leftFiles = append(s.leftFiles, p)
	default:
		head := readHead(p, book.LooksLen)
		if kind := imageio.Sniff(head); kind != "" && all {
			s.Files = append(s.Files, p)
		} else if kind != "" {
			s.ByContent[kind]++
			if trailingOddity(filepath.Base(p)) != "" {
				s.oddNames = append(s.oddNames, p)
			}
		} else if book.Looks(head) {
			// A METS file or a IIIF manifest: its pages are read later
			// (classifier.addBooks).
			if s.books == nil {
				s.books = &bookInputs{pages: map[string]*bookPage{}}
			}
			s.books.candidates = append(s.books.candidates, p)
		} else if other := filekind.OtherImage(head); other != "" && s.Unread != nil {
			s.Unread[other]++
		}
	}
}

// leftReport says which readable files a folder run did not collect: each
// extension with its count, then the -ff value that takes them with the
// ones collected ("" when none was left). For example "not collected: 4
// .jpg, 1 .pdf, 4 .tif (take them with -ff png,jpg,pdf,tif or -ff all)".
func (s *inputSet) leftReport() string {
	var says []string
	if len(s.Left) > 0 {
		var parts []string
		for _, e := range slices.Sorted(maps.Keys(s.Left)) {
			parts = append(parts, fmt.Sprintf("%d %s", s.Left[e], e))
		}
		says = append(says, fmt.Sprintf("not collected: %s (take them with -ff %s or -ff %s)", strings.Join(parts, ", "), s.takeAll(), AllFormats))
	}
	if len(s.ByContent) > 0 {
		var parts []string
		for _, e := range slices.Sorted(maps.Keys(s.ByContent)) {
			parts = append(parts, fmt.Sprintf("%d %s", s.ByContent[e], e))
		}
		says = append(says, fmt.Sprintf("files without a page extension that read as pages by content: %s (take them with -ff %s)", strings.Join(parts, ", "), AllFormats))
		if odd := s.oddReport(); odd != "" {
			says = append(says, odd)
		}
	}
	if s.Nested > 0 {
		says = append(says, fmt.Sprintf("%d readable files in sub-folders not searched (take them with --inner)", s.Nested))
	}
	if len(s.Unread) > 0 {
		var parts []string
		for _, e := range slices.Sorted(maps.Keys(s.Unread)) {
			parts = append(parts, fmt.Sprintf("%d %s", s.Unread[e], e))
		}
		says = append(says, fmt.Sprintf("images in formats pageclass does not read: %s (it reads PNG, JPEG, TIFF, JPEG 2000, WebP and PDF: convert them to one of those)", strings.Join(parts, ", ")))
	}
	return strings.Join(says, "; ")
}

// oddShown is how many of the files with odd names oddReport names.
const oddShown = 5

// oddReport names the files read as pages by content whose names end in a
// dot or a space (oddNames; the first oddShown, then how many more),
// relative to the root, each with what is odd about its name; "" when
// there is none. For example `of them, 2 have a name ending in a dot or a
// space (as a copy from Windows may leave), which hides the extension:
// "space.png " (a trailing space), "trail.png." (a trailing dot); rename
// them without the trailing dots and spaces`.
func (s *inputSet) oddReport() string {
	if len(s.oddNames) == 0 {
		return ""
	}
	var named []string
	for _, p := range s.oddNames[:min(len(s.oddNames), oddShown)] {
		rel, err := filepath.Rel(s.Root, p)
		if err != nil {
			rel = p
		}
		named = append(named, fmt.Sprintf("%q (%s)", rel, trailingOddity(filepath.Base(p))))
	}
	list := strings.Join(named, ", ")
	if more := len(s.oddNames) - oddShown; more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("of them, %d have a name ending in a dot or a space (as a copy from Windows may leave), which hides the extension: %s; rename them without the trailing dots and spaces", len(s.oddNames), list)
}

// trailingOddity says what is odd about the end of name, a file name
// ending in dots or spaces, which Windows drops (a file copied from there
// may keep them: "trail.png.", "space.png "): "a trailing dot", "a
// trailing space", "trailing dots", "trailing spaces" or "trailing dots
// and spaces"; "" for a name that ends otherwise.
func trailingOddity(name string) string {
	tail := name[len(strings.TrimRight(name, ". ")):]
	if tail == "" || tail == name {
		return "" // a name of dots and spaces only is no hidden extension
	}
	dots, spaces := strings.Count(tail, "."), strings.Count(tail, " ")
	switch {
	case spaces == 0 && dots == 1:
		return "a trailing dot"
	case spaces == 0:
		return "trailing dots"
	case dots == 0 && spaces == 1:
		return "a trailing space"
	case dots == 0:
		return "trailing spaces"
	}
	return "trailing dots and spaces"
}

// ContentLeft is the summary's name for the files left that read as the
// page format ext by content, without a page extension.
func ContentLeft(ext string) string { return "by content " + ext + " (-ff all)" }

// UnreadLeft is the summary's name for the images of a format that is not
// a page format.
func UnreadLeft(format string) string { return "not read: " + format }

// NestedLeft is the summary's name for the readable files left in
// sub-folders not searched (without --inner).
const NestedLeft = "in sub-folders (--inner)"

// takeAll is the -ff value that collects the run's extensions and the ones
// it left, aliases folded (jpeg with jpg, tiff with tif).
func (s *inputSet) takeAll() string {
	fold := map[string]string{".jpeg": "jpg", ".tiff": "tif"}
	seen := map[string]bool{}
	var out []string
	for _, e := range append(append([]string{}, s.Exts...), slices.Sorted(maps.Keys(s.Left))...) {
		name := strings.TrimPrefix(e, ".")
		if f, ok := fold[e]; ok {
			name = f
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return strings.Join(out, ",")
}

// baseInputKey is inputKey without the shard: the input of every shard of
// a run.
func baseInputKey(set *inputSet, file string, inner bool) string {
	root, err := filepath.Abs(set.Root)
	if err != nil {
		root = set.Root
	}
	return fmt.Sprintf("%s\x00%s\x00%v\x00%s", root, strings.Join(set.Exts, ","), inner, file)
}

// folderNotReadable begins the reason of a sub-folder that could not be
// listed.
const folderNotReadable = "folder not readable: "

// walkDir is dirwalk.Walk (links to folders followed, each folder once);
// tests replace it to make a sub-folder unreadable where permissions cannot
// (the tests run as root).
var walkDir = dirwalk.Walk

// inputKey identifies the input of a run: absolute root, extensions, inner,
// the single file.
func inputKey(set *inputSet, file string, inner bool) string {
	key := baseInputKey(set, file, inner)
	if !set.Shard.Whole() {
		// Each shard continues its own chunked tables.
		key += "\x00shard " + set.Shard.String()
	}
	return key
}

// chunkKey is everything that decides the rows of a chunked run's tables:
// the input, the inputs whose row keys were changed to avoid a collision
// (results.Keyer.Renamed: a file added since an interrupted run can change
// an existing file's key, and the old row would stay beside the new one),
// the models (by name and digest of their files) and their precision, top-N, raw and the
// ensemble tables asked for. A re-run with the same key continues
// the same tables; any difference starts new ones, so rows of another model
// or another top-N are never kept in a table labelled for this run.
type chunkKey struct {
	Input         string   `json:"input"`
	Renamed       []string `json:"renamed,omitempty"`
	ImageKeys     string   `json:"image_keys,omitempty"`
	Models        []string `json:"models"`
	Digests       []string `json:"digests"`
	TopN          int      `json:"topn"`
	Raw           bool     `json:"raw"`
	Best          bool     `json:"best"`
	Average       bool     `json:"average"`
	Intermediates bool     `json:"save_intermediates"`
	// Precision is the forward passes' arithmetic unless fp32
	// (precisionKey).
	Precision string `json:"precision,omitempty"`
}

// stamp replaces the time stamp in the output names of a chunked run:
// "chunk-" and 10 hex digits of the key's hash.
func (k chunkKey) stamp() string {
	b, _ := json.Marshal(k)
	h := sha256.Sum256(b)
	return "chunk-" + hex.EncodeToString(h[:])[:10]
}

// hasPDF reports whether the run's input holds a PDF: a file named .pdf, or
// a lone file given with -f whose content is a PDF (its tables then have the
// PAGE_LABEL column).
func (s *inputSet) hasPDF() bool {
	for _, f := range s.Files {
		if strings.EqualFold(filepath.Ext(f), ".pdf") {
			return true
		}
	}
	if len(s.Files) == 1 {
		if f, err := os.Open(s.Files[0]); err == nil {
			head := make([]byte, 8)
			n, _ := io.ReadFull(f, head)
			f.Close()
			return imageio.IsPDF(head[:n])
		}
	}
	return false
}
