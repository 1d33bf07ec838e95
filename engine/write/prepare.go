package write

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	json "github.com/goccy/go-json"

	"github.com/j17-go/j17/engine/ident"
	"github.com/j17-go/j17/engine/problem"
	"github.com/j17-go/j17/engine/schema"
	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/storage"
	"github.com/j17-go/j17/storage/canonical"
)

// Input is one write request as the HTTP edge received it.
type Input struct {
	AggregateType string
	// ID is the aggregate id of the URL, before normalization.
	ID string
	// EventType is the event type of the URL; empty for a batch write.
	EventType string
	Body      []byte
	// Now stamps the events unless metadata.timestamp overrides it.
	Now time.Time
	// Prod refuses metadata.timestamp.
	Prod bool
}

// Plan is a checked request, ready to commit.
type Plan struct {
	Stream storage.StreamKey
	Events []storage.NewEvent
	// Triggers holds the spec of each event, in order, for implications.
	Triggers []*spec.Event
	// Expect is how the commit checks the stream's length; Length is previous_length for Exactly.
	Expect storage.ExpectKind
	Length uint64
	Batch  bool
	// sp is the spec the plan was checked against, whose onTombstone rules decide which
	// references its record carries (tombstone.AppendRefPuts).
	sp *spec.Spec
	// one backs the slices of a single-event plan, which then takes one allocation.
	one struct {
		trigger [1]*spec.Event
		event   [1]storage.NewEvent
		data    [1][]byte
	}
}

// Prepare checks a request against sp and builds its Plan. Every refusal is a *problem.Error.
func Prepare(sp *spec.Spec, rules ident.Rules, in Input) (*Plan, error) {
	if sp == nil {
		return nil, problem.New(problem.ErrNotFound, "Aggregate type '%s' not found in spec (no spec is deployed)", in.AggregateType)
	}
	agg, ok := sp.Aggregate(in.AggregateType)
	if !ok {
		return nil, problem.New(problem.ErrNotFound, "Aggregate type '%s' not found in spec", in.AggregateType)
	}
	var single *spec.Event
	if in.EventType != "" {
		ev, err := eventType(agg, in.EventType)
		if err != nil {
			return nil, err
		}
		single = ev
	}
	p := &Plan{Batch: single == nil, sp: sp}
	var meta []byte
	var data [][]byte
	if single != nil {
		obj, err := bodyObject(in.Body)
		if err != nil {
			return nil, err
		}
		b, err := decodeSingle(obj)
		if err != nil {
			return nil, err
		}
		if absent(b.Data) {
			return nil, problem.At(problem.ErrMalformed, "data", "Field \"data\" is required")
		}
		// The body is the caller's buffer (the HTTP server reuses it): the stored data is a copy.
		p.one.data = [1][]byte{bytes.Clone(b.Data)}
		p.one.trigger = [1]*spec.Event{single}
		meta, data = b.Metadata, p.one.data[:]
		p.Triggers = p.one.trigger[:]
		p.Events = p.one.event[:0]
	} else {
		obj, err := bodyObject(in.Body)
		if err != nil {
			return nil, err
		}
		b, err := decodeBatch(obj)
		if err != nil {
			return nil, err
		}
		evs, err := batchEvents(agg, b.Events)
		if err != nil {
			return nil, err
		}
		meta = b.Metadata
		for _, e := range evs {
			p.Triggers = append(p.Triggers, e.spec)
			data = append(data, e.data)
		}
	}
	id, _, err := rules.Normalize(ident.Key, in.ID)
	if err != nil {
		return nil, identError(err)
	}
	p.Stream = storage.StreamKey{Type: in.AggregateType, ID: id}
	stored, ts, err := p.metadata(sp, rules, meta, in)
	if err != nil {
		return nil, err
	}
	for i, ev := range p.Triggers {
		d, err := checkData(ev, data[i])
		if err != nil {
			if p.Batch {
				return nil, problem.InBatch(err, i)
			}
			return nil, err
		}
		p.Events = append(p.Events, storage.NewEvent{Type: ev.Type, Data: d, Metadata: stored, Timestamp: ts})
	}
	return p, nil
}

