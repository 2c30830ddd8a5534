// Package pdfsyntax reads the objects of PDF syntax (ISO 32000-1, 7.2 and
// 7.3): white space and comments, integers and reals, names, literal and
// hexadecimal strings, arrays, dictionaries and indirect references
// ("12 0 R"). It reads no streams, cross-reference tables or encryption:
// its users find where an object begins and read it from there.
//
// A Parser never fails and never panics: what it cannot read is nil, an
// object cut short by the end of the data is returned as far as it goes,
// and nesting deeper than MaxDepth is not followed. It only moves forward,
// reading each byte a bounded number of times.
//
// A value read is one of: nil (null, or nothing readable), bool, int64 (an
// integer; one beyond int64's range is held at the nearest bound), float64
// (a real), Name, String, Array, Dict or Ref.
package pdfsyntax

import (
	"bytes"
	"strconv"
)

// The object types of a value read.
type (
	Name   string                 // a name, without its slash and with its #xx escapes decoded
	String []byte                 // a literal or hexadecimal string, decoded
	Array  []any                  // an array
	Dict   map[string]any         // a dictionary, keyed by name (without the slash); a repeated key keeps its last value
	Ref    struct{ Num, Gen int } // an indirect reference: object number and generation
)

// MaxDepth is how deep arrays and dictionaries are followed inside the
// object read: MaxDepth+1 levels, the outermost counted. Inside the
// deepest, what nests further is skipped byte by byte up to its closing
// bracket.
const MaxDepth = 64

// Parser reads objects from data, from a position on.
type Parser struct {
	data []byte
	pos  int
}

// NewParser returns a parser of data at pos (held within data).
func NewParser(data []byte, pos int) *Parser {
	return &Parser{data: data, pos: min(max(pos, 0), len(data))}
}

// Pos is where the parser stands: the offset in its data of the first
// byte not read yet.
func (p *Parser) Pos() int { return p.pos }

// isSpace reports whether c is PDF white space (ISO 32000-1, 7.2.2).
func isSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func isDelim(c byte) bool {
	return bytes.IndexByte([]byte("()<>[]{}/%"), c) >= 0
}

// Space skips white space and comments.
func (p *Parser) Space() {
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case isSpace(c):
			p.pos++
		case c == '%':
			for p.pos < len(p.data) && p.data[p.pos] != '\n' && p.data[p.pos] != '\r' {
				p.pos++
			}
		default:
			return
		}
	}
}

// token reads a run of regular characters.
func (p *Parser) token() []byte {
	start := p.pos
	for p.pos < len(p.data) && !isSpace(p.data[p.pos]) && !isDelim(p.data[p.pos]) {
		p.pos++
	}
	return p.data[start:p.pos]
}

// Int reads an integer after white space and comments: an optional sign
// and decimal digits, ended by white space, a delimiter or the end of the
// data. One beyond int64's range reads as math.MaxInt64 or math.MinInt64.
// When no integer follows, ok is false and only the white space is read.
func (p *Parser) Int() (v int64, ok bool) {
	p.Space()
	start := p.pos
	tok := p.token()
	if !isNumber(tok) || bytes.IndexByte(tok, '.') >= 0 {
		p.pos = start
		return 0, false
	}
	v, _ = strconv.ParseInt(string(tok), 10, 64) // out of range: the nearest bound
	return v, true
}

// isNumber reports whether tok is a PDF number (ISO 32000-1, 7.3.3): a
// sign, digits and at most one period, with at least one digit.
func isNumber(tok []byte) bool {
	if len(tok) > 0 && (tok[0] == '+' || tok[0] == '-') {
		tok = tok[1:]
	}
	digits, periods := 0, 0
	for _, c := range tok {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			periods++
		default:
			return false
		}
	}
	return digits > 0 && periods <= 1
}

// Value reads one object after white space and comments. Two non-negative
// integers (the first may be written as a real of integral value) followed
// by R are a reference. A word that is no object (null, an operator such
// as obj) reads as nil; at a delimiter that starts no object (a stray ")"
// or ">"), Value returns nil and does not move.
func (p *Parser) Value() any {
	return p.value(0)
}

