// Package regularfile reads input files that must be regular files. A
// device, pipe or socket (or a link to one, such as a link to /dev/zero,
// which would grow without end) is refused before anything is read.
package regularfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular is returned (wrapped) for a path that is a device, a pipe,
// a socket or a directory; links are followed first.
var ErrNotRegular = errors.New("not a regular file")

// Read returns the contents of the regular file at path. Errors are
// *os.PathError values; for a file that is not regular its Err wraps
// ErrNotRegular and names the kind of file.
func Read(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return data, nil
}

// ErrSizeChanged is returned (wrapped) by ReadSized for a file that does
// not hold the number of bytes its size said when it was opened.
var ErrSizeChanged = errors.New("size changed while the file was read")

// ReadSized returns the contents of the regular file at path (refused as
// Open refuses), read into one buffer of the size the opened file's stat
// gives: the read is bounded by that size whatever happens to the file
// meanwhile, and takes one allocation. A file that holds fewer or more bytes
// than that size (written to while read; or a file whose size does not
// tell, as under /proc) is an error wrapping ErrSizeChanged.
func ReadSized(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data := make([]byte, st.Size())
	if n, err := io.ReadFull(f, data); err == io.ErrUnexpectedEOF {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, its size said %d", ErrSizeChanged, n, len(data))}
	} else if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	var more [1]byte
	if n, _ := f.Read(more[:]); n > 0 {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: more than the %d bytes its size said", ErrSizeChanged, len(data))}
	}
	return data, nil
}

// Open opens path for reading when it is a regular file (checked before
// opening, so a named pipe is never opened and blocks nothing, and again on
// the file opened); anything else is ErrNotRegular.
func Open(path string) (*os.File, error) {
	if st, err := os.Stat(path); err != nil {
		return nil, brokenLink(path, err)
	} else if !st.Mode().IsRegular() {
		return nil, notRegular(path, st.Mode())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat() // the file opened may not be the one checked
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, st.Mode())
	}
	return f, nil
}

// brokenLink is err, os.Stat's of path, said as a link whose target does
// not exist when path is one ("no such file or directory" named a file
// that a listing shows).
func brokenLink(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	target, lerr := os.Readlink(path)
	if lerr != nil {
		return err
	}
	return &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("a link to %s, which does not exist: %w", target, fs.ErrNotExist)}
}

func notRegular(path string, m os.FileMode) error {
	return &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, Kind(m))}
}

// Kind names the type of a file for messages: "a directory", "a character
// device", "a named pipe" ...
func Kind(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "mode " + m.String()
}
