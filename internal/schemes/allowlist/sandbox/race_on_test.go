//go:build race

package sandbox

// raceOn: built with -race (its sync.Pool drops a quarter of what is put back, and its
// instrumentation allocates).
const raceOn = true
