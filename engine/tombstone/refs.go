package tombstone

import (
	"bytes"
	"errors"
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

// AppendRefPuts appends to dst the index puts for the events of a record: one per distinct
// (role, entity, stream) found in metadata.actor and metadata.target, for the roles in which the
// stream's type cascades under sp (Spec.Cascades): discovery reads no other reference, so a
// record to streams without a cascading role carries none, and costs nothing to index. They go
// into the same record as the events, so the index is exactly as durable as what it points to.
// The puts to a stream the append expects to be empty are plain puts (its references cannot be
// live yet); the others are IfAbsent puts, so that an actor writing to a stream again does not
// write its reference again.
//
// A type that did not cascade in a role under every spec version has streams without their
// references in that role; Discover reads those types' streams instead (Env.RefsComplete).
func AppendRefPuts(dst []storage.Put, appends []storage.Append, sp *spec.Spec) []storage.Put {
	if sp == nil {
		return dst
	}
	var c refCollector
	for _, a := range appends {
		var roles [2]bool
		roles[0], roles[1] = sp.Cascades(a.Stream.Type)
		if !roles[0] && !roles[1] {
			continue
		}
		ifAbsent := a.Expect.Kind == storage.Skip || a.Expect.Length > 0
		for i, ev := range a.Events {
			if c.parsed && bytes.Equal(ev.Metadata, c.meta) {
				if i > 0 {
					// The same metadata on the same stream: the same puts.
					continue
				}
			} else {
				c.refs, c.ok = parseRefs(ev.Metadata)
				c.meta, c.parsed = ev.Metadata, true
			}
			if !c.ok {
				continue
			}
			for j, role := range [...]string{RoleActor, RoleTarget} {
				if r := c.refs[j]; roles[j] && r.usable() {
					dst = c.add(dst, role, r, a.Stream, ifAbsent)
				}
			}
		}
	}
	return c.flush(dst)
}

// refCollector dedupes the puts of AppendRefPuts. Up to smallRefs distinct puts it compares
// their parts and builds every key at the end from one string; past that it builds each key
// as it comes and dedupes by a map.
type refCollector struct {
	// meta is the metadata last parsed, refs and ok what parseRefs made of it.
	meta   []byte
	parsed bool
	refs   [2]rawRef
	ok     bool

	// parts[:n] are the distinct puts held, until seen takes over.
	parts [smallRefs]refParts
	n     int
	seen  map[string]bool
}

// refParts is one put's key before it is built.
type refParts struct {
	role     string
	ref      rawRef
	stream   storage.StreamKey
	ifAbsent bool
}

func (p *refParts) size() int {
	return len(p.role) + len(p.ref.typ) + len(p.ref.id) + len(p.stream.Type) + 4
}

// smallRefs is how many distinct puts AppendRefPuts dedupes by comparing their parts.
const smallRefs = 16

func (c *refCollector) add(dst []storage.Put, role string, r rawRef, stream storage.StreamKey, ifAbsent bool) []storage.Put {
	if c.seen == nil {
		for i := range c.n {
			p := &c.parts[i]
			if p.role == role && p.stream == stream && bytes.Equal(p.ref.typ, r.typ) && bytes.Equal(p.ref.id, r.id) {
				return dst
			}
		}
		if c.n < smallRefs {
			c.parts[c.n] = refParts{role: role, ref: r, stream: stream, ifAbsent: ifAbsent}
			c.n++
			return dst
		}
		// Past a handful of distinct puts a linear search costs more than a map.
		c.seen = make(map[string]bool, 4*smallRefs)
		dst = c.flush(dst)
		for _, p := range dst[len(dst)-smallRefs:] {
			c.seen[p.Key+"\x00"+p.Stream.ID] = true
		}
	}
	key := refKey(role, r, stream)
	seen := key + "\x00" + stream.ID
	if c.seen[seen] {
		return dst
	}
	c.seen[seen] = true
	return append(dst, storage.Put{Space: RefSpace, Key: key, Value: []byte{}, IfAbsent: ifAbsent, Stream: stream})
}

// flush appends a put for each part held, their keys cut from one string.
func (c *refCollector) flush(dst []storage.Put) []storage.Put {
	parts := c.parts[:c.n]
	if len(parts) == 0 {
		return dst
	}
	n := 0
	for i := range parts {
		n += parts[i].size()
	}
	var all strings.Builder
	all.Grow(n)
	for i := range parts {
		writeRefKey(&all, parts[i].role, parts[i].ref, parts[i].stream)
	}
	keys := all.String()
	dst = slices.Grow(dst, len(parts))
	for i := range parts {
		size := parts[i].size()
		dst = append(dst, storage.Put{Space: RefSpace, Key: keys[:size], Value: []byte{}, IfAbsent: parts[i].ifAbsent, Stream: parts[i].stream})
		keys = keys[size:]
	}
	c.n = 0
	return dst
}

// rawRef is an entity reference as bytes of the metadata, or of the decoder's strings.
type rawRef struct{ typ, id []byte }

func (r rawRef) usable() bool {
	return len(r.typ) > 0 && len(r.id) > 0 && bytes.IndexByte(r.typ, 0) < 0 && bytes.IndexByte(r.id, 0) < 0
}

// refKey is refPrefix(role, entity, stream.Type), built in one allocation; the store completes
// it with the stream's first timestamp and id (storage.Put.Stream).
func refKey(role string, r rawRef, stream storage.StreamKey) string {
	p := refParts{role: role, ref: r, stream: stream}
	var k strings.Builder
	k.Grow(p.size())
	writeRefKey(&k, role, r, stream)
	return k.String()
}

func writeRefKey(k *strings.Builder, role string, r rawRef, stream storage.StreamKey) {
	k.WriteString(role)
	k.WriteByte(0)
	k.Write(r.typ)
	k.WriteByte(0)
	k.Write(r.id)
	k.WriteByte(0)
	k.WriteString(stream.Type)
	k.WriteByte(0)
}

// parseRefs reads metadata.actor and metadata.target, in that order; an absent one is empty.
// Metadata that is not JSON has none.
func parseRefs(meta []byte) ([2]rawRef, bool) {
	if len(meta) == 0 {
		return [2]rawRef{}, false
	}
	if refs, ok := parseWriteMetadata(meta); ok {
		return refs, true
	}
	var m refMeta
	if json.Unmarshal(meta, &m) != nil {
		return [2]rawRef{}, false
	}
	var refs [2]rawRef
	for i, r := range [...]*ref{m.Actor, m.Target} {
		if r != nil {
			refs[i] = rawRef{typ: []byte(r.Type), id: []byte(r.ID)}
		}
	}
	return refs, true
}

// parseWriteMetadata reads, without a JSON decoder, the layout the write path stores, and the
// one of implied events:
// {"actor":{"id":S,"type":S}[,"implied_by":{"depth":N,"event_type":S,"key":S}][,"target":{"id":S,"type":S}],"timestamp":N}
// with strings of printable ASCII and no escapes. Anything else is left to json.Unmarshal, so
// the answer is the decoder's either way.
func parseWriteMetadata(b []byte) ([2]rawRef, bool) {
	var refs [2]rawRef
	rest, ok := cutPrefix(b, `{"actor":`)
	if !ok {
		return refs, false
	}
	if refs[0], rest, ok = parseRef(rest); !ok {
		return refs, false
	}
	if r, ok := cutPrefix(rest, `,"implied_by":`); ok {
		if rest, ok = skipImpliedBy(r); !ok {
			return refs, false
		}
	}
	if r, ok := cutPrefix(rest, `,"target":`); ok {
		if refs[1], rest, ok = parseRef(r); !ok {
			return refs, false
		}
	}
	if rest, ok = cutPrefix(rest, `,"timestamp":`); !ok {
		return refs, false
	}
	if rest, ok = cutInteger(rest); !ok || string(rest) != "}" {
		return refs, false
	}
	return refs, true
}

// skipImpliedBy moves past {"depth":N,"event_type":S,"key":S} at the start of b.
func skipImpliedBy(b []byte) ([]byte, bool) {
	rest, ok := cutPrefix(b, `{"depth":`)
	if !ok {
		return nil, false
	}
	if rest, ok = cutInteger(rest); !ok {
		return nil, false
	}
	for _, name := range [...]string{`,"event_type":`, `,"key":`} {
		if rest, ok = cutPrefix(rest, name); !ok {
			return nil, false
		}
		if _, rest, ok = plainString(rest); !ok {
			return nil, false
		}
	}
	return cutPrefix(rest, `}`)
}

// cutInteger moves past a JSON integer at the start of b.
func cutInteger(b []byte) ([]byte, bool) {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == 0 || n > 1 && b[0] == '0' {
		return nil, false
	}
	return b[n:], true
}

// parseRef reads {"id":S,"type":S} at the start of b.
func parseRef(b []byte) (rawRef, []byte, bool) {
	var r rawRef
	rest, ok := cutPrefix(b, `{"id":`)
	if !ok {
		return r, nil, false
	}
	if r.id, rest, ok = plainString(rest); !ok {
		return r, nil, false
	}
	if rest, ok = cutPrefix(rest, `,"type":`); !ok {
		return r, nil, false
	}
	if r.typ, rest, ok = plainString(rest); !ok {
		return r, nil, false
	}
	rest, ok = cutPrefix(rest, `}`)
	return r, rest, ok
}

// plainString reads a JSON string of printable ASCII without escapes at the start of b and
// returns its contents.
func plainString(b []byte) ([]byte, []byte, bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return b[1:i], b[i+1:], true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return nil, nil, false
		}
	}
	return nil, nil, false
}

