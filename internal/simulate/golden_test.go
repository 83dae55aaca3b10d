package simulate

// goldenSweep is the mean calls and time (ms, to 1e-6) of each study mode at
// 50 clients over 10 runs with seed 1, in StudyModes order.
var goldenSweep = []float64{692.5, 1151.224419, 632.9, 38017.942162, 332.6, 2792.470361, 346.6, 3970.014727, 374.1, 2042.974903}

// goldenRecovery is, per strategy of the default recovery scenario (at
// once, ramp, learned), its requests, refusals, busiest second, drain time
// in seconds and jobs exhausted.
var goldenRecovery = [][]float64{{16451, 11451, 636, 94.796, 0}, {5112, 112, 159, 64.313, 0}, {5010, 10, 102, 56.668, 0}}
