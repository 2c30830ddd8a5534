package pdflabel

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// build writes a PDF of n empty pages whose catalog carries labels (a
// /PageLabels value, or "" for none), with a classic cross-reference table.
// objStm puts the catalog and the label tree in a Flate-compressed object
// stream with a cross-reference stream instead (no trailer keyword), as
// PDF 1.5 writers do.
func build(n int, labels string, objStm bool) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	kids := make([]string, n)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 10+i)
	}
	catalog := "<< /Type /Catalog /Pages 2 0 R"
	if labels != "" {
		catalog += " /PageLabels " + labels
	}
	catalog += " >>"
	fmt.Fprintf(&b, "2 0 obj\n<< /Type /Pages /Count %d /Kids [%s] >>\nendobj\n", n, strings.Join(kids, " "))
	for i := range kids {
		fmt.Fprintf(&b, "%d 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n", 10+i)
	}
	if !objStm {
		b.WriteString("1 0 obj\n" + catalog + "\nendobj\n")
		b.WriteString("xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 3 /Root 1 0 R >>\nstartxref\n0\n%%EOF\n")
		return b.Bytes()
	}
	head := "1 0 "
	body := head + catalog
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	w.Write([]byte(body))
	w.Close()
	fmt.Fprintf(&b, "5 0 obj\n<< /Type /ObjStm /N 1 /First %d /Filter /FlateDecode /Length %d >>\nstream\n", len(head), z.Len())
	b.Write(z.Bytes())
	b.WriteString("\nendstream\nendobj\n")
	b.WriteString("6 0 obj\n<< /Type /XRef /Size 7 /Root 1 0 R /W [1 2 1] /Length 0 >>\nstream\n\nendstream\nendobj\nstartxref\n0\n%%EOF\n")
	return b.Bytes()
}

