package audit

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/j17-go/j17/engine/tombstone"
	"github.com/j17-go/j17/merkle"
	"github.com/j17-go/j17/storage"
)

// AnchorSpace is the record space of root anchors, keyed by anchor id. Ids begin with the
// creation time in zero-padded milliseconds and a sequence within it, so byte order is creation
// order.
const AnchorSpace = "anchors"

// MaxAnchorStreams bounds the streams one anchor covers, since an anchor is one record.
const MaxAnchorStreams = 100_000

// listPage is the page size of stream listing while anchoring.
const listPage = 1000

// AnchorStream is one stream's root as an anchor records it.
type AnchorStream struct {
	Key    string `json:"key"`
	Length uint64 `json:"length"`
	Root   string `json:"root"`
}

// Anchor is a root anchor: the root over every stream root (merkle.AnchorRoot) at a point in the
// log. Streams is left out of listings.
type Anchor struct {
	ID          string         `json:"id"`
	Root        string         `json:"root"`
	CreatedAt   time.Time      `json:"created_at"`
	StreamCount int            `json:"stream_count"`
	Auto        bool           `json:"auto,omitempty"`
	Streams     []AnchorStream `json:"streams,omitempty"`
}

// Streams returns the root of every stream with events of the given aggregate types.
func Streams(st storage.EventStore, types []string) ([]AnchorStream, error) {
	var out []AnchorStream
	for _, typ := range types {
		cursor := ""
		for {
			ids, err := st.List(typ, cursor, listPage)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				k := storage.StreamKey{Type: typ, ID: id}
				hs, err := st.Hashes(k)
				if err != nil {
					return nil, err
				}
				if len(hs) == 0 {
					continue
				}
				if len(out) == MaxAnchorStreams {
					return nil, fmt.Errorf("%w: an anchor covers at most %d streams", ErrInvalid, MaxAnchorStreams)
				}
				r := merkle.Root(hs)
				out = append(out, AnchorStream{Key: k.String(), Length: uint64(len(hs)), Root: hex.EncodeToString(r[:])})
			}
			if len(ids) < listPage {
				break
			}
			cursor = ids[len(ids)-1]
		}
	}
	return out, nil
}

// RootOf returns the anchor root over stream roots.
func RootOf(streams []AnchorStream) (string, error) {
	roots := make([]merkle.StreamRoot, len(streams))
	for i, s := range streams {
		h, ok := hash32(s.Root)
		if !ok {
			return "", fmt.Errorf("%w: root of %s is not a hex hash", ErrInvalid, s.Key)
		}
		roots[i] = merkle.StreamRoot{Key: s.Key, Root: h}
	}
	r := merkle.AnchorRoot(roots)
	return hex.EncodeToString(r[:]), nil
}

// CreateAnchor computes and stores an anchor over every stream of the given types.
func CreateAnchor(st storage.EventStore, now time.Time, types []string, auto bool) (Anchor, error) {
	streams, err := Streams(st, types)
	if err != nil {
		return Anchor{}, err
	}
	root, err := RootOf(streams)
	if err != nil {
		return Anchor{}, err
	}
	id, err := anchorID(st, now)
	if err != nil {
		return Anchor{}, err
	}
	a := Anchor{ID: id, Root: root, CreatedAt: now.UTC(), StreamCount: len(streams), Auto: auto, Streams: streams}
	b, err := json.Marshal(a)
	if err != nil {
		return Anchor{}, err
	}
	if _, err := st.Commit(&storage.Record{Puts: []storage.Put{{Space: AnchorSpace, Key: a.ID, Value: b}}}); err != nil {
		return Anchor{}, err
	}
	return a, nil
}

// anchorID returns an id that sorts after every earlier anchor's: the creation time in
// zero-padded milliseconds, the number of anchors already made in that millisecond, and a random
// suffix against concurrent creators.
func anchorID(st storage.EventStore, now time.Time) (string, error) {
	ms := fmt.Sprintf("%016d", now.UnixMilli())
	n := 0
	if err := st.Scan(AnchorSpace, ms+"-", func(string, []byte) error { n++; return nil }); err != nil {
		return "", err
	}
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	return fmt.Sprintf("%s-%06d-%s", ms, n, hex.EncodeToString(b[:])), nil
}

// GetAnchor reads one anchor with its streams.
func GetAnchor(st storage.EventStore, id string) (Anchor, error) {
	raw, err := st.Get(AnchorSpace, id)
	if errors.Is(err, storage.ErrNotFound) {
		return Anchor{}, fmt.Errorf("%w: anchor %s", ErrNotFound, id)
	}
	if err != nil {
		return Anchor{}, err
	}
	var a Anchor
	if err := json.Unmarshal(raw, &a); err != nil {
		return Anchor{}, fmt.Errorf("audit: anchor %s: %w", id, err)
	}
	return a, nil
}

// Anchors lists the anchors, oldest first, without their streams.
func Anchors(st storage.EventStore) ([]Anchor, error) {
	out := []Anchor{}
	err := st.Scan(AnchorSpace, "", func(key string, v []byte) error {
		var a Anchor
		if err := json.Unmarshal(v, &a); err != nil {
			return fmt.Errorf("audit: anchor %s: %w", key, err)
		}
		a.Streams = nil
		out = append(out, a)
		return nil
	})
	return out, err
}

