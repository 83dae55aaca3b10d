package simulate

// goldenSweep is the mean calls and time (ms, to 1e-6) of each study mode at
// 50 clients over 10 runs with seed 1, in StudyModes order.
var goldenSweep = []float64{692.5, 1151.224419, 632.9, 38017.942162, 332.6, 2792.470361, 346.6, 3970.014727, 374.1, 2042.974903}
