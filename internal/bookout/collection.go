package bookout

import (
	"encoding/json"
	"fmt"
)

// A IIIF collection lists manifests (and collections), each by reference
// (its id, type and label) or embedded whole. A book read from a
// collection has the pages of all its manifests; its outputs are one
// derived manifest a member manifest, each from that manifest
// (CollectionManifest, else fetched by its id), and a derived collection
// listing them (DerivedCollection).

// collectionKeys are the keys of a collection's members: Presentation 3
// items; Presentation 2 manifests, collections and members.
var collectionKeys = []string{"items", "manifests", "collections", "members"}

// isCollection says whether m is a IIIF collection (3: type Collection,
// 2: @type sc:Collection).
func isCollection(m map[string]any) bool {
	return m["type"] == "Collection" || m["@type"] == "sc:Collection"
}

// isManifest says whether m is a manifest, embedded or by reference.
func isManifest(m map[string]any) bool {
	return m["type"] == "Manifest" || m["@type"] == "sc:Manifest"
}

// idOf is m's id (3: id, 2: @id).
func idOf(m map[string]any) string {
	if id, ok := m["id"].(string); ok {
		return id
	}
	id, _ := m["@id"].(string)
	return id
}

// members calls fn with each member of collection m, nested collections'
// members too (at most depth levels down), until fn returns false.
func members(m map[string]any, depth int, fn func(member map[string]any) bool) bool {
	if depth < 0 {
		return true
	}
	for _, k := range collectionKeys {
		list, _ := m[k].([]any)
		for _, it := range list {
			member, ok := it.(map[string]any)
			if !ok {
				continue
			}
			if !fn(member) {
				return false
			}
			if isCollection(member) && !members(member, depth-1, fn) {
				return false
			}
		}
	}
	return true
}

// maxNesting bounds how deep collections inside a collection are walked
// here (internal/book reads them within its own bound).
const maxNesting = 8

// CollectionManifest returns the manifest of id that the IIIF collection
// src holds embedded (with its canvases: items or sequences); ok is false
// when the collection lists it by reference only (or not at all): the
// caller fetches it by its id.
func CollectionManifest(src []byte, id string) (manifest []byte, ok bool, err error) {
	var m map[string]any
	if err := json.Unmarshal(src, &m); err != nil {
		return nil, false, fmt.Errorf("bookout: collection: %w", err)
	}
	if !isCollection(m) {
		return nil, false, fmt.Errorf("bookout: not a IIIF collection (type %v)", typeOf(m))
	}
	members(m, maxNesting, func(member map[string]any) bool {
		if isManifest(member) && idOf(member) == id && (member["items"] != nil || member["sequences"] != nil) {
			manifest, err = json.Marshal(member)
			ok = err == nil
			return false
		}
		return true
	})
	return manifest, ok, err
}

// DerivedCollection returns the IIIF collection src as a new collection
// id whose manifest members named in derived (old id: derived manifest's
// id) are references to the derived manifests: their id, type and label
// (an embedded member is replaced by such a reference, its content being
// in the derived manifest). Other members and everything else are kept.
// It is an error when a manifest of derived is not a member.
func DerivedCollection(src []byte, id string, derived map[string]string) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(src, &m); err != nil {
		return nil, fmt.Errorf("bookout: collection: %w", err)
	}
	if !isCollection(m) {
		return nil, fmt.Errorf("bookout: not a IIIF collection (type %v)", typeOf(m))
	}
	found := map[string]bool{}
	members(m, maxNesting, func(member map[string]any) bool {
		old := idOf(member)
		to, ok := derived[old]
		if !isManifest(member) || !ok {
			return true
		}
		found[old] = true
		for key := range member {
			switch key {
			case "id", "@id", "type", "@type", "label", "thumbnail":
			default:
				delete(member, key) // the content is the derived manifest's
			}
		}
		if _, v3 := member["id"]; v3 {
			member["id"] = to
		} else {
			member["@id"] = to
		}
		return true
	})
	if len(found) != len(derived) {
		return nil, fmt.Errorf("bookout: %d of the %d manifests derived are not members of the collection", len(derived)-len(found), len(derived))
	}
	if _, v3 := m["id"]; v3 {
		m["id"] = id
	} else {
		m["@id"] = id
	}
	return json.MarshalIndent(m, "", "  ")
}

// typeOf is m's type (3) or @type (2).
func typeOf(m map[string]any) any {
	if t, ok := m["type"]; ok {
		return t
	}
	return m["@type"]
}
