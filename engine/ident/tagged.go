package ident

import (
	"fmt"
	"strings"
)

const maxTagLen = 10

// canonicalTagged validates s, which has a colon, as <uuid>:<tag> and lowercases the UUID half.
// The tag is left as supplied: identifiers.md requires it to be lowercase already.
func canonicalTagged(s string) (string, error) {
	colon := strings.IndexByte(s, ':')
	upper, err := checkUUID(s[:colon])
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrTaggedUUID, err)
	}
	if !validTag(s[colon+1:]) {
		return "", ErrTag
	}
	if !upper {
		return s, nil
	}
	var buf [uuidLen + 1 + maxTagLen]byte
	n := copy(buf[:], s)
	lowerHex(buf[:colon])
	return string(buf[:n]), nil
}

func validTag(tag string) bool {
	if len(tag) == 0 || len(tag) > maxTagLen {
		return false
	}
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
