package simulate

import "math"

// source is splitmix64: one 64-bit word of state, a fixed sequence per seed,
// and the same numbers on every machine. Each simulated client owns one, so a
// run's draws never depend on how goroutines were scheduled.
type source struct {
	x        uint64
	spare    float64 // the second normal of the last polar pair
	hasSpare bool
}

func (s *source) uint64() uint64 {
	s.x += 0x9E3779B97F4A7C15
	return mix64(s.x)
}

// mix64 is the splitmix64 finalizer, also used to derive stream seeds.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// float returns a draw in [0, 1) with 53 random bits.
func (s *source) float() float64 {
	return float64(s.uint64()>>11) * 0x1p-53
}

// streamSeed derives the seed of one client's stream from the sweep seed, the
// point (number of clients), the run and the client. The mode is left out on
// purpose: client i of run r at point n draws the same numbers whatever
// backoff it uses, so modes are compared on common random numbers.
func streamSeed(seed uint64, clients, run, client int) uint64 {
	h := mix64(seed ^ 0x5241544348455421) // "RATCHET!"
	h = mix64(h ^ uint64(clients))
	h = mix64(h ^ uint64(run)<<20)
	return mix64(h ^ uint64(client)<<40)
}

// normal returns a standard normal draw by Marsaglia's polar method. It uses
// only +, −, ×, ÷, square root (all correctly rounded by IEEE 754) and detLog,
// and every product that feeds a sum is rounded explicitly so the compiler
// cannot fuse it into an FMA: the draws are identical on every architecture.
func (s *source) normal() float64 {
	if s.hasSpare {
		s.hasSpare = false
		return s.spare
	}
	for {
		u := 2*s.float() - 1 // exact: 2x has 53 bits, and x−1 is exact on [0, 2)
		v := 2*s.float() - 1
		q := float64(u*u) + float64(v*v)
		if q >= 1 || q == 0 {
			continue
		}
		f := math.Sqrt(float64(-2*detLog(q)) / q)
		s.spare, s.hasSpare = v*f, true
		return u * f
	}
}

// logCoef holds 1/(2k+1) for the series of atanh, highest term first.
var logCoef = func() [12]float64 {
	var c [12]float64
	for i := range c {
		c[i] = 1 / float64(2*(len(c)-1-i)+1)
	}
	return c
}()

// logSeries is log m for m in [√½, √2) by 2·atanh(s), s = (m−1)/(m+1),
// |s| ≤ 0.172: twelve terms of the series reach double precision. It builds
// the table of detLog.
func logSeries(m float64) float64 {
	s := (m - 1) / (m + 1)
	s2 := s * s
	p := 0.0
	for _, c := range logCoef {
		p = float64(p*s2) + c
	}
	return float64(2 * s * p)
}

// logTable[i] is log(1 + i/128), built with the same basic operations.
var logTable = func() [129]float64 {
	var t [129]float64
	for i := range t {
		c := 1 + float64(i)/128
		if c < math.Sqrt2 {
			t[i] = logSeries(c)
		} else {
			t[i] = float64(math.Ln2) + logSeries(c/2) // c/2 is exact
		}
	}
	return t
}()

// detLog is the natural logarithm of a positive finite x, written with basic
// operations only: the math package's Log has assembly versions on some
// architectures that may differ in the last bit, and this one must not. With
// x = m·2^e, m in [1, 2), and c = 1 + i/128 the largest such step not above
// m, log x = e·ln 2 + log c + 2·atanh(s), s = (m−c)/(m+c) ≤ 1/257, for which
// four terms of the series reach double precision.
func detLog(x float64) float64 {
	f, e := math.Frexp(x) // f in [½, 1)
	m := 2 * f            // exact
	e--
	i := int((m - 1) * 128) // exact: the top seven bits of the fraction
	c := 1 + float64(i)/128
	s := (m - c) / (m + c)
	s2 := s * s
	p := float64(float64(float64(float64(float64(s2*(1.0/7))+1.0/5)*s2)+1.0/3)*s2) + 1
	return float64(float64(e)*math.Ln2) + logTable[i] + float64(2*s*p)
}
