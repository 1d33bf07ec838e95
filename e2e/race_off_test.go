//go:build !race

package e2e

// raceEnabled is false without -race; see race_on_test.go.
const raceEnabled = false
