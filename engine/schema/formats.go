package schema

import "github.com/santhosh-tekuri/jsonschema/v6"

// formatOverrides replace the compiler's own format checks. Formats the compiler knows but the
// page does not list become annotations, as any unknown format is.
var formatOverrides = []*jsonschema.Format{
	annotationFormat("duration"),
	annotationFormat("period"),
	annotationFormat("iri"),
	annotationFormat("iri-reference"),
	annotationFormat("uri-template"),
	annotationFormat("relative-json-pointer"),
	annotationFormat("semver"),
	{Name: "uri", Validate: validateURI},
	{Name: "uri-reference", Validate: validateURIReference},
	{Name: "ipv4", Validate: validateIPv4},
	{Name: "hostname", Validate: validateHostname},
	{Name: "email", Validate: validateEmail},
}

func annotationFormat(name string) *jsonschema.Format {
	return &jsonschema.Format{Name: name, Validate: func(any) error { return nil }}
}

// regexFormat replaces the compiler's own check of the regex format, which cannot be overridden
// by registration: it would check the syntax of Go's regexp package instead of ECMA-262.
var regexFormat = &jsonschema.Format{Name: "regex", Validate: validateRegex}

// useECMARegexFormat points every compiled "format": "regex" at regexFormat.
func useECMARegexFormat(root *jsonschema.Schema) {
	eachSchema(root, func(s *jsonschema.Schema) {
		if s.Format != nil && s.Format.Name == "regex" {
			s.Format = regexFormat
		}
	})
}
