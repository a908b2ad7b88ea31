// Package benchtest holds what the module's benchmarks share: the CPU
// time a benchmark reports beside its wall time.
package benchtest
