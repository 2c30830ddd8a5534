package train

import (
	"math"
	"strings"
	"testing"
)

// near reports whether got is within 1e-12 of want; NaN is near nothing.
func near(got, want float64) bool { return math.Abs(got-want) <= 1e-12 }

// TestPerClassF1: F1 is computed from the counts, so that an exact value
// prints rounded as scikit-learn's does (TP 30, FP 1, FN 3: 60/64 =
// 0.9375, printed 0.938; it was 0.937); a category never predicted, never
// present, or neither has 0 where its ratio has no pages (not NaN), and
// Support is the pages of the category (not those predicted as it). If it
// failed, the evaluation report would print NaN for a category the test
// set lacks, or the wrong page count beside each category.
func TestPerClassF1(t *testing.T) {
	conf := make([][]int, 11)
	for i := range conf {
		conf[i] = make([]int, 11)
	}
	conf[0][0], conf[0][1] = 30, 3 // category 0: TP 30, FN 3
	conf[1][0], conf[1][1] = 1, 5  // category 0: FP 1
	conf[2][3] = 2                 // category 2 present, never predicted; 3 predicted, never present
	got := perClass(conf)
	for _, tc := range []struct {
		c                     int
		precision, recall, f1 float64
		support               int
	}{
		{0, 30.0 / 31, 30.0 / 33, 0.9375, 33},
		{1, 5.0 / 8, 5.0 / 6, 10.0 / 14, 6},
		{2, 0, 0, 0, 2},
		{3, 0, 0, 0, 0},
		{4, 0, 0, 0, 0},
		{10, 0, 0, 0, 0},
	} {
		s := got[tc.c]
		if !near(s.Precision, tc.precision) || !near(s.Recall, tc.recall) || !near(s.F1, tc.f1) || s.Support != tc.support {
			t.Errorf("category %d: %+v, want P %.4f R %.4f F1 %.4f support %d", tc.c, s, tc.precision, tc.recall, tc.f1, tc.support)
		}
	}
	r := &EvalResult{Revision: "v1.4", Pages: 39, PerClass: got}
	if line := strings.Fields(strings.Split(r.Report(), "\n")[2]); line[3] != "0.938" {
		t.Errorf("F1 of 0.9375 printed %s, want 0.938", line[3])
	}
}

// TestAccuracy: Top-1 counts the pages whose category has the highest
// probability, Top-k those whose category is among the k highest, a tie
// ranking the earlier category first, over every page. If it failed, the
// accuracies logged and written in a model's metadata after training, and
// those of an evaluation, would be wrong (0, or counting a category ranked
// k+1 as within the top k).
func TestAccuracy(t *testing.T) {
	for _, c := range []struct {
		name       string
		probs      [][]float64
		labels     []int64
		k          int
		top1, topk float64
	}{
		{"one page, right", [][]float64{{0.7, 0.2, 0.1}}, []int64{0}, 3, 1, 1},
		{"ranks 0 to 3 and ties", [][]float64{
			{0.1, 0.6, 0.2, 0.05, 0.05}, // right
			{0.4, 0.3, 0.2, 0.1, 0},     // ranked 3rd: within the Top-3
			{0.4, 0.3, 0.2, 0.1, 0},     // ranked 4th: not
			{0.3, 0.3, 0.2, 0.1, 0.1},   // tied with an earlier category: 2nd
			{0.3, 0.3, 0.2, 0.1, 0.1},   // tied with a later one: 1st
		}, []int64{1, 2, 3, 1, 0}, 3, 2.0 / 5, 4.0 / 5},
		{"top-1 only", [][]float64{{0.1, 0.9}, {0.1, 0.9}, {0.6, 0.4}}, []int64{1, 0, 0}, 1, 2.0 / 3, 2.0 / 3},
		{"every page wrong", [][]float64{{0.1, 0.2, 0.3, 0.4}, {0.4, 0.3, 0.2, 0.1}}, []int64{0, 3}, 3, 0, 0},
		{"no page", nil, nil, 3, 0, 0},
	} {
		ss := make([]*sample, len(c.labels))
		p32 := make([][]float32, len(c.probs))
		for i, l := range c.labels {
			ss[i] = &sample{path: "p.png", label: l}
			for _, v := range c.probs[i] {
				p32[i] = append(p32[i], float32(v))
			}
		}
		if top1, topk := accuracy(c.probs, ss, c.k); !near(top1, c.top1) || !near(topk, c.topk) {
			t.Errorf("%s: accuracy = Top-1 %v Top-%d %v, want %v %v", c.name, top1, c.k, topk, c.top1, c.topk)
		}
		if top1, topk := accuracy(p32, ss, c.k); !near(top1, c.top1) || !near(topk, c.topk) {
			t.Errorf("%s (float32): accuracy = Top-1 %v Top-%d %v, want %v %v", c.name, top1, c.k, topk, c.top1, c.topk)
		}
	}
}

// TestScoreConfusion: an evaluation's confusion matrix is
// [true category][predicted category], and precision (of the pages
// predicted as a category, those that are) and recall (of the pages of a
// category, those predicted as it) are read from it so. If it failed, the
// confusion matrix PNG would show its rows and columns swapped, and the
// report precision where it says recall.
func TestScoreConfusion(t *testing.T) {
	// page is the probabilities of a page predicted as category pred.
	page := func(pred int) []float64 {
		p := make([]float64, 11)
		for i := range p {
			p[i] = 0.01
		}
		p[pred] = 0.9
		return p
	}
	var probs [][]float64
	var ptrs []*sample
	for _, pg := range []struct {
		label, pred, n int
	}{
		{0, 0, 3}, // DRAW, right
		{0, 1, 1}, // DRAW taken for DRAW_L
		{1, 1, 2}, // DRAW_L, right
		{2, 1, 1}, // LINE_HW taken for DRAW_L
	} {
		for range pg.n {
			probs = append(probs, page(pg.pred))
			ptrs = append(ptrs, &sample{path: "p.png", label: int64(pg.label)})
		}
	}
	res := &EvalResult{}
	res.score(probs, ptrs, 3)
	for _, c := range []struct {
		label, pred, want int
	}{
		{0, 0, 3}, {0, 1, 1}, {1, 0, 0}, {1, 1, 2}, {2, 1, 1}, {1, 2, 0}, {2, 2, 0},
	} {
		if got := res.Confusion[c.label][c.pred]; got != c.want {
			t.Errorf("Confusion[true %d][predicted %d] = %d, want %d", c.label, c.pred, got, c.want)
		}
	}
	for _, c := range []struct {
		cat               int
		precision, recall float64
		support           int
	}{
		{0, 1, 3.0 / 4, 4},
		{1, 2.0 / 4, 1, 2},
		{2, 0, 0, 1},
	} {
		s := res.PerClass[c.cat]
		if !near(s.Precision, c.precision) || !near(s.Recall, c.recall) || s.Support != c.support {
			t.Errorf("category %d: %+v, want P %.4f R %.4f support %d", c.cat, s, c.precision, c.recall, c.support)
		}
	}
	if !near(res.Top1, 5.0/7) || !near(res.TopN, 1) {
		t.Errorf("Top-1 %v Top-3 %v, want %v 1", res.Top1, res.TopN, 5.0/7)
	}
}
