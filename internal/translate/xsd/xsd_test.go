package xsd

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const schema = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:element name="record">
    <xs:complexType><xs:sequence>
      <xs:element name="popis" type="xs:string" maxOccurs="unbounded"/>
    </xs:sequence></xs:complexType>
  </xs:element>
</xs:schema>`

func write(t *testing.T, name, data string) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidate(t *testing.T) {
	v, err := New(context.Background(), write(t, "s.xsd", schema))
	if errors.Is(err, ErrNoValidator) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	cases := []struct {
		name, doc string
		problems  bool
	}{
		{"valid", `<record><popis>a</popis><popis>b</popis></record>`, false},
		{"attribute the schema lacks", `<record><popis xml:lang="en">b</popis></record>`, true},
		{"unexpected element", `<record><popis>a</popis><other/></record>`, true},
		{"wrong root", `<rec/>`, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			probs, err := v.Validate(context.Background(), write(t, "d.xml", c.doc))
			if err != nil {
				t.Fatal(err)
			}
			if (len(probs) > 0) != c.problems {
				t.Errorf("problems %v", probs)
			}
		})
	}
}

func TestSchemaFromURLAndBadSchema(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/s.xsd" {
			w.Write([]byte(schema))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	v, err := New(context.Background(), srv.URL+"/s.xsd")
	if errors.Is(err, ErrNoValidator) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	probs, err := v.Validate(context.Background(), write(t, "d.xml", `<rec/>`))
	v.Close()
	if err != nil || len(probs) == 0 {
		t.Errorf("downloaded schema: %v %v", probs, err)
	}
	if _, err := New(context.Background(), srv.URL+"/missing.xsd"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing schema: %v", err)
	}
	bad, _ := New(context.Background(), write(t, "bad.xsd", "<not-a-schema/>"))
	if _, err := bad.Validate(context.Background(), write(t, "d.xml", `<rec/>`)); err == nil || !strings.Contains(err.Error(), "could not be parsed") {
		t.Errorf("bad schema: %v", err)
	}
}

// TestRealSchemaShapes: a schema importing the W3C xml: schema from its
// published location (as the AMCR schema does) validates offline through
// the shipped catalog, and a URL schema's relative includes are fetched
// beside it; a remote import other than the W3C one is reported.
func TestRealSchemaShapes(t *testing.T) {
	const main = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:import namespace="http://www.w3.org/XML/1998/namespace" schemaLocation="http://www.w3.org/2001/03/xml.xsd"/>
  <xs:include schemaLocation="parts/types.xsd"/>
  <xs:element name="record"><xs:complexType><xs:sequence>
    <xs:element name="popis" type="langText" maxOccurs="unbounded"/>
  </xs:sequence></xs:complexType></xs:element>
</xs:schema>`
	const types = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:import namespace="http://www.w3.org/XML/1998/namespace" schemaLocation="http://www.w3.org/2001/03/xml.xsd"/>
  <xs:include schemaLocation="../common/base.xsd"/>
  <xs:complexType name="langText"><xs:simpleContent><xs:extension base="shortText">
    <xs:attribute ref="xml:lang"/>
  </xs:extension></xs:simpleContent></xs:complexType>
