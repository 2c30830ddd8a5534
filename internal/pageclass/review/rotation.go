package review

// Rotation is the orientation evidence of a page, from the page-orientation
// model (FromOrientation).
type Rotation struct {
	// Angle is the clockwise turn (degrees: 0, 90, 180 or 270) that most
	// probably makes the page upright; 0 means it looks upright.
	Angle int `json:"angle"`
	// Confidence is the probability that turning the page clockwise by 0,
	// 90, 180 and 270 degrees makes it upright.
	Confidence [4]float64 `json:"confidence"`
	// Rotated is set when Angle is not 0 with a probability of at least
	// RotatedConfidence.
	Rotated bool `json:"rotated"`
}

// RotatedConfidence is the probability of a turn other than 0 from which a
// page is flagged rotated: chosen on the dev pages of fold 1 and their turned
// copies (1 of 20 upright pages, 43 of 60 turned copies flagged), docs/pageclass.md.
const RotatedConfidence = 0.8

// FromOrientation turns an orientation model's probabilities (the page as
// scanned is upright, or turned clockwise by 90, 180, 270 degrees) into the
// rotation evidence: Confidence[i] is the probability that turning the page
// clockwise by 90·i makes it upright, Angle the most probable such turn,
// Rotated when that is not 0 and its probability reaches RotatedConfidence.
func FromOrientation(p [4]float64) Rotation {
	var r Rotation
	for i := range r.Confidence {
		r.Confidence[i] = p[(4-i)%4]
	}
	best := 0
	for i, c := range r.Confidence {
		if c > r.Confidence[best] {
			best = i
		}
	}
	r.Angle = 90 * best
	r.Rotated = best != 0 && r.Confidence[best] >= RotatedConfidence
	return r
}
