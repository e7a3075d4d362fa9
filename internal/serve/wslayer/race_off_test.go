//go:build !race

package wslayer

// raceSlowdown: see race_on_test.go.
const raceSlowdown = 1
