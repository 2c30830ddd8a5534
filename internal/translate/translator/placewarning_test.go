package translator

import "testing"

func TestPlaceWarning(t *testing.T) {
	for _, tc := range []struct{ msg, dir, name, want string }{
		{"0001: 2 lines emptied", "volA", "0001.alto.xml", "volA/0001: 2 lines emptied"},
		{"0001.alto.xml: named like ALTO", "volA", "0001.alto.xml", "volA/0001.alto.xml: named like ALTO"},
		{"0001: 2 lines emptied", "", "0001.alto.xml", "0001: 2 lines emptied"},
		{"0001: 2 lines emptied", ".", "0001.alto.xml", "0001: 2 lines emptied"},
		{"another: text", "volA", "0001.alto.xml", "another: text"},
	} {
		if got := PlaceWarning(tc.msg, tc.dir, tc.name); got != tc.want {
			t.Errorf("PlaceWarning(%q, %q, %q) = %q, want %q", tc.msg, tc.dir, tc.name, got, tc.want)
		}
	}
}