func eventType(agg *spec.AggregateType, name string) (*spec.Event, error) {
	if len(name) > 0 && name[0] == '_' {
		return nil, problem.New(problem.ErrNotFound, "Event type '%s' is reserved for system events and cannot be written", name)
	}
	ev, ok := agg.Events[name]
	if !ok {
		return nil, problem.New(problem.ErrNotFound, "Event type '%s' not found in spec for aggregate '%s'", name, agg.Name)
	}
	return ev, nil
}

type batchItem struct {
	spec *spec.Event
	data []byte
}

func batchEvents(agg *spec.AggregateType, raw []byte) ([]batchItem, error) {
	if absent(raw) {
		return nil, problem.At(problem.ErrMalformed, "events", "Missing 'events' array in request body")
	}
	if raw[0] != '[' {
		return nil, problem.At(problem.ErrMalformed, "events", "'events' must be an array")
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, problem.At(problem.ErrMalformed, "events", "'events' must be an array")
	}
	if len(items) == 0 {
		return nil, problem.At(problem.ErrMalformed, "events", "Events array cannot be empty")
	}
	out := make([]batchItem, len(items))
	for i, it := range items {
		if !isObject(it) {
			return nil, problem.InBatch(problem.At(problem.ErrMalformed, "events", "Each event must be an object with \"type\" and \"data\""), i)
		}
		e, err := decodeEvent(it)
		if err != nil {
			return nil, problem.InBatch(problem.At(problem.ErrMalformed, "events", "Each event must be an object with \"type\" and \"data\""), i)
		}
		name, err := str(e.Type, "type", "")
		if err != nil {
			return nil, problem.InBatch(err, i)
		}
		ev, err := eventType(agg, name)
		if err != nil {
			return nil, problem.InBatch(err, i)
		}
		// The Batch Operations page makes data optional per event; an absent payload is {}.
		d := []byte(e.Data)
		if absent(d) {
			d = []byte("{}")
		}
		out[i] = batchItem{spec: ev, data: d}
	}
	return out, nil
}

// metadata checks the request metadata and returns the stored metadata of the events and their
// timestamp; it also sets the plan's concurrency mode.
func (p *Plan) metadata(sp *spec.Spec, rules ident.Rules, raw []byte, in Input) ([]byte, int64, error) {
	if absent(raw) {
		return nil, 0, problem.At(problem.ErrMalformed, "metadata.actor", "Field \"metadata.actor\" is required")
	}
	if err := memberObject(raw, "metadata"); err != nil {
		return nil, 0, err
	}
	m, err := decodeMetadata(raw)
	if err != nil {
		return nil, 0, err
	}
	if absent(m.Actor) {
		return nil, 0, problem.At(problem.ErrMalformed, "metadata.actor", "Field \"metadata.actor\" is required")
	}
	actorType, actorID, err := ref(m.Actor, "metadata.actor")
	if err != nil {
		return nil, 0, err
	}
	if actorType != ident.SystemAgentType && !sp.IsAgentType(actorType) {
		return nil, 0, problem.At(problem.ErrInvalid, "metadata.actor.type", "Unknown actor type '%s' (declare it in agent_types)", actorType)
	}
	if actorID, _, err = rules.NormalizeActor(actorType, actorID); err != nil {
		return nil, 0, identError(err)
	}
	var targetType, targetID string
	hasTarget := !absent(m.Target)
	if hasTarget {
		if targetType, targetID, err = ref(m.Target, "metadata.target"); err != nil {
			return nil, 0, err
		}
		if !sp.IsTargetType(targetType) {
			return nil, 0, problem.At(problem.ErrInvalid, "metadata.target.type", "Unknown target type '%s' (declare it in target_types)", targetType)
		}
		if targetID, _, err = rules.Normalize(ident.TargetID, targetID); err != nil {
			return nil, 0, identError(err)
		}
	}
	if err := p.concurrency(m); err != nil {
		return nil, 0, err
	}
	ts := in.Now.Unix()
	if !absent(m.Timestamp) {
		if in.Prod {
			return nil, 0, problem.At(problem.ErrInvalid, "metadata.timestamp", "metadata.timestamp is only accepted in non-production environments")
		}
		n, ok := nonNegative(m.Timestamp)
		if !ok {
			return nil, 0, problem.At(problem.ErrInvalid, "metadata.timestamp", "metadata.timestamp must be a non-negative integer (Unix seconds)")
		}
		ts = n
	}
	// Stored metadata is laid out in canonical key order, so the store's canonical pass
	// finds nothing to change.
	b := make([]byte, 0, 96+len(actorID)+len(targetID))
	b = append(b, `{"actor":{"id":`...)
	b = canonical.AppendString(b, actorID)
	b = append(b, `,"type":`...)
	b = canonical.AppendString(b, actorType)
	b = append(b, '}')
	if hasTarget {
		b = append(b, `,"target":{"id":`...)
		b = canonical.AppendString(b, targetID)
		b = append(b, `,"type":`...)
		b = canonical.AppendString(b, targetType)
		b = append(b, '}')
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, '}')
	return b, ts, nil
}

