package settings

import (
	"archivekit/internal/config"
	"errors"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func shippedPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "setup", "config.txt")
}

// The shipped file sets every key of spec 2.8, no other key, and the values
// the code falls back to.
func TestShippedConfig(t *testing.T) {
	f, err := config.Load(shippedPath())
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Unknown) != 0 {
		t.Errorf("unknown keys in shipped config: %v", s.Unknown)
	}
	for _, b := range s.bindings() {
		if !slices.Contains(f.OwnKeys(b.section), strings.ToLower(b.key)) {
			t.Errorf("shipped config lacks [%s] %s", b.section, b.key)
		}
	}
	if want := Defaults(); !reflect.DeepEqual(s, want) {
		t.Errorf("shipped config differs from Defaults:\n%+v\n%+v", s, want)
	}
	if got := strings.Join(f.Sections(), " "); got != "OUTPUT EVAL TRAIN SETUP FASTCLS INPUT HUB DOCUMENT" {
		t.Errorf("sections %q", got)
	}
	if s.Hub.RepoName != "" || s.Hub.Token != "" {
		t.Error("repo_name and token must ship empty")
	}
}

// TestSectionCase: a section named in other case ("[setup]") is read as
// the section ([SETUP]); its keys were all reported unknown and ignored.
// Where the file has both, the other one's keys stay unknown.
func TestSectionCase(t *testing.T) {
	for _, c := range []struct {
		in      string
		top     int
		unknown []string
	}{
		{"[setup]\ntop_n = 5\n", 5, nil},
		{"[Setup]\nTOP_N = 4\n[train]\nlr = 1e-4\n", 4, nil},
		{"[SETUP]\ntop_n = 2\n[setup]\ntop_n = 5\n", 2, []string{"[setup] top_n"}},
	} {
		f, err := config.Parse("my.txt", strings.NewReader(c.in))
		if err != nil {
			t.Fatal(err)
		}
		s, err := FromFile(f)
		if err != nil || s.Setup.TopN != c.top || !reflect.DeepEqual(s.Unknown, c.unknown) {
			t.Errorf("%q: top_n %d, unknown %v, error %v; want %d, %v", c.in, s.Setup.TopN, s.Unknown, err, c.top, c.unknown)
		}
	}
}

func TestSettingsOverridesAndErrors(t *testing.T) {
	in := "[SETUP]\nTOP_N = 5\nraw = yes\nbatch = 0\n[INPUT]\nchunk_size = ten\n[TRAIN]\nlr = 1e-4\ntraining = 1\nepoch = 4\n"
	f, err := config.Parse("my.txt", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	s, err := FromFile(f)
	if s.Setup.TopN != 5 || !s.Setup.Raw || s.Train.LR != 1e-4 || !s.Train.Training || s.Setup.FilesFormat != "png" {
		t.Errorf("overrides not applied: %+v", s.Setup)
	}
	if !reflect.DeepEqual(s.Unknown, []string{"[TRAIN] epoch"}) {
		t.Errorf("unknown = %v", s.Unknown)
	}
	for _, want := range []string{`my.txt: [SETUP] batch = "0": want an integer of at least 1`, `my.txt: [INPUT] chunk_size = "ten": want an integer`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	var ve *config.ValueError
	if !errors.As(err, &ve) {
		t.Error("errors are not ValueErrors")
	}
	for _, bad := range []string{"[SETUP]\ntop_N = 12\n", "[SETUP]\ntop_N = 0\n", "[TRAIN]\ntest_size = 0.9\n", "[SETUP]\nraw = maybe\n"} {
		f, _ := config.Parse("b.txt", strings.NewReader(bad))
		if _, err := FromFile(f); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