func TestLabels(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		labels string
		want   []string
	}{
		{"none", 3, "", nil},
		{"front matter then arabic", 7, "<< /Nums [0 << /S /r >> 3 << /S /D >>] >>", []string{"i", "ii", "iii", "1", "2", "3", "4"}},
		{"start value and prefix", 3, "<< /Nums [0 << /S /D /St 11 /P (p. ) >>] >>", []string{"p. 11", "p. 12", "p. 13"}},
		{"upper roman from 9", 3, "<< /Nums [0 << /S /R /St 9 >>] >>", []string{"IX", "X", "XI"}},
		{"letters past Z", 4, "<< /Nums [0 << /S /A /St 25 >>] >>", []string{"Y", "Z", "AA", "BB"}},
		{"lower letters", 2, "<< /Nums [0 << /S /a >>] >>", []string{"a", "b"}},
		{"prefix alone", 2, "<< /Nums [0 << /P (Cover) >>] >>", []string{"Cover", "Cover"}},
		{"12a style", 2, "<< /Nums [0 << /S /D /St 12 >> 1 << /P (12a) >>] >>", []string{"12", "12a"}},
		{"first range after page 1", 3, "<< /Nums [1 << /S /r >>] >>", []string{"1", "i", "ii"}},
		{"unsorted keys", 3, "<< /Nums [2 << /S /D /St 5 >> 0 << /S /A >>] >>", []string{"A", "B", "5"}},
		{"kids", 4, "<< /Kids [<< /Nums [0 << /S /r >>] >> << /Nums [2 << /S /D >>] >>] >>", []string{"i", "ii", "1", "2"}},
		{"hex and escaped prefix", 1, "<< /Nums [0 << /S /D /P <412D> >>] >>", []string{"A-1"}},
		{"utf-16 prefix", 1, "<< /Nums [0 << /S /D /P <FEFF004B0101> >>] >>", []string{"Kā1"}},
		{"octal escape, nested parens", 1, `<< /Nums [0 << /P (\101\(x\)) >>] >>`, []string{"A(x)"}},
	} {
		for _, objStm := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/objstm=%v", tc.name, objStm), func(t *testing.T) {
				got, err := Labels(build(tc.n, tc.labels, objStm), tc.n)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("labels %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// TestIncrementalUpdate: a catalog defined again later in the file (an
// incremental update) is the one read.
func TestIncrementalUpdate(t *testing.T) {
	pdf := build(2, "<< /Nums [0 << /S /D >>] >>", false)
	pdf = append(pdf, "1 0 obj\n<< /Type /Catalog /Pages 2 0 R /PageLabels << /Nums [0 << /S /R >>] >> >>\nendobj\nxref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 3 /Root 1 0 R /Prev 0 >>\nstartxref\n0\n%%EOF\n"...)
	got, err := Labels(pdf, 2)
	if err != nil || !reflect.DeepEqual(got, []string{"I", "II"}) {
		t.Fatalf("labels %q (%v), want the update's I, II", got, err)
	}
}

// TestRefusals: inputs whose labels cannot be read say why.
func TestRefusals(t *testing.T) {
	enc := bytes.Replace(build(1, "<< /Nums [0 << /S /D >>] >>", false), []byte("/Root 1 0 R"), []byte("/Root 1 0 R /Encrypt 7 0 R"), 1)
	loop := build(1, "3 0 R", false)
	loop = append(loop, "3 0 obj\n<< /Kids [3 0 R] >>\nendobj\n"...)
	for name, tc := range map[string]struct {
		pdf  []byte
		want string
	}{
		"not a pdf":  {[]byte("GIF89a"), "not a PDF"},
		"encrypted":  {enc, "encrypted"},
		"no catalog": {[]byte("%PDF-1.4\n1 0 obj\n<< /Type /Pages >>\nendobj\n"), "no document catalog"},
		"self kid":   {loop, "refers to itself"},
	} {
		if _, err := Labels(tc.pdf, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, tc.want)
		}
	}
}

func FuzzLabels(f *testing.F) {
	f.Add(build(3, "<< /Nums [0 << /S /r >> 2 << /S /D /P (x) /St 4 >>] >>", false), 3)
	f.Add(build(2, "<< /Kids [<< /Nums [0 << /S /A >>] >>] >>", true), 2)
	f.Fuzz(func(t *testing.T, pdf []byte, n int) {
		if n < 0 || n > 1000 {
			return
		}
		got, err := Labels(pdf, n)
		if err == nil && got != nil && len(got) != n {
			t.Fatalf("%d labels for %d pages", len(got), n)
		}
	})
}

func ExampleLabels() {
	pdf := build(5, "<< /Nums [0 << /S /r >> 2 << /S /D >>] >>", false)
	labels, err := Labels(pdf, 5)
	fmt.Println(labels, err)
	// Output: [i ii 1 2 3] <nil>
}

// TestNumbersPastInt: an object stream whose /Length, /First or object
// offset is beyond int's range (each made the reader slice out of bounds
// and panic) is read up to its endstream when only its /Length is wrong,
// and passed over otherwise.
func TestNumbersPastInt(t *testing.T) {
	const cat = "<< /Type /Catalog /PageLabels << /Nums [0 << /S /r >>] >> >>"
	for _, tc := range []struct {
		name, obj string
		want      string // the error, or "" for the labels read
	}{
		{"length", "<< /Type /ObjStm /N 1 /First 4 /Length 100000000000000000000 >>\nstream\n1 0 " + cat, ""},
		{"first", "<< /Type /ObjStm /N 1 /First 10000000000000000000 >>\nstream\n1 0 " + cat, "no document catalog"},
		{"offset", "<< /Type /ObjStm /N 1 /First 23 >>\nstream\n1 10000000000000000000 " + cat, "no document catalog"},
	} {
		pdf := "%PDF-1.4\n5 0 obj\n" + tc.obj + "\nendstream\nendobj\n"
		got, err := Labels([]byte(pdf), 1)
		switch {
		case tc.want == "" && (err != nil || !reflect.DeepEqual(got, []string{"i"})):
			t.Errorf("%s: labels %q (%v), want [i]", tc.name, got, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
