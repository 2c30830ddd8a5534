package bookout

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
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

// IsCollection says whether src is a IIIF collection (Presentation 3 or
// 2).
func IsCollection(src []byte) bool {
	var m map[string]any
	return json.Unmarshal(src, &m) == nil && isCollection(m)
}

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
	m, err := parseCollection(src)
	if err != nil {
		return nil, false, err
	}
	if e := embeddedManifests(m)[id]; e != nil {
		manifest, err = json.Marshal(e)
		return manifest, err == nil, err
	}
	return nil, false, nil
}

// parseCollection parses the IIIF collection src.
func parseCollection(src []byte) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(src, &m); err != nil {
		return nil, fmt.Errorf("bookout: collection: %w", err)
	}
	if !isCollection(m) {
		return nil, fmt.Errorf("bookout: not a IIIF collection (type %v)", typeOf(m))
	}
	return m, nil
}

// embeddedManifests are the manifests collection m holds with their
// canvases (items or sequences), by id; the first of an id.
func embeddedManifests(m map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	members(m, maxNesting, func(member map[string]any) bool {
		id := idOf(member)
		if isManifest(member) && (member["items"] != nil || member["sequences"] != nil) && out[id] == nil {
			out[id] = member
		}
		return true
	})
	return out
}

// DerivedCollection returns the IIIF collection src as a new collection
// id whose manifest members named in derived (old id: derived manifest's
// id) are references to the derived manifests: their id, type and label
// (an embedded member is replaced by such a reference, its content being
// in the derived manifest). Other members and everything else are kept.
// unlisted are the manifests of derived that src does not hold (in a
// collection it lists by reference only), in no order: the derived
// collection cannot list them.
func DerivedCollection(src []byte, id string, derived map[string]string) (out []byte, unlisted []string, err error) {
	m, err := parseCollection(src)
	if err != nil {
		return nil, nil, err
	}
	return derivedCollection(m, id, derived)
}

// derivedCollection is DerivedCollection of the parsed collection m,
// which it changes.
func derivedCollection(m map[string]any, id string, derived map[string]string) (out []byte, unlisted []string, err error) {
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
	for member := range derived {
		if !found[member] {
			unlisted = append(unlisted, member)
		}
	}
	if _, v3 := m["id"]; v3 {
		m["id"] = id
	} else {
		m["@id"] = id
	}
	out, err = json.MarshalIndent(m, "", "  ")
	return out, unlisted, err
}

// typeOf is m's type (3) or @type (2).
func typeOf(m map[string]any) any {
	if t, ok := m["type"]; ok {
		return t
	}
	return m["@type"]
}

// Collection writes the outputs of IIIF collection src whose pages are
// of the manifests members (ids, in the order their outputs are numbered)
// and returns the derived collection, id its new id. Each member's
// manifest (the one src embeds, else read(member)) goes to write with its
// place k (from 1), which returns its derived manifest's id ("" when it
// wrote none); a member that cannot be read or written goes to skip and
// stays in the derived collection as it is, and so does, written, one the
// collection does not hold (in a collection it lists by reference only:
// the derived collection cannot list its derived manifest).
func Collection(src []byte, id string, members []string, read func(member string) ([]byte, error),
	write func(k int, member string, manifest []byte) (derivedID string, err error), skip func(member string, err error)) ([]byte, error) {
	m, err := parseCollection(src)
	if err != nil {
		return nil, err
	}
	embedded := embeddedManifests(m)
	derived := map[string]string{}
	for k, member := range members {
		var manifest []byte
		var err error
		if e := embedded[member]; e != nil {
			manifest, err = json.Marshal(e)
		} else {
			manifest, err = read(member)
		}
		var to string
		if err == nil {
			to, err = write(k+1, member, manifest)
		}
		switch {
		case err != nil:
			skip(member, fmt.Errorf("not written (the derived collection lists the manifest as it is): %w", err))
		case to != "":
			derived[member] = to
		}
	}
	out, unlisted, err := derivedCollection(m, id, derived)
	sort.Strings(unlisted)
	for _, member := range unlisted {
		skip(member, fmt.Errorf("%w: its derived manifest %s is written, but it is in a collection this one lists by reference only", ErrNotListed, derived[member]))
	}
	return out, err
}

// ErrNotListed is a member manifest the derived collection cannot list.
var ErrNotListed = errors.New("not listed in the derived collection")

// Members returns the manifest ids of items (key: an item's manifest), in
// the order of their first item, and the items of each.
func Members[T any](items []T, key func(T) string) (order []string, of map[string][]T) {
	of = map[string][]T{}
	for _, it := range items {
		k := key(it)
		if _, ok := of[k]; !ok {
			order = append(order, k)
		}
		of[k] = append(of[k], it)
	}
	return order, of
}