func ref(raw []byte, path string) (typ, id string, err error) {
	if err := memberObject(raw, path); err != nil {
		return "", "", err
	}
	r, err := decodeRef(raw)
	if err != nil {
		return "", "", err
	}
	if typ, err = str(r.Type, path, ".type"); err != nil {
		return "", "", err
	}
	if id, err = str(r.ID, path, ".id"); err != nil {
		return "", "", err
	}
	return typ, id, nil
}

func (p *Plan) concurrency(m metadataIn) error {
	skip := false
	if !absent(m.SkipOCC) {
		// The member is valid JSON, so a value that starts with t or f is true or false.
		switch m.SkipOCC[0] {
		case 't':
			skip = true
		case 'f':
		default:
			return problem.At(problem.ErrMalformed, "metadata.skip_occ", "metadata.skip_occ must be a boolean")
		}
	}
	hasPrev := !absent(m.PreviousLength)
	if hasPrev {
		n, ok := nonNegative(m.PreviousLength)
		if !ok {
			return problem.At(problem.ErrMalformed, "metadata.previous_length", "metadata.previous_length must be a non-negative integer")
		}
		p.Expect, p.Length = storage.Exactly, uint64(n)
	}
	if !skip {
		return nil
	}
	if hasPrev {
		return problem.At(problem.ErrInvalid, "metadata.skip_occ", "metadata.skip_occ cannot be combined with metadata.previous_length")
	}
	for _, ev := range p.Triggers {
		if !ev.AllowSkipOCC {
			return problem.At(problem.ErrInvalid, "metadata.skip_occ", "Event type '%s' does not allow skip_occ (set allow_skip_occ in the spec)", ev.Type)
		}
	}
	p.Expect = storage.Skip
	return nil
}

func checkData(ev *spec.Event, data []byte) ([]byte, error) {
	if canonical.DeeperThan(data, MaxDataDepth) {
		return nil, problem.At(problem.ErrInvalid, "data", "Event data nests deeper than %d levels", MaxDataDepth)
	}
	// data is part of a body that bodyObject found to be valid JSON and UTF-8: a schema that takes
	// every object would only read its syntax again (orders over HTTP spent 1% of the server's
	// processor time there).
	if ev.Schema == nil || isObject(data) && ev.Schema.AcceptsEveryObject() {
		return data, nil
	}
	err := ev.Schema.ValidateJSON(data)
	if err == nil {
		return data, nil
	}
	return nil, dataError(err)
}

// dataError turns a refusal of the schema into the problem answered. It is apart from checkData
// so that the error target it declares is allocated only for a refused event.
func dataError(err error) error {
	var ve *schema.ValidationError
	if errors.As(err, &ve) {
		return &problem.Error{
			Kind: problem.ErrInvalid, Message: ve.Message, Path: ve.Path,
			Details: map[string]any{"field": ve.Field, "constraint": ve.Constraint, "expected": ve.Expected, "received": ve.Received},
		}
	}
	return problem.At(problem.ErrMalformed, "data", "Event data is not valid JSON")
}

func identError(err error) error {
	var ie *ident.Error
	if errors.As(err, &ie) {
		return problem.At(problem.ErrInvalid, ie.Path(), "%s", ie.Error())
	}
	return problem.New(problem.ErrInvalid, "%s", err.Error())
}