</xs:schema>`
	const base = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:simpleType name="shortText"><xs:restriction base="xs:string"><xs:maxLength value="20"/></xs:restriction></xs:simpleType>
</xs:schema>`
	files := map[string]string{"/amcr/v2/main.xsd": main, "/amcr/v2/parts/types.xsd": types, "/amcr/v2/common/base.xsd": base,
		"/remote/main.xsd": `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema">
  <xs:import namespace="http://www.w3.org/XML/1998/namespace" schemaLocation="http://schemas.example.org/xml.xsd"/>
  <xs:element name="record"><xs:complexType><xs:attribute ref="xml:lang"/></xs:complexType></xs:element>
</xs:schema>`}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s, ok := files[r.URL.Path]; ok {
			w.Write([]byte(s))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	v, err := New(context.Background(), srv.URL+"/amcr/v2/main.xsd")
	if errors.Is(err, ErrNoValidator) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if len(v.Fetched) != 3 {
		t.Errorf("fetched %v, want the schema and its two relative includes", v.Fetched)
	}
	for _, c := range []struct {
		doc      string
		problems bool
	}{
		{`<record><popis xml:lang="en">church</popis><popis>kostel</popis></record>`, false},
		{`<record><popis xml:lang="en">a text longer than twenty characters</popis></record>`, true},
		{`<record><popis xml:space="preserve">a</popis></record>`, true},
	} {
		probs, err := v.Validate(context.Background(), write(t, "d.xml", c.doc))
		if err != nil || (len(probs) > 0) != c.problems {
			t.Errorf("%s: problems %v, err %v", c.doc, probs, err)
		}
	}
	// The same schema as a local file validates too (the catalog needs no URL schema).
	local := filepath.Join(t.TempDir(), "amcr")
	for p, s := range files {
		os.MkdirAll(filepath.Join(local, filepath.Dir(p)), 0o755)
		os.WriteFile(filepath.Join(local, p), []byte(s), 0o644)
	}
	lv, err := New(context.Background(), filepath.Join(local, "amcr/v2/main.xsd"))
	if err != nil {
		t.Fatal(err)
	}
	defer lv.Close()
	if probs, err := lv.Validate(context.Background(), write(t, "d.xml", `<record><popis xml:lang="cs">kostel</popis></record>`)); err != nil || len(probs) > 0 {
		t.Errorf("local schema: %v %v", probs, err)
	}
	// Another remote import is not fetched: the schema does not compile and
	// the error names the location.
	rv, err := New(context.Background(), srv.URL+"/remote/main.xsd")
	if err != nil {
		t.Fatal(err)
	}
	defer rv.Close()
	if _, err := rv.Validate(context.Background(), write(t, "d.xml", `<record/>`)); err == nil || !strings.Contains(err.Error(), "schemas.example.org") {
		t.Errorf("remote import: %v", err)
	}
}

// TestWriteCatalog: the W3C schema and the XML catalog are written, and a
// catalog that cannot be written is an error (New used to drop it and
// validate without the catalog).
func TestWriteCatalog(t *testing.T) {
	dir := t.TempDir()
	notDir := write(t, "file", "x")
	catalogIsDir := filepath.Join(dir, "catalog-is-a-folder")
	if err := os.MkdirAll(filepath.Join(catalogIsDir, "catalog.xml"), 0o755); err != nil {
		t.Fatal(err)
	}
	schemaIsDir := filepath.Join(dir, "schema-is-a-folder")
	if err := os.MkdirAll(filepath.Join(schemaIsDir, "xml.xsd"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		ok        bool
	}{
		{"new folder", filepath.Join(dir, "w3c"), true},
		{"folder under a file", filepath.Join(notDir, "w3c"), false},
		{"catalog not writable", catalogIsDir, false},
		{"schema not writable", schemaIsDir, false},
	}
	for _, tc := range tests {
		cat, err := writeCatalog(tc.dir)
		if !tc.ok {
			if err == nil || !strings.Contains(err.Error(), "catalog cannot be written") {
				t.Errorf("%s: error %v", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, err := os.ReadFile(cat)
		if err != nil || !bytes.Equal(b, w3cCatalog) || cat != filepath.Join(tc.dir, "catalog.xml") {
			t.Errorf("%s: catalog %s: %v", tc.name, cat, err)
		}
		if b, err := os.ReadFile(filepath.Join(tc.dir, "xml.xsd")); err != nil || !bytes.Equal(b, w3cXMLSchema) {
			t.Errorf("%s: xml.xsd: %v", tc.name, err)
		}
	}
}
