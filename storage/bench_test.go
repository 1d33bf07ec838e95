package storage

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// benchData is an event body of about size bytes of realistic JSON.
func benchData(size int) json.RawMessage {
	base := `{"customer_id":"550e8400-e29b-41d4-a716-446655440003","items":[{"price":29.99,"quantity":2,"sku":"WIDGET-1"}],"note":"","status":"paid","total":79.97}`
	pad := max(size-len(base), 0)
	return json.RawMessage(strings.Replace(base, `"note":""`, `"note":"`+strings.Repeat("n", pad)+`"`, 1))
}

var benchMeta = json.RawMessage(`{"actor":{"id":"550e8400-e29b-41d4-a716-446655440000","type":"user"},"timestamp":1705312800}`)

// BenchmarkCommit measures durable commits (real fsync) of one event each from concurrent
// committers, each on its own stream with internal OCC.
func BenchmarkCommit(b *testing.B) {
	for _, writers := range []int{1, 8, 64, 256} {
		b.Run(fmt.Sprintf("writers=%d/size=300", writers), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			data := benchData(300)
			b.SetBytes(int64(len(data) + len(benchMeta)))
			b.ReportAllocs()
			var next atomic.Int64
			lat := make([][]time.Duration, writers)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k := StreamKey{Type: "order", ID: fmt.Sprintf("w%d", w)}
					length := uint64(0)
					for next.Add(1) <= int64(b.N) {
						t0 := time.Now()
						_, err := s.Commit(&Record{Appends: []Append{{Stream: k, Expect: Expect{Kind: Any, Length: length}, Events: []NewEvent{{Type: "was_paid", Data: data, Metadata: benchMeta, Timestamp: 1705312800}}}}})
						if err != nil {
							b.Error(err)
							return
						}
						lat[w] = append(lat[w], time.Since(t0))
						length++
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			all := slices.Concat(lat...)
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(len(all))/elapsed.Seconds(), "events/s")
				b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
			}
			if st := s.wal.Stats(); st.Groups > 0 {
				b.ReportMetric(float64(st.Records)/float64(st.Groups), "records/fsync")
			}
		})
	}
}

