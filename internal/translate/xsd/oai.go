package xsd

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// oaiNS is the OAI-PMH 2.0 namespace.
const oaiNS = "http://www.openarchives.org/OAI/2.0/"

// Payload is the metadata of one record of an OAI-PMH response: the
// element inside the record's <metadata>, as a document of its own.
type Payload struct {
	// Record is the record's header identifier ("" when it has none).
	Record string
	// Line is the line of the payload's start tag in the response.
	Line int
	// Data is the payload's bytes as in the response, with the namespace
	// declarations in scope there added to its start tag.
	Data []byte
}

// MaxPayloads bounds the payloads read from one response.
const MaxPayloads = 10000

// Payloads returns the metadata payloads of an OAI-PMH 2.0 response
// (GetRecord, ListRecords), in document order, or nil (and no error) when
// doc's root element is not OAI-PMH's: a bare record is validated as it is.
func Payloads(doc []byte) ([]Payload, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var stack []frame
	lookup := func(prefix string) string {
		for i := len(stack) - 1; i >= 0; i-- {
			if u, ok := stack[i].ns[prefix]; ok {
				return u
			}
		}
		return ""
	}
	var out []Payload
	var ident strings.Builder
	inIdent := false
	record := ""
	for {
		start := d.InputOffset()
		tok, err := d.RawToken()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("not well-formed XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			f := frame{local: t.Name.Local, ns: map[string]string{}}
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "" && a.Name.Local == "xmlns":
					f.ns[""] = a.Value
				case a.Name.Space == "xmlns":
					f.ns[a.Name.Local] = a.Value
				}
			}
			stack = append(stack, f)
			if len(stack) == 1 && (t.Name.Local != "OAI-PMH" || lookup(t.Name.Space) != oaiNS) {
				return nil, nil // not an OAI-PMH response
			}
			n := len(stack)
			switch {
			case t.Name.Local == "record" && lookup(t.Name.Space) == oaiNS:
				record = ""
			case t.Name.Local == "identifier" && n >= 2 && stack[n-2].local == "header":
				inIdent = true
				ident.Reset()
			case n >= 3 && stack[n-2].local == "metadata" && stack[n-3].local == "record":
				if len(out) >= MaxPayloads {
					return nil, fmt.Errorf("more than %d records", MaxPayloads)
				}
				if err := skip(d); err != nil {
					return nil, fmt.Errorf("not well-formed XML: %w", err)
				}
				stack = stack[:n-1]
				end := d.InputOffset()
				out = append(out, Payload{Record: record, Line: 1 + bytes.Count(doc[:start], []byte("\n")),
					Data: withDeclarations(doc[start:end], t, inScope(stack))})
			}
		case xml.CharData:
			if inIdent {
				ident.Write(t)
			}
		case xml.EndElement:
			if inIdent && t.Name.Local == "identifier" {
				inIdent, record = false, strings.TrimSpace(ident.String())
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// skip reads raw tokens to the end of the element just started.
func skip(d *xml.Decoder) error {
	for depth := 1; depth > 0; {
		tok, err := d.RawToken()
		if err != nil {
			return err
		}
		switch tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		}
	}
	return nil
}

// frame is an open element: its local name and the namespace declarations
// it makes (prefix, "" for the default, to URI).
type frame struct {
	local string
	ns    map[string]string
}

// inScope flattens the declarations of the open elements, inner ones
// winning.
func inScope(stack []frame) map[string]string {
	out := map[string]string{}
	for _, f := range stack {
		for p, u := range f.ns {
			out[p] = u
		}
	}
	return out
}

// withDeclarations adds to the start tag of elem (the payload's bytes)
// the declarations of scope its own attributes do not make.
func withDeclarations(elem []byte, start xml.StartElement, scope map[string]string) []byte {
	own := map[string]bool{}
	for _, a := range start.Attr {
		if a.Name.Space == "" && a.Name.Local == "xmlns" {
			own[""] = true
		} else if a.Name.Space == "xmlns" {
			own[a.Name.Local] = true
		}
	}
	var decl strings.Builder
	for _, p := range sortedKeys(scope) {
		if own[p] || p == "xml" {
			continue
		}
		var v bytes.Buffer
		_ = xml.EscapeText(&v, []byte(scope[p]))
		if p == "" {
			fmt.Fprintf(&decl, ` xmlns="%s"`, v.String())
		} else {
			fmt.Fprintf(&decl, ` xmlns:%s="%s"`, p, v.String())
		}
	}
	name := start.Name.Local
	if start.Name.Space != "" {
		name = start.Name.Space + ":" + name
	}
	cut := 1 + len(name) // "<" and the tag name
	out := make([]byte, 0, len(elem)+decl.Len())
	out = append(out, elem[:cut]...)
	out = append(out, decl.String()...)
	return append(out, elem[cut:]...)
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// ValidateDocument validates the file at path: an OAI-PMH response by each
// record's metadata payload, naming the record in each problem, unless the
// schema's target namespace is OAI-PMH's (a schema of the envelope); any
// other document as a whole (Validate).
func (v *Validator) ValidateDocument(ctx context.Context, path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if v.targetNamespace() == oaiNS {
		return v.Validate(ctx, path) // a schema of the envelope itself
	}
	payloads, err := Payloads(data)
	if err != nil {
		return nil, fmt.Errorf("%s: the OAI-PMH records cannot be read: %w", path, err)
	}
	if payloads == nil {
		return v.Validate(ctx, path)
	}
	if len(payloads) == 0 {
		return nil, errors.New(path + ": an OAI-PMH response without records: nothing to validate")
	}
	dir, err := os.MkdirTemp(v.tmp, "payloads-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	var problems []string
	for i, p := range payloads {
		name := filepath.Join(dir, fmt.Sprintf("record-%d.xml", i+1))
		if err := os.WriteFile(name, p.Data, 0o600); err != nil {
			return nil, err
		}
		msgs, err := v.Validate(ctx, name)
		if err != nil {
			return nil, err
		}
		where := fmt.Sprintf("%s: record %d", path, i+1)
		if p.Record != "" {
			where += " (" + p.Record + ")"
		}
		for _, m := range msgs {
			// "record-1.xml:5: element x: ..." -> the payload's line in the
			// response.
			if rest, ok := strings.CutPrefix(m, name+":"); ok {
				line, msg, _ := strings.Cut(rest, ":")
				var n int
				if _, err := fmt.Sscan(line, &n); err == nil {
					m = fmt.Sprintf("line %d:%s", p.Line+n-1, msg)
				} else {
					m = strings.TrimPrefix(rest, " ")
				}
			}
			problems = append(problems, where+", "+m)
		}
	}
	return problems, nil
}

// targetNamespace is the targetNamespace of the schema's root element, ""
// when it has none or cannot be read.
func (v *Validator) targetNamespace() string {
	f, err := os.Open(v.schema)
	if err != nil {
		return ""
	}
	defer f.Close()
	d := xml.NewDecoder(io.LimitReader(f, 1<<20))
	for {
		tok, err := d.Token()
		if err != nil {
			return ""
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Space == "" && a.Name.Local == "targetNamespace" {
					return a.Value
				}
			}
			return ""
		}
	}
}
