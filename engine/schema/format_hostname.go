package schema

import (
	"errors"
	"strings"
)

// validateHostname checks the hostname format: RFC 1123 labels of letters, digits and hyphens,
// at most 63 bytes each and 253 in all, no trailing dot; an A-label ("xn--...") must decode to a
// U-label that IDNA2008 allows (RFC 5891, RFC 5892).
func validateHostname(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return checkHostname(s)
}

func checkHostname(s string) error {
	if s == "" || len(s) > 253 {
		return errors.New("hostname must be 1 to 253 characters long")
	}
	for label := range strings.SplitSeq(s, ".") {
		if err := checkLabel(label); err != nil {
			return err
		}
	}
	return nil
}

func checkLabel(label string) error {
	if label == "" || len(label) > 63 {
		return errors.New("label must be 1 to 63 characters long")
	}
	for i := 0; i < len(label); i++ {
		if c := label[i]; !isAlpha(c) && !isDigit(c) && c != '-' {
			return errors.New("label may hold only letters, digits and hyphens")
		}
	}
	if label[0] == '-' || label[len(label)-1] == '-' {
		return errors.New("label starts or ends with a hyphen")
	}
	if len(label) < 4 || label[2:4] != "--" {
		return nil
	}
	if !strings.EqualFold(label[:2], "xn") {
		return errors.New(`label has "--" in the third and fourth positions`)
	}
	ulabel, err := decodePunycode(label[4:])
	if err != nil {
		return err
	}
	return checkULabel(ulabel)
}
