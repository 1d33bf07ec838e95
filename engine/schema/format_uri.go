package schema

import (
	"errors"
	"net/netip"
	"strings"
)

// validateURI checks the uri format: an absolute URI per RFC 3986 (scheme required).
func validateURI(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return checkURIReference(s, true)
}

// validateURIReference checks the uri-reference format: a URI or a relative reference.
func validateURIReference(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return checkURIReference(s, false)
}

// checkURIReference follows the RFC 3986 grammar:
//
//	URI-reference = [ scheme ":" ] hier-part [ "?" query ] [ "#" fragment ]
//	hier-part     = "//" authority path-abempty / path-absolute / path-rootless / path-empty
func checkURIReference(s string, requireScheme bool) error {
	rest, frag, hasFrag := strings.Cut(s, "#")
	if hasFrag && !allURIChars(frag, "/?:@") {
		return errors.New("invalid character in fragment")
	}
	rest, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery && !allURIChars(query, "/?:@") {
		return errors.New("invalid character in query")
	}
	colon, slash := strings.IndexByte(rest, ':'), strings.IndexByte(rest, '/')
	hasScheme := colon >= 0 && (slash < 0 || colon < slash)
	if hasScheme {
		if !validScheme(rest[:colon]) {
			return errors.New("invalid scheme")
		}
		rest = rest[colon+1:]
	} else if requireScheme {
		return errors.New("missing scheme")
	}
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		authority, path := after, ""
		if i := strings.IndexByte(after, '/'); i >= 0 {
			authority, path = after[:i], after[i:]
		}
		if err := checkAuthority(authority); err != nil {
			return err
		}
		rest = path
	}
	if !allURIChars(rest, "/:@") {
		return errors.New("invalid character in path")
	}
	return nil
}

func validScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// checkAuthority checks [ userinfo "@" ] host [ ":" port ].
func checkAuthority(a string) error {
	if userinfo, host, ok := strings.Cut(a, "@"); ok {
		if !allURIChars(userinfo, ":") {
			return errors.New("invalid character in userinfo")
		}
		a = host
	}
	host, port := a, ""
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return errors.New("unclosed IP literal")
		}
		if err := checkIPLiteral(a[1:end]); err != nil {
			return err
		}
		host, port = "", a[end+1:]
		if port != "" {
			var ok bool
			if port, ok = strings.CutPrefix(port, ":"); !ok {
				return errors.New("invalid character after IP literal")
			}
		}
	} else if i := strings.LastIndexByte(a, ':'); i >= 0 {
		host, port = a[:i], a[i+1:]
	}
	for i := 0; i < len(port); i++ {
		if !isDigit(port[i]) {
			return errors.New("port is not a number")
		}
	}
	if !allURIChars(host, "") {
		return errors.New("invalid character in host")
	}
	return nil
}

// checkIPLiteral checks the inside of "[...]": an IPv6 address or an IPvFuture.
func checkIPLiteral(s string) error {
	if len(s) > 0 && (s[0] == 'v' || s[0] == 'V') {
		ver, rest, ok := strings.Cut(s[1:], ".")
		if !ok || ver == "" || rest == "" || strings.Trim(ver, "0123456789abcdefABCDEF") != "" || !allURIChars(rest, ":") || strings.Contains(rest, "%") {
			return errors.New("invalid IPvFuture literal")
		}
		return nil
	}
	addr, err := netip.ParseAddr(s)
	if err != nil || !addr.Is6() || addr.Zone() != "" {
		return errors.New("invalid IPv6 literal")
	}
	return nil
}

// allURIChars reports whether s holds only unreserved characters, sub-delims, percent-encoded
// octets and the bytes in extra.
func allURIChars(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(c) || isDigit(c) || strings.IndexByte("-._~!$&'()*+,;=", c) >= 0:
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		case strings.IndexByte(extra, c) >= 0:
		default:
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
