package ident

import (
	"testing"
	"time"
)

// TestNewIDsAreValidIdentifiers: the ids the server mints pass the identifier rule unchanged,
// with the version they claim, and version 7 ids sort by their time.
func TestNewIDsAreValidIdentifiers(t *testing.T) {
	for _, tc := range []struct {
		name, id string
		version  byte
	}{
		{"v4", NewV4(), '4'},
		{"v7", NewV7(time.UnixMilli(1_700_000_000_000)), '7'},
	} {
		got, kind, err := Rules{}.Normalize(Key, tc.id)
		if tc.version == '4' && (err != nil || kind != KindUUID || got != tc.id) {
			t.Errorf("%s: Normalize(%s) = %q, %v, %v; want the id unchanged as a UUID", tc.name, tc.id, got, kind, err)
		}
		if len(tc.id) != 36 || tc.id[14] != tc.version || tc.id[19] < '8' || tc.id[19] > 'b' {
			t.Errorf("%s: got %s, want a version %c RFC 4122 UUID", tc.name, tc.id, tc.version)
		}
	}
	a, b := NewV7(time.UnixMilli(1000)), NewV7(time.UnixMilli(2000))
	if !(a < b) {
		t.Errorf("got %s then %s, want version 7 ids sorted by time", a, b)
	}
}
