package pdfsyntax

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want any
		end  int // where the parser stands after; -1 for the end of in
	}{
		// numbers, booleans, null
		{"42", int64(42), -1},
		{" +17 ", int64(17), 4},
		{"-98", int64(-98), -1},
		{"3.25", 3.25, -1},
		{"-.5", -0.5, -1},
		{"4.", 4.0, -1},
		{"99999999999999999999", int64(math.MaxInt64), -1},
		{"-99999999999999999999", int64(math.MinInt64), -1},
		{"true", true, -1},
		{"false]", false, 5},
		{"null", nil, -1},
		{"1e5", nil, -1},
		{"Inf", nil, -1},
		{"1.2.3", nil, -1},
		// names
		{"/Type", Name("Type"), -1},
		{"/A#42C", Name("ABC"), -1},
		{"/Lime#20Green/X", Name("Lime Green"), 13},
		{"/", Name(""), -1},
		{"/A#4", Name("A#4"), -1},
		// literal strings and their escapes
		{"(a (nested) b)", String("a (nested) b"), -1},
		{`(a\(b\)c)`, String("a(b)c"), -1},
		{`(\n\r\t\b\f\\)`, String("\n\r\t\b\f\\"), -1},
		{`(\101\53\0537\7)`, String("A++7\x07"), -1},
		{"(line\\\r\ncont\\\nin)", String("linecontin"), -1},
		{`(\q)`, String("q"), -1},
		{"()", String(nil), -1},
		// hexadecimal strings
		{"<48 65 6c6C6f>", String("Hello"), -1},
		{"<414>", String("A@"), -1},
		{"<FEFF004B>", String("\xfe\xff\x00K"), -1},
		{"<>", String(nil), -1},
		// references
		{"12 0 R", Ref{12, 0}, -1},
		{"12 0 R/X", Ref{12, 0}, 6},
		{"1.0 0 R", Ref{1, 0}, -1},
		{"12 0 obj", int64(12), 2},
		{"12 0 RG", int64(12), 2},
		{"-1 0 R", int64(-1), 2},
		{"12 -1 R", int64(12), 2},
		{"12 0", int64(12), 2},
		// arrays and dictionaries
		{"[1 2 0 R /X (s) [true]]", Array{int64(1), Ref{2, 0}, Name("X"), String("s"), Array{true}}, -1},
		{"[]", Array(nil), -1},
		{"<< /Type /Catalog /Pages 2 0 R >>", Dict{"Type": Name("Catalog"), "Pages": Ref{2, 0}}, -1},
		{"<</Size 7/Root 1 0 R/Info<</A<</B[1 2]>>>>>>", Dict{"Size": int64(7), "Root": Ref{1, 0},
			"Info": Dict{"A": Dict{"B": Array{int64(1), int64(2)}}}}, -1},
		{"<< /A 1 /A 2 >>", Dict{"A": int64(2)}, -1},
		{"<< 5 /A 1 ) /B 2 >>", Dict{"A": int64(1), "B": int64(2)}, -1},
		{"[1 ) 2]", Array{int64(1), nil, int64(2)}, -1},
		// white space and comments
		{"\x00\t\n\f\r 7", int64(7), -1},
		{"% a comment\r\n/A", Name("A"), -1},
		{"<< /A % >> not the end\n 1 >>", Dict{"A": int64(1)}, -1},
		{"(100% a string)", String("100% a string"), -1},
		{"% only a comment", nil, -1},
		// cut short by the end of the data
		{"<< /A [1 2 (abc", Dict{"A": Array{int64(1), int64(2), String("abc")}}, -1},
		{`(abc\`, String("abc"), -1},
		{`(abc\05`, String("abc\x05"), -1},
		{"<41", String("A"), -1},
		{"<<", Dict{}, -1},
		{"<< /A", Dict{"A": nil}, -1},
		{"[", Array(nil), -1},
		{"", nil, 0},
		// a delimiter that starts no object: nothing read
		{")", nil, 0},
		{" >>", nil, 1},
		{"]", nil, 0},
	} {
		p := NewParser([]byte(tc.in), 0)
		got := p.Value()
		end := tc.end
		if end < 0 {
			end = len(tc.in)
		}
		if !reflect.DeepEqual(got, tc.want) || p.Pos() != end {
			t.Errorf("%q: %#v ending at %d, want %#v ending at %d", tc.in, got, p.Pos(), tc.want, end)
		}
	}
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
		end  int
	}{
		{"441", 441, true, 3},
		{" \r\n0000000058 00000 n", 58, true, 13},
		{"% comment\n 7 ", 7, true, 12},
		{"441%%EOF", 441, true, 3},
		{"-5", -5, true, 2},
		{"+5<", 5, true, 2},
		{"999999999999999999", 999999999999999999, true, 18},
		{"99999999999999999999", math.MaxInt64, true, 20},
		{"12.5", 0, false, 0},
		{"  12abc", 0, false, 2},
		{"n", 0, false, 0},
		{"/5", 0, false, 0},
		{"-", 0, false, 0},
		{"  ", 0, false, 2},
		{"", 0, false, 0},
	} {
		p := NewParser([]byte(tc.in), 0)
		v, ok := p.Int()
		if v != tc.want || ok != tc.ok || p.Pos() != tc.end {
			t.Errorf("%q: %d, %v ending at %d; want %d, %v ending at %d", tc.in, v, ok, p.Pos(), tc.want, tc.ok, tc.end)
		}
	}
}

// TestSequence: objects read one after another from an offset, as a
// reader of an object definition or a trailer does.
func TestSequence(t *testing.T) {
	data := []byte("%PDF-1.7\n4 0 obj\n<< /Length 5 0 R >>\nstream\n")
	p := NewParser(data, 9)
	var got []any
	for range 4 {
		got = append(got, p.Value())
	}
	want := []any{int64(4), int64(0), nil, Dict{"Length": Ref{5, 0}}} // "obj" is no object
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%#v, want %#v", got, want)
	}
	p.Space()
	if rest := string(data[p.Pos():]); rest != "stream\n" {
		t.Errorf("stands before %q, want before the stream keyword", rest)
	}
}

// TestOutOfRange: a start outside the data is held within it: before it,
// the parser reads from the beginning; past it, it reads nothing.
func TestOutOfRange(t *testing.T) {
	data := []byte("<< /A 1 >>")
	if v := NewParser(data, -3).Value(); !reflect.DeepEqual(v, Dict{"A": int64(1)}) {
		t.Errorf("from -3: %#v, want the dictionary", v)
	}
	for _, pos := range []int{len(data), len(data) + 5} {
		p := NewParser(data, pos)
		if v := p.Value(); v != nil {
			t.Errorf("from %d: %#v, want nil", pos, v)
		}
		if _, ok := p.Int(); ok {
			t.Errorf("from %d: an integer read", pos)
		}
		if p.Pos() != len(data) {
			t.Errorf("from %d: stands at %d, want %d", pos, p.Pos(), len(data))
		}
	}
}

// depth is the nesting of arrays and dictionaries in v.
func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case Array:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	case Dict:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// TestDepthLimit: nesting deeper than MaxDepth is not followed: inside
// the deepest container read, bytes are skipped one by one up to its
// closing bracket, so very deep or unclosed nesting costs no more than
// its length.
func TestDepthLimit(t *testing.T) {
	const n = 100000
	for _, tc := range []struct {
		name  string
		in    string
		depth int
		end   int
	}{
		{"arrays at the limit", strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1) + " /After", MaxDepth + 1, 2 * (MaxDepth + 1)},
		{"arrays past it", strings.Repeat("[", n) + strings.Repeat("]", n), MaxDepth + 1, n + MaxDepth + 1},
		{"dictionaries past it", strings.Repeat("<</A", n) + strings.Repeat(">>", n), MaxDepth + 1, 4*n + 2*(MaxDepth+1)},
		{"unclosed", strings.Repeat("[<</K", n), MaxDepth + 1, 5 * n},
	} {
		p := NewParser([]byte(tc.in), 0)
		v := p.Value()
		if d := depth(v); d != tc.depth || p.Pos() != tc.end {
			t.Errorf("%s: depth %d ending at %d, want %d ending at %d", tc.name, d, p.Pos(), tc.depth, tc.end)
		}
	}
	p := NewParser([]byte(strings.Repeat("[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1)+" /After"), 0)
	p.Value()
	if next := p.Value(); next != Name("After") {
		t.Errorf("after the nesting: %#v, want the name after it", next)
	}
}

// FuzzParser: on any data, from any offset, Value and Int return, never
// move back or past the end, and a Value that reads nothing stands at a
// delimiter; so reading on, skipping such a byte, ends within len(data)
// steps.
func FuzzParser(f *testing.F) {
	f.Add([]byte("<< /Type /Catalog /Pages 2 0 R /Kids [3 0 R (a\\)b) <4142>] >>"), 0)
	f.Add([]byte("xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 /Prev 9 >>\nstartxref\n0\n%%EOF"), 4)
	f.Add([]byte("[[[<</A [(\\0"), 2)
	f.Add([]byte("%c\r 12 0 obj ) ] >> } {"), 0)
	f.Fuzz(func(t *testing.T, data []byte, start int) {
		p := NewParser(data, start)
		steps := 0
		for p.Pos() < len(data) {
			before := p.Pos()
			v := p.Value()
			if depth(v) > MaxDepth+1 {
				t.Fatalf("depth %d past the limit", depth(v))
			}
			after := p.Pos()
			switch {
			case after < before || after > len(data):
				t.Fatalf("Value moved from %d to %d of %d", before, after, len(data))
			case after == before:
				if v != nil || !isDelim(data[after]) {
					t.Fatalf("Value read %#v without moving, at %q", v, data[after])
				}
				q := NewParser(data, after+1)
				p = q
			}
			if v, ok := p.Int(); ok && p.Pos() == after {
				t.Fatalf("Int read %d without moving", v)
			}
			if p.Pos() < after || p.Pos() > len(data) {
				t.Fatalf("Int moved from %d to %d of %d", after, p.Pos(), len(data))
			}
			if steps++; steps > len(data) {
				t.Fatalf("%d steps over %d bytes", steps, len(data))
			}
		}
	})
}
