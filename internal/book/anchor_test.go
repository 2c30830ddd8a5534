package book

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestAnchorVolumes: the anchor METS of a multi-volume work is an
// ErrNoPages whose AnchorError lists its volumes, in order, where a
// caller reads them: a relative href beside the anchor, a URL as it is.
func TestAnchorVolumes(t *testing.T) {
	dir := t.TempDir()
	anchor := filepath.Join(dir, "work.xml")
	body := `<mets:mets xmlns:mets="http://www.loc.gov/METS/" xmlns:xlink="http://www.w3.org/1999/xlink"><mets:structMap TYPE="LOGICAL">
	  <mets:div TYPE="multivolume_work"><mets:div TYPE="volume"><mets:mptr LOCTYPE="URL" xlink:href="vol1/mets.xml"/></mets:div>
	  <mets:div TYPE="volume"><mets:mptr LOCTYPE="URL" xlink:href="https://example.org/v2/mets.xml"/></mets:div>
	  <mets:div TYPE="volume"><mets:mptr LOCTYPE="URL" xlink:href="vol1/mets.xml"/></mets:div></mets:div></mets:structMap></mets:mets>`
	if err := os.WriteFile(anchor, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Read(context.Background(), anchor, Options{})
	var a *AnchorError
	if !errors.Is(err, ErrNoPages) || !errors.As(err, &a) {
		t.Fatalf("err %v, want an AnchorError that is ErrNoPages", err)
	}
	if want := []string{filepath.Join(dir, "vol1", "mets.xml"), "https://example.org/v2/mets.xml"}; !slices.Equal(a.Volumes, want) || a.Location != anchor {
		t.Errorf("anchor %s, volumes %q; want %s, %q", a.Location, a.Volumes, anchor, want)
	}
}
