package schema

import "testing"

// TestFormats covers what the official suite leaves open: which formats assert, and the edges
// of the checks written here.
func TestFormats(t *testing.T) {
	cases := []struct {
		format, value string
		valid         bool
	}{
		{"duration", "not a duration", true}, // not listed on the page: an annotation
		{"uri-template", "{{{", true},
		{"no-such-format", "x", true},
		{"regex", "a{2,1}", false},
		{"regex", "(?<a>x)(?<a>y)", false},
		{"regex", `(a)\2`, false},
		{"regex", `(a)\1`, true},
		{"regex", "[z-a]", false},
		{"regex", `[\d-z]`, false},
		{"regex", "(?=a)*", false},
		{"regex", `\u{1F600}|\x41|\cJ|[\b]`, true},
		{"regex", "a|b|(c(?:d)?)+?$", true},
		{"regex", `\p{Script=Greek}`, true},
		{"hostname", "xn--nw2a.xn--j6w193g", true},
		{"hostname", "xn--a", false},
		{"email", "a@xn--nw2a.com", true},
		{"email", "a@-x.com", false},
		{"ipv4", "01.2.3.4", false},
		{"uri", "urn:isbn:0451450523", true},
		{"uri", "http://[v1.fe80::a+en1]/", true},
		{"uri", "http://[fe80::1%25en0]/", false},
		{"uri-reference", "../a/b?c#d", true},
	}
	for _, tc := range cases {
		s, issues := Compile([]byte(`{"format":"` + tc.format + `"}`))
		if issues != nil {
			t.Fatalf("%s: %v", tc.format, issues)
		}
		err := s.Validate(tc.value)
		if (err == nil) != tc.valid {
			t.Errorf("%s %q: got %v, want valid=%v", tc.format, tc.value, err, tc.valid)
		}
	}
}
