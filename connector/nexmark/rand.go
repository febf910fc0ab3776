package nexmark

import "math"

// rng is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom
// number generators", 2014) with Stafford's "variant 13" output mixer. It is
// tiny, fast, passes BigCrush, and — what matters here — every draw is
// defined by integer arithmetic, so the Java port in bench/flink produces
// the same numbers bit for bit. Java's own Random and SplittableRandom would
// tie the stream to one JDK's implementation details.
//
// Each event gets a fresh rng seeded from its event id (Beam's way), so any
// event can be generated alone: that is what lets a split resume from a
// checkpointed position without replaying the split.
type rng struct{ s uint64 }

const golden = 0x9e3779b97f4a7c15 // 2^64 / φ, SplitMix64's increment

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// seeded returns the rng for a seed. The seed is mixed once so that
// neighbouring event ids start from unrelated states.
func seeded(seed uint64) rng { return rng{s: mix64(seed)} }

// next returns the next 64 random bits.
func (r *rng) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// intn returns a uniform int in [0, n) for 0 < n < 2^31. It draws 31 bits
// and rejects the top partial interval (as java.util.SplittableRandom does),
// so the result is unbiased and the number of draws is the same in Java.
func (r *rng) intn(n int) int {
	bound := uint32(n)
	u := uint32(r.next() >> 33)
	v := u % bound // 32-bit division: much cheaper than 64-bit
	for u-v+(bound-1) >= 1<<31 {
		u = uint32(r.next() >> 33)
		v = u % bound
	}
	return int(v)
}

// longn is Nexmark's LongGenerator.nextLong: intn below 2^31-1, otherwise
// abs(nextLong mod n), whose skew the original accepts.
func (r *rng) longn(n int64) int64 {
	if n < math.MaxInt32 {
		return int64(r.intn(int(n)))
	}
	v := int64(r.next()) % n
	if v < 0 {
		v = -v
	}
	return v
}

// float64 returns a uniform float64 in [0, 1) from the top 53 bits.
func (r *rng) float64() float64 { return float64(r.next()>>11) * 0x1p-53 }

// price is Nexmark's price(): round(10^(u·6) · 100) cents, log-uniform
// between 100 and 100,000,000.
func (r *rng) price() int64 {
	return int64(math.Round(float64(pow10(r.float64()*6) * 100)))
}

const ln10 = 2.302585092994046

var powersOf10 = [...]float64{1, 10, 100, 1e3, 1e4, 1e5, 1e6}

// invFactorial[i] = 1/i!, each computed from the previous by one division,
// as the Java port does.
var invFactorial = func() (t [28]float64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] / float64(i)
	}
	return t
}()

// expSeries is exp(x) for 0 ≤ x < 2.31 as Σ x^i/i! by Horner, up to the
// term whose successor is below 1e-19; terms is how many to sum.
func expSeries(x float64, terms int) float64 {
	p := invFactorial[terms-1]
	for i := terms - 2; i >= 0; i-- {
		p = float64(p*x) + invFactorial[i]
	}
	return p
}

// pow10Steps[j] = 10^(j/256) for j/256 in [0, 6).
var pow10Steps = func() (t [6 * 256]float64) {
	for j := range t {
		t[j] = float64(powersOf10[j>>8] * expSeries(float64(float64(j&255)/256*ln10), len(invFactorial)))
	}
	return t
}()

// pow10 returns 10^y for y in [0, 6): a table step 10^(j/256) times
// exp((y − j/256)·ln10) by a short series. It is written with + − × ÷
// only, in a fixed order, because math.Pow and Java's Math.pow may differ
// in the last bit, and a last-bit difference can move a rounded price by a
// cent. The explicit float64 conversions forbid fused multiply-adds, which
// Go may use on some architectures and Java never does.
func pow10(y float64) float64 {
	j := int(y * 256)                               // y·256 is exact
	x := float64((y - float64(j)/256) * ln10)       // y − j/256 is exact; x < 0.009
	return float64(pow10Steps[j] * expSeries(x, 7)) // x^7/7! < 1e-18
}
