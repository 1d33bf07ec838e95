package saga

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/j17-go/j17/engine/spec"
	"github.com/j17-go/j17/tick"
)

// Scope is what the templates and conditions of s read: the trigger as "$", the snapshot as "@",
// and "$prev", "$context" and "$error".
func (s *State) Scope() (*tick.Scope, error) {
	data, err := parseOr(s.Trigger.Data, tick.Object())
	if err != nil {
		return nil, err
	}
	meta, err := parseOr(s.Trigger.Metadata, tick.Object())
	if err != nil {
		return nil, err
	}
	snap, err := parseOr(s.Snapshot, tick.Object())
	if err != nil {
		return nil, err
	}
	sc := &tick.Scope{
		Event: &tick.Event{
			Key: s.Trigger.AggregateType + ":" + s.Trigger.ID, AggregateType: s.Trigger.AggregateType,
			ID: s.Trigger.ID, Type: s.Trigger.Type, Data: data, Metadata: meta,
		},
		State: snap,
	}
	var ctx []tick.Member
	for i := range s.Steps {
		st := &s.Steps[i]
		if len(st.Result) == 0 {
			continue
		}
		r, err := tick.ParseJSON(st.Result)
		if err != nil {
			return nil, fmt.Errorf("%w: step %q result: %v", ErrCorrupt, st.Name, err)
		}
		ctx = append(ctx, tick.Member{Key: st.Name, Value: r})
		if i < s.Current {
			sc.Prev = r
		}
	}
	sc.Context = tick.Object(ctx...)
	if s.Error != nil {
		sc.Error = tick.Object(
			tick.Member{Key: "message", Value: tick.String(s.Error.Message)},
			tick.Member{Key: "step", Value: tick.String(s.Error.Step)},
			tick.Member{Key: "type", Value: tick.String(s.Error.Type)},
		)
	}
	return sc, nil
}

func parseOr(raw []byte, or tick.Value) (tick.Value, error) {
	if len(raw) == 0 {
		return or, nil
	}
	v, err := tick.ParseJSON(raw)
	if err != nil {
		return tick.Value{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return v, nil
}

// Rendered is an emit template resolved in a scope: the event to write.
type Rendered struct {
	AggregateType string
	ID            string
	EventType     string
	// Data is the event data as JSON, always an object.
	Data []byte
}

// RenderError is a template that does not resolve to an event; Path names the field.
type RenderError struct {
	Path   string
	Detail string
}

func (e *RenderError) Error() string { return e.Path + ": " + e.Detail }

func (e *RenderError) Unwrap() error { return ErrTemplate }

// Render resolves an emit template. A missing or null id, or data that is not an object, is a
// *RenderError.
func Render(e *spec.Emit, sc *tick.Scope) (Rendered, error) {
	r := Rendered{AggregateType: e.AggregateType, EventType: e.EventType}
	id, err := e.ID.Eval(sc)
	if err != nil {
		return r, renderError("id", err)
	}
	switch id.Kind() {
	case tick.KindString:
		r.ID = id.Str()
	case tick.KindNumber:
		r.ID = strconv.FormatFloat(id.Num(), 'f', -1, 64)
	}
	if r.ID == "" {
		return r, &RenderError{Path: "id", Detail: "the id template resolves to " + describe(id) + ", not a string"}
	}
	if e.Data == nil {
		r.Data = []byte("{}")
		return r, nil
	}
	data, err := e.Data.Eval(sc)
	if err != nil {
		return r, renderError("data", err)
	}
	switch data.Kind() {
	case tick.KindMissing:
		r.Data = []byte("{}")
	case tick.KindObject:
		r.Data = data.AppendJSON(nil)
	default:
		return r, &RenderError{Path: "data", Detail: "the data template resolves to " + describe(data) + ", not an object"}
	}
	return r, nil
}

// renderError names the field of a template error as the write pipeline names fields:
// "data.customer_id" for the pointer "/customer_id" under data.
func renderError(field string, err error) *RenderError {
	var te *tick.Error
	if errors.As(err, &te) {
		path := field
		if te.Pointer != "" {
			path += strings.ReplaceAll(te.Pointer, "/", ".")
		}
		return &RenderError{Path: path, Detail: te.Message}
	}
	return &RenderError{Path: field, Detail: err.Error()}
}

func describe(v tick.Value) string {
	if v.IsMissing() {
		return "nothing"
	}
	return v.Kind().String()
}