// BenchmarkCommitNoSync is BenchmarkCommit without fsync: the CPU cost of the commit path.
func BenchmarkCommitNoSync(b *testing.B) {
	s, err := Open(b.TempDir(), Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	data := benchData(300)
	b.SetBytes(int64(len(data) + len(benchMeta)))
	b.ReportAllocs()
	b.SetParallelism(32)
	var id atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		k := StreamKey{Type: "order", ID: fmt.Sprintf("w%d", id.Add(1))}
		for pb.Next() {
			if _, err := s.Commit(&Record{Appends: []Append{{Stream: k, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_paid", Data: data, Metadata: benchMeta, Timestamp: 1705312800}}}}}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkCommitFanout is the storage part of the engine's BenchmarkImplicationWrite: 64
// committers, each record one event on a new stream, and with fanout=10 also one event on each
// of ten streams every record writes to, as an order whose map implication reserves ten items
// does (data and metadata canonical already, as the engine hands them over). fsync on. The two
// show how much of the engine's ratio between those writes the commit alone accounts for.
func BenchmarkCommitFanout(b *testing.B) {
	trigger := []byte(`{"items":[]}`)
	implied := []byte(`{"order_id":"order:b0000000-0000-4000-a000-000000000001","quantity":1}`)
	impliedMeta := []byte(`{"actor":{"id":"550e8400-e29b-41d4-a716-446655440000","type":"user"},"implied_by":{"depth":1,"event_type":"was_placed","key":"order:b0000000-0000-4000-a000-000000000001"},"timestamp":1705312800}`)
	for _, fanout := range []int{0, 10} {
		b.Run(fmt.Sprintf("fanout=%d", fanout), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			targets := make([]StreamKey, fanout)
			for i := range targets {
				targets[i] = StreamKey{Type: "inventory", ID: fmt.Sprintf("c0000000-0000-4000-a000-%012d", i)}
			}
			b.ReportAllocs()
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for w := 0; w < 64; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
						rec := &Record{Appends: make([]Append, 0, 1+fanout)}
						order := StreamKey{Type: "order", ID: fmt.Sprintf("b0000000-0000-4000-a000-%012d", n)}
						rec.Appends = append(rec.Appends, Append{Stream: order, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_placed", Data: trigger, Metadata: benchMeta, Timestamp: 1705312800}}})
						for _, k := range targets {
							rec.Appends = append(rec.Appends, Append{Stream: k, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_reserved", Data: implied, Metadata: impliedMeta, Timestamp: 1705312800}}})
						}
						if _, err := s.Commit(rec); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkReplay delivers one stream of 10,000 events to a callback, after one warm-up pass
// (warm page cache, and warm record cache unless cache=off).
func BenchmarkReplay(b *testing.B) {
	for _, c := range []struct {
		name  string
		bytes int64
	}{{"on", 0}, {"off", -1}} {
		b.Run(fmt.Sprintf("events=10000/cache=%s", c.name), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{NoSync: true, CacheBytes: c.bytes})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			k := StreamKey{Type: "order", ID: "big"}
			data := benchData(300)
			for i := 0; i < 10000; i++ {
				if _, err := s.Commit(&Record{Appends: []Append{{Stream: k, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_paid", Data: data, Metadata: benchMeta}}}}}); err != nil {
					b.Fatal(err)
				}
			}
			var total int64
			replay := func() {
				total = 0
				if err := s.Range(k, 1, 10000, func(e Event) error { total += int64(len(e.Data) + len(e.Metadata)); return nil }); err != nil {
					b.Fatal(err)
				}
			}
			replay()
			b.SetBytes(total)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				replay()
			}
			b.ReportMetric(float64(b.N)*10000/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkOpen opens a store whose log holds size bytes of events, with the index intact and
// with the index deleted (a full rebuild). The log is built once per size.
func BenchmarkOpen(b *testing.B) {
	sizes := []int64{64 << 20, 1 << 30}
	if testing.Short() {
		sizes = sizes[:1]
	}
	for _, size := range sizes {
		dir := b.TempDir()
		events := buildLog(b, dir, size)
		for _, index := range []string{"intact", "deleted"} {
			b.Run(fmt.Sprintf("log=%dMiB/index=%s", size>>20, index), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if index == "deleted" {
						b.StopTimer()
						os.Remove(filepath.Join(dir, "index.db"))
						b.StartTimer()
					}
					s, err := Open(dir, Options{NoSync: true})
					if err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					s.Close()
					b.StartTimer()
				}
				if index == "deleted" {
					b.ReportMetric(float64(b.N)*float64(events)/b.Elapsed().Seconds(), "events/s")
				}
			})
		}
	}
}

// buildLog fills dir with about size bytes of log, in records of 64 events of ~300 bytes over
// 10,000 streams, and returns the number of events.
func buildLog(b *testing.B, dir string, size int64) int {
	b.Helper()
	s, err := Open(dir, Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	data := benchData(300)
	n := 0
	for written := int64(0); written < size; {
		rec := &Record{}
		for i := 0; i < 64; i++ {
			k := StreamKey{Type: "order", ID: fmt.Sprintf("o%05d", (n+i)%10000)}
			rec.Appends = append(rec.Appends, Append{Stream: k, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_paid", Data: data, Metadata: benchMeta}}})
			written += int64(len(data) + len(benchMeta) + 100)
		}
		if _, err := s.Commit(rec); err != nil {
			b.Fatal(err)
		}
		n += 64
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkDiskBytes reports the bytes on disk per event of ~300 bytes, in the log and in the
// index, with and without compression.
func BenchmarkDiskBytes(b *testing.B) {
	for _, c := range []struct {
		name      string
		threshold int
	}{{"off", -1}, {"on", 1}} {
		b.Run(fmt.Sprintf("compress=%s/size=300", c.name), func(b *testing.B) {
			const events = 20000
			for b.Loop() {
				dir := b.TempDir()
				s, err := Open(dir, Options{NoSync: true, CompressThreshold: c.threshold})
				if err != nil {
					b.Fatal(err)
				}
				data := benchData(300)
				for i := 0; i < events; i++ {
					k := StreamKey{Type: "order", ID: fmt.Sprintf("o%04d", i%1000)}
					if _, err := s.Commit(&Record{Appends: []Append{{Stream: k, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_paid", Data: data, Metadata: benchMeta, Timestamp: 1705312800}}}}}); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(dirSize(b, filepath.Join(dir, "log")))/events, "log-B/event")
				b.ReportMetric(float64(dirSize(b, filepath.Join(dir, "index.db")))/events, "index-B/event")
				b.ReportMetric(float64(indexUsed(b, filepath.Join(dir, "index.db")))/events, "index-used-B/event")
			}
		})
	}
}

// indexUsed is the size of index.db up to its highest page in use: bbolt grows the file ahead of
// its needs, in steps that double, so the file size says little about what the index takes.
func indexUsed(b *testing.B, path string) int64 {
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var n int64
	if err := db.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil }); err != nil {
		b.Fatal(err)
	}
	return n
}

func dirSize(b *testing.B, path string) int64 {
	var n int64
	err := filepath.WalkDir(path, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// BenchmarkNamesMerge merges the names of 3.1 million new streams (UUID ids) into the names
// bucket, 131,072 at a time as the indexer does once that many have gathered, and then looks up
// one in 64 of them. It reports the merges' time, the index bytes a name takes and a lookup's
// time: the merges' cost is what the names bucket's layout (name_runs.go, name_chunks.go) is for.
func BenchmarkNamesMerge(b *testing.B) {
	const merges, size = 24, 1 << 17
	uuid := func(r *rand.Rand) string {
		return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff)
	}
	alloc := func(n int) []byte { return make([]byte, 0, n) }
	for b.Loop() {
		db, err := bolt.Open(filepath.Join(b.TempDir(), "index.db"), 0o600, boltOptions(true))
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Update(createBuckets); err != nil {
			b.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		var probes [][]byte
		var named uint64
		var merging time.Duration
		for range merges {
			fresh := make([]nameEntry, size)
			for i := range fresh {
				fresh[i] = nameEntry{key("order_item", uuid(r)), named + uint64(i) + 1}
				if i%64 == 0 {
					probes = append(probes, streamKeyBytes(nil, fresh[i].key))
				}
			}
			sorted := sortNames(fresh)
			start := time.Now()
			err := db.Update(func(tx *bolt.Tx) error {
				return writeRun(tx.Bucket(bucketNames), sorted, named, named+size, alloc)
			})
			merging += time.Since(start)
			if err != nil {
				b.Fatal(err)
			}
			named += size
		}
		var used int
		start := time.Now()
		err = db.View(func(tx *bolt.Tx) error {
			names := tx.Bucket(bucketNames)
			for _, p := range probes {
				if lookupName(names, p) == 0 {
					return fmt.Errorf("%q is not found", p)
				}
			}
			st := names.Stats()
			used = st.BranchInuse + st.LeafInuse
			return nil
		})
		looking := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(merging.Milliseconds()), "merge-ms")
		b.ReportMetric(float64(used)/float64(named), "B/name")
		b.ReportMetric(float64(looking.Nanoseconds())/float64(len(probes)), "ns/lookup")
		db.Close()
	}
}

// BenchmarkErase measures Erase of one record-space key in a store of records records, each
// holding an event and a put: the log scan, the compaction of the ten records that held the key
// (written again before each erasure, outside the timing) and the index vacuum.
func BenchmarkErase(b *testing.B) {
	for _, records := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("records=%d", records), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			data := benchData(300)
			commit := func(i int, key string) {
				_, err := s.Commit(&Record{
					Appends: []Append{{Stream: StreamKey{Type: "order", ID: fmt.Sprintf("o%d", i%50)}, Expect: Expect{Kind: Skip}, Events: []NewEvent{{Type: "was_paid", Data: data, Metadata: benchMeta, Timestamp: 1705312800}}}},
					Puts:    []Put{{Space: "state", Key: key, Value: data}},
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			for i := 0; i < records; i++ {
				commit(i, fmt.Sprintf("k%d", i))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for j := 0; j < 10; j++ {
					commit(j, "erased")
				}
				b.StartTimer()
				if err := s.Erase(nil, []Delete{{Space: "state", Key: "erased"}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(records)*float64(b.N)/b.Elapsed().Seconds(), "records_scanned/s")
		})
	}
}

// BenchmarkKnownStreams fills the filter of known streams with n streams and looks up streams it
// was never given, as a commit to a new stream does: the false-positive rate (each one a search
// of the index under the commit lock), the filter's memory and the cost of a lookup.
func BenchmarkKnownStreams(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			f := newKnownStreams()
			f.ready.Store(true)
			r := rand.New(rand.NewPCG(1, 2))
			hs := make([]uint64, 0, 1<<16)
			for added := 0; added < n; added += len(hs) {
				hs = hs[:0]
				for range min(cap(hs), n-added) {
					hs = append(hs, r.Uint64())
				}
				f.addHashes(hs...)
			}
			const probes = 1_000_000
			maybe := 0
			for range probes {
				if f.mayHaveHash(r.Uint64()) {
					maybe++
				}
			}
			filterBytes := 0
			for _, st := range f.stages {
				filterBytes += len(st.blocks) * len(bloomBlock{}) * 8
			}
			keys := make([]StreamKey, 1<<12)
			for i := range keys {
				keys[i] = StreamKey{Type: "order", ID: fmt.Sprintf("c0000000-0000-4000-a000-%012d", i)}
			}
			for i := 0; b.Loop(); i++ {
				f.mayHave(f.hashKey(keys[i%len(keys)]))
			}
			b.ReportMetric(100*float64(maybe)/probes, "fp-%")
			b.ReportMetric(float64(len(f.stages)), "stages")
			b.ReportMetric(float64(filterBytes)/(1<<20), "filter-MB")
		})
	}
}
