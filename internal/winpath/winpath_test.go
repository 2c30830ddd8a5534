package winpath

import "testing"

func TestIsAbs(t *testing.T) {
	for _, tc := range []struct {
		p          string
		drive, unc bool
	}{
		{`C:\scans\0001.tif`, true, false},
		{`d:/out`, true, false},
		{`\\server\share\0002.png`, false, true},
		{`images\0001.tif`, false, false},
		{`/srv/out`, false, false},
		{`C:`, false, false},
		{`1:\x`, false, false},
		{`file:///C:/x`, false, false},
	} {
		if IsDrive(tc.p) != tc.drive || IsUNC(tc.p) != tc.unc || IsAbs(tc.p) != (tc.drive || tc.unc) {
			t.Errorf("%q: drive %v unc %v abs %v; want drive %v unc %v", tc.p, IsDrive(tc.p), IsUNC(tc.p), IsAbs(tc.p), tc.drive, tc.unc)
		}
	}
}
