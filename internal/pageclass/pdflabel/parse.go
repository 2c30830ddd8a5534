package pdflabel

import (
	"bytes"
	"strconv"
)

// parser reads PDF objects (ISO 32000-1, 7.3) from data at pos. It never
// fails: what it cannot read is nil, and a nesting deeper than maxDepth
// stops it.
type parser struct {
	data []byte
	pos  int
}

const maxDepth = 64

func isSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func isDelim(c byte) bool {
	return bytes.IndexByte([]byte("()<>[]{}/%"), c) >= 0
}

// space skips white space and comments.
func (p *parser) space() {
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
func (p *parser) token() []byte {
	start := p.pos
	for p.pos < len(p.data) && !isSpace(p.data[p.pos]) && !isDelim(p.data[p.pos]) {
		p.pos++
	}
	return p.data[start:p.pos]
}

// value reads one object; an integer followed by an integer and R is a
// reference.
func (p *parser) value(depth int) any {
	p.space()
	if p.pos >= len(p.data) || depth > maxDepth {
		return nil
	}
	switch c := p.data[p.pos]; {
	case c == '/':
		p.pos++
		return name(unescapeName(p.token()))
	case c == '(':
		return p.literal()
	case c == '<' && p.pos+1 < len(p.data) && p.data[p.pos+1] == '<':
		p.pos += 2
		return p.dict(depth)
	case c == '<':
		return p.hex()
	case c == '[':
		p.pos++
		var a array
		for {
			p.space()
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
	tok := p.token()
	switch string(tok) {
	case "true":
		return true
	case "false":
		return false
	case "null", "":
		return nil
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return nil
	}
	// A reference: "num gen R".
	if f >= 0 && f == float64(int(f)) {
		save := p.pos
		p.space()
		gen := p.token()
		p.space()
		if g, err := strconv.Atoi(string(gen)); err == nil && g >= 0 && p.pos < len(p.data) && p.data[p.pos] == 'R' &&
			(p.pos+1 == len(p.data) || isSpace(p.data[p.pos+1]) || isDelim(p.data[p.pos+1])) {
			p.pos++
			return ref{num: int(f), gen: g}
		}
		p.pos = save
	}
	return f
}

func (p *parser) dict(depth int) dict {
	d := dict{}
	for {
		p.space()
		if p.pos >= len(p.data) {
			return d
		}
		if bytes.HasPrefix(p.data[p.pos:], []byte(">>")) {
			p.pos += 2
			return d
		}
		before := p.pos
		k, ok := p.value(depth + 1).(name)
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
func (p *parser) literal() pstring {
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
func (p *parser) hex() pstring {
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
