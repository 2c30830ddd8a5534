package splits

// SplitMix64 is the splitmix64 generator (Steele, Lea and Flood, 2014): a
// 64-bit state advanced by the golden-ratio increment 0x9E3779B97F4A7C15
// and mixed by two xor-shift-multiply rounds. It is fully specified here so
// splits are the same on every machine and Go version, unlike math/rand.
type SplitMix64 struct{ state uint64 }

// NewSplitMix64 seeds a generator.
func NewSplitMix64(seed uint64) *SplitMix64 { return &SplitMix64{state: seed} }

// Uint64 returns the next value.
func (g *SplitMix64) Uint64() uint64 {
	g.state += 0x9E3779B97F4A7C15
	z := g.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Below returns a uniform integer in [0, n) for n > 0, by rejection: values
// at or above the largest multiple of n that fits in 64 bits are drawn
// again, so there is no modulo bias.
func (g *SplitMix64) Below(n uint64) uint64 {
	limit := ^uint64(0) - (^uint64(0) % n) // multiple of n, exclusive bound
	for {
		if v := g.Uint64(); v < limit {
			return v % n
		}
	}
}

// Shuffle permutes n elements with the Fisher–Yates algorithm: for i from
// n-1 down to 1, swap element i with element Below(i+1).
func (g *SplitMix64) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, int(g.Below(uint64(i+1))))
	}
}
