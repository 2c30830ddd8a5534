package bookout

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const collection3 = `{"@context": "http://iiif.io/api/presentation/3/context.json",
 "id": "https://example.org/coll", "type": "Collection", "label": {"en": ["Volumes"]},
 "items": [
  {"id": "https://example.org/m1", "type": "Manifest", "label": {"en": ["Volume 1"]}},
  {"id": "https://example.org/m2", "type": "Manifest", "label": {"en": ["Volume 2"]},
   "items": [{"id": "https://example.org/m2/c1", "type": "Canvas"}]},
  {"id": "https://example.org/sub", "type": "Collection", "items": [
   {"id": "https://example.org/m3", "type": "Manifest", "label": {"en": ["Volume 3"]}}]},
  {"id": "https://example.org/m4", "type": "Manifest"}]}`

const collection2 = `{"@context": "http://iiif.io/api/presentation/2/context.json",
 "@id": "https://example.org/coll2", "@type": "sc:Collection", "label": "Volumes",
 "manifests": [{"@id": "https://example.org/v1", "@type": "sc:Manifest", "label": "Volume 1"},
  {"@id": "https://example.org/v2", "@type": "sc:Manifest", "label": "Volume 2",
   "sequences": [{"canvases": [{"@id": "https://example.org/v2/c1", "@type": "sc:Canvas"}]}]}]}`

func TestCollectionManifest(t *testing.T) {
	for _, tt := range []struct {
		src, id string
		ok      bool
		canvas  string
	}{
		{collection3, "https://example.org/m1", false, ""}, // by reference
		{collection3, "https://example.org/m2", true, "https://example.org/m2/c1"},
		{collection3, "https://example.org/m3", false, ""},
		{collection3, "https://example.org/none", false, ""},
		{collection2, "https://example.org/v2", true, "https://example.org/v2/c1"},
		{collection2, "https://example.org/v1", false, ""},
	} {
		got, ok, err := CollectionManifest([]byte(tt.src), tt.id)
		if err != nil || ok != tt.ok || (ok && !strings.Contains(string(got), tt.canvas)) {
			t.Errorf("CollectionManifest(%s) = %s, %v, %v; want ok %v", tt.id, got, ok, err, tt.ok)
		}
		if ok {
			if _, err := ManifestVersion(got); err != nil {
				t.Errorf("%s: the embedded manifest is not one: %v", tt.id, err)
			}
		}
	}
	if _, _, err := CollectionManifest([]byte(`{"type": "Manifest"}`), "x"); err == nil {
		t.Error("a manifest taken for a collection")
	}
}

func TestDerivedCollection(t *testing.T) {
	out, unlisted, err := DerivedCollection([]byte(collection3), "https://pub.example/c_classes.json", map[string]string{
		"https://example.org/m1": "https://pub.example/c_1_classes.json",
		"https://example.org/m2": "https://pub.example/c_2_classes.json",
		"https://example.org/m3": "https://pub.example/c_3_classes.json",
	})
	if err != nil || len(unlisted) != 0 {
		t.Fatal(err, unlisted)
	}
	var c struct {
		ID    string `json:"id"`
		Items []struct {
			ID    string         `json:"id"`
			Type  string         `json:"type"`
			Label map[string]any `json:"label"`
			Items []struct {
				ID   string `json:"id"`
				Type string `json:"type"`
			} `json:"items"`
		} `json:"items"`
	}
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	if c.ID != "https://pub.example/c_classes.json" || len(c.Items) != 4 {
		t.Fatalf("%s", out)
	}
	for i, want := range []string{"https://pub.example/c_1_classes.json", "https://pub.example/c_2_classes.json", "https://example.org/sub", "https://example.org/m4"} {
		if c.Items[i].ID != want {
			t.Errorf("member %d: %s, want %s", i, c.Items[i].ID, want)
		}
	}
	if c.Items[1].Items != nil || c.Items[1].Label == nil || c.Items[1].Type != "Manifest" {
		t.Errorf("the embedded member is not a reference with its label: %+v", c.Items[1])
	}
	if sub := c.Items[2].Items; len(sub) != 1 || sub[0].ID != "https://pub.example/c_3_classes.json" {
		t.Errorf("the nested collection's member: %+v", sub)
	}

	out, _, err = DerivedCollection([]byte(collection2), "https://pub.example/c2.json", map[string]string{"https://example.org/v2": "https://pub.example/v2d.json"})
	if err != nil || !strings.Contains(string(out), `"@id": "https://pub.example/c2.json"`) || !strings.Contains(string(out), `"@id": "https://pub.example/v2d.json"`) ||
		strings.Contains(string(out), "sequences") || !strings.Contains(string(out), `"@id": "https://example.org/v1"`) {
		t.Errorf("v2: %s, %v", out, err)
	}
	if _, unlisted, err := DerivedCollection([]byte(collection3), "x", map[string]string{"https://example.org/gone": "y"}); err != nil || len(unlisted) != 1 || unlisted[0] != "https://example.org/gone" {
		t.Errorf("a derived manifest the collection does not hold: unlisted %q, %v", unlisted, err)
	}
	if _, _, err := DerivedCollection([]byte(`{"type": "Manifest"}`), "x", nil); err == nil {
		t.Error("a manifest taken for a collection")
	}
}

// TestCollection: each member's manifest, embedded or read, goes to
// write with its place; one that cannot be read goes to skip and stays as
// it is; a member whose write returns no id stays as it is too.
func TestCollection(t *testing.T) {
	members, of := Members([]string{"https://example.org/m2#c1", "https://example.org/m1#c1", "https://example.org/m2#c2", "https://example.org/m4#c1", "https://example.org/m9#c1"},
		func(canvas string) string { return strings.Split(canvas, "#")[0] })
	if strings.Join(members, " ") != "https://example.org/m2 https://example.org/m1 https://example.org/m4 https://example.org/m9" || len(of["https://example.org/m2"]) != 2 {
		t.Fatalf("Members: %q %v", members, of)
	}
	var wrote, skipped []string
	out, err := Collection([]byte(collection3), "https://pub.example/c.json", members,
		func(member string) ([]byte, error) {
			if member == "https://example.org/m1" {
				return nil, errors.New("404")
			}
			return []byte(`{"id": "` + member + `", "type": "Manifest", "items": []}`), nil
		},
		func(k int, member string, manifest []byte) (string, error) {
			wrote = append(wrote, fmt.Sprintf("%d %s %t", k, member, strings.Contains(string(manifest), "m2/c1")))
			if member == "https://example.org/m4" {
				return "", nil
			}
			return fmt.Sprintf("https://pub.example/c_%d.json", k), nil
		},
		func(member string, err error) { skipped = append(skipped, member+": "+err.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(wrote, ", "); got != "1 https://example.org/m2 true, 3 https://example.org/m4 false, 4 https://example.org/m9 false" {
		t.Errorf("written %s", got)
	}
	// m9 is in a collection this one lists by reference (as internal/book
	// reads it): written, but not listed.
	if len(skipped) != 2 || !strings.HasSuffix(skipped[0], "404") || !strings.HasPrefix(skipped[0], "https://example.org/m1: not written") || !strings.HasPrefix(skipped[1], "https://example.org/m9: "+ErrNotListed.Error()) {
		t.Errorf("skipped %q", skipped)
	}
	for _, want := range []string{`"id": "https://pub.example/c_1.json"`, `"id": "https://example.org/m1"`, `"id": "https://example.org/m4"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("derived collection without %s:\n%s", want, out)
		}
	}
}