func (p *Parser) value(depth int) any {
	p.Space()
	if p.pos >= len(p.data) || depth > MaxDepth {
		return nil
	}
	switch c := p.data[p.pos]; {
	case c == '/':
		p.pos++
		return Name(unescapeName(p.token()))
	case c == '(':
		return p.literal()
	case c == '<' && p.pos+1 < len(p.data) && p.data[p.pos+1] == '<':
		p.pos += 2
		return p.dict(depth)
	case c == '<':
		return p.hex()
	case c == '[':
		p.pos++
		return p.array(depth)
	}
	tok := p.token()
	switch string(tok) {
	case "true":
		return true
	case "false":
		return false
	}
	if !isNumber(tok) {
		return nil // null, an operator or nothing
	}
	if bytes.IndexByte(tok, '.') < 0 {
		v, err := strconv.ParseInt(string(tok), 10, 64) // out of range: the nearest bound
		if err == nil && v >= 0 {
			if r, ok := p.ref(int(v)); ok {
				return r
			}
		}
		return v
	}
	f, _ := strconv.ParseFloat(string(tok), 64) // a well-formed real
	if f >= 0 && f == float64(int(f)) {
		if r, ok := p.ref(int(f)); ok {
			return r
		}
	}
	return f
}

// ref reads "gen R" after the object number num, and goes back when they
// do not follow.
func (p *Parser) ref(num int) (Ref, bool) {
	save := p.pos
	p.Space()
	gen := p.token()
	p.Space()
	if g, err := strconv.Atoi(string(gen)); err == nil && g >= 0 && p.pos < len(p.data) && p.data[p.pos] == 'R' &&
		(p.pos+1 == len(p.data) || isSpace(p.data[p.pos+1]) || isDelim(p.data[p.pos+1])) {
		p.pos++
		return Ref{Num: num, Gen: g}, true
	}
	p.pos = save
	return Ref{}, false
}

// array reads the elements after "[" up to "]" or the end of the data.
func (p *Parser) array(depth int) Array {
	var a Array
	for {
		p.Space()
		if p.pos >= len(p.data) {
			return a
		}
		if p.data[p.pos] == ']' {
			p.pos++
			return a
		}
		before := p.pos
		a = append(a, p.value(depth+1))
		if p.pos == before {
			p.pos++ // a stray delimiter: skip it
		}
	}
}

// dict reads the entries after "<<" up to ">>" or the end of the data; a
// value that is not preceded by a name is skipped.
func (p *Parser) dict(depth int) Dict {
	d := Dict{}
	for {
		p.Space()
		if p.pos >= len(p.data) {
			return d
		}
		if bytes.HasPrefix(p.data[p.pos:], []byte(">>")) {
			p.pos += 2
			return d
		}
		before := p.pos
		k, ok := p.value(depth + 1).(Name)
		if !ok {
			if p.pos == before {
				p.pos++ // a stray delimiter: skip it
			}
			continue
		}
		d[string(k)] = p.value(depth + 1)
	}
}

// literal reads a (string) with its escapes and balanced parentheses.
func (p *Parser) literal() String {
	p.pos++ // (
	var out []byte
	level := 1
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		p.pos++
		switch c {
		case '(':
			level++
		case ')':
			level--
			if level == 0 {
				return out
			}
		case '\\':
			if p.pos >= len(p.data) {
				return out
			}
			e := p.data[p.pos]
			p.pos++
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if p.pos < len(p.data) && p.data[p.pos] == '\n' {
					p.pos++
				}
				continue
			case '\n':
				continue
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for i := 0; i < 2 && p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '7'; i++ {
						v = v*8 + int(p.data[p.pos]-'0')
						p.pos++
					}
					c = byte(v)
				} else {
					c = e
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// hex reads a <hex string>; an odd last digit is followed by 0.
func (p *Parser) hex() String {
	p.pos++ // <
	var out []byte
	var hi byte
	half := false
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		p.pos++
		if c == '>' {
			break
		}
		v, ok := hexDigit(c)
		if !ok {
			continue
		}
		if half {
			out = append(out, hi<<4|v)
		} else {
			hi = v
		}
		half = !half
	}
	if half {
		out = append(out, hi<<4)
	}
	return out
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unescapeName decodes #xx escapes of a name.
func unescapeName(b []byte) string {
	if bytes.IndexByte(b, '#') < 0 {
		return string(b)
	}
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && i+2 < len(b) {
			h, ok1 := hexDigit(b[i+1])
			l, ok2 := hexDigit(b[i+2])
			if ok1 && ok2 {
				out = append(out, h<<4|l)
				i += 2
				continue
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}
