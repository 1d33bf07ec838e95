package bench

import (
	"math"
	"testing"
	"time"
)

func TestBucketBoundsCoverEveryValue(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 129, 255, 256, 1000, 123456789, math.MaxInt64 / 3, math.MaxInt64} {
		i := bucketOf(v)
		hi := bucketHigh(i)
		if v > hi {
			t.Errorf("value %d: bucket %d ends at %d, below the value", v, i, hi)
		}
		if i > 0 && bucketHigh(i-1) >= v {
			t.Errorf("value %d: previous bucket %d ends at %d, at or above the value", v, i-1, bucketHigh(i-1))
		}
		if rel := float64(hi-v) / float64(max(v, 1)); rel >= 1.0/halfBuckets {
			t.Errorf("value %d: bucket end %d is %.4f above it, want < 1/%d", v, hi, rel, halfBuckets)
		}
	}
}

func TestQuantiles(t *testing.T) {
	var h Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Microsecond}, {0.99, 990 * time.Microsecond}, {0.999, 999 * time.Microsecond}, {1, 1000 * time.Microsecond}} {
		got := h.Quantile(tc.q)
		if got < tc.want || float64(got-tc.want) > float64(tc.want)/halfBuckets {
			t.Errorf("q=%v: got %v, want %v within 1/%d above", tc.q, got, tc.want, halfBuckets)
		}
	}
	if h.total != 1000 {
		t.Errorf("count: got %d, want 1000", h.total)
	}
	if got := h.Quantile(1); got != time.Duration(h.max) {
		t.Errorf("q=1: got %v, want the maximum %v", got, time.Duration(h.max))
	}
}

func TestMergeEqualsRecordingEverything(t *testing.T) {
	var a, b, all Histogram
	for i := range 500 {
		d := time.Duration(i*i) * time.Microsecond
		all.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	a.Merge(&b)
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 1} {
		if a.Quantile(q) != all.Quantile(q) {
			t.Errorf("q=%v: merged %v, recorded together %v", q, a.Quantile(q), all.Quantile(q))
		}
	}
	if a.total != all.total || time.Duration(a.max) != time.Duration(all.max) {
		t.Errorf("merged count/max %d/%v, want %d/%v", a.total, time.Duration(a.max), all.total, time.Duration(all.max))
	}
}

func TestEmptyHistogram(t *testing.T) {
	var h Histogram
	if h.Quantile(0.99) != 0 || h.total != 0 {
		t.Errorf("empty histogram: got p99 %v count %d, want 0", h.Quantile(0.99), h.total)
	}
}
