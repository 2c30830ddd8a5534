package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"

	"archivekit/internal/pageclass/imageio"
)

// thumbWidth is the width of the page thumbnails of /predict_document.
const thumbWidth = 160

// thumbnail shrinks a decoded page to width pixels (box filter) and returns
// it as a JPEG data: URL.
func thumbnail(img imageio.Image, width int) string {
	b := thumbJPEG(img, width)
	if b == nil {
		return ""
	}
	return "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(b)
}

// thumbJPEG shrinks a decoded page to width pixels (box filter) and returns
// it as a JPEG file (nil for an empty page).
func thumbJPEG(img imageio.Image, width int) []byte {
	if img.W <= 0 || img.H <= 0 {
		return nil
	}
	if width > img.W {
		width = img.W
	}
	height := max(1, img.H*width/img.W)
	out := image.NewRGBA(image.Rect(0, 0, width, height))
	for y := 0; y < height; y++ {
		y0, y1 := y*img.H/height, max((y+1)*img.H/height, y*img.H/height+1)
		for x := 0; x < width; x++ {
			x0, x1 := x*img.W/width, max((x+1)*img.W/width, x*img.W/width+1)
			var sum [3]int
			for yy := y0; yy < y1; yy++ {
				row := img.Pix[(yy*img.W+x0)*3 : (yy*img.W+x1)*3]
				for i := 0; i < len(row); i += 3 {
					sum[0] += int(row[i])
					sum[1] += int(row[i+1])
					sum[2] += int(row[i+2])
				}
			}
			n := (y1 - y0) * (x1 - x0)
			o := out.PixOffset(x, y)
			out.Pix[o], out.Pix[o+1], out.Pix[o+2], out.Pix[o+3] = uint8(sum[0]/n), uint8(sum[1]/n), uint8(sum[2]/n), 255
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: 80}); err != nil {
		return nil
	}
	return buf.Bytes()
}
