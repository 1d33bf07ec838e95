package storage

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/j17-go/j17/storage/canonical"
	"github.com/j17-go/j17/wal"
)

// Export writes every current event, in log order, as NDJSON: one canonical JSON object per line,
//
//	{"aggregate_id","aggregate_type","data","hash","index","key","metadata","stream_id","timestamp","type"}
//
// where hash is the hex chain value h_index and key is "type:id". Everything needed to rebuild
// the streams and to recompute the chains (see ContentHash) is on the line. Events superseded by
// a rewrite are not exported; their replacements appear where the rewrite record is. It returns
// the number of events written.
func (s *Store) Export(w io.Writer) (int, error) {
	s.rewriteMu.Lock()
	defer s.rewriteMu.Unlock()
	s.mu.Lock()
	last := s.mu.lsn
	s.mu.Unlock()
	if err := s.flush(last); err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	n := 0
	var line []byte
	err := s.wal.Scan(wal.Pos{}, func(pos wal.Pos, kind uint8, payload []byte) error {
		r, err := unmarshalRecord(payload)
		if err != nil {
			return fmt.Errorf("record at %s: %w", pos, err)
		}
		if r.lsn > last {
			return errStopScan
		}
		var ordinal uint32
		for gi := range r.groups {
			g := &r.groups[gi]
			es, err := s.entries(g.stream, g.first, g.first+uint64(len(g.events))-1)
			if err != nil {
				return err
			}
			for i := range g.events {
				if es[i].holder != r.lsn || es[i].ordinal != ordinal+uint32(i) {
					continue
				}
				line = appendExportLine(line[:0], g.stream, g.first+uint64(i), &g.events[i])
				if _, err := bw.Write(line); err != nil {
					return err
				}
				n++
			}
			ordinal += uint32(len(g.events))
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		return n, err
	}
	return n, bw.Flush()
}

func appendExportLine(dst []byte, k StreamKey, idx uint64, ev *recEvent) []byte {
	dst = append(dst, `{"aggregate_id":`...)
	dst = canonical.AppendString(dst, k.ID)
	dst = append(dst, `,"aggregate_type":`...)
	dst = canonical.AppendString(dst, k.Type)
	dst = append(dst, `,"data":`...)
	dst = appendOrNull(dst, ev.data)
	dst = append(dst, `,"hash":"`...)
	dst = hex.AppendEncode(dst, ev.hash[:])
	dst = append(dst, `","index":`...)
	dst = strconv.AppendUint(dst, idx, 10)
	dst = append(dst, `,"key":`...)
	dst = canonical.AppendString(dst, k.String())
	dst = append(dst, `,"metadata":`...)
	dst = appendOrNull(dst, ev.meta)
	dst = append(dst, `,"stream_id":"`...)
	dst = append(dst, ev.sid.String()...)
	dst = append(dst, `","timestamp":`...)
	dst = strconv.AppendInt(dst, ev.ts, 10)
	dst = append(dst, `,"type":`...)
	dst = canonical.AppendString(dst, ev.typ)
	return append(dst, "}\n"...)
}

// ExportLine is one line of an export.
type ExportLine struct {
	AggregateID   string          `json:"aggregate_id"`
	AggregateType string          `json:"aggregate_type"`
	Data          json.RawMessage `json:"data"`
	Hash          string          `json:"hash"`
	Index         uint64          `json:"index"`
	Key           string          `json:"key"`
	Metadata      json.RawMessage `json:"metadata"`
	StreamID      string          `json:"stream_id"`
	Timestamp     int64           `json:"timestamp"`
	Type          string          `json:"type"`
}

const (
	importBatchEvents = 512
	importBatchBytes  = 4 << 20
	maxImportLine     = 64 << 20
)

// Import appends the events of an export, keeping their stream ids and indexes. Each event must
// continue its stream (index = length + 1) and its recomputed chain value must equal the line's
// hash, or Import stops with ErrChainMismatch (or ErrConflict, ErrInvalid); lines before the
// failing batch stay imported. Events are committed in batches of a few hundred per record. It
// returns the number of events imported.
func (s *Store) Import(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxImportLine)
	n, lineNo := 0, 0
	var batch *prepared
	size := 0
	commit := func() error {
		if batch == nil {
			return nil
		}
		batch.encode()
		if _, err := s.commitPrepared(batch); err != nil {
			return err
		}
		n += len(batch.contents)
		batch, size = nil, 0
		return nil
	}
	for sc.Scan() {
		lineNo++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var l ExportLine
		if err := json.Unmarshal(raw, &l); err != nil {
			return n, fmt.Errorf("%w: line %d: %w", ErrInvalid, lineNo, err)
		}
		ev, k, err := importEvent(&l)
		if err != nil {
			return n, fmt.Errorf("line %d: %w", lineNo, err)
		}
		if batch == nil {
			batch = &prepared{rec: &record{}, preset: true}
		}
		gs := batch.rec.groups
		if len(gs) == 0 || gs[len(gs)-1].stream != k || gs[len(gs)-1].first+uint64(len(gs[len(gs)-1].events)) != l.Index {
			batch.rec.groups = append(gs, recGroup{stream: k, first: l.Index})
			batch.expects = append(batch.expects, Expect{Kind: Exactly, Length: l.Index - 1})
		}
		g := &batch.rec.groups[len(batch.rec.groups)-1]
		g.events = append(g.events, ev)
		batch.contents = append(batch.contents, ContentHash(k, ev.typ, ev.data, ev.meta))
		size += len(raw)
		if len(batch.contents) >= importBatchEvents || size >= importBatchBytes {
			if err := commit(); err != nil {
				return n, fmt.Errorf("before line %d: %w", lineNo+1, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return n, fmt.Errorf("storage: read import: %w", err)
	}
	if err := commit(); err != nil {
		return n, fmt.Errorf("at end of input: %w", err)
	}
	return n, nil
}

func importEvent(l *ExportLine) (recEvent, StreamKey, error) {
	k := StreamKey{Type: l.AggregateType, ID: l.AggregateID}
	if !k.valid() || l.Key != k.String() || l.Type == "" || l.Index == 0 {
		return recEvent{}, k, fmt.Errorf("%w: bad key, type or index", ErrInvalid)
	}
	sid, err := ParseStreamID(l.StreamID)
	if err != nil {
		return recEvent{}, k, err
	}
	hash, err := hex.DecodeString(l.Hash)
	if err != nil || len(hash) != 32 {
		return recEvent{}, k, fmt.Errorf("%w: bad hash", ErrInvalid)
	}
	data, err := canonicalOrNull(l.Data)
	if err != nil {
		return recEvent{}, k, fmt.Errorf("%w: data: %w", ErrInvalid, err)
	}
	meta, err := canonicalOrNull(l.Metadata)
	if err != nil {
		return recEvent{}, k, fmt.Errorf("%w: metadata: %w", ErrInvalid, err)
	}
	ev := recEvent{sid: sid, ts: l.Timestamp, typ: l.Type, data: data, meta: meta}
	copy(ev.hash[:], hash)
	return ev, k, nil
}
