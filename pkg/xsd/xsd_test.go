package xsd

import (
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
