package schema

import "github.com/santhosh-tekuri/jsonschema/v6"

// eachSchema calls fn once for root and every schema reachable from it.
func eachSchema(root *jsonschema.Schema, fn func(*jsonschema.Schema)) {
	seen := map[*jsonschema.Schema]bool{}
	var visit func(s *jsonschema.Schema)
	visit = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		fn(s)
		for _, sub := range subschemas(s) {
			visit(sub)
		}
	}
	visit(root)
}

// propertyNames collects the property names a schema declares or requires.
func propertyNames(root *jsonschema.Schema) map[string]string {
	names := map[string]string{}
	eachSchema(root, func(s *jsonschema.Schema) {
		for name := range s.Properties {
			names[name] = name
		}
		for _, name := range s.Required {
			names[name] = name
		}
	})
	return names
}

// subschemas lists every schema a compiled schema links to.
func subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
		s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema}
	if s.DynamicRef != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	out = append(append(append(append(out, s.AllOf...), s.AnyOf...), s.OneOf...), s.PrefixItems...)
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.DependentSchemas} {
		for _, sub := range m {
			out = append(out, sub)
		}
	}
	for _, sub := range s.PatternProperties {
		out = append(out, sub)
	}
	for _, v := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch v := v.(type) {
		case *jsonschema.Schema:
			out = append(out, v)
		case []*jsonschema.Schema:
			out = append(out, v...)
		}
	}
	for _, v := range s.Dependencies {
		if sub, ok := v.(*jsonschema.Schema); ok {
			out = append(out, sub)
		}
	}
	return out
}
