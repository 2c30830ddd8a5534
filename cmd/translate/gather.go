package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"archivekit/internal/atomicfile"
	"archivekit/internal/ledger"
	"archivekit/internal/regularfile"
	"archivekit/internal/utf8name"
)

// Shards that wrote to output folders of their own (on machines without a
// shared folder) are merged into one: --merge -o OUT DIR... copies each
// chosen shard run's translations and logs into OUT at their place in the
// tree, with its run metadata, failures table and ledger files, before
// the merged run metadata is written there. Every file is checked before
// any is copied: one OUT already holds with other content, or an output a
// shard lists that its folder lacks, refuses the merge, naming it.
// The files a shard downloaded (its folder's downloaded_inputs: URL inputs
// and a book's remote text files) are copied into the merged run's
// download folder after them, where it has none of that name, so that a
// --resume into OUT (the --resume --book-out that writes a book the
// shares shared) fetches nothing again: the ledger's fetch records, copied
// with it, take each file only with the bytes fetched.

// gatherFile is a file of a shard's folder to copy into the merged one.
type gatherFile struct{ from, to string }

// gather copies into out what the chosen shard runs outside it wrote, and
// points each run's Path and outputs at the copies.
func gather(out, downloads string, runs []shardDoc, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) error {
	var files []gatherFile
	copied := map[string]string{} // destination → source
	add := func(from, to string) error {
		if prev, ok := copied[to]; ok && prev != from {
			return fmt.Errorf("--merge: %s and %s would both be copied to %s", prev, from, to)
		}
		copied[to] = from
		files = append(files, gatherFile{from, to})
		return nil
	}
	moved := map[int][]string{} // run → its outputs, as copied
	for i, r := range runs {
		dir := filepath.Dir(r.Path)
		if sameDir(dir, out) {
			continue
		}
		recorded, _ := r.Doc.Config["output_dir"].(string)
		for _, o := range r.Doc.Outputs {
			rel, err := filepath.Rel(recorded, o)
			if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
				return fmt.Errorf("--merge: %s lists output %s outside its output folder %s", r.Path, o, recorded)
			}
			rel = namedFile(dir, rel)
			if err := add(filepath.Join(dir, rel), filepath.Join(out, rel)); err != nil {
				return err
			}
			moved[i] = append(moved[i], filepath.Join(out, rel))
		}
		for _, f := range []string{r.Path, failuresBeside(r.Path)} {
			if err := add(f, filepath.Join(out, filepath.Base(f))); err != nil {
				return err
			}
		}
		ledgers, _ := filepath.Glob(filepath.Join(dir, LedgerFolder, "translate_*", "*.jsonl"))
		for _, f := range ledgers {
			rel, _ := filepath.Rel(dir, f)
			if err := add(f, filepath.Join(out, rel)); err != nil {
				return err
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	// Every file is checked before any is written: by its digest, read as
	// a stream (a shard's translations may be larger than memory), then
	// copied as a stream.
	absent := make([]bool, len(files))
	for i, f := range files {
		d, err := ledger.Digest(f.from)
		if errors.Is(err, fs.ErrNotExist) && strings.HasSuffix(f.from, "_failures.csv") {
			absent[i] = true // a run stopped before its table: none to copy
			continue
		}
		if err != nil {
			return fmt.Errorf("--merge: %w", err)
		}
		if have, err := ledger.Digest(f.to); err == nil && have != d {
			return fmt.Errorf("--merge: %s is already in %s with other content than %s: not overwritten (move it away)", f.to, out, f.from)
		}
	}
	n := 0
	for i, f := range files {
		if absent[i] {
			continue // an empty file is copied, empty
		}
		if err := copyFile(f.from, f.to); err != nil {
			return fmt.Errorf("--merge: %w", err)
		}
		n++
	}
	fetched, kept, missing, err := gatherAllDownloads(out, downloads, runs)
	if err != nil {
		return err
	}
	for _, m := range missing {
		log.Warn("a shard's download folder was not found: its downloads are not copied, and a run that needs them fetches them again", "download_dir", m)
	}
	repoint(out, runs, moved)
	log.Info("shard folders gathered", "into", out, "files", n, "downloads_copied", fetched, "downloads_already_there", kept)
	return nil
}

// repoint points each run copied into out at its copies: its run
// metadata's place and its outputs (moved, by run).
func repoint(out string, runs []shardDoc, moved map[int][]string) {
	for i := range runs {
		if to, ok := moved[i]; ok || !sameDir(filepath.Dir(runs[i].Path), out) {
			runs[i].Doc.Outputs = to
			runs[i].Path = filepath.Join(out, filepath.Base(runs[i].Path))
		}
	}
}

// gatherAllDownloads copies into downloads the downloads of each folder of
// runs other than out (gatherDownloads), each download folder once. A
// shard run's download folder is the one its run metadata records
// (config.download_dir; default <output>/downloaded_inputs), found where
// it lies from the shard's folder as it lay from the output folder the
// run recorded (folders moved together keep it), else at the recorded
// path; one found nowhere is said in the log (missing), and its downloads
// are fetched again by the run that needs them.
func gatherAllDownloads(out, downloads string, runs []shardDoc) (copied, left int, missing []string, err error) {
	seen := map[string]bool{}
	for _, r := range runs {
		dir := filepath.Dir(r.Path)
		if sameDir(dir, out) {
			continue
		}
		from, ok := shardDownloads(dir, r.Doc.Config)
		if !ok {
			missing = append(missing, from)
			continue
		}
		if seen[from] || sameDir(from, downloads) {
			continue
		}
		seen[from] = true
		c, k, err := gatherDownloads(from, downloads)
		if err != nil {
			return copied, left, missing, fmt.Errorf("--merge: %w", err)
		}
		copied, left = copied+c, left+k
	}
	return copied, left, missing, nil
}

// shardDownloads is the download folder of the shard run whose run
// metadata (config) lies in dir: false when the run recorded one of its
// own that is found neither beside dir as it was beside the run's output
// folder nor at its recorded path (the path is returned to name it).
func shardDownloads(dir string, config map[string]any) (string, bool) {
	def := filepath.Join(dir, "downloaded_inputs")
	output, _ := config["output_dir"].(string)
	recorded, _ := config["download_dir"].(string)
	if output == "" || recorded == "" || filepath.Clean(recorded) == filepath.Join(output, "downloaded_inputs") {
		return def, true // the default, or a run before download_dir was recorded
	}
	if rel, err := filepath.Rel(output, recorded); err == nil && !filepath.IsAbs(rel) {
		if p := filepath.Join(dir, rel); isDir(p) {
			return p, true
		}
	}
	return recorded, isDir(recorded)
}

// isDir says whether p is a folder.
func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// gatherDownloads copies the files of the download folder from into the
// folder to, each to the same path, streamed, where to has no file of that
// path (one there is left as it is: a --resume takes a download only with
// the bytes its ledger recorded, so a differing one is fetched again, never
// used). It counts the files copied and those left.
func gatherDownloads(from, to string) (copied, left int, err error) {
	err = filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == from {
			return filepath.SkipDir // the shard downloaded nothing
		}
		if err != nil || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") && strings.Contains(d.Name(), ".tmp-") {
			return err // partial downloads (atomicfile's temporaries) are not taken
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if _, err := os.Lstat(dst); err == nil {
			left++
			return nil
		}
		if err := copyFile(p, dst); err != nil {
			return err
		}
		copied++
		return nil
	})
	return copied, left, err
}

// copyFile copies the regular file from to the path to (its folder made
// when missing), streamed, written atomically.
func copyFile(from, to string) error {
	src, err := regularfile.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	return atomicfile.Write(to, 0o666, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// namedFile is rel, a file under dir as run metadata names it, as it is
// named on disk: the run metadata writes a name that is not UTF-8 with
// \xNN for each stray byte (utf8name.Escape), so where no file of that
// name is there, the name with those escapes undone is taken when a file
// of it is (a name that holds the text "\x8e" itself is taken as it is).
func namedFile(dir, rel string) string {
	if !strings.Contains(rel, `\x`) {
		return rel
	}
	if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
		return rel
	}
	raw := utf8name.Unescape(rel)
	if _, err := os.Lstat(filepath.Join(dir, raw)); err == nil {
		return raw
	}
	return rel
}

// failuresBeside is the failures table beside run metadata path.
func failuresBeside(path string) string {
	return strings.TrimSuffix(path, ".json") + "_failures.csv"
}
