package xsd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"archivekit/internal/testenv"
)

// payloadSchema is a small schema of the records source's namespace: a
// root amcr holding dokument elements whose typ_dokumentu carries xml:lang
// (the W3C xml: schema, resolved from this package's copy, offline).
const payloadSchema = `<?xml version="1.0"?>
<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="https://api.aiscr.cz/schema/amcr/2.2/"
  xmlns:amcr="https://api.aiscr.cz/schema/amcr/2.2/" elementFormDefault="qualified">
  <xs:import namespace="http://www.w3.org/XML/1998/namespace" schemaLocation="http://www.w3.org/2001/xml.xsd"/>
  <xs:element name="amcr">
    <xs:complexType><xs:sequence><xs:element name="dokument" maxOccurs="unbounded">
      <xs:complexType><xs:sequence>
        <xs:element name="ident_cely" type="xs:string"/>
        <xs:any processContents="skip" minOccurs="0" maxOccurs="unbounded"/>
      </xs:sequence></xs:complexType>
    </xs:element></xs:sequence><xs:anyAttribute processContents="lax"/></xs:complexType>
  </xs:element>
</xs:schema>`

// TestValidateOAIPayloads: an OAI-PMH response (a real record of the
// records source) is validated by its metadata payload against the
// payload's schema, not as an envelope; a payload that breaks the schema
// is reported with its record and its line in the response.
func TestValidateOAIPayloads(t *testing.T) {
	if _, err := exec.LookPath("xmllint"); err != nil {
		t.Skip("xmllint not installed")
	}
	dir := t.TempDir()
	schema := filepath.Join(dir, "amcr.xsd")
	if err := os.WriteFile(schema, []byte(payloadSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := New(context.Background(), schema)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	rec, err := os.ReadFile(filepath.Join(testenv.Data(t, "translator"), "records", "C-202000543A-DT-27.xml"))
	if err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.xml")
	os.WriteFile(good, rec, 0o644)
	if problems, err := v.ValidateDocument(context.Background(), good); err != nil || len(problems) != 0 {
		t.Fatalf("the real record: %v %q", err, problems)
	}
	// As a whole, the envelope is not the payload's schema.
	if problems, _ := v.Validate(context.Background(), good); len(problems) == 0 {
		t.Error("the envelope validates as a whole against the payload schema: the test proves nothing")
	}
	bad := filepath.Join(dir, "bad.xml")
	os.WriteFile(bad, []byte(strings.Replace(strings.Replace(string(rec), "<amcr:ident_cely>", "<amcr:ident>", 1), "</amcr:ident_cely>", "</amcr:ident>", 1)), 0o644)
	problems, err := v.ValidateDocument(context.Background(), bad)
	if err != nil || len(problems) == 0 {
		t.Fatalf("a broken payload: %v %q", err, problems)
	}
	if p := problems[0]; !strings.Contains(p, "record 1 (https://api.aiscr.cz/id/C-202000543A-DT-27), line 16:") || !strings.Contains(p, "ident") {
		t.Errorf("problem %q: want the record, its identifier and the line in the response", p)
	}
}

func TestPayloads(t *testing.T) {
	doc := `<?xml version="1.0"?>
<o:OAI-PMH xmlns:o="http://www.openarchives.org/OAI/2.0/" xmlns:x="urn:x"><o:ListRecords>
<o:record><o:header><o:identifier>a</o:identifier></o:header><o:metadata><x:r><x:v>1</x:v></x:r></o:metadata></o:record>
<o:record><o:header><o:identifier> b </o:identifier></o:header><o:metadata><r xmlns="urn:y"/></o:metadata></o:record>
</o:ListRecords></o:OAI-PMH>`
	ps, err := Payloads([]byte(doc))
	if err != nil || len(ps) != 2 {
		t.Fatalf("%v %+v", err, ps)
	}
	if ps[0].Record != "a" || ps[0].Line != 3 || string(ps[0].Data) != `<x:r xmlns:o="http://www.openarchives.org/OAI/2.0/" xmlns:x="urn:x"><x:v>1</x:v></x:r>` {
		t.Errorf("payload 1 %+v %s", ps[0], ps[0].Data)
	}
	if ps[1].Record != "b" || string(ps[1].Data) != `<r xmlns:o="http://www.openarchives.org/OAI/2.0/" xmlns:x="urn:x" xmlns="urn:y"/>` {
		t.Errorf("payload 2 %+v %s", ps[1], ps[1].Data)
	}
	if ps, err := Payloads([]byte(`<amcr xmlns="urn:a"/>`)); ps != nil || err != nil {
		t.Errorf("a bare record: %v %v", ps, err)
	}
}
