package tick

import (
	"fmt"
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

// parseEvent decodes an event whole: its values are used many times by
// whoever asked for it, so parsing them once is cheapest.
func (p *parser) parseEvent(raw []byte, ev *Event) error {
	v, err := p.parse(raw)
	if err != nil {
		return err
	}
	return eventFromValue(v, ev)
}

// parseLazyEvent is parseEvent for a replay, on text that the result may
// slice: data and metadata stay text until something needs them, which
// spares a replay building the values that no handler reads.
func (p *parser) parseLazyEvent(text string, ev *Event) error {
	p.src = text
	p.pos, p.depth = skipSpace(p.src, 0), 0
	if p.pos >= len(p.src) || p.src[p.pos] != '{' {
		v, err := p.value()
		if err != nil {
			return err
		}
		if err := p.end(); err != nil {
			return err
		}
		return fmt.Errorf("%w: an event must be an object, not %s", ErrJSON, v.kind)
	}
	*ev = Event{}
	p.hasTS = false
	p.lazyMark = len(p.lazy)
	if err := p.eventMembers(ev); err != nil {
		return err
	}
	if err := p.end(); err != nil {
		return err
	}
	return finishEvent(ev)
}

// end checks that nothing but whitespace follows the document.
func (p *parser) end() error {
	p.skipWS()
	if p.pos != len(p.src) {
		return p.errorf("unexpected data after the JSON value")
	}
	return nil
}

// eventMembers reads the members of the event object at p.pos without
// building them: key, type, id and aggregate_type are read as strings, data
// and metadata become lazy values over their validated text, and anything
// else is validated and skipped, so that exactly what parse accepts is
// accepted. A repeated member keeps its last value, as parsing does.
func (p *parser) eventMembers(ev *Event) error {
	src := p.src
	p.depth = 1
	i := skipSpace(src, p.pos+1)
	if i < len(src) && src[i] == '}' {
		p.pos = i + 1
		return nil
	}
	for {
		i = skipSpace(src, i)
		p.pos = i
		if i >= len(src) || src[i] != '"' {
			return p.errorf("expected a string key")
		}
		end, esc := scanString(src, i)
		if end < 0 {
			return p.stringError(i)
		}
		key := src[i+1 : end-1]
		if esc {
			key, _ = p.str() // validated: no error
		}
		var err error
		i = skipSpace(src, end)
		p.pos = i
		if i >= len(src) || src[i] != ':' {
			return p.errorf("expected ':'")
		}
		p.pos = skipSpace(src, i+1)
		switch key {
		case "key":
			ev.Key, err = p.eventString()
		case "type":
			ev.Type, err = p.eventString()
		case "id":
			ev.ID, err = p.eventString()
		case "aggregate_type":
			ev.AggregateType, err = p.eventString()
		case "data":
			ev.Data, err = p.lazyValue()
		case "metadata":
			ev.Metadata, err = p.lazyValue()
			p.tsNum, p.hasTS = leadingTimestamp(ev.Metadata)
		default:
			err = p.skipValue()
		}
		if err != nil {
			return err
		}
		i = skipSpace(src, p.pos)
		p.pos = i
		if i >= len(src) {
			return p.errorf("unexpected end of input in object")
		}
		c := src[i]
		i++
		if c == '}' {
			p.pos = i
			p.depth = 0
			return nil
		}
		if c != ',' {
			return p.errorf("expected ',' or '}'")
		}
	}
}

// leadingTimestamp reads the timestamp of lazy metadata whose first member
// it is, written compactly as stored events are: the common case, spared a
// lookup in the text. ok is false for anything else.
func leadingTimestamp(md Value) (float64, bool) {
	const prefix = `{"timestamp":`
	if md.kind != KindObject || md.n.gen != uniqueKeys || len(md.n.lz.raw) <= len(prefix) || md.n.lz.raw[:len(prefix)] != prefix {
		return 0, false
	}
	t := md.n.lz.raw[len(prefix):]
	if c := t[0]; c != '-' && (c < '0' || c > '9') {
		return 0, false
	}
	end := 1
	for end < len(t) && scalarByte[t[end]] {
		end++
	}
	return rawNumber(t[:end]).num, true
}

// eventString reads a string member; any other value is validated and
// reads as "", as Str does.
func (p *parser) eventString() (string, error) {
	if p.pos < len(p.src) && p.src[p.pos] == '"' {
		return p.str()
	}
	return "", p.skipValue()
}

// finishEvent checks the type and fills id and aggregate_type from the key.
func finishEvent(ev *Event) error {
	if ev.Type == "" {
		return fmt.Errorf("%w: event has no \"type\"", ErrJSON)
	}
	if i := colon(ev.Key); i >= 0 {
		if ev.AggregateType == "" {
			ev.AggregateType = ev.Key[:i]
		}
		if ev.ID == "" {
			ev.ID = ev.Key[i+1:]
		}
	}
	return nil
}

// colon is the position of the first ':' of a key, or -1. The aggregate
// type before it is short, so a plain loop beats strings.IndexByte's setup.
func colon(key string) int {
	for i := 0; i < len(key); i++ {
		if key[i] == ':' {
			return i
		}
	}
	return -1
}

// eventFromValue fills ev from an event already parsed into a Value.
func eventFromValue(v Value, ev *Event) error {
	if v.kind != KindObject {
		return fmt.Errorf("%w: an event must be an object, not %s", ErrJSON, v.kind)
	}
	*ev = Event{}
	for _, m := range v.n.m().members {
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
	return finishEvent(ev)
}
