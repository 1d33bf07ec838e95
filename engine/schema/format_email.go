package schema

import (
	"errors"
	"net/netip"
	"strings"
)

// validateEmail checks the email format (RFC 5321 mailbox): a dot-atom or quoted local part of
// at most 64 bytes, "@", and a hostname or a bracketed IPv4 or "IPv6:" address literal.
func validateEmail(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if len(s) > 254 {
		return errors.New("email address longer than 254 characters")
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 {
		return errors.New("missing @")
	}
	if err := checkLocalPart(s[:at]); err != nil {
		return err
	}
	return checkMailDomain(s[at+1:])
}

func checkLocalPart(local string) error {
	if local == "" || len(local) > 64 {
		return errors.New("local part must be 1 to 64 characters long")
	}
	if len(local) > 1 && local[0] == '"' && local[len(local)-1] == '"' {
		if strings.ContainsAny(local[1:len(local)-1], `\"`) {
			return errors.New("backslash and quote are not allowed in a quoted local part")
		}
		return nil
	}
	if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return errors.New("local part has a misplaced dot")
	}
	for i := 0; i < len(local); i++ {
		if c := local[i]; !isAlpha(c) && !isDigit(c) && strings.IndexByte(".!#$%&'*+-/=?^_`{|}~", c) < 0 {
			return errors.New("invalid character in local part")
		}
	}
	return nil
}

func checkMailDomain(domain string) error {
	if len(domain) < 2 || domain[0] != '[' || domain[len(domain)-1] != ']' {
		return checkHostname(domain)
	}
	lit := domain[1 : len(domain)-1]
	if v6, ok := strings.CutPrefix(lit, "IPv6:"); ok {
		if addr, err := netip.ParseAddr(v6); err != nil || !addr.Is6() || addr.Zone() != "" {
			return errors.New("invalid IPv6 address literal")
		}
		return nil
	}
	if !isDottedQuad(lit) {
		return errors.New("invalid IPv4 address literal")
	}
	return nil
}
