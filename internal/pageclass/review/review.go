// Package review says which classified pages a person should check, and
// why: the calibrated doubt of the prediction (how many models of the
// ensemble give the averaged Top-1, the margin between the averaged Top-1
// and Top-2, the entropy of the averaged distribution) and the condition of
// the page (near-blank, probably rotated). It never drops a page: it only
// marks it.
//
// Assess is the one place where a page's review fields are computed; the
// batch command line, the HTTP service and the evaluation all call it.
// Calibrate picks the thresholds of the doubt flag on labelled pages for a
// target precision of the pages left unflagged; the result is kept in a
// calibration file beside the models (see File) and found again by Resolve.
package review

import (
	"math"

	"archivekit/internal/docrecord"
	"archivekit/internal/pageclass/modelmeta"
)

// Doubt is the evidence of a page's prediction.
type Doubt struct {
	// Top1 is the averaged Top-1 category.
	Top1 string `json:"top1"`
	// Agreement is the number of models whose own Top-1 is Top1; Models is
	// the number of models (1 for a single model, whose agreement is 1/1).
	Agreement int `json:"agreement"`
	Models    int `json:"models"`
	// Margin is the averaged probability of Top-1 minus that of Top-2.
	Margin float64 `json:"margin"`
	// Entropy is the entropy of the averaged distribution in nats (0 for a
	// certain prediction, ln 11 ≈ 2.398 for a uniform one).
	Entropy float64 `json:"entropy"`
}

// argmax is the index of the largest score; ties go to the first (canonical
// order), as results.TopN ranks them.
func argmax(v []float64) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// Measure computes the doubt of a page from each model's probabilities
// (canonical category order) and their mean.
func Measure(perModel [][]float64, mean []float64) Doubt {
	d := Doubt{Models: len(perModel)}
	if len(mean) == 0 {
		return d
	}
	top := argmax(mean)
	d.Top1 = modelmeta.Categories[top]
	for _, p := range perModel {
		if len(p) == len(mean) && argmax(p) == top {
			d.Agreement++
		}
	}
	second := math.Inf(-1)
	for i, x := range mean {
		if i != top && x > second {
			second = x
		}
	}
	if len(mean) > 1 {
		d.Margin = mean[top] - second
	} else {
		d.Margin = mean[top]
	}
	for _, x := range mean {
		if x > 0 {
			d.Entropy -= x * math.Log(x)
		}
	}
	if d.Entropy < 0 { // rounding of a certain prediction
		d.Entropy = 0
	}
	return d
}

// Reasons of a review flag, as written in the REASONS column and the
// reasons lists of the record and the HTTP responses.
const (
	// ReasonLowMargin: the margin is below the calibrated minimum.
	ReasonLowMargin = "low_margin"
	// ReasonDisagreement: fewer models than the calibrated minimum give the
	// averaged Top-1.
	ReasonDisagreement = "disagreement"
	// ReasonUncalibrated: no calibration exists for these models, so the
	// doubt cannot be turned into a flag (needs_review is unknown unless
	// a page condition flags the page).
	ReasonUncalibrated = "uncalibrated"
	// ReasonNearBlank: the page has almost no ink.
	ReasonNearBlank = "near_blank"
	// ReasonRotated: the page is probably not upright (Rotation.Angle says
	// by how much).
	ReasonRotated = "rotated"
	// ReasonUnreachable: the calibration found no thresholds that reach its
	// target precision on its split, so it flags every page; a low margin
	// is not the reason.
	ReasonUnreachable = "target_unreachable"
)

// Thresholds turn a page's doubt into a flag: a page is flagged when fewer
// than MinAgreement models agree with the averaged Top-1, or when its margin
// is below MinMargin.
type Thresholds struct {
	MinAgreement int     `json:"min_agreement"`
	MinMargin    float64 `json:"min_margin"`
}

// Flags returns the doubt reasons of d under t (empty when none).
func (t Thresholds) Flags(d Doubt) []string {
	if t.MinMargin >= FlagAll {
		return []string{ReasonUnreachable}
	}
	var r []string
	if d.Agreement < t.MinAgreement {
		r = append(r, ReasonDisagreement)
	}
	if d.Margin < t.MinMargin {
		r = append(r, ReasonLowMargin)
	}
	return r
}

