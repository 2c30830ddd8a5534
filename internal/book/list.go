package book

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"archivekit/internal/regularfile"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// ErrList is wrapped by ReadList's error for a line that names neither a
// URL nor a local book.
var ErrList = errors.New("bad list of books")

// ListItem is one location of a list (ReadList).
type ListItem struct {
	// Location is an http(s) URL as written, or the path of a local file
	// (a relative path is resolved against the list's folder).
	Location string
	// Line is its line in the list, from 1.
	Line int
}

// IsURL says whether s is an http or https URL with a host.
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// IsList says whether the local file at path is a list of books, by its
// content: its first LooksLen bytes are text (UTF-8, no control characters
// but tabs and line ends) and its first line that is neither blank nor a
// # comment is an http(s) URL or names a file that exists (relative to the
// list's folder). A text file named .txt whose first line is neither is
// taken as a list too, so that ReadList names the line that is wrong; the
// name alone never makes a list (an image, or XML or JSON, named .txt is
// not one). A file that cannot be read is not a list: its reader reports
// why.
func IsList(path string) bool {
	head, err := ReadHead(path)
	if err != nil {
		return false
	}
	if head = listText(head); !isText(head) {
		return false
	}
	first, ok := firstLocation(head)
	if !ok || strings.ContainsAny(first[:1], "<{[") {
		return false // nothing listed, or markup or JSON
	}
	if IsURL(first) || strings.EqualFold(filepath.Ext(path), ".txt") {
		return true
	}
	p := first
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(path), p)
	}
	_, err = os.Stat(p)
	return err == nil
}

// ListsURLs says whether data (a file's bytes, or their first LooksLen) is a
// list of books by URL, as IsList tells it without a folder to look in:
// text whose first line that is neither blank nor a # comment is an
// http(s) URL. A service given an upload uses it: a list is the command
// line's input, not a document.
func ListsURLs(data []byte) bool {
	head := listText(data[:min(len(data), LooksLen)])
	if !isText(head) {
		return false
	}
	first, ok := firstLocation(head)
	return ok && IsURL(first)
}

// listText is a list's start as UTF-8 (asUTF8: Notepad's "Unicode" is
// UTF-16) without the Ctrl-Z that DOS-era editors end a file with.
func listText(head []byte) []byte {
	return bytes.TrimRight(asUTF8(head), "\x1a")
}

// isText says whether head is UTF-8 text without control characters other
// than tab, CR and LF (a byte-order mark allowed; a character cut at the
// end of head too).
// IsText says whether head (a file's first bytes) is text: UTF-8 with no
// control characters but tabs and line ends (a byte-order mark allowed).
func IsText(head []byte) bool { return isText(head) }

func isText(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\ufeff"))
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n <= 1 {
			return len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:])
		}
		if r < 0x20 && r != '\t' && r != '\r' && r != '\n' || r == 0x7f {
			return false
		}
		i += n
	}
	return true
}

// firstLocation is the first line of head that is neither blank nor a #
// comment, trimmed (false when there is none).
func firstLocation(head []byte) (string, bool) {
	for _, line := range strings.Split(strings.TrimPrefix(string(head), "\ufeff"), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return line, true
		}
	}
	return "", false
}

// ReadList reads a list of books, as both tools take it: one location a
// line, an http(s) URL or the path of a local file that reads as a book
// (Looks: a METS file or a IIIF manifest or collection; relative to the
// list's folder). Blank lines, lines starting with # and a byte-order mark
// are passed over. A line that is neither (a path to another kind of file,
// a file that is not there, another scheme) is an error wrapping ErrList
// that names the list and the line. URLs are not fetched: what they hold
// is told when they are read (a tool may take a URL of a document that is
// not a book).
func ReadList(path string) ([]ListItem, error) {
	f, err := regularfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []ListItem
	// A byte-order mark says the encoding (a list saved as Notepad's
	// "Unicode" is UTF-16: it was not read as a list); without one, UTF-8.
	sc := bufio.NewScanner(transform.NewReader(f, unicode.BOMOverride(encoding.Nop.NewDecoder())))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		// A Ctrl-Z ending the file (DOS-era editors) is no character of
		// a location.
		line := strings.TrimSpace(strings.TrimRight(strings.TrimPrefix(sc.Text(), "\ufeff"), "\x1a"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if IsURL(line) {
			out = append(out, ListItem{Location: line, Line: n})
			continue
		}
		p := line
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		if why := notABook(p); why != "" {
			return nil, fmt.Errorf("%w: %s:%d: not an http(s) URL: %q, nor a local METS file or IIIF manifest (%s)", ErrList, path, n, line, why)
		}
		out = append(out, ListItem{Location: p, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// notABook says why the local file p is not a book ("" when it reads as
// one).
func notABook(p string) string {
	head, err := ReadHead(p)
	if err != nil {
		return err.Error()
	}
	if !Looks(head) {
		return "it is another kind of file"
	}
	return ""
}

// ReadHead returns the first LooksLen bytes of the local file p (fewer
// when it is shorter), for Looks and Sniff; a path that is not a regular
// file is refused unread.
func ReadHead(p string) ([]byte, error) {
	f, err := regularfile.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, LooksLen)
	k, err := io.ReadFull(f, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return head[:k], nil
}