func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return b, false
	}
	return b[len(prefix):], true
}

func refPrefix(role string, entity storage.StreamKey, streamType string) string {
	return role + "\x00" + entity.Type + "\x00" + entity.ID + "\x00" + streamType + "\x00"
}

// refStreamID returns the stream id at the end of a reference key, after prefix: the store put
// the stream's first timestamp (16 hex digits) and a NUL byte before it. Keys written before
// references were ordered by age hold the id alone; ids never hold a NUL byte.
func refStreamID(rest string) string {
	if len(rest) > 17 && rest[16] == 0 {
		return rest[17:]
	}
	return rest
}

// Discover returns the streams that a tombstone of entity rewrites besides entity's own: those of
// the types with a cascade rule in which entity appears in a cascading role. Types without
// onTombstone, and roles that preserve, are never scanned. Where complete says the references of
// a (role, type) are complete, one prefix scan of them finds the streams; elsewhere, and for
// every pair when complete is nil, every event of the type's streams is read, as the Tombstones
// page describes discovery. The result is sorted and free of duplicates.
func Discover(st storage.EventStore, sp *spec.Spec, entity storage.StreamKey, complete func(role, typ string) (bool, error)) ([]storage.StreamKey, error) {
	if sp == nil {
		return nil, nil
	}
	found := map[storage.StreamKey]bool{}
	for _, typ := range sp.TombstoneScanned() {
		actor, target := sp.Cascades(typ)
		for j, r := range [...]struct {
			role    string
			cascade bool
		}{{RoleActor, actor}, {RoleTarget, target}} {
			if !r.cascade {
				continue
			}
			var err error
			indexed := false
			if complete != nil {
				if indexed, err = complete(r.role, typ); err != nil {
					return nil, err
				}
			}
			if indexed {
				err = scanRefs(st, r.role, typ, entity, found)
			} else {
				err = readStreams(st, j, typ, entity, found)
			}
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

// scanRefs adds to found the streams of typ whose references name entity in role.
func scanRefs(st storage.EventStore, role, typ string, entity storage.StreamKey, found map[storage.StreamKey]bool) error {
	prefix := refPrefix(role, entity, typ)
	return st.Scan(RefSpace, prefix, func(key string, _ []byte) error {
		if k := (storage.StreamKey{Type: typ, ID: refStreamID(key[len(prefix):])}); k != entity {
			found[k] = true
		}
		return nil
	})
}

// listPage is how many stream ids readStreams lists at a time.
const listPage = 1000

// errFound ends the reading of a stream at its first event that names the entity.
var errFound = errors.New("tombstone: entity found")

// readStreams adds to found the streams of typ with an event whose metadata names entity in the
// role of index role (0 actor, 1 target), reading each stream up to such an event.
func readStreams(st storage.EventStore, role int, typ string, entity storage.StreamKey, found map[storage.StreamKey]bool) error {
	for cursor := ""; ; {
		ids, err := st.List(typ, cursor, listPage)
		if err != nil {
			return err
		}
		for _, id := range ids {
			k := storage.StreamKey{Type: typ, ID: id}
			if k == entity || found[k] {
				continue
			}
			n, err := st.Length(k)
			if err != nil {
				return err
			}
			err = st.Range(k, 1, n, func(ev storage.Event) error {
				if refs, ok := parseRefs(ev.Metadata); ok && string(refs[role].typ) == entity.Type && string(refs[role].id) == entity.ID {
					return errFound
				}
				return nil
			})
			switch {
			case errors.Is(err, errFound):
				found[k] = true
			case err != nil:
				return err
			}
		}
		if len(ids) < listPage {
			return nil
		}
		cursor = ids[len(ids)-1]
	}
}
