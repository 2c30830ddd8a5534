// Package config reads INI files the way Python's configparser does (the
// set-up files of both tools; the classifier's typed settings are
// internal/pageclass/settings).
//
// INI dialect (the configparser defaults):
//   - "[name]" starts a section; section names are case-sensitive (a
//     reader may take one that differs in case only: MatchSections).
//   - "key = value" or "key: value"; keys are case-insensitive (stored
//     lower-case), surrounding white space is trimmed, the value may be empty.
//   - Lines whose first non-blank character is '#' or ';' are comments.
//     Inline comments are not recognised: "a = 1 # x" has the value "1 # x".
//   - An indented line following a key continues its value (joined with "\n").
//   - A key outside any section, a duplicate section or a duplicate key in one
//     section is an error naming the file and line.
//   - Keys of a "[DEFAULT]" section are visible in every section that does not
//     set them itself.
//
// Files as Windows editors save them are read too (Decode): UTF-8 with a
// byte order mark, UTF-16 with one (Notepad's "Unicode"), and a Ctrl-Z
// (0x1A, the end-of-file mark of DOS editors) as the very last byte.
package config

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"archivekit/internal/regularfile"

	"golang.org/x/text/encoding/unicode"
)

// DefaultSection is the section whose keys every other section inherits.
const DefaultSection = "DEFAULT"

// File is a parsed INI file.
type File struct {
	// Path names the file in error messages.
	Path     string
	sections map[string]map[string]string
	order    []string
	keyOrder map[string][]string
}

// ValueError reports a key whose value cannot be converted to the wanted type.
type ValueError struct {
	File, Section, Key, Value string
	// Want describes the accepted values, e.g. "an integer".
	Want string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s: [%s] %s = %q: want %s", e.File, e.Section, e.Key, e.Value, e.Want)
}

// SyntaxError reports a malformed line.
type SyntaxError struct {
	File string
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Load reads and parses the INI file at path.
func Load(path string) (*File, error) {
	f, err := regularfile.Open(path) // a device or pipe is refused unread
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(path, f)
}

// MaxSize bounds the configuration text Parse reads: a file over it is no
// configuration file (one named by mistake), refused unread beyond it.
const MaxSize = 16 << 20

// ctrlZ is the end-of-file mark old DOS and Windows editors append.
const ctrlZ = 0x1A

// Decode returns the text of a configuration file as UTF-8: a leading UTF-8
// byte order mark is dropped, and a file starting with a UTF-16 one (FF FE,
// little-endian, as Notepad's "Unicode" saves; FE FF, big-endian) is
// decoded from UTF-16. Text that still holds a NUL byte (UTF-16 without a
// byte order mark, UTF-32, a binary file) is refused, naming path and the
// line. A trailing Ctrl-Z is left to Parse, which drops it: Decode can be
// run before Parse (translate reads the text first) without dropping a
// second one.
func Decode(path string, data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		// ExpectBOM: the mark chooses the byte order and is not kept.
		text, err := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder().Bytes(data)
		if err != nil {
			return nil, fmt.Errorf("%s: reading the file as UTF-16 (it starts with a UTF-16 byte order mark): %w; save it as UTF-8", path, err)
		}
		data = text
	default:
		data = bytes.TrimPrefix(data, []byte("\ufeff"))
	}
	if i := bytes.IndexByte(data, 0); i >= 0 {
		line := 1 + bytes.Count(data[:i], []byte("\n"))
		return nil, &SyntaxError{path, line, "a NUL byte: the file is not UTF-8 text (UTF-16 without a byte order mark, or UTF-32?): save it as UTF-8"}
	}
	return data, nil
}

