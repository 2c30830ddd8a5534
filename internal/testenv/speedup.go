package testenv

import (
	"slices"
	"testing"
	"time"
)

// Speedup times the same work done two ways, without a feature and with
// it (each function does it once and returns its wall time): once each to
// warm up, then rounds rounds of both in turn, the order alternating so
// that load from other processes hits both alike. It logs each round
// ("… without what, … with") and reports on b the best round of each
// (s-without, s-with), the ratio without/with of the best rounds
// (speedup) and the median of the per-round ratios (speedup-median).
func Speedup(b *testing.B, rounds int, what string, without, with func() time.Duration) {
	b.Helper()
	without()
	with()
	var bestWithout, bestWith time.Duration
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for r := 0; r < rounds; r++ {
			var a, w time.Duration
			if r%2 == 0 {
				a, w = without(), with()
			} else {
				w, a = with(), without()
			}
			if bestWithout == 0 || a < bestWithout {
				bestWithout = a
			}
			if bestWith == 0 || w < bestWith {
				bestWith = w
			}
			ratios = append(ratios, a.Seconds()/w.Seconds())
			b.Logf("round %d: %v without %s, %v with (%.2f)", r+1, a.Round(time.Millisecond), what, w.Round(time.Millisecond), ratios[len(ratios)-1])
		}
	}
	b.ReportMetric(bestWithout.Seconds(), "s-without")
	b.ReportMetric(bestWith.Seconds(), "s-with")
	b.ReportMetric(bestWithout.Seconds()/bestWith.Seconds(), "speedup")
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "speedup-median")
}
