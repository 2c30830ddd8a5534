package cliflags

import (
	"errors"
	"strings"
	"testing"
)

// TestWindowsPath: a Windows path given for an output folder is refused (a
// drive letter with a separator, a UNC path) or warned about (other
// backslashes), naming where it came from; a path of this machine passes.
func TestWindowsPath(t *testing.T) {
	for _, tc := range []struct {
		path      string
		err, warn string // substrings; "" for none
	}{
		{`C:\Users\scan\out`, `-o: "C:\Users\scan\out" is a Windows path: on this machine give a path such as /mnt/c/Users/scan/out (where the drive is mounted); backslashes are not folder separators here`, ""},
		{`d:/results`, `"d:/results" is a Windows path: on this machine give a path such as /mnt/d/results`, ""},
		{`C:\`, `such as /mnt/c (where`, ""},
		{`\\server\share\out`, `-o: "\\server\share\out" is a Windows (UNC) path: on this machine give a path such as /mnt/...`, ""},
		{`\\?\C:\out`, `Windows (UNC) path`, ""},
		{`results\run1`, "", `-o: "results\run1" has backslashes, and backslashes are not folder separators here: it makes a single folder (or file) named with them, not folders in folders (write results/run1 for those)`},
		{`/data/res\run1`, "", `(write /data/res/run1 for those)`},
		{`\results`, "", "has backslashes"},
		{"C:\\out\x01", `"C:\\out\x01" is a Windows path`, ""},
		{"", "", ""},
		{"/mnt/c/Users/scan/out", "", ""},
		{"./result", "", ""},
		{"C:", "", ""},             // a folder named C: in the working folder
		{"C:results", "", ""},      // likewise: not a drive with a separator
		{"1:/x", "", ""},           // not a drive letter
		{"//server/share", "", ""}, // a POSIX path (/server/share)
		{"results run1", "", ""},
	} {
		warn, err := WindowsPath("-o", tc.path)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: error %v", tc.path, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.path, err, tc.err)
		case err != nil && !errors.As(err, new(UsageError)):
			t.Errorf("%q: error %v is not a usage error", tc.path, err)
		}
		if (tc.warn == "") != (warn == "") || !strings.Contains(warn, tc.warn) {
			t.Errorf("%q: warning %q, want %q", tc.path, warn, tc.warn)
		}
	}
}