// Parse parses INI text from r; path names the source in errors. The text
// is read as Decode reads it, and a Ctrl-Z as its very last byte is
// dropped (only there: anywhere else it is an error of its line).
func Parse(path string, r io.Reader) (*File, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%s: over %d MiB: not a configuration file", path, MaxSize>>20)
	}
	if data, err = Decode(path, data); err != nil {
		return nil, err
	}
	data = bytes.TrimSuffix(data, []byte{ctrlZ})
	f := &File{Path: path, sections: map[string]map[string]string{}, keyOrder: map[string][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var sec, lastKey string
	n := 0
	for sc.Scan() {
		n++
		raw := strings.TrimRight(sc.Text(), "\r")
		line := strings.TrimSpace(raw)
		if line == "" || line[0] == '#' || line[0] == ';' {
			if line == "" {
				lastKey = ""
			}
			continue
		}
		if raw[0] == ' ' || raw[0] == '\t' {
			if lastKey != "" {
				f.sections[sec][lastKey] += "\n" + line
				continue
			}
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return nil, &SyntaxError{path, n, fmt.Sprintf("section header %q lacks ']'", line)}
			}
			sec = strings.TrimSpace(line[1:end])
			if sec == "" {
				return nil, &SyntaxError{path, n, "empty section name"}
			}
			if _, dup := f.sections[sec]; dup {
				return nil, &SyntaxError{path, n, fmt.Sprintf("duplicate section [%s]", sec)}
			}
			f.sections[sec] = map[string]string{}
			f.order = append(f.order, sec)
			lastKey = ""
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i <= 0 {
			return nil, &SyntaxError{path, n, fmt.Sprintf("expected key = value, got %q", line)}
		}
		if sec == "" {
			return nil, &SyntaxError{path, n, fmt.Sprintf("key %q outside any section", strings.TrimSpace(line[:i]))}
		}
		key := strings.ToLower(strings.TrimSpace(line[:i]))
		if _, dup := f.sections[sec][key]; dup {
			return nil, &SyntaxError{path, n, fmt.Sprintf("duplicate key %q in [%s]", key, sec)}
		}
		f.sections[sec][key] = strings.TrimSpace(line[i+1:])
		f.keyOrder[sec] = append(f.keyOrder[sec], key)
		lastKey = key
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// MatchSections gives each section whose name is one of names but for the
// case of its letters ("[setup]" for SETUP) that name, where the file has
// no section of that exact name: a section name is case-sensitive in the
// INI syntax (Python's configparser), and "[setup]" had every key of it
// reported unknown. It returns the sections renamed, as "setup -> SETUP".
func (f *File) MatchSections(names []string) []string {
	var renamed []string
	for i, s := range f.order {
		if s == DefaultSection || slices.Contains(names, s) {
			continue
		}
		for _, n := range names {
			if _, taken := f.sections[n]; strings.EqualFold(s, n) && !taken {
				f.sections[n], f.keyOrder[n], f.order[i] = f.sections[s], f.keyOrder[s], n
				delete(f.sections, s)
				delete(f.keyOrder, s)
				renamed = append(renamed, s+" -> "+n)
				break
			}
		}
	}
	return renamed
}

// Sections lists the section names in file order, without DEFAULT.
func (f *File) Sections() []string {
	var out []string
	for _, s := range f.order {
		if s != DefaultSection {
			out = append(out, s)
		}
	}
	return out
}

// HasSection reports whether the section exists.
func (f *File) HasSection(section string) bool {
	_, ok := f.sections[section]
	return ok
}

// Keys lists the keys set in section (lower-case, file order), followed by
// inherited DEFAULT keys it does not override.
func (f *File) Keys(section string) []string {
	out := append([]string(nil), f.keyOrder[section]...)
	if section != DefaultSection {
		for _, k := range f.keyOrder[DefaultSection] {
			if _, own := f.sections[section][k]; !own {
				out = append(out, k)
			}
		}
	}
	return out
}

// Get returns the raw value of section/key (key case-insensitive) and
// whether it is present, falling back to the DEFAULT section.
func (f *File) Get(section, key string) (string, bool) {
	key = strings.ToLower(key)
	if v, ok := f.sections[section][key]; ok {
		return v, true
	}
	v, ok := f.sections[DefaultSection][key]
	return v, ok
}

// String returns the value of section/key, or def when absent.
func (f *File) String(section, key, def string) string {
	if v, ok := f.Get(section, key); ok {
		return v
	}
	return def
}

// Bool returns the boolean value of section/key, or def when absent.
// Accepted (case-insensitive): 1 yes true on / 0 no false off.
func (f *File) Bool(section, key string, def bool) (bool, error) {
	v, ok := f.Get(section, key)
	if !ok {
		return def, nil
	}
	b, good := ParseBool(v)
	if !good {
		return def, f.valueErr(section, key, v, "a boolean (true/false, yes/no, on/off, 1/0)")
	}
	return b, nil
}

// Int returns the integer value of section/key, or def when absent.
func (f *File) Int(section, key string, def int) (int, error) {
	v, ok := f.Get(section, key)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return def, f.valueErr(section, key, v, "an integer")
	}
	return n, nil
}

// Float returns the floating-point value of section/key, or def when absent.
func (f *File) Float(section, key string, def float64) (float64, error) {
	v, ok := f.Get(section, key)
	if !ok {
		return def, nil
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return def, f.valueErr(section, key, v, "a number")
	}
	return x, nil
}

// Map returns a copy of all keys and values of section, DEFAULT included.
func (f *File) Map(section string) map[string]string {
	out := map[string]string{}
	for _, k := range f.Keys(section) {
		out[k], _ = f.Get(section, k)
	}
	return out
}

func (f *File) valueErr(section, key, v, want string) error {
	return &ValueError{File: f.Path, Section: section, Key: strings.ToLower(key), Value: v, Want: want}
}

// Invalid is the *ValueError for section/key's value, which is not what
// want describes (for checks of a typed reader beyond Int, Float, Bool).
func (f *File) Invalid(section, key, want string) error {
	v, _ := f.Get(section, key)
	return f.valueErr(section, key, v, want)
}

// OwnKeys lists the keys set in section itself (lower-case, file order),
// without inherited DEFAULT keys.
func (f *File) OwnKeys(section string) []string {
	return append([]string(nil), f.keyOrder[section]...)
}

// ParseBool interprets s as configparser's getboolean does.
func ParseBool(s string) (value, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "yes", "true", "on":
		return true, true
	case "0", "no", "false", "off":
		return false, true
	}
	return false, false
}