// LatestAnchor returns the newest anchor with its streams.
func LatestAnchor(st storage.EventStore) (Anchor, error) {
	as, err := Anchors(st)
	if err != nil {
		return Anchor{}, err
	}
	if len(as) == 0 {
		return Anchor{}, fmt.Errorf("%w: no root anchor yet", ErrNotFound)
	}
	return GetAnchor(st, as[len(as)-1].ID)
}

// DeleteAnchor removes an anchor.
func DeleteAnchor(st storage.EventStore, id string) error {
	if _, err := GetAnchor(st, id); err != nil {
		return err
	}
	_, err := st.Commit(&storage.Record{Deletes: []storage.Delete{{Space: AnchorSpace, Key: id}}})
	return err
}

// Change reasons of an anchor check.
const (
	// ChangeTombstoned: the stream was rewritten by a tombstone; its markers still reproduce the
	// anchored root.
	ChangeTombstoned = "tombstoned"
	// ChangeMissing: the stream holds fewer events than the anchor recorded.
	ChangeMissing = "missing"
	// ChangeModified: the stream's events no longer give the anchored root.
	ChangeModified = "modified"
)

// StreamChange names one stream that differs from its anchored state.
type StreamChange struct {
	Key          string   `json:"key"`
	Reason       string   `json:"reason"`
	TombstoneIDs []string `json:"tombstone_ids,omitempty"`
}

// AnchorCheck is the result of verifying an anchor against the current log. Valid says that the
// anchored root is reproduced (tombstoned streams through their markers' chain_hash); Changed
// lists every stream whose current events differ from the anchored ones, tombstoned or not.
type AnchorCheck struct {
	AnchorID       string         `json:"anchor_id"`
	Root           string         `json:"root"`
	Valid          bool           `json:"valid"`
	StreamsChecked int            `json:"streams_checked"`
	Changed        []StreamChange `json:"changed"`
}

// Source is where VerifyAnchor reads events: a store, or the streams of an export.
type Source interface {
	Length(k storage.StreamKey) (uint64, error)
	Range(k storage.StreamKey, from, to uint64, fn func(storage.Event) error) error
}

// VerifyAnchor recomputes every anchored stream's root over its first anchored-length events.
// Events appended since do not count as changes.
func VerifyAnchor(st Source, a Anchor) (AnchorCheck, error) {
	chk := AnchorCheck{AnchorID: a.ID, Root: a.Root, StreamsChecked: len(a.Streams), Changed: []StreamChange{}}
	rebuilt := make([]AnchorStream, len(a.Streams))
	for i, s := range a.Streams {
		rebuilt[i] = s
		typ, id, ok := cutKey(s.Key)
		if !ok {
			return AnchorCheck{}, fmt.Errorf("%w: anchor %s names stream %q", ErrInvalid, a.ID, s.Key)
		}
		k := storage.StreamKey{Type: typ, ID: id}
		leaves := make([]merkle.Hash, 0, s.Length)
		tombstones := map[string]bool{}
		var ids []string
		n, err := st.Length(k)
		if err != nil {
			return AnchorCheck{}, err
		}
		if n < s.Length {
			chk.Changed = append(chk.Changed, StreamChange{Key: s.Key, Reason: ChangeMissing})
			rebuilt[i].Root = ""
			continue
		}
		err = st.Range(k, 1, s.Length, func(ev storage.Event) error {
			if m, ok := tombstone.ParseMarker(ev); ok {
				if h, ok := hash32(m.ChainHash); ok {
					leaves = append(leaves, h)
					if !tombstones[m.TombstoneID] {
						tombstones[m.TombstoneID] = true
						ids = append(ids, m.TombstoneID)
					}
					return nil
				}
			}
			leaves = append(leaves, ev.Hash)
			return nil
		})
		if err != nil {
			return AnchorCheck{}, err
		}
		r := merkle.Root(leaves)
		switch {
		case hex.EncodeToString(r[:]) != s.Root:
			chk.Changed = append(chk.Changed, StreamChange{Key: s.Key, Reason: ChangeModified, TombstoneIDs: ids})
			rebuilt[i].Root = hex.EncodeToString(r[:])
		case len(ids) > 0:
			chk.Changed = append(chk.Changed, StreamChange{Key: s.Key, Reason: ChangeTombstoned, TombstoneIDs: ids})
		}
	}
	root, err := RootOf(nonEmpty(rebuilt))
	if err != nil {
		return AnchorCheck{}, err
	}
	chk.Valid = root == a.Root && len(nonEmpty(rebuilt)) == len(a.Streams)
	return chk, nil
}

func nonEmpty(ss []AnchorStream) []AnchorStream {
	out := make([]AnchorStream, 0, len(ss))
	for _, s := range ss {
		if s.Root != "" {
			out = append(out, s)
		}
	}
	return out
}

func cutKey(key string) (string, string, bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == ':' {
			return key[:i], key[i+1:], i > 0 && i < len(key)-1
		}
	}
	return "", "", false
}