// Page is everything the review says about one page.
type Page struct {
	Doubt
	// NeedsReview is true when any reason flags the page, false when the
	// page was checked against a calibration and nothing flags it, and nil
	// when there is no calibration and no condition flags it: unknown.
	NeedsReview *bool `json:"needs_review"`
	// Reasons lists why (Reason* constants), in a fixed order.
	Reasons []string `json:"reasons"`
	// Ink is the page's ink evidence; nil when it was not measured.
	Ink *Ink `json:"ink,omitempty"`
	// Rotation is the page's orientation evidence; nil when not checked.
	Rotation *Rotation `json:"rotation,omitempty"`
	// Calibration identifies the calibration that set the doubt flag
	// (Applied.ID), "none" when there was none.
	Calibration string `json:"calibration"`
}

// Condition is the evidence about the page itself, measured on the decoded
// page; a nil member was not measured.
type Condition struct {
	Ink      *Ink      `json:"ink,omitempty"`
	Rotation *Rotation `json:"rotation,omitempty"`
}

// Assess computes the review of one page from each model's probabilities,
// their mean, the page's condition and the calibration in force (nil: none).
func Assess(perModel [][]float64, mean []float64, cond Condition, cal *Applied) Page {
	p := Page{Doubt: Measure(perModel, mean), Ink: cond.Ink, Rotation: cond.Rotation, Calibration: "none"}
	reasons := []string{}
	known := false
	if cal != nil {
		known = true
		p.Calibration = cal.ID()
		reasons = append(reasons, cal.Thresholds.Flags(p.Doubt)...)
	}
	if cond.Ink != nil && cond.Ink.NearBlank {
		reasons = append(reasons, ReasonNearBlank)
	}
	if cond.Rotation != nil && cond.Rotation.Rotated {
		reasons = append(reasons, ReasonRotated)
	}
	switch {
	case len(reasons) > 0:
		p.NeedsReview = ptr(true)
	case known:
		p.NeedsReview = ptr(false)
	}
	if !known {
		reasons = append(reasons, ReasonUncalibrated)
	}
	p.Reasons = reasons
	return p
}

func ptr[T any](v T) *T { return &v }

// Rounded returns a copy of p with its numbers rounded to 4 decimals (ink
// coverage to 5), as the tables write them: what the record and the HTTP
// responses carry.
func (p Page) Rounded() Page {
	r := func(x float64, dec int) float64 {
		s := math.Pow(10, float64(dec))
		return math.Round(x*s) / s
	}
	p.Margin, p.Entropy = r(p.Margin, 4), r(p.Entropy, 4)
	if p.Ink != nil {
		ink := *p.Ink
		ink.Coverage = r(ink.Coverage, 5)
		p.Ink = &ink
	}
	if p.Rotation != nil {
		rot := *p.Rotation
		for i := range rot.Confidence {
			rot.Confidence[i] = r(rot.Confidence[i], 4)
		}
		p.Rotation = &rot
	}
	p.Reasons = append([]string{}, p.Reasons...)
	return p
}

// Record returns p rounded as the tables write it (Rounded) in the form a
// document record carries as a page's category_review; nil for a nil p.
func (p *Page) Record() *docrecord.PageReview {
	if p == nil {
		return nil
	}
	q := p.Rounded()
	rv := &docrecord.PageReview{
		Top1: q.Top1, Agreement: q.Agreement, Models: q.Models, Margin: q.Margin, Entropy: q.Entropy,
		NeedsReview: q.NeedsReview, Reasons: q.Reasons, Calibration: q.Calibration,
	}
	if q.Ink != nil {
		rv.Ink = &docrecord.PageInk{Coverage: q.Ink.Coverage, NearBlank: q.Ink.NearBlank}
	}
	if q.Rotation != nil {
		rv.Rotation = &docrecord.PageRotation{Angle: q.Rotation.Angle, Confidence: q.Rotation.Confidence, Rotated: q.Rotation.Rotated}
	}
	return rv
}
