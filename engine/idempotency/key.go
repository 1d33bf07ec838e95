package idempotency

// MaxKeyBytes is the longest key the page allows.
const MaxKeyBytes = 255

// Header is the request header that carries the key.
const Header = "X-Idempotency-Key"

// ParseHeader checks the values of every X-Idempotency-Key header of a request. It returns the
// key and whether one was sent; an error is one of the sentinels of the validation table.
func ParseHeader(values [][]byte) (string, bool, error) {
	switch len(values) {
	case 0:
		return "", false, nil
	case 1:
	default:
		return "", true, ErrMultiple
	}
	k := values[0]
	switch {
	case len(k) == 0:
		return "", true, ErrEmpty
	case len(k) > MaxKeyBytes:
		return "", true, ErrTooLong
	}
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			return "", true, ErrCharacters
		}
	}
	return string(k), true, nil
}
