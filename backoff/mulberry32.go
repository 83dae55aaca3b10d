package backoff

// Mulberry32 is the small 32-bit generator the calculator draws from, exact
// to the widely copied JavaScript reference:
//
//	a |= 0; a = a + 0x6D2B79F5 | 0;
//	var t = Math.imul(a ^ a >>> 15, 1 | a);
//	t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t;
//	return ((t ^ t >>> 14) >>> 0) / 4294967296;
//
// It is for reproducible schedules, not for security.
type Mulberry32 struct{ state uint32 }

// NewMulberry32 seeds a generator. A JavaScript seed is taken modulo 2^32.
func NewMulberry32(seed uint32) *Mulberry32 { return &Mulberry32{state: seed} }

// Next returns the next draw in [0, 1).
func (m *Mulberry32) Next() float64 {
	return float64(m.Uint32()) / 4294967296
}

// Uint32 returns the next raw 32-bit output.
func (m *Mulberry32) Uint32() uint32 {
	m.state += 0x6D2B79F5
	a := m.state
	t := (a ^ a>>15) * (1 | a)
	t = (t + (t^t>>7)*(61|t)) ^ t
	return t ^ t>>14
}
