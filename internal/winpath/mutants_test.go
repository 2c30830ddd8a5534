package winpath

import "testing"

// Without this, paths on drive A: or Z: (the first and last letters)
// would not be taken for Windows paths, and a path with one leading
// backslash would be taken for a UNC share.
func TestDriveLetterEdges(t *testing.T) {
	for _, tc := range []struct {
		p   string
		abs bool
	}{
		{`A:\scans`, true}, {`z:/out`, true}, {`@:\x`, false}, {`[:\x`, false}, {`\server\share`, false},
	} {
		if IsAbs(tc.p) != tc.abs {
			t.Errorf("IsAbs(%q) = %v, want %v", tc.p, !tc.abs, tc.abs)
		}
	}
}
