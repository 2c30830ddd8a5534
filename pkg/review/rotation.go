package review

// Rotation is the orientation evidence of a page: how confident the models
// are with the page as scanned and turned by 90, 180 and 270 degrees.
type Rotation struct {
	// Angle is the turn (clockwise, degrees: 0, 90, 180 or 270) that makes
	// the models most confident; 0 means the page looks upright.
	Angle int `json:"angle"`
	// Confidence is the averaged Top-1 probability with the page turned
	// clockwise by 0, 90, 180 and 270 degrees.
	Confidence [4]float64 `json:"confidence"`
	// Rotated is set when a turned page is more confident than the page as
	// scanned by at least the rotation gain of the check.
	Rotated bool `json:"rotated"`
}
