package schema

import (
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ValidateJSON checks raw, a JSON document (the event's data), against the schema. It returns a
// *ValidationError when the data does not satisfy the schema, an error wrapping ErrInvalidJSON
// when raw is not one JSON value, and nil otherwise. Numbers are compared exactly as written.
func (s *Schema) ValidateJSON(raw []byte) error {
	if s.fast != nil && s.validRaw(raw) {
		return nil
	}
	v, err := decodeJSONKeys(raw, s.keys)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidJSON, err)
	}
	return s.Validate(v)
}

// AcceptsEveryObject reports whether every JSON object (up to the parser's 10,000 levels)
// satisfies the schema, as {}, {"type":"object"} and true do. A caller holding an object it
// encoded itself (an implied event's data, built from a template) may then skip ValidateJSON: it
// would only check the syntax.
func (s *Schema) AcceptsEveryObject() bool { return s.fast.acceptsEveryObject() }

// Validate checks v, a value as decoded from JSON with UseNumber (map[string]any, []any,
// json.Number, string, bool or nil), and returns a *ValidationError or nil.
func (s *Schema) Validate(v any) error {
	if s.fast != nil && s.fast.valid(v) {
		return nil
	}
	err := s.compiled.Validate(v)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return &ValidationError{Path: dataRoot, Message: FailureMessage, Detail: err.Error()}
	}
	return report(verr, v)
}
