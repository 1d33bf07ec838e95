package bench

import (
	"math"
	"math/bits"
	"time"
)

// The histogram is log-linear like HdrHistogram: values below subBuckets are counted exactly;
// above, each power of two is split into halfBuckets buckets, so a recorded value is off by less
// than 1/halfBuckets of itself.
const (
	subBits     = 7
	subBuckets  = 1 << subBits // 128
	halfBuckets = subBuckets / 2
	numBuckets  = subBuckets + (64-subBits)*halfBuckets
)

// Histogram counts non-negative durations in nanoseconds. The zero value is ready to use.
type Histogram struct {
	counts [numBuckets]uint64
	total  uint64
	min    int64
	max    int64
}

func bucketOf(v int64) int {
	if v < subBuckets {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - subBits
	return subBuckets + (shift-1)*halfBuckets + int(uint64(v)>>shift) - halfBuckets
}

// bucketHigh is the largest value that falls into bucket i.
func bucketHigh(i int) int64 {
	if i < subBuckets {
		return int64(i)
	}
	shift := (i-subBuckets)/halfBuckets + 1
	m := uint64((i-subBuckets)%halfBuckets + halfBuckets)
	hi := (m+1)<<shift - 1
	if hi > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(hi)
}

// Record counts one duration; a negative one counts as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	if h.total == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.counts[bucketOf(v)]++
	h.total++
}

// Merge adds the counts of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
}

// Quantile returns the value at or below which q (0..1) of the recorded values fall, as the
// highest value of its bucket (never above the recorded maximum), like HdrHistogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return time.Duration(min(bucketHigh(i), h.max))
		}
	}
	return time.Duration(h.max)
}
