//go:build !race

package sandbox

const raceOn = false
