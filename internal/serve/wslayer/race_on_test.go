//go:build race

package wslayer

// raceSlowdown: built with -race, whose instrumentation makes the readers' regexps and maps
// 15 to 25 times slower: a cost test's budget grows by it (TestPyLoadersLinear took 19.8 s of
// its 20 under -race on a quiet machine, 0.8 s without; a quadratic reader takes minutes).
const raceSlowdown = 4
