//go:build race

package e2e

// raceEnabled builds the server with the race detector when the suite runs with -race, so that
// the server's own data races under the suite's concurrent load are reported too.
const raceEnabled = true
