package tombstone

import (
	"slices"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
)

// RefSpace is the record space of the actor and target index.
const RefSpace = "refs"

// Roles of an entity in an event's metadata.
const (
	RoleActor  = "actor"
	RoleTarget = "target"
)

type refMeta struct {
	Actor  *ref `json:"actor"`
	Target *ref `json:"target"`
}

type ref struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func (r *ref) usable() bool {
	return r != nil && r.Type != "" && r.ID != "" && !strings.ContainsRune(r.Type, 0) && !strings.ContainsRune(r.ID, 0)
}

// RefPuts returns the index puts for the events of a record: one per distinct (role, entity,
// stream) found in metadata.actor and metadata.target. They go into the same record as the
// events, so the index is exactly as durable as what it points to.
func RefPuts(appends []storage.Append) []storage.Put {
	var out []storage.Put
	seen := map[string]bool{}
	for _, a := range appends {
		for _, ev := range a.Events {
			var m refMeta
			if len(ev.Metadata) == 0 || json.Unmarshal(ev.Metadata, &m) != nil {
				continue
			}
			for _, r := range [...]struct {
				role string
				ref  *ref
			}{{RoleActor, m.Actor}, {RoleTarget, m.Target}} {
				if !r.ref.usable() {
					continue
				}
				key := refPrefix(r.role, storage.StreamKey{Type: r.ref.Type, ID: r.ref.ID}, a.Stream.Type) + a.Stream.ID
				if !seen[key] {
					seen[key] = true
					out = append(out, storage.Put{Space: RefSpace, Key: key, Value: []byte{}})
				}
			}
		}
	}
	return out
}

func refPrefix(role string, entity storage.StreamKey, streamType string) string {
	return role + "\x00" + entity.Type + "\x00" + entity.ID + "\x00" + streamType + "\x00"
}

// Discover returns the streams that a tombstone of entity rewrites besides entity's own: those of
// the types with a cascade rule in which entity appears in a cascading role. Types without
// onTombstone, and roles that preserve, are never scanned. The result is sorted and free of
// duplicates.
func Discover(st storage.EventStore, sp *spec.Spec, entity storage.StreamKey) ([]storage.StreamKey, error) {
	if sp == nil {
		return nil, nil
	}
	found := map[storage.StreamKey]bool{}
	for _, typ := range sp.TombstoneScanned() {
		agg, _ := sp.Aggregate(typ)
		for _, r := range [...]struct {
			role string
			rule spec.TombstoneRule
		}{{RoleActor, agg.OnTombstone.Actor}, {RoleTarget, agg.OnTombstone.Target}} {
			if r.rule != spec.Cascade {
				continue
			}
			prefix := refPrefix(r.role, entity, typ)
			err := st.Scan(RefSpace, prefix, func(key string, _ []byte) error {
				k := storage.StreamKey{Type: typ, ID: key[len(prefix):]}
				if k != entity {
					found[k] = true
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	out := make([]storage.StreamKey, 0, len(found))
	for k := range found {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b storage.StreamKey) int {
		if c := strings.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}
