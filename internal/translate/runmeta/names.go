package runmeta

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"

	"archivekit/internal/paradata"
	"archivekit/internal/utf8name"
)

// The run metadata is JSON, which writes each byte of a string that is not
// UTF-8 as U+FFFD: two files whose names differ only in such bytes (a
// cp852 "\x8e\xe1dost.alto.xml" and "\x8a\xe1dost.alto.xml" unpacked from
// a Windows zip) became one name, and one key of a JSON object twice. The
// document is kept with the names as they are (a withdrawn document is
// found by its own name) and written with each stray byte as \xNN
// (utf8name.Escape), as the log and failures tables write it: View escapes
// every name it writes, EscapeConfig the configuration.

// escapeAll returns ss with each string escaped (utf8name.Escape), in a new
// slice (nil for nil).
func escapeAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = utf8name.Escape(s)
	}
	return out
}

// escapeKeys returns m with its keys escaped (utf8name.Escape), in a new
// map; add combines the values of keys that escape alike (a name that
// holds the text "\x8e" itself and one that holds the byte).
func escapeKeys[V any](m map[string]V, add func(a, b V) V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		e := utf8name.Escape(k)
		if prev, ok := out[e]; ok {
			v = add(prev, v)
		}
		out[e] = v
	}
	return out
}

// escapeTrail escapes the names of t, a trail cloned for writing: the
// outputs (sorted again, as Trail.Clone sorts them), the warnings, which
// name their documents, and the files of the earlier runs. Skipped files
// are escaped when recorded (paradata's Writer.Skip).
func escapeTrail(t *paradata.Trail) {
	for i, o := range t.Outputs {
		t.Outputs[i] = utf8name.Escape(o)
	}
	slices.Sort(t.Outputs)
	for i, w := range t.Warnings {
		t.Warnings[i] = utf8name.Escape(w)
	}
	for i := range t.Interrupted {
		t.Interrupted[i].File = utf8name.Escape(t.Interrupted[i].File)
	}
	for i := range t.ResumedFrom {
		e := &t.ResumedFrom[i]
		e.File, e.Ledger = utf8name.Escape(e.File), utf8name.Escape(e.Ledger)
	}
}

// EscapeConfig returns a copy of cfg, a run's configuration, in which every
// string, map key and string field of a value (paths of the input, the
// output, the vocabulary; files not collected; a book's source) is escaped
// (utf8name.Escape); values holding no name that is not UTF-8 are shared
// with cfg, not copied. A value that writes its own JSON (json.Marshaler,
// encoding.TextMarshaler) is left as it is. A merge of shard runs escapes
// its merged configuration with it; View escapes a run's. The copy is never
// nil.
func EscapeConfig(cfg map[string]any) map[string]any {
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		if e, changed := escapeValue(reflect.ValueOf(v)); changed {
			v = e.Interface()
		}
		out[utf8name.Escape(k)] = v
	}
	return out
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// escapeValue returns v with its strings escaped (utf8name.Escape), and
// whether any was: a new value then, sharing nothing that changed with v;
// v itself otherwise. It goes into pointers, interfaces, slices, arrays,
// maps (keys too) and the exported fields of structs.
func escapeValue(v reflect.Value) (reflect.Value, bool) {
	if !v.IsValid() {
		return v, false
	}
	t := v.Type()
	if t.Implements(jsonMarshaler) || t.Implements(textMarshaler) {
		return v, false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		e := utf8name.Escape(s)
		if e == s {
			return v, false
		}
		n := reflect.New(t).Elem()
		n.SetString(e)
		return n, true
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		e, changed := escapeValue(v.Elem())
		if !changed {
			return v, false
		}
		if v.Kind() == reflect.Pointer {
			p := reflect.New(t.Elem())
			p.Elem().Set(e)
			return p, true
		}
		n := reflect.New(t).Elem()
		n.Set(e)
		return n, true
	case reflect.Slice, reflect.Array:
		return escapeElems(v)
	case reflect.Map:
		return escapeMap(v)
	case reflect.Struct:
		return escapeFields(v)
	}
	return v, false
}

// escapeElems is escapeValue of a slice or an array.
func escapeElems(v reflect.Value) (reflect.Value, bool) {
	var n reflect.Value // the copy, made at the first element that changes
	for i := range v.Len() {
		e, changed := escapeValue(v.Index(i))
		if !changed {
			continue
		}
		if !n.IsValid() {
			if v.Kind() == reflect.Slice {
				n = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			} else {
				n = reflect.New(v.Type()).Elem()
			}
			reflect.Copy(n, v)
		}
		n.Index(i).Set(e)
	}
	if !n.IsValid() {
		return v, false
	}
	return n, true
}

// escapeMap is escapeValue of a map: keys and values escaped; of two keys
// that escape alike, the one met last is kept.
func escapeMap(v reflect.Value) (reflect.Value, bool) {
	if v.IsNil() {
		return v, false
	}
	changed := false
	type entry struct{ k, v reflect.Value }
	entries := make([]entry, 0, v.Len())
	for it := v.MapRange(); it.Next(); {
		k, kc := escapeValue(it.Key())
		e, ec := escapeValue(it.Value())
		changed = changed || kc || ec
		entries = append(entries, entry{k, e})
	}
	if !changed {
		return v, false
	}
	n := reflect.MakeMapWithSize(v.Type(), len(entries))
	for _, e := range entries {
		n.SetMapIndex(e.k, e.v)
	}
	return n, true
}

// escapeFields is escapeValue of a struct: its exported fields escaped
// (unexported ones are not written).
func escapeFields(v reflect.Value) (reflect.Value, bool) {
	var n reflect.Value
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue
		}
		e, changed := escapeValue(v.Field(i))
		if !changed {
			continue
		}
		if !n.IsValid() {
			n = reflect.New(v.Type()).Elem()
			n.Set(v)
		}
		n.Field(i).Set(e)
	}
	if !n.IsValid() {
		return v, false
	}
	return n, true
}
