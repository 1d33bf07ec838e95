package bench

import (
	"io"
	"regexp"
	"time"
)

// Config sizes a suite run. DefaultConfig gives the full sizes, QuickConfig the small ones.
type Config struct {
	Quick bool
	// Runs is how many times each measurement is repeated; tables show the median.
	Runs int
	// Duration is the length of each closed-loop run and of each open-loop run.
	Duration time.Duration
	// WriteConns are the connection counts of the single-event write scenarios.
	WriteConns []int
	// Conns is the connection count of the other scenarios.
	Conns int
	// BatchSizes are the events per batch of the batch scenarios.
	BatchSizes []int
	// MapItems is the number of items, hence implied events, per order.
	MapItems int
	// MapCatalog is the number of inventory streams the catalog variant of the map scenario draws
	// its items from (at least MapItems); 0 leaves the variant out.
	MapCatalog int
	// ReadSizes are the aggregate lengths of the read scenarios.
	ReadSizes []int
	// StartupEvents are the log sizes of the crash-startup scenarios.
	StartupEvents []int
	// MemoryStreams is the stream count of the memory scenario.
	MemoryStreams int
	// FsyncProbes is the number of write+fsync pairs timed at start.
	FsyncProbes int
	// QuietIdle, when above 0, is how idle (a fraction of all processors) the machine must be
	// before each run of a scenario starts (see waitQuiet).
	QuietIdle float64
	// Only, when set, keeps the scenarios whose names match.
	Only *regexp.Regexp

	J17Bin      string
	RedisBin    string
	PostgresBin string // the directory holding initdb and postgres
	// Peers names the peers to run: "redis", "postgres".
	Peers []string
	// WorkDir is where the systems keep their data; it is removed at the end.
	WorkDir string
	// RepoRoot is where BENCHMARKS.md and bench/charts go.
	RepoRoot string
	Command  string
	Commit   string
	Log      io.Writer
}

// DefaultConfig is the full run.
func DefaultConfig() Config {
	return Config{
		Runs: 5, Duration: 3 * time.Second, WriteConns: []int{1, 16, 64, 256}, Conns: 16,
		BatchSizes: []int{10, 100}, MapItems: 10, MapCatalog: 10_000, ReadSizes: []int{10, 100, 1000, 10000},
		StartupEvents: []int{1_000_000, 10_000_000}, MemoryStreams: 1_000_000, FsyncProbes: 1000,
		QuietIdle: 0.9, Peers: []string{"redis", "postgres"},
	}
}

// QuickConfig is the smoke run: the same scenarios, small sizes, short runs.
func QuickConfig() Config {
	c := DefaultConfig()
	c.Quick = true
	c.Runs = 3
	c.Duration = 300 * time.Millisecond
	c.StartupEvents = []int{10_000, 100_000}
	c.MemoryStreams = 10_000
	c.MapCatalog = 1_000
	c.FsyncProbes = 100
	return c
}
