package tick

import (
	"fmt"
	"strings"
)

// Event is what a handler, predicate or template sees as "$".
type Event struct {
	Key           string // "type:id"
	AggregateType string
	ID            string
	Type          string
	Data          Value
	Metadata      Value
}

// Timestamp returns metadata.timestamp and whether it is a number.
func (ev *Event) Timestamp() (float64, bool) {
	t := ev.Metadata.Get("timestamp")
	return t.num, t.kind == KindNumber
}

// Value returns the event as the object "$" denotes:
// {"key", "id", "type", "data", "metadata"}.
func (ev *Event) Value() Value {
	return Object(
		Member{Key: "key", Value: String(ev.Key)},
		Member{Key: "id", Value: String(ev.ID)},
		Member{Key: "type", Value: String(ev.Type)},
		Member{Key: "data", Value: ev.Data},
		Member{Key: "metadata", Value: ev.Metadata},
	)
}

// ParseEvent decodes a stored event, an object with "key", "type", "data"
// and "metadata" (other members are ignored). "id" and "aggregate_type" are
// taken from the object when present and otherwise split from the key.
func ParseEvent(raw []byte) (*Event, error) {
	ev := new(Event)
	var p parser
	if err := p.parseEvent(raw, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

func (p *parser) parseEvent(raw []byte, ev *Event) error {
	v, err := p.parse(raw)
	if err != nil {
		return err
	}
	return eventFromValue(v, ev)
}

func eventFromValue(v Value, ev *Event) error {
	if v.kind != KindObject {
		return fmt.Errorf("%w: an event must be an object, not %s", ErrJSON, v.kind)
	}
	*ev = Event{}
	for _, m := range v.n.members {
		switch m.Key {
		case "key":
			ev.Key = m.Value.Str()
		case "type":
			ev.Type = m.Value.Str()
		case "id":
			ev.ID = m.Value.Str()
		case "aggregate_type":
			ev.AggregateType = m.Value.Str()
		case "data":
			ev.Data = m.Value
		case "metadata":
			ev.Metadata = m.Value
		}
	}
	if ev.Type == "" {
		return fmt.Errorf("%w: event has no \"type\"", ErrJSON)
	}
	if i := strings.IndexByte(ev.Key, ':'); i >= 0 {
		if ev.AggregateType == "" {
			ev.AggregateType = ev.Key[:i]
		}
		if ev.ID == "" {
			ev.ID = ev.Key[i+1:]
		}
	}
	return nil
}
