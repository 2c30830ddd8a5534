package imageio

import "encoding/binary"

// jpegWithoutHeaderJunk returns the JPEG in data without bytes that stand
// between the segments of its header (before the scan), which libjpeg
// skips with the warning "Corrupt JPEG data: N extraneous bytes before
// marker" (Pillow's junk_jpeg_header.jpg; some scanners and cameras
// write them). libvips fails on a decoder's first warning, which is how a
// truncated file is told, so such a file would be refused although its
// image is whole: without the junk it decodes as libjpeg decodes it, and
// a truncation is still refused. data itself is returned when there is no
// junk or the header cannot be walked (libvips then says what is wrong).
func jpegWithoutHeaderJunk(data []byte) []byte {
	var drop [][2]int // byte ranges of junk
	pos := 2          // after SOI
	for pos+1 < len(data) {
		if data[pos] != 0xff || !segmentMarker(data[pos+1]) && data[pos+1] != 0xff {
			j := pos + 1
			for j+1 < len(data) && !(data[j] == 0xff && segmentMarker(data[j+1])) {
				j++
			}
			if j+1 >= len(data) {
				return data
			}
			drop = append(drop, [2]int{pos, j})
			pos = j
			continue
		}
		if data[pos+1] == 0xff { // fill byte
			pos++
			continue
		}
		m := data[pos+1]
		switch {
		case m == 0xda: // SOS: the scan begins
			return without(data, drop)
		case m == 0x01 || m >= 0xd0 && m <= 0xd7: // no length
			pos += 2
			continue
		case m == 0xd9: // EOI before a scan
			return data
		}
		if pos+4 > len(data) {
			return data
		}
		n := int(binary.BigEndian.Uint16(data[pos+2:]))
		if n < 2 {
			return data
		}
		pos += 2 + n
	}
	return data
}

// segmentMarker reports whether b, after 0xFF, is a marker (not a stuffed
// zero, not a fill byte).
func segmentMarker(b byte) bool { return b != 0x00 && b != 0xff }

// without is data without the byte ranges drop (in order), or data itself
// when there are none.
func without(data []byte, drop [][2]int) []byte {
	if len(drop) == 0 {
		return data
	}
	out := make([]byte, 0, len(data))
	at := 0
	for _, r := range drop {
		out = append(out, data[at:r[0]]...)
		at = r[1]
	}
	return append(out, data[at:]...)
}
