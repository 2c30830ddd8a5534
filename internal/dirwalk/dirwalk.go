// Package dirwalk walks a folder tree as a user of a folder of scans
// expects: as filepath.WalkDir does, except that a symbolic link to a
// folder, the root included, is walked as the folder it points to (under
// the link's own path), and each folder is walked once.
package dirwalk

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrWalked is wrapped by the error Walk passes to its function for a
// folder reached a second time (through a link: a loop back to a folder
// above it, or a second link to one folder). The folder is not walked
// again; the error names the path it was walked under.
var ErrWalked = errors.New("folder walked already")

// Walk walks the tree at root, calling fn for each file and folder in
// lexical order, as filepath.WalkDir does (fn's filepath.SkipDir and
// filepath.SkipAll mean what they mean there, and a folder that cannot be
// listed is passed to fn a second time with the error). A symbolic link to
// a folder is passed to fn as a folder (d.IsDir() is true, d.Type() has
// fs.ModeDir) and walked; a link to a file or to nothing is passed as
// filepath.WalkDir passes it, as the link. A folder reached again is passed
// to fn with an error wrapping ErrWalked and not walked.
func Walk(root string, fn fs.WalkDirFunc) error {
	return new(Walker).Walk(root, fn)
}

// A Walker walks several trees, each folder once across all of them (a
// link in one tree to a folder of another, walked already, is not walked
// again). The zero Walker is ready to use.
type Walker struct {
	seen *seen
}

// Walk walks the tree at root as the package's Walk does, passing over
// the folders w walked or marked before.
func (w *Walker) Walk(root string, fn fs.WalkDirFunc) error {
	if w.seen == nil {
		w.seen = newSeen()
	}
	info, err := os.Stat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = (&walker{fn: fn, seen: w.seen}).walk(root, fs.FileInfoToDirEntry(info))
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

// Mark records the folder dir as walked, under its own path, without
// walking it: a link into it (or to a folder above it) is then passed over.
func (w *Walker) Mark(dir string) error {
	if w.seen == nil {
		w.seen = newSeen()
	}
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	w.seen.add(info, dir)
	return nil
}

type walker struct {
	fn   fs.WalkDirFunc
	seen *seen
}

// walk calls fn for path and, for a folder, walks its entries.
func (w *walker) walk(path string, d fs.DirEntry) error {
	if !d.IsDir() {
		return w.fn(path, d, nil)
	}
	if info, err := d.Info(); err == nil {
		if first, ok := w.seen.add(info, path); !ok {
			if err := w.fn(path, d, fmt.Errorf("%w under %s", ErrWalked, first)); err != nil && err != filepath.SkipDir {
				return err
			}
			return nil
		}
	}
	if err := w.fn(path, d, nil); err != nil {
		if err == filepath.SkipDir {
			return nil
		}
		return err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		if err := w.fn(path, d, err); err != nil {
			if err == filepath.SkipDir {
				return nil
			}
			return err
		}
	}
	for _, e := range entries {
		p := filepath.Join(path, e.Name())
		if e.Type()&fs.ModeSymlink != 0 {
			// os.Stat names the FileInfo after p: the entry keeps the
			// link's name.
			if info, err := os.Stat(p); err == nil && info.IsDir() {
				e = fs.FileInfoToDirEntry(info)
			}
		}
		if err := w.walk(p, e); err != nil {
			if err == filepath.SkipDir {
				break // fn skipped the rest of this folder from a file
			}
			return err
		}
	}
	return nil
}
