package results

import (
	"fmt"
	"strconv"
	"strings"
)

// ReviewName is "{stamp}_{rev}_REVIEW.csv": the review table beside
// {stamp}_{rev}_TOP-{N}.csv and _RAW.csv. An ensemble run's rev is
// BEST_{n}_models_AVG, as for its averaged RAW table.
func ReviewName(stamp, rev string) string { return fmt.Sprintf("%s_%s_REVIEW.csv", stamp, rev) }

// EvalReviewName is "{stamp}_{count}_{rev}_EVAL_REVIEW.csv", beside
// _EVAL_RAW.csv.
func EvalReviewName(stamp string, count int, rev string) string {
	return fmt.Sprintf("%s_%d_%s_EVAL_REVIEW.csv", stamp, count, rev)
}

type reviewLayout struct{ eval bool }

// ReviewLayout is the review table (not a table of the spec; the spec's
// tables are unchanged): FILE, PAGE, CLASS-1, SCORE-1 (the averaged Top-1),
// AGREEMENT ("k/n": k of the n models give CLASS-1), MARGIN (SCORE-1 minus
// SCORE-2), ENTROPY (nats), NEEDS_REVIEW (yes, no, or empty when unknown:
// no calibration and no page condition), REASONS (";"-separated), INK
// (coverage), NEAR_BLANK, ROTATION (the turn that makes the models most
// confident, degrees), ROTATION_CONFIDENCE (the averaged Top-1 probability
// at 0/90/180/270, "/"-separated), ROTATED, CALIBRATION; then TRUE when eval
// is set. Cells of a condition that was not measured are empty.
func ReviewLayout(eval bool) Layout { return reviewLayout{eval} }

func (l reviewLayout) Header() []string {
	h := []string{"FILE", "PAGE", "CLASS-1", "SCORE-1", "AGREEMENT", "MARGIN", "ENTROPY", "NEEDS_REVIEW", "REASONS",
		"INK", "NEAR_BLANK", "ROTATION", "ROTATION_CONFIDENCE", "ROTATED", "CALIBRATION"}
	if l.eval {
		h = append(h, "TRUE")
	}
	return h
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (l reviewLayout) Cells(r Row) ([]string, error) {
	if err := checkScores(r, r.Scores); err != nil {
		return nil, err
	}
	if r.Review == nil {
		return nil, fmt.Errorf("%s: no review", r.Key)
	}
	v := r.Review
	top := TopN(r.Scores, 1)[0]
	need := ""
	if v.NeedsReview != nil {
		need = yesNo(*v.NeedsReview)
	}
	c := []string{r.File, r.PageCell(), top.Label, FormatScore(top.Score),
		fmt.Sprintf("%d/%d", v.Agreement, v.Models), FormatScore(v.Margin), FormatScore(v.Entropy),
		need, strings.Join(v.Reasons, ";")}
	if v.Ink != nil {
		c = append(c, strconv.FormatFloat(v.Ink.Coverage, 'f', 5, 64), yesNo(v.Ink.NearBlank))
	} else {
		c = append(c, "", "")
	}
	if v.Rotation != nil {
		conf := make([]string, len(v.Rotation.Confidence))
		for i, x := range v.Rotation.Confidence {
			conf[i] = FormatScore(x)
		}
		c = append(c, strconv.Itoa(v.Rotation.Angle), strings.Join(conf, "/"), yesNo(v.Rotation.Rotated))
	} else {
		c = append(c, "", "", "")
	}
	c = append(c, v.Calibration)
	if l.eval {
		c = append(c, r.True)
	}
	return c, nil
}
