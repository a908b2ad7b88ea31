//go:build race

package sim

// raceEnabled: the race detector slows the single-goroutine simulation
// tenfold; the default scenario, a measurement, runs without it.
const raceEnabled = true
